# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# The common start of the self-tests that run vm-run itself (sourced after set -euo pipefail):
# selftest_begin VM_RUN USAGE sets $vm_run (absolute; USAGE is the message when it is missing) and
# $here (this directory), and makes a scratch directory $tmp that is removed on exit; fail() ends
# the test with a FAIL line.

fail() { echo "FAIL: $*"; exit 1; }

# shellcheck disable=SC2034 # vm_run and here are for the sourcing test
selftest_begin() {
        vm_run=$(realpath "${1:?$2}")
        here=$(dirname "$(realpath "${BASH_SOURCE[0]}")")
        tmp=$(mktemp -d)
        trap 'rm -rf "$tmp"' EXIT
}
