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

# bad WHAT PATTERN STATUS SCENARIO_TEXT: vm-run refuses the scenario SCENARIO_TEXT (printf %b) with exit
# status STATUS and a message matching PATTERN, or the test fails naming WHAT. It starts vm-run with
# the sourcing test's own `run ID SCENARIO` (id x), which leaves vm-run's stderr in $tmp/stderr.x.
bad() {
        local what=$1 pattern=$2 rc_want=$3 rc=0
        printf '%b' "$4" >"$tmp/bad.scenario"
        run x "$tmp/bad.scenario" || rc=$?
        cat "$tmp/stderr.x"
        [[ $rc == "$rc_want" ]] || fail "$what: exit status $rc, not $rc_want"
        grep -q -- "$pattern" "$tmp/stderr.x" || fail "$what: message does not match '$pattern'"
}
