#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# For every ELF executable an image takes from the host, the libraries foyer's reader resolves
# must be exactly the ones ldd resolves (as real paths).
# Usage: test-elf.sh FOYER TEST-ELF GENERATOR-DIR UNIT-DIR
set -eu
foyer=$1 test_elf=$2
export FOYER_GENERATOR_DIR=$3 FOYER_UNIT_DIR=$4

if ! compgen -G "$FOYER_GENERATOR_DIR/foyer-*" >/dev/null; then
        echo "no foyer generators built in $FOYER_GENERATOR_DIR yet; skipping"
        exit 77
fi

# The .note.dlopen parser, on the note test-elf carries itself.
notes=$("$test_elf" --own-dlopen-note | tr '\n' ' ')
if [ "$notes" != "libfoyer-test-a.so.1 libfoyer-test-b.so.2 " ]; then
        echo "FAIL: .note.dlopen sonames: '$notes'"
        exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$foyer" build --compress none -o "$tmp/image" 2>/dev/null

# Executables in the image that come from the host, by their image path (= host path).
"$foyer" ls "$tmp/image" | awk '$1 ~ /^-..x/ && $3 !~ /\.so/ && $3 !~ /system-generators/ {print "/" $3}' >"$tmp/bins"
count=0 fail=0
while read -r bin; do
        ldd "$bin" >"$tmp/ldd.raw" 2>/dev/null || continue     # not dynamic
        awk '/=>/ {print $3} !/=>/ && $1 ~ /^\// {print $1}' "$tmp/ldd.raw" |
                xargs -r realpath | sort -u >"$tmp/ldd"
        "$test_elf" "$bin" | sort -u >"$tmp/foyer"
        if ! diff -u "$tmp/ldd" "$tmp/foyer" >"$tmp/diff"; then
                echo "MISMATCH for $bin (- ldd, + foyer):"
                cat "$tmp/diff"
                fail=$((fail + 1))
        fi
        count=$((count + 1))
done <"$tmp/bins"

echo "compared $count binaries with ldd, $fail mismatches"
[ "$count" -gt 20 ] && [ "$fail" -eq 0 ]
