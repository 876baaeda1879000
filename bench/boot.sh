#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# bench/boot.sh [RUNS]: how long each initrd takes to hand over to the real root.
#
# In one run, for each suite (BENCH_SUITES, default "bookworm trixie") and each case, boots the
# suite's kernel with the same test disks and QEMU settings and
#   - foyer's image of the suite (foyer build, --root for a suite other than the host's),
#   - the suite's own dracut's systemd initrd (dracut --no-hostonly, in the same tree; bench/lib.sh),
#   - for the host's suite, Debian's initramfs-tools image from /boot (for reference; ext4 only, as
#     it has no cryptsetup here).
# The cases (BENCH_CASES, default both) are recipes of test/vm/mkdisk.sh:
#   - ext4: a bare ext4 root;
#   - lvm-on-luks: LVM inside a LUKS2 partition, root and /usr on LVs; the passphrase is typed
#     at the prompt a second after it shows (the same wait for every initrd, inside the time).
# The real root is test/vm/roots/SUITE.sh's when there is one, else bookworm's (the initrd phase is
# what is measured; the output names the root). Measures, from the kernel's console timestamps
# (printk.time=1), the time from "Run /init" to the real root's systemd starting: its last
# "systemd NNN running in system mode" line, which comes just before its "Welcome to ... foyer test
# root)!" banner. Prints each time, the image sizes and foyer/dracut per suite. Not a test: it needs
# root and about 2 minutes per boot under TCG. Environment: BUILDDIR (default build), FOYER_KVER,
# FOYER_VM_SMP (default 2), BENCH_SUITES, BENCH_CASES, FOYER_VM_SHARED_CACHE, FOYER_TREE_CACHE.
set -euo pipefail
topdir=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=SCRIPTDIR/../tools/lib.sh
. "$topdir/tools/lib.sh"
# shellcheck source=SCRIPTDIR/lib.sh
. "$topdir/bench/lib.sh"
cd "$topdir"

runs=${1:-1}
builddir=${BUILDDIR:-build}
out=$builddir/bench
root_uuid=5f1a0c3e-7d4b-4e2a-9c61-0a1b2c3d4e01
lvm_luks_uuid=5f1a0c3e-7d4b-4e2a-9c61-0a1b2c3d4e14      # see the lvm-on-luks recipe
lvm_passphrase=foyer-lvm-pass-5Tw9
read -ra cases <<<"${BENCH_CASES:-ext4 lvm-on-luks}"
read -ra suites <<<"${BENCH_SUITES:-bookworm trixie}"
mkdir -p "$out"

ensure_packages dracut-core
build_foyer "$builddir" >/dev/null

disk_cache=${FOYER_VM_SHARED_CACHE:-$builddir/vm-cache}
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

declare -A total image kernel root
host=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
for suite in "${suites[@]}"; do
        bench_suite "$suite"
        echo "building images of $suite (kernel $bench_kver, systemd $(bench_systemd_version)) ..."
        bench_foyer "$builddir" "$out/foyer-$suite.img" || { echo "bench: foyer build failed for $suite" >&2; exit 1; }
        bench_dracut "$out/dracut-$suite.img" || { echo "bench: dracut failed for $suite" >&2; exit 1; }
        image[$suite/foyer]=$out/foyer-$suite.img
        image[$suite/dracut]=$out/dracut-$suite.img
        image[$suite/initramfs-tools]=/boot/initrd.img-$bench_kver
        kernel[$suite]=$bench_kernel
        root[$suite]=bookworm
        [[ ! -x test/vm/roots/$suite.sh ]] || root[$suite]=$suite
done
initrds() {     # SUITE CASE: the initrds that can boot it
        if [[ $1 == "$host" && $2 == ext4 ]]; then
                echo foyer dracut initramfs-tools
        else
                echo foyer dracut
        fi
}
for suite in "${suites[@]}"; do
        tree=$("test/vm/roots/${root[$suite]}.sh" "$disk_cache")
        for c in "${cases[@]}"; do
                [[ -f $out/$c.scenario ]] || { echo "bench: unknown case '$c'" >&2; exit 2; }
                mapfile -t disks < <(test/vm/mkdisk.sh "$disk_cache" "$tree" "$c")
                drives=()
                for d in "${disks[@]}"; do drives+=(--drive "$d"); done
                for ((r = 1; r <= runs; r++)); do
                        for n in $(initrds "$suite" "$c"); do
                                log=$out/$suite-$c-$n-$r.log
                                if ! "$builddir/test/vm/vm-run" --smp "${FOYER_VM_SMP:-2}" --kernel "${kernel[$suite]}" \
                                        --initrd "${image[$suite/$n]}" "${drives[@]}" --log "$log" "$out/$c.scenario" >/dev/null 2>"$log.err"; then
                                        echo "$suite, $c, $n: boot failed, see $log and $log.err"
                                        continue
                                fi
                                read -r secs init real < <(measure "$log")
                                printf '%-9s %-12s %-16s run %d: Run /init at %6.2f s, real systemd at %6.2f s: %6.2f s\n' \
                                        "$suite" "$c" "$n" "$r" "$init" "$real" "$secs"
                                total[$suite/$c/$n]=$(awk -v a="${total[$suite/$c/$n]:-0}" -v b="$secs" 'BEGIN { print a + b }')
                        done
                done
        done
done

echo
echo "$(nproc) host cores, smp ${FOYER_VM_SMP:-2}, mean of $runs run(s), Run /init -> real root's systemd:"
for suite in "${suites[@]}"; do
        echo "$suite: kernel ${kernel[$suite]}, real root ${root[$suite]}"
        for c in "${cases[@]}"; do
                echo " $c:"
                for n in $(initrds "$suite" "$c"); do
                        [[ -n ${total[$suite/$c/$n]:-} ]] || { printf '  %-16s failed\n' "$n"; continue; }
                        printf '  %-16s %6.2f s   image %5.1f MiB\n' "$n" \
                                "$(awk -v t="${total[$suite/$c/$n]}" -v r="$runs" 'BEGIN { print t / r }')" \
                                "$(awk -v s="$(stat -c %s "${image[$suite/$n]}")" 'BEGIN { print s / 1048576 }')"
                done
                if [[ -n ${total[$suite/$c/foyer]:-} && -n ${total[$suite/$c/dracut]:-} ]]; then
                        awk -v f="${total[$suite/$c/foyer]}" -v d="${total[$suite/$c/dracut]}" \
                                'BEGIN { printf "  foyer / dracut = %.2f (target: below 0.5)\n", f / d }'
                fi
        done
done
