#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# regen-golden.sh [--into DIR] GENERATOR_DIR [CASEDIR...]
#
# The one way to regenerate the golden trees (NN-name.expected/ and NN-name.exit) of the case
# directories test/generators/KIND/ (default: every directory here holding NN-name.expected/ trees),
# each from its reference (the table "Golden trees" in docs/testing.md):
#   root/      systemd 252's systemd-fstab-generator; foyer-root-generator for the cases of the
#              known-differences table of docs/kernel-command-line.md
#   crypt/     systemd 252's systemd-cryptsetup-generator; foyer-crypt-generator for the cases of
#              the table "known-differences crypt"
#   debug/     systemd 252's systemd-debug-generator; foyer-debug-generator for the NN-foyer-* cases
#              (foyer's own parameters) and those of the table "known-differences debug"
#   systemd-break/ foyer-debug-generator: rd.systemd.break= per recorded systemd version (no reference
#              binary of 258 or later here; the 262 cases were compared by hand with sid's generator)
#   lvm/       foyer-lvm-generator: systemd has no counterpart
#   driver/    foyer-driver-generator: systemd has no counterpart (rd.driver.* are dracut's)
#   md/        foyer-md-generator: systemd has no counterpart (rd.md* are dracut's)
#   vconsole/  foyer-vconsole-generator: Debian's systemd has no systemd-vconsole-setup to compare with
#   network/   foyer-network-generator: foyer's own (--ssh-unlock, network roots, rd.neednet=)
#   netroot/   foyer-netroot-generator: dracut's network roots (systemd's generators write nothing)
#   root-forms/ foyer-root-generator: root= and mount.usr= forms per recorded systemd version (no
#              reference binary of 258 or later here; docs/kernel-command-line.md says what each writes)
#   root-extra/ foyer-root-generator: systemd.mount-extra=, systemd.swap-extra= and the fstab.extra
#              credentials per recorded systemd version (the 257 trees equal Debian 13's generator's on
#              the same command lines: differential-257 runs root/85-90)
#   gpt-auto/  foyer-gpt-auto-generator, with gpt-auto.sh's fake firmware (systemd's reads the real
#              firmware; diff-gpt-auto compares the two in a faked EFI chroot instead)
# GENERATOR_DIR holds foyer's generators (the build tree's generators/). Trees written by foyer's
# generators must be reviewed by hand before committing. A golden directory with no reference here
# fails (test-registered.py checks that each one has one).
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
# shellcheck source=SCRIPTDIR/lib.sh
source "$here/lib.sh"
if (($# == 0)); then
        mapfile -t dirs < <(golden_dirs "$here")
        set -- "${dirs[@]}"
fi
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
                root) [[ -n ${is_known[$c]:-} ]] && echo "$gendir/foyer-root-generator" || echo "$systemd_dir/systemd-fstab-generator" ;;
                crypt) [[ -n ${is_known[$c]:-} ]] && echo "$gendir/foyer-crypt-generator" || echo "$systemd_dir/systemd-cryptsetup-generator" ;;
                debug)
                        if [[ $c == [0-9]*-foyer-* || -n ${is_known[$c]:-} ]]; then
                                echo "$gendir/foyer-debug-generator"
                        else
                                echo "$systemd_dir/systemd-debug-generator"
                        fi ;;
                lvm) echo "$gendir/foyer-lvm-generator" ;;
                driver) echo "$gendir/foyer-driver-generator" ;;
                md) echo "$gendir/foyer-md-generator" ;;
                vconsole) echo "$gendir/foyer-vconsole-generator" ;;
                network) echo "$gendir/foyer-network-generator" ;;
                netroot) echo "$gendir/foyer-netroot-generator" ;;
                root-forms | root-extra) echo "$gendir/foyer-root-generator" ;;
                systemd-break) echo "$gendir/foyer-debug-generator" ;;
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
                find "$src" -mindepth 1 -maxdepth 1 ! -name '*.expected' ! -name '*.exit' -exec cp -a -t "$casedir/" {} +
        fi
        echo "== $kind"
        case $kind in
                gpt-auto)
                        need "$gendir/foyer-gpt-auto-generator" "build foyer first"
                        "$here/gpt-auto.sh" regen "$gendir/foyer-gpt-auto-generator" "$casedir"
                        continue ;;
                root | crypt | debug | lvm | driver | md | vconsole | network | netroot | root-forms | root-extra | systemd-break) ;;
                *) echo "regen-golden: no reference is known for $src" >&2; exit 1 ;;
        esac
        declare -A is_known=()
        while IFS= read -r c; do
                [[ -n $c ]] && is_known[$c]=1
        done < <(known_differences "$(diff_table "$casedir")")
        # shellcheck disable=SC2119 # every case of the directory (the script's arguments are directories)
        mapfile -t cases < <(cases_of)
        # Each case into $tmp/<its generator>/, every such directory normalised at once (normalise
        # goes by the generator's name), then each tree stored.
        declare -A gen_of=() rc_of=()
        for c in "${cases[@]}"; do
                gen=$(generator_for "$kind" "$c")
                need "$gen" "the reference of $kind/$c"
                gen_of[$c]=$gen
                run_case "$gen" "$casedir/$c" "$tmp/${gen##*/}/$c"
                rc_of[$c]=$case_rc
        done
        for gen in $(printf '%s\n' "${gen_of[@]}" | LC_ALL=C sort -u); do
                normalise "$tmp/${gen##*/}" "${gen##*/}"
        done
        for c in "${cases[@]}"; do
                gen=${gen_of[$c]}
                store_expected "$tmp/${gen##*/}/$c" "$casedir/$c.expected" "${rc_of[$c]}"
                echo "$c: ${gen##*/} exit ${rc_of[$c]}"
        done
        rm -rf "${tmp:?}"/*
done
