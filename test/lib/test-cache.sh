#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test-cache.sh: test/lib/cache.sh, the cache of the test trees and disks. Two builders of the same
# entry at once: the build runs once and both get the entry; a failed build leaves neither ENTRY nor
# ENTRY.tmp and returns its status (set -e holds inside a function build); a stale ENTRY.tmp or an
# ENTRY without ENTRY.ok is removed before building; cache_key depends on bytes and words, not paths.
set -uo pipefail  # (no -e: a failed check is reported by result, and the test goes on)

lib=$(dirname "$(realpath "$0")")/cache.sh
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
# result NAME: the outcome of the condition just tested ($? 0: ok).
result() {
        local rc=$?
        if ((rc == 0)); then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi
}

# builder ENTRY MODE: a separate process, as the scripts are; MODE ok (slow, counted), fail (a
# function build whose second command fails) or quick.
builder() {
        bash -c '
                set -euo pipefail
                source "$1"
                entry=$2 mode=$3
                build() {
                        echo run >>"$entry.runs"
                        mkdir "$1"
                        if [[ $mode == fail ]]; then false; fi
                        [[ $mode == quick ]] || sleep 1
                        echo made >"$1/file"
                }
                cache_build "$entry.lock" "$entry" build
                [[ -f $entry/file ]]
        ' builder "$lib" "$1" "$2" </dev/null
}

# Two at once.
e=$tmp/two
builder "$e" ok & p1=$!
builder "$e" ok & p2=$!
r1=0 r2=0
wait "$p1" || r1=$?
wait "$p2" || r2=$?
[[ $r1 == 0 && $r2 == 0 ]]
result "two concurrent builders both succeed"
[[ $(wc -l <"$e.runs") == 1 ]]
result "the build ran once"
[[ -f $e/file && -e $e.ok && ! -e $e.tmp ]]
result "the entry is made, no .tmp left"
builder "$e" ok
[[ $(wc -l <"$e.runs") == 1 ]]
result "a made entry is reused"

# A failed build.
e=$tmp/failed
rc=0
builder "$e" fail 2>/dev/null || rc=$?
[[ $rc != 0 ]]
result "a failed build fails"
[[ ! -e $e && ! -e $e.ok && ! -e $e.tmp ]]
result "a failed build leaves no entry, .ok or .tmp"
[[ ! -e $e/file ]]
result "set -e stops a function build"

# Stale leftovers: an interrupted build's .tmp, an entry without .ok.
e=$tmp/stale
mkdir -p "$e.tmp" "$e"
touch "$e.tmp/junk" "$e/junk"
builder "$e" quick
[[ ! -e $e.tmp && ! -e $e/junk && -f $e/file ]]
result "a stale .tmp and an unfinished entry are removed"

# Keys.
# shellcheck source=SCRIPTDIR/cache.sh
source "$lib"
echo recipe >"$tmp/a"
mkdir "$tmp/d"
echo recipe >"$tmp/d/a"
k=$(cache_key "$tmp/a")
[[ $k =~ ^[0-9a-f]{12}$ ]]
result "a key is 12 hex digits"
[[ $(cache_key "$tmp/d/a") == "$k" ]]
result "a key depends on the bytes, not the path"
[[ $(cache_key "$tmp/a" -- x) != "$k" && $(cache_key "$tmp/a" -- x) != $(cache_key "$tmp/a" -- y) ]]
result "a key depends on the words"
echo other >"$tmp/d/a"
[[ $(cache_key "$tmp/d/a") != "$k" ]]
result "a key depends on the bytes"
exit "$fail"
