#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# regen-golden.sh FOYER_GENERATOR CASEDIR [CASE...]
#
# Regenerates CASEDIR/NN-name.expected/ trees: from the host's systemd-fstab-generator (for crypt/:
# systemd-cryptsetup-generator) for every case,
# except the known differences listed in docs/kernel-command-line.md, which come from FOYER_GENERATOR
# and must be reviewed by hand before committing. Exit statuses other than 0 are stored in NN-name.exit.
set -eu

foyer=$(realpath "$1")
casedir=$(realpath "$2")
shift 2
here=$(dirname "$(realpath "$0")")
# shellcheck source=SCRIPTDIR/lib.sh
source "$here/lib.sh"
systemd=$(systemd_counterpart "$casedir")
fake_fsck_bin
trap 'rm -rf "$fakebin"' EXIT
known=$(known_differences "$(diff_table "$casedir")")

mapfile -t cases < <(cases_of "$@")

for c in "${cases[@]}"; do
        gen=$systemd
        grep -qxF "$c" <<<"$known" && gen=$foyer
        tmp=$(mktemp -d)
        rc=$(run_case "$gen" "$casedir/$c" "$tmp/out")
        normalise "$tmp/out" "$(basename "$gen")"
        store_expected "$tmp/out" "$casedir/$c.expected" "$rc"
        rm -rf "$tmp"
        echo "$c: $(basename "$gen") exit $rc"
done
