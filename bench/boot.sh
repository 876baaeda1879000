#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# bench/boot.sh [RUNS]: how long each initrd takes to hand over to the real root.
#
# In one run, boots the same kernel, test disk (the ext4 recipe of test/vm/mkdisk.sh) and QEMU
# settings with
#   - foyer's image (build/src/foyer/foyer build),
#   - dracut's systemd initrd (dracut --no-hostonly; package dracut-core),
#   - Debian's initramfs-tools image from /boot (for reference),
# and measures, from the kernel's console timestamps (printk.time=1), the time from
# "Run /init" to the real root's systemd starting: its "systemd 252 running in system mode"
# line, which comes just before its "Welcome to Debian GNU/Linux 12 (bookworm, foyer test root)!"
# banner. Prints each time, the image sizes and foyer/dracut. Not a test: it needs root and
# about 2 minutes per boot under TCG. Environment: BUILDDIR (default build), FOYER_KVER,
# FOYER_VM_SMP (default 2).
set -euo pipefail
topdir=$(cd "$(dirname "$0")/.." && pwd)
. "$topdir/tools/lib.sh"
cd "$topdir"

runs=${1:-1}
builddir=${BUILDDIR:-build}
out=$builddir/bench
kver=$(installed_kver)
root_uuid=5f1a0c3e-7d4b-4e2a-9c61-0a1b2c3d4e01
mkdir -p "$out"

ensure_packages dracut-core
build_foyer "$builddir" >/dev/null

echo "building images for $kver ..."
FOYER_GENERATOR_DIR=$builddir/generators FOYER_UNIT_DIR=$topdir/units \
        "$builddir/src/foyer/foyer" build -o "$out/foyer.img" --kver "$kver" --compress zstd >/dev/null
if [[ ! -s $out/dracut-$kver.img ]]; then
        dracut --quiet --force --no-hostonly --kver "$kver" "$out/dracut-$kver.img"
fi
tree=$(test/vm/mkroot.sh "$builddir/vm-cache")
disk=$(test/vm/mkdisk.sh "$builddir/vm-cache" "$tree" ext4)

cat > "$out/boot.scenario" <<EOF
append   root=UUID=$root_uuid rw
expect   300 Welcome to .*foyer test root
report   300 root=reached
EOF

# Seconds from "Run /init" to the last "running in system mode" (the real root's PID 1).
measure() {
        local log=$1
        awk '
                { sub(/\r$/, "") }
                /^\[ *[0-9.]+\] Run \/init/ { match($0, /[0-9]+\.[0-9]+/); init = substr($0, RSTART, RLENGTH) }
                /^\[ *[0-9.]+\] systemd\[1\]: systemd [0-9]+.* running in system mode/ {
                        match($0, /[0-9]+\.[0-9]+/); real = substr($0, RSTART, RLENGTH) }
                END { if (init == "" || real == "") exit 1; printf "%.2f %.2f %.2f\n", real - init, init, real }
        ' "$log"
}

declare -A total
names=(foyer dracut initramfs-tools)
declare -A image=([foyer]=$out/foyer.img [dracut]=$out/dracut-$kver.img [initramfs-tools]=/boot/initrd.img-$kver)
for ((r = 1; r <= runs; r++)); do
        for n in "${names[@]}"; do
                log=$out/$n-$r.log
                if ! "$builddir/test/vm/vm-run" --smp "${FOYER_VM_SMP:-2}" --kernel "/boot/vmlinuz-$kver" \
                        --initrd "${image[$n]}" --drive "$disk" --log "$log" "$out/boot.scenario" >/dev/null 2>"$log.err"; then
                        echo "$n: boot failed, see $log and $log.err"
                        continue
                fi
                read -r secs init real < <(measure "$log")
                printf '%-16s run %d: Run /init at %6.2f s, real systemd at %6.2f s: %6.2f s\n' "$n" "$r" "$init" "$real" "$secs"
                total[$n]=$(awk -v a="${total[$n]:-0}" -v b="$secs" 'BEGIN { print a + b }')
        done
done

echo
echo "kernel $kver, $(nproc) host cores, smp ${FOYER_VM_SMP:-2}, mean of $runs run(s), Run /init -> real root's systemd:"
for n in "${names[@]}"; do
        [[ -n ${total[$n]:-} ]] || { printf '  %-16s failed\n' "$n"; continue; }
        printf '  %-16s %6.2f s   image %5.1f MiB\n' "$n" \
                "$(awk -v t="${total[$n]}" -v r="$runs" 'BEGIN { print t / r }')" \
                "$(awk -v s="$(stat -c %s "${image[$n]}")" 'BEGIN { print s / 1048576 }')"
done
if [[ -n ${total[foyer]:-} && -n ${total[dracut]:-} ]]; then
        awk -v f="${total[foyer]}" -v d="${total[dracut]}" \
                'BEGIN { printf "  foyer / dracut = %.2f (target: below 0.5)\n", f / d }'
fi
