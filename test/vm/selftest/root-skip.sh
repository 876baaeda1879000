#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# root-skip.sh ROOTS_DIR: when debootstrap itself fails (here: a mirror nobody listens on), sid's
# root recipe skips (exit 77, saying why) and trixie's fails (mkroot.sh's exit 3); neither leaves
# a tree behind.
set -euo pipefail

roots=$(realpath "${1:?usage: root-skip.sh ROOTS_DIR}")
fail() { echo "FAIL: $*"; exit 1; }
[[ $(id -u) == 0 ]] || { echo "SKIP: debootstrap needs root"; exit 77; }
command -v debootstrap >/dev/null || { echo "SKIP: debootstrap is not installed"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export FOYER_DEBIAN_MIRROR=http://127.0.0.1:9/debian

rc=0
"$roots/sid.sh" "$tmp/cache" >"$tmp/out" 2>"$tmp/err" || rc=$?
cat "$tmp/err"
[[ $rc == 77 ]] || fail "sid.sh: exit status $rc, expected 77"
grep -q '^SKIP: debootstrap of Debian sid failed' "$tmp/err" || fail "sid.sh: no SKIP reason"
[[ ! -s $tmp/out ]] || fail "sid.sh printed a tree: $(cat "$tmp/out")"

rc=0
"$roots/trixie.sh" "$tmp/cache" >"$tmp/out" 2>"$tmp/err" || rc=$?
cat "$tmp/err"
[[ $rc == 3 ]] || fail "trixie.sh: exit status $rc, expected 3 (a failure, not a skip)"
[[ ! -s $tmp/out ]] || fail "trixie.sh printed a tree: $(cat "$tmp/out")"

trees=$(find "$tmp/cache" -mindepth 1 -maxdepth 1 -name 'tree-*' ! -name '*.lock')
[[ -z $trees ]] || fail "left behind: $trees"
echo ok
