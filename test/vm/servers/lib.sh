# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
#
# What the test servers (servers/*.sh) share, sourced by them. server_scratch NAME makes $dir, a
# scratch directory of this run's own (foyer-NAME-XXXXXX under $TMPDIR), and arranges for the end,
# however it comes: the server in $pid (set it once started) is stopped and waited for and $dir is
# removed; SIGTERM and SIGINT (vm-run stopping the server) end the script with status 0.

server_cleanup() {
        [[ -z $pid ]] || kill "$pid" 2>/dev/null || true
        [[ -z $pid ]] || wait "$pid" 2>/dev/null || true
        rm -rf "$dir"
}

server_scratch() {
        dir=$(mktemp -d "${TMPDIR:-/tmp}/foyer-$1-XXXXXX")
        pid=
        trap server_cleanup EXIT
        trap 'exit 0' TERM INT
}
