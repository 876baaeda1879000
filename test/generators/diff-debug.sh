#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# diff-debug.sh FOYER_DEBUG_GENERATOR CASEDIR [SYSTEMD_GENERATOR]
# diff-debug.sh --regen FOYER_DEBUG_GENERATOR CASEDIR [CASE...]
#
# Differential test of foyer-debug-generator against systemd 252's systemd-debug-generator (default:
# the host's): both run on every case's command line with the same environment (lib.sh's run_case),
# and the trees (paths, symlink targets, contents) and exit statuses must be identical. Cases named
# NN-foyer-* use foyer's own parameters (rd.break, rd.shell, rd.emergency, the --no-shell marker),
# which systemd does not know; run-golden.sh checks them against reviewed trees, and this test skips
# them. Cases listed in the table "known-differences debug" of docs/kernel-command-line.md (deliberate
# differences) must differ; a listed case that no longer does fails too. The normalisation is lib.sh's (generator name in headers, case directory); systemd's debug
# generator writes no header line.
#
# --regen rewrites CASEDIR/NN-name.expected/ (and .exit): from systemd's generator for the plain
# cases, from FOYER_DEBUG_GENERATOR for the NN-foyer-* and the listed ones, which must be reviewed
# before committing.
set -u

regen=0
if [[ ${1:-} == --regen ]]; then
        regen=1
        shift
fi
foyer=$(realpath "$1")
casedir=$(realpath "$2")
shift 2
systemd=/usr/lib/systemd/system-generators/systemd-debug-generator
if ((!regen)) && (($# > 0)); then
        systemd=$1
        shift
fi
here=$(dirname "$(realpath "$0")")
# shellcheck source=SCRIPTDIR/lib.sh
source "$here/lib.sh"
fake_fsck_bin

if [[ ! -x $systemd ]]; then
        echo "SKIP: $systemd not found"
        exit 77
fi

known=$(known_differences debug)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$fakebin"' EXIT

if ((regen)); then
        set -e
        mapfile -t cases < <(cases_of "$@")
        for c in "${cases[@]}"; do
                gen=$systemd
                [[ $c == [0-9]*-foyer-* ]] && gen=$foyer
                grep -qxF "$c" <<<"$known" && gen=$foyer
                rc=$(run_case "$gen" "$casedir/$c" "$tmp/$c")
                normalise "$tmp/$c" "$(basename "$gen")"
                store_expected "$tmp/$c" "$casedir/$c.expected" "$rc"
                echo "$c: $(basename "$gen") exit $rc"
        done
        exit 0
fi

failed=0 same=0 foyer_only=0 listed=0
for c in "$casedir"/*.cmdline; do
        c=$(basename "$c" .cmdline)
        # Not compared (see the header), so not run either.
        if [[ $c == [0-9]*-foyer-* ]]; then
                foyer_only=$((foyer_only + 1))
                continue
        fi
        diff_case "$systemd" "$foyer" "$c"
        if [[ -s $tmp/$c.diff ]]; then
                if grep -qxF "$c" <<<"$known"; then
                        echo "LISTED $c"
                        listed=$((listed + 1))
                        continue
                fi
                echo "FAIL $c: outputs differ"
                sed 's/^/    /' "$tmp/$c.diff"
                failed=$((failed + 1))
        elif grep -qxF "$c" <<<"$known"; then
                echo "FAIL $c: listed as a known difference but the outputs are identical; update the docs"
                failed=$((failed + 1))
        else
                same=$((same + 1))
        fi
done

echo "diff-debug: $same identical, $listed listed differences, $foyer_only foyer-only cases not compared, $failed failures"
((failed == 0 && same > 0))
