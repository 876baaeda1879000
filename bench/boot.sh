#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# bench/boot.sh [RUNS]: how long each initrd takes to hand over to the real root.
#
# In one run, for each case boots the same kernel, test disks and QEMU settings with
#   - foyer's image (build/src/foyer/foyer build),
#   - dracut's systemd initrd (dracut --no-hostonly; package dracut-core),
#   - Debian's initramfs-tools image from /boot (for reference; ext4 only, as it has no
#     cryptsetup here).
# The cases (BENCH_CASES, default both) are recipes of test/vm/mkdisk.sh:
#   - ext4: a bare ext4 root;
#   - lvm-on-luks: LVM inside a LUKS2 partition, root and /usr on LVs; the passphrase is typed
#     at the prompt a second after it shows (the same wait for every initrd, inside the time).
# and measures, from the kernel's console timestamps (printk.time=1), the time from
# "Run /init" to the real root's systemd starting: its "systemd 252 running in system mode"
# line, which comes just before its "Welcome to Debian GNU/Linux 12 (bookworm, foyer test root)!"
# banner. Prints each time, the image sizes and foyer/dracut. Not a test: it needs root and
# about 2 minutes per boot under TCG. Environment: BUILDDIR (default build), FOYER_KVER,
# FOYER_VM_SMP (default 2), BENCH_CASES, FOYER_VM_SHARED_CACHE.
set -euo pipefail
topdir=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=SCRIPTDIR/../tools/lib.sh
. "$topdir/tools/lib.sh"
cd "$topdir"

runs=${1:-1}
builddir=${BUILDDIR:-build}
out=$builddir/bench
kver=$(installed_kver)
root_uuid=5f1a0c3e-7d4b-4e2a-9c61-0a1b2c3d4e01
lvm_luks_uuid=5f1a0c3e-7d4b-4e2a-9c61-0a1b2c3d4e14      # see the lvm-on-luks recipe
lvm_passphrase=foyer-lvm-pass-5Tw9
read -ra cases <<<"${BENCH_CASES:-ext4 lvm-on-luks}"
mkdir -p "$out"

ensure_packages dracut-core
build_foyer "$builddir" >/dev/null

echo "building images for $kver ..."
FOYER_GENERATOR_DIR=$builddir/generators FOYER_UNIT_DIR=$builddir/units \
        "$builddir/src/foyer/foyer" build -o "$out/foyer.img" --kver "$kver" --compress zstd >/dev/null
if [[ ! -s $out/dracut-$kver.img ]]; then
        dracut --quiet --force --no-hostonly --kver "$kver" "$out/dracut-$kver.img"
fi
# The test root and disks, shared with the VM tests when FOYER_VM_SHARED_CACHE is set.
disk_cache=${FOYER_VM_SHARED_CACHE:-$builddir/vm-cache}
tree=$(test/vm/mkroot.sh "$disk_cache")

cat > "$out/ext4.scenario" <<EOF
append   root=UUID=$root_uuid rw
expect   300 Welcome to .*foyer test root
report   300 root=reached
EOF
cat > "$out/lvm-on-luks.scenario" <<EOF
append   rd.luks.uuid=$lvm_luks_uuid root=/dev/vg0/root rw
expect   300 Please enter passphrase for disk
sleep    1
send     $lvm_passphrase\\n
expect   300 Welcome to .*foyer test root
report   300 root=reached usr=/dev/mapper/vg0-usr
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
declare -A image=([foyer]=$out/foyer.img [dracut]=$out/dracut-$kver.img [initramfs-tools]=/boot/initrd.img-$kver)
initrds() {     # CASE: the initrds that can boot it
        case $1 in
        ext4) echo foyer dracut initramfs-tools ;;
        *) echo foyer dracut ;;
        esac
}
for c in "${cases[@]}"; do
        [[ -f $out/$c.scenario ]] || { echo "bench: unknown case '$c'" >&2; exit 2; }
        mapfile -t disks < <(test/vm/mkdisk.sh "$disk_cache" "$tree" "$c")
        drives=()
        for d in "${disks[@]}"; do drives+=(--drive "$d"); done
        for ((r = 1; r <= runs; r++)); do
                for n in $(initrds "$c"); do
                        log=$out/$c-$n-$r.log
                        if ! "$builddir/test/vm/vm-run" --smp "${FOYER_VM_SMP:-2}" --kernel "/boot/vmlinuz-$kver" \
                                --initrd "${image[$n]}" "${drives[@]}" --log "$log" "$out/$c.scenario" >/dev/null 2>"$log.err"; then
                                echo "$c, $n: boot failed, see $log and $log.err"
                                continue
                        fi
                        read -r secs init real < <(measure "$log")
                        printf '%-12s %-16s run %d: Run /init at %6.2f s, real systemd at %6.2f s: %6.2f s\n' \
                                "$c" "$n" "$r" "$init" "$real" "$secs"
                        total[$c/$n]=$(awk -v a="${total[$c/$n]:-0}" -v b="$secs" 'BEGIN { print a + b }')
                done
        done
done

echo
echo "kernel $kver, $(nproc) host cores, smp ${FOYER_VM_SMP:-2}, mean of $runs run(s), Run /init -> real root's systemd:"
for c in "${cases[@]}"; do
        echo " $c:"
        for n in $(initrds "$c"); do
                [[ -n ${total[$c/$n]:-} ]] || { printf '  %-16s failed\n' "$n"; continue; }
                printf '  %-16s %6.2f s   image %5.1f MiB\n' "$n" \
                        "$(awk -v t="${total[$c/$n]}" -v r="$runs" 'BEGIN { print t / r }')" \
                        "$(awk -v s="$(stat -c %s "${image[$n]}")" 'BEGIN { print s / 1048576 }')"
        done
        if [[ -n ${total[$c/foyer]:-} && -n ${total[$c/dracut]:-} ]]; then
                awk -v f="${total[$c/foyer]}" -v d="${total[$c/dracut]}" \
                        'BEGIN { printf "  foyer / dracut = %.2f (target: below 0.5)\n", f / d }'
        fi
done
