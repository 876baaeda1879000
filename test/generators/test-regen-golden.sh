#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test-regen-golden.sh GENERATOR_DIR: regen-golden.sh, run into a scratch directory, reproduces
# every committed golden tree and exit status of every golden directory test/generators/KIND/
# (lib.sh's golden_dirs) exactly (paths, symlink targets, contents), so each directory is made from the reference the
# table in docs/testing.md names and the script can be trusted to regenerate them.
set -euo pipefail

gendir=$(realpath "${1:?usage: test-regen-golden.sh GENERATOR_DIR}")
here=$(dirname "$(realpath "$0")")
for g in systemd-fstab-generator systemd-cryptsetup-generator systemd-debug-generator; do
        if [[ ! -x /usr/lib/systemd/system-generators/$g ]]; then
                echo "SKIP: /usr/lib/systemd/system-generators/$g not found (a reference)"
                exit 77
        fi
done
# shellcheck source=SCRIPTDIR/lib.sh
source "$here/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$here/regen-golden.sh" --into "$tmp" "$gendir" >"$tmp/regen.log" 2>&1 || { cat "$tmp/regen.log"; echo "FAIL: regen-golden.sh failed"; exit 1; }
failed=0
mapfile -t dirs < <(golden_dirs "$here")
for d in "${dirs[@]}"; do
        d=$(basename "$d")
        n=$(find "$tmp/$d" -maxdepth 1 -name '*.expected' | wc -l)
        [[ $n -gt 0 ]] || { echo "FAIL $d: no golden trees regenerated"; failed=1; continue; }
        if ! diff -u <(list_tree "$here/$d") <(list_tree "$tmp/$d") >"$tmp/$d.diff" ||
           ! diff -r --no-dereference "$here/$d" "$tmp/$d" >>"$tmp/$d.diff"; then
                echo "FAIL $d: regenerated trees differ from the committed ones"
                sed 's/^/    /' "$tmp/$d.diff"
                failed=1
        else
                echo "ok $d: $n golden trees reproduced"
        fi
done
((failed == 0 && ${#dirs[@]} >= 9))
