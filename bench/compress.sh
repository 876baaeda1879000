#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# bench/compress.sh [RUNS]: which compression of foyer's generic image gets to /init first. Builds
# the host kernel's generic image with each of BENCH_COMPRESS (default "zstd:3 zstd:9 zstd:12 zstd:19 lz4
# none"; FORMAT[:LEVEL], as foyer build --compress and --compress-level take them; zstd levels up to
# 19 get foyer's 16 MiB window, 12 is the default) and boots each,
# RUNS times (default 3) round-robin, only until the kernel says "Run /init": the kernel has then
# loaded, unpacked and decompressed the image. Prints per format the size, the median kernel time of
# "Run /init" (printk.time=1: seconds since the kernel started) and the median wall time of the whole
# QEMU run (which includes QEMU copying the image into the guest before the kernel starts). Not a
# test. Environment: BUILDDIR (default build), FOYER_KVER, FOYER_VM_SMP (default 2), BENCH_VM_SLOT
# (as bench/boot.sh).
set -euo pipefail
topdir=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=SCRIPTDIR/lib.sh
. "$topdir/bench/lib.sh"
cd "$topdir"

runs=${1:-3}
builddir=${BUILDDIR:-build}
out=$builddir/bench
read -ra formats <<<"${BENCH_COMPRESS:-zstd:3 zstd:9 zstd:12 zstd:19 lz4 none}"
read -ra slot <<<"${BENCH_VM_SLOT:-}"
mkdir -p "$out"
host=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
bench_suite "$host"

cat >"$out/compress.scenario" <<'EOF'
timeout  300
expect   240 Run /init as init process
EOF
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

declare -A inits walls
for f in "${formats[@]}"; do
        args=(--compress "${f%%:*}")
        [[ $f != *:* ]] || args+=(--compress-level "${f#*:}")
        FOYER_GENERATOR_DIR=$builddir/generators FOYER_UNIT_DIR=$builddir/units FOYER_HELPER_DIR=$builddir/src/failure:$builddir/src/unlock \
                "$builddir/src/foyer/foyer" build "${args[@]}" --kver "$bench_kver" -o "$out/compress-$f.img" >/dev/null
done
for ((r = 1; r <= runs; r++)); do
        for f in "${formats[@]}"; do
                log=$out/compress-$f-$r.log
                start=$(date +%s.%N)
                if ! "${slot[@]}" "$builddir/test/vm/vm-run" --smp "${FOYER_VM_SMP:-2}" --kernel "$bench_kernel" \
                        --initrd "$out/compress-$f.img" --log "$log" "$out/compress.scenario" >/dev/null 2>"$log.err"; then
                        echo "$f: no /init, see $log and $log.err"
                        continue
                fi
                wall=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }')
                init=$(sed -n 's/^\[ *\([0-9.]*\)\] Run \/init.*/\1/p' "$log" | head -n1)
                printf '%-8s run %d: Run /init at %6.2f s, QEMU run %6.2f s\n' "$f" "$r" "$init" "$wall"
                inits[$f]+="$init "
                walls[$f]+="$wall "
        done
done
echo
echo "kernel $bench_kver, $(nproc) host cores, TCG smp ${FOYER_VM_SMP:-2}, median of $runs:"
printf '%-8s %10s %14s %10s\n' format "size MiB" "Run /init (s)" "QEMU (s)"
for f in "${formats[@]}"; do
        [[ -n ${inits[$f]:-} ]] || { printf '%-8s failed\n' "$f"; continue; }
        printf '%-8s %10.1f %14.2f %10.2f\n' "$f" "$(awk -v s="$(stat -c %s "$out/compress-$f.img")" 'BEGIN { print s / 1048576 }')" \
                "$(tr ' ' '\n' <<<"${inits[$f]}" | grep . | median)" "$(tr ' ' '\n' <<<"${walls[$f]}" | grep . | median)"
done
