#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Build-time benchmark (not a test): for each suite (BENCH_SUITES, default "bookworm trixie"), that
# suite's generic image built with foyer build and with the suite's own dracut --no-hostonly, from
# the same tree and kernel (bench/lib.sh), RUNS times each (default 3), alternating; dracut twice,
# with its default compressor and with --zstd (foyer's compressor), so that the size and time ratios
# are also given at equal compression. For the build host's own suite, also the host-only images:
# foyer build --hostonly and dracut --hostonly (also with --zstd), in the same loop. Prints the median times, the image sizes and foyer/dracut for each suite, all measured
# in this one run, and the host-only image against its targets (zstd size <= 5 MB, build <= 0.3 s).
# When the VM test vm-installer-encrypted-lvm has run in BUILDDIR, also the host-only image that
# VM built of itself (BUILDDIR/vm-cache/hostonly-installer.img), beside the build host's.
# Usage: bench/build.sh [BUILDDIR]   (default: build; needs foyer, the generators and foyer-explain,
#        and root for the chroot of another suite's tree)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
builddir=$(realpath "${1:-$src/build}")
runs=${RUNS:-3}
read -ra suites <<<"${BENCH_SUITES:-bookworm trixie}"
# shellcheck source=SCRIPTDIR/lib.sh
. "$src/bench/lib.sh"

[[ -x $builddir/src/foyer/foyer ]] || { echo "build foyer first: ninja -C $builddir" >&2; exit 1; }
tmp=$(mktemp -d /tmp/bench-build.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

now() { date +%s.%N; }
mb() { awk -v s="$(stat -c %s "$1")" 'BEGIN { printf "%.1f", s / 1000000 }'; }
# How an image is packed, as foyer ls reads it ("uncompressed cpio + zstd" for dracut's early cpio).
packing() { "$builddir/src/foyer/foyer" ls "$1" 2>&1 >/dev/null | sed -n 's/^Offset [0-9]*: //p' | paste -sd+; }

# equal_compression FOYER_IMG FOYER_MEDIAN DRACUT_ZSTD_IMG DRACUT_ZSTD_TIMES TARGETS: the lines of
# dracut --zstd and foyer/dracut at the same compressor.
equal_compression() {
        local dt
        dt=$(bench_median <"$4")
        # dracut falls back to gzip when it finds no zstd program: then the pair is not equal.
        [[ $(packing "$3") == zstd* ]] ||
                printf '  (dracut --zstd wrote %s: no zstd where it ran; not an equal-compression pair)\n' "$(packing "$3")"
        printf '  dracut --zstd %6.2f s  %6s MB  %s\n  foyer/dracut --zstd: time %.3f (%.1fx faster), size %.2f%s' \
                "$dt" "$(mb "$3")" "$(packing "$3")" "$(echo "$2 / $dt" | bc -l)" "$(echo "$dt / $2" | bc -l)" \
                "$(echo "$(stat -c %s "$1") / $(stat -c %s "$3")" | bc -l)" "${5:+ (targets of issue 34: $5)}"
}

results=()
# foyer's programs as a package installs them, stripped (bench/lib.sh), before anything is timed.
bench_stage "$builddir"
for suite in "${suites[@]}"; do
        bench_suite "$suite"
        sv=$(bench_systemd_version)
        echo "== $suite: tree $bench_root, kernel $bench_kver, systemd $sv" >&2
        : >"$tmp/foyer.times"
        : >"$tmp/dracut.times"
        : >"$tmp/dracut-z.times"
        : >"$tmp/foyer-h.times"
        : >"$tmp/dracut-h.times"
        : >"$tmp/dracut-hz.times"
        for i in $(seq "$runs"); do
                t0=$(now)
                bench_foyer "$builddir" "$tmp/foyer-$suite.img" || { echo "foyer build failed for $suite" >&2; exit 1; }
                t1=$(now)
                bench_dracut "$tmp/dracut-$suite.img" || { echo "dracut failed for $suite" >&2; exit 1; }
                t2=$(now)
                bench_dracut "$tmp/dracut-z-$suite.img" --zstd || { echo "dracut --zstd failed for $suite" >&2; exit 1; }
                t3=$(now)
                echo "$t1 - $t0" | bc >>"$tmp/foyer.times"
                echo "$t2 - $t1" | bc >>"$tmp/dracut.times"
                echo "$t3 - $t2" | bc >>"$tmp/dracut-z.times"
                echo "   run $i: foyer $(tail -n1 "$tmp/foyer.times") s, dracut $(tail -n1 "$tmp/dracut.times") s, dracut --zstd $(tail -n1 "$tmp/dracut-z.times") s" >&2
                [[ $bench_root == / ]] || continue
                t0=$(now)
                bench_foyer_hostonly "$builddir" "$tmp/foyer-h.img" || { echo "foyer build --hostonly failed" >&2; exit 1; }
                t1=$(now)
                bench_dracut_hostonly "$tmp/dracut-h.img" || { echo "dracut --hostonly failed" >&2; exit 1; }
                t2=$(now)
                bench_dracut_hostonly "$tmp/dracut-hz.img" --zstd || { echo "dracut --hostonly --zstd failed" >&2; exit 1; }
                t3=$(now)
                echo "$t1 - $t0" | bc >>"$tmp/foyer-h.times"
                echo "$t2 - $t1" | bc >>"$tmp/dracut-h.times"
                echo "$t3 - $t2" | bc >>"$tmp/dracut-hz.times"
                echo "   run $i: foyer --hostonly $(tail -n1 "$tmp/foyer-h.times") s, dracut --hostonly $(tail -n1 "$tmp/dracut-h.times") s, with --zstd $(tail -n1 "$tmp/dracut-hz.times") s" >&2
        done
        ft=$(bench_median <"$tmp/foyer.times")
        dt=$(bench_median <"$tmp/dracut.times")
        fn=$("$builddir/src/foyer/foyer" ls "$tmp/foyer-$suite.img" 2>/dev/null | wc -l)
        results+=("$(printf '%s (systemd %s, kernel %s):\n  foyer  %6.2f s  %6s MB  %s, %s entries\n  dracut %6.2f s  %6s MB  %s\n  foyer/dracut: time %.3f (%.1fx faster), size %.2f' \
                "$suite" "$sv" "$bench_kver" "$ft" "$(mb "$tmp/foyer-$suite.img")" "$(packing "$tmp/foyer-$suite.img")" "$fn" \
                "$dt" "$(mb "$tmp/dracut-$suite.img")" "$(packing "$tmp/dracut-$suite.img")" \
                "$(echo "$ft / $dt" | bc -l)" "$(echo "$dt / $ft" | bc -l)" \
                "$(echo "$(stat -c %s "$tmp/foyer-$suite.img") / $(stat -c %s "$tmp/dracut-$suite.img")" | bc -l)")")
        results+=("$(equal_compression "$tmp/foyer-$suite.img" "$ft" "$tmp/dracut-z-$suite.img" "$tmp/dracut-z.times" \
                "size <= 0.50, build >= 20x faster")")
        [[ $bench_root == / ]] || continue
        ft=$(bench_median <"$tmp/foyer-h.times")
        dt=$(bench_median <"$tmp/dracut-h.times")
        fn=$("$builddir/src/foyer/foyer" ls "$tmp/foyer-h.img" 2>/dev/null | wc -l)
        results+=("$(printf '%s host-only (this machine'"'"'s root, /usr and swap):\n  foyer  %6.2f s  %6s MB  %s, %s entries, %s modules\n  dracut %6.2f s  %6s MB  %s\n  foyer/dracut: time %.3f, size %.2f; targets: foyer <= 0.30 s (%s), <= 5.0 MB (%s)' \
                "$suite" "$ft" "$(mb "$tmp/foyer-h.img")" "$(packing "$tmp/foyer-h.img")" "$fn" \
                "$("$builddir/src/foyer/foyer" ls "$tmp/foyer-h.img" 2>/dev/null | grep -c '\.ko')" \
                "$dt" "$(mb "$tmp/dracut-h.img")" "$(packing "$tmp/dracut-h.img")" \
                "$(echo "$ft / $dt" | bc -l)" \
                "$(echo "$(stat -c %s "$tmp/foyer-h.img") / $(stat -c %s "$tmp/dracut-h.img")" | bc -l)" \
                "$(awk -v t="$ft" 'BEGIN { print (t <= 0.30) ? "met" : "missed" }')" \
                "$(awk -v s="$(stat -c %s "$tmp/foyer-h.img")" 'BEGIN { print (s <= 5000000) ? "met" : "missed" }')")")
        results+=("$(equal_compression "$tmp/foyer-h.img" "$ft" "$tmp/dracut-hz.img" "$tmp/dracut-hz.times" "")")
done

# The host-only image a VM made of itself: vm-installer-encrypted-lvm's Debian 12 (the installer's
# LUKS2 + LVM on virtio-blk, foyer's package installed) runs foyer build --hostonly for its own
# kernel, and the host keeps the image in the build tree's VM cache (test/vm/hostonly-image.sh).
vm_hostonly=$builddir/vm-cache/hostonly-installer.img
if [[ -s $vm_hostonly ]]; then
        results+=("$(printf 'VM host-only (vm-installer-encrypted-lvm, Debian 12 encrypted LVM on virtio-blk, %s):\n  foyer            %6s MB  %s, %s entries, %s modules; target <= 5.0 MB (%s)' \
                "$(date -r "$vm_hostonly" '+%F %R')" "$(mb "$vm_hostonly")" "$(packing "$vm_hostonly")" \
                "$("$builddir/src/foyer/foyer" ls "$vm_hostonly" 2>/dev/null | wc -l)" \
                "$("$builddir/src/foyer/foyer" ls "$vm_hostonly" 2>/dev/null | grep -c '\.ko')" \
                "$(awk -v s="$(stat -c %s "$vm_hostonly")" 'BEGIN { print (s <= 5000000) ? "met" : "missed" }')")")
fi

printf 'build time (median of %s runs) and image size, %s cores; foyer/dracut ratios (targets: time <= 0.10, size <= 0.50):\n' \
        "$runs" "$(nproc)"
printf '%s\n' "${results[@]}"
