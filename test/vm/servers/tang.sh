#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tang.sh SERVER_TREE KEYDIR [LOG]: one Tang exchange on stdin and stdout: tangd from SERVER_TREE
# (roots/net-server.sh) answers the HTTP request it reads (GET /adv, POST /rec/...) with the keys of
# KEYDIR (test/vm/tang-keys, or keys made with the tree's /usr/libexec/tangd-keygen), and exits, as
# an inetd-style server does. Its log lines (stderr) go to LOG (default: none), not into the answer.
# Made for QEMU's guestfwd, which runs the command for each of the guest's connections with the
# connection on stdin and stdout; no port is opened on the host:
#   guestfwd 10.0.2.100:80 @TESTDIR@/servers/tang.sh @TREE:net-server@ @TESTDIR@/tang-keys
# and the guest's clevis binds to and unlocks with http://10.0.2.100.
# tangd runs chrooted in SERVER_TREE, in a mount namespace of its own where KEYDIR is bind-mounted
# (read-only) at the tree's /mnt.
set -euo pipefail

usage="usage: tang.sh SERVER_TREE KEYDIR [LOG]"
server_tree=$(realpath "${1:?$usage}")
keydir=$(realpath "${2:?$usage}")
log=${3:-/dev/null}
[[ -x $server_tree/usr/libexec/tangd ]] || { echo "tang.sh: no tangd in $server_tree" >&2; exit 1; }
[[ -d $keydir ]] || { echo "tang.sh: no key directory $keydir" >&2; exit 1; }
# shellcheck disable=SC2016 # the inner shell's own arguments
exec unshare --mount --propagation private sh -ec '
        mount --bind -o ro "$2" "$1/mnt"
        exec chroot "$1" /usr/libexec/tangd /mnt 2>>"$3"
' tang.sh "$server_tree" "$keydir" "$log"
