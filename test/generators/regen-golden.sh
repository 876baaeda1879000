#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# regen-golden.sh [--into DIR] GENERATOR_DIR [CASEDIR...]
#
# The one way to regenerate the golden trees (NN-name.expected/ and NN-name.exit) of the case
# directories test/generators/{root,crypt,debug,lvm,driver,md,gpt-auto} (default: all of them), each from its
# reference (the table "Golden trees" in docs/testing.md):
#   root/      systemd 252's systemd-fstab-generator; foyer-root-generator for the cases of the
#              known-differences table of docs/kernel-command-line.md
#   crypt/     systemd 252's systemd-cryptsetup-generator; foyer-crypt-generator for the cases of
#              the table "known-differences crypt"
#   debug/     systemd 252's systemd-debug-generator; foyer-debug-generator for the NN-foyer-* cases
#              (foyer's own parameters) and those of the table "known-differences debug"
#   lvm/       foyer-lvm-generator: systemd has no counterpart
#   driver/    foyer-driver-generator: systemd has no counterpart (rd.driver.* are dracut's)
#   md/        foyer-md-generator: systemd has no counterpart (rd.md* are dracut's)
#   gpt-auto/  foyer-gpt-auto-generator, with gpt-auto.sh's fake firmware (systemd's reads the real
#              firmware; diff-gpt-auto compares the two in a faked EFI chroot instead)
# GENERATOR_DIR holds foyer's generators (the build tree's generators/). Trees written by foyer's
# generators must be reviewed by hand before committing.
#
# --into DIR: leave the case directories alone; regenerate copies of their inputs in DIR/<name>/
# (test-regen-golden.sh compares those with the committed trees).
set -euo pipefail

into=
if [[ ${1:-} == --into ]]; then
        into=$(realpath "${2:?--into needs a directory}")
        shift 2
fi
gendir=$(realpath "${1:?usage: regen-golden.sh [--into DIR] GENERATOR_DIR [CASEDIR...]}")
shift
here=$(dirname "$(realpath "$0")")
systemd_dir=/usr/lib/systemd/system-generators
(($# > 0)) || set -- "$here"/root "$here"/crypt "$here"/debug "$here"/lvm "$here"/driver "$here"/md "$here"/gpt-auto

# shellcheck source=SCRIPTDIR/lib.sh
source "$here/lib.sh"
fake_fsck_bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$fakebin"' EXIT

need() {
        [[ -x $1 ]] || { echo "regen-golden: $1 is missing (${2})" >&2; exit 1; }
}

# The generator of case $2 in directory kind $1: the reference, or foyer's own (prints its path).
generator_for() {
        local kind=$1 c=$2
        case $kind in
                root) grep -qxF "$c" <<<"$known" && echo "$gendir/foyer-root-generator" || echo "$systemd_dir/systemd-fstab-generator" ;;
                crypt) grep -qxF "$c" <<<"$known" && echo "$gendir/foyer-crypt-generator" || echo "$systemd_dir/systemd-cryptsetup-generator" ;;
                debug)
                        if [[ $c == [0-9]*-foyer-* ]] || grep -qxF "$c" <<<"$known"; then
                                echo "$gendir/foyer-debug-generator"
                        else
                                echo "$systemd_dir/systemd-debug-generator"
                        fi ;;
                lvm) echo "$gendir/foyer-lvm-generator" ;;
                driver) echo "$gendir/foyer-driver-generator" ;;
                md) echo "$gendir/foyer-md-generator" ;;
        esac
}

for src in "$@"; do
        src=$(realpath "$src")
        kind=$(basename "$src")
        casedir=$src
        if [[ -n $into ]]; then
                # The inputs only: every golden tree and exit status is written anew.
                casedir=$into/$kind
                rm -rf "$casedir"
                mkdir -p "$casedir"
                find "$src" -mindepth 1 -maxdepth 1 ! -name '*.expected' ! -name '*.exit' -exec cp -a {} "$casedir/" \;
        fi
        echo "== $kind"
        case $kind in
                gpt-auto)
                        need "$gendir/foyer-gpt-auto-generator" "build foyer first"
                        "$here/gpt-auto.sh" regen "$gendir/foyer-gpt-auto-generator" "$casedir"
                        continue ;;
                root | crypt | debug | lvm | driver | md) ;;
                *) echo "regen-golden: no reference is known for $src" >&2; exit 1 ;;
        esac
        known=$(known_differences "$(diff_table "$casedir")")
        # shellcheck disable=SC2119 # every case of the directory (the script's arguments are directories)
        mapfile -t cases < <(cases_of)
        for c in "${cases[@]}"; do
                gen=$(generator_for "$kind" "$c")
                need "$gen" "the reference of $kind/$c"
                rc=$(run_case "$gen" "$casedir/$c" "$tmp/$c")
                normalise "$tmp/$c" "$(basename "$gen")"
                store_expected "$tmp/$c" "$casedir/$c.expected" "$rc"
                rm -f "$tmp/$c.log"
                echo "$c: $(basename "$gen") exit $rc"
        done
done
