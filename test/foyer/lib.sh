# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# Sourced by the builder tests, which all take FOYER GENERATOR-DIR UNIT-DIR:
#   . "$(dirname "$0")/lib.sh" "$@"
# Builds from the build tree (FOYER_GENERATOR_DIR, FOYER_UNIT_DIR), with no configuration files
# and a fixed timestamp, so the images only depend on what a test asks for.
set -eu
# shellcheck disable=SC2034 # read by the tests that source this
foyer=$1
export FOYER_GENERATOR_DIR=$2 FOYER_UNIT_DIR=$3
export FOYER_CONFIG_ROOT=/nonexistent SOURCE_DATE_EPOCH=1700000000
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}

fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "$*; skipping"; exit 77; }

# Skips unless the named generator (or, without a name, any foyer generator) is built.
# shellcheck disable=SC2120 # the generator name is optional
require_generator() {
        if [ -n "${1:-}" ]; then
                [ -x "$FOYER_GENERATOR_DIR/$1" ] || skip "$1 is not built in $FOYER_GENERATOR_DIR yet"
        else
                compgen -G "$FOYER_GENERATOR_DIR/foyer-*" >/dev/null ||
                        skip "no foyer generators built in $FOYER_GENERATOR_DIR yet"
        fi
}

# Sets kver to the (last) installed kernel with modules, or skips.
require_kernel() {
        kver=
        for d in /usr/lib/modules/*/; do
                [ -e "$d/modules.order" ] && kver=$(basename "$d")
        done
        [ -n "$kver" ] || skip "no kernel with modules installed (package linux-image-amd64)"
}

# Sets tmp to a scratch directory removed when the test exits.
make_tmp() {
        tmp=$(mktemp -d "/tmp/$1.XXXXXX")
        trap 'rm -rf "$tmp"' EXIT
}

# expect_error DESCRIPTION PATTERN COMMAND...: the command fails with exactly one line on stderr,
# matching PATTERN, and creates nothing at $out (the output path the test uses, if set).
expect_error() {
        local what=$1 pattern=$2 existed=
        shift 2
        echo "== bad input: $what"
        [ -e "${out:-}" ] && existed=1
        if "$@" >"$tmp/stdout" 2>"$tmp/stderr"; then
                fail "$what: exit status 0"
        fi
        cat "$tmp/stderr"
        grep -q -- "$pattern" "$tmp/stderr" || fail "$what: message does not match '$pattern'"
        [ "$(grep -c . "$tmp/stderr")" -eq 1 ] || fail "$what: expected exactly one line on stderr"
        [ -n "$existed" ] || [ ! -e "${out:-}" ] || fail "$what: output $out left behind"
}
