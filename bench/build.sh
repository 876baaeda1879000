#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Build-time benchmark (not a test): the same kernel's generic image built with foyer build and
# with dracut --no-hostonly, RUNS times each (default 3), alternating. Prints the median
# times, the image sizes and the ratios.
# Usage: bench/build.sh [BUILDDIR] [KVER]   (BUILDDIR default: build-foyer, needs foyer and the generators)
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
builddir=$(realpath "${1:-$src/build-foyer}")
kver=${2:-}
runs=${RUNS:-3}

if [ -z "$kver" ]; then
        for d in /usr/lib/modules/*/; do [ -e "$d/modules.order" ] && kver=$(basename "$d"); done
fi
[ -n "$kver" ] || { echo "no kernel with modules installed" >&2; exit 1; }
[ -x "$builddir/src/foyer/foyer" ] || { echo "build foyer first: ninja -C $builddir" >&2; exit 1; }

if ! command -v dracut >/dev/null; then
        echo "installing dracut-core ..." >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends dracut-core >/dev/null
fi

export FOYER_GENERATOR_DIR=$builddir/generators FOYER_UNIT_DIR=$builddir/units
tmp=$(mktemp -d /tmp/bench-build.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

for i in $(seq "$runs"); do
        t0=$(now)
        "$builddir/src/foyer/foyer" build --kver "$kver" -o "$tmp/foyer.img" 2>/dev/null
        t1=$(now)
        dracut --quiet --force --no-hostonly --kver "$kver" "$tmp/dracut.img" >/dev/null 2>&1
        t2=$(now)
        echo "run $i: foyer $(echo "$t1 - $t0" | bc) s, dracut $(echo "$t2 - $t1" | bc) s" >&2
        echo "$t1 - $t0" | bc >>"$tmp/foyer.times"
        echo "$t2 - $t1" | bc >>"$tmp/dracut.times"
done

ft=$(median <"$tmp/foyer.times")
dt=$(median <"$tmp/dracut.times")
fs=$(stat -c %s "$tmp/foyer.img")
ds=$(stat -c %s "$tmp/dracut.img")
fn=$("$builddir/src/foyer/foyer" ls "$tmp/foyer.img" | wc -l)

printf 'kernel %s, %s runs each, %s cores\n' "$kver" "$runs" "$(nproc)"
printf '%-8s %10s %12s\n' builder "median s" "size MB"
printf '%-8s %10.2f %12.1f   (%s entries, zstd)\n' foyer "$ft" "$(echo "$fs / 1000000" | bc -l)" "$fn"
printf '%-8s %10.2f %12.1f\n' dracut "$dt" "$(echo "$ds / 1000000" | bc -l)"
printf 'speed-up: %.1fx faster (target >= 10x); size: %.2f of dracut'"'"'s (target <= 0.50)\n' \
        "$(echo "$dt / $ft" | bc -l)" "$(echo "$fs / $ds" | bc -l)"
