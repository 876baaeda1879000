#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# bench/boot.sh [RUNS]: how long each initrd takes to hand over to the real root (docs/performance.md).
#
# In one run, for each suite (BENCH_SUITES, default the host's) and each case (BENCH_CASES, default
# ext4), boots the suite's kernel with the same test disks and QEMU settings and
#   - foyer:           foyer's generic image (foyer build; --root for a suite other than the host's);
#   - foyer-hostonly:  foyer build --hostonly, made inside a VM of the bench's (bench/mkhostonly.sh:
#                      the VM's hardware, not this machine's);
#   - dracut:          the suite's dracut's systemd initrd, dracut --no-hostonly (bench/lib.sh);
#   - dracut-hostonly: dracut --hostonly, made in the same VM as foyer's;
#   - floor:           a busybox /init that loads virtio and ext4 and switch_roots (bench/mkfloor.sh),
#                      the least an initrd can do here;
#   - systemd-floor, udev-floor: foyer's host-only image with its generators masked and booted into
#                      one service instead of initrd.target (bench/mkfloor-systemd.sh): the least a
#                      systemd initrd does here, without and with udev finding the disk.
# The host-only images and the floors are made for the host's suite and the ext4 case only. Cases are
# recipes of test/vm/mkdisk.sh: ext4 (a bare ext4 root) and lvm-on-luks (LVM inside LUKS2, root and
# /usr on LVs; the passphrase is typed a second after the prompt shows, the same wait for each).
# The boots go round-robin over the images, RUNS times (default 3). From the kernel's console
# timestamps (printk.time=1, seconds since the kernel started): "Run /init", the real root's
# systemd starting (its "systemd NNN running in system mode" line, the last one), and the initrd
# phase between them; for each image the median of the runs, and the ratios the issue asks for.
# Not a test: it needs root and under TCG about a minute per boot, plus minutes for the host-only
# images. Environment: BUILDDIR (default build), FOYER_KVER, FOYER_VM_SMP (default 2), BENCH_SUITES,
# BENCH_CASES, FOYER_VM_SHARED_CACHE, FOYER_TREE_CACHE, BENCH_VM_SLOT (a command to run each boot
# under, such as a lock that keeps boots of other users off the machine), BENCH_HOSTONLY (a directory
# with the two host-only images an earlier bench/mkhostonly.sh made for the same build and kernel).
set -euo pipefail
topdir=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=SCRIPTDIR/../tools/lib.sh
. "$topdir/tools/lib.sh"
# shellcheck source=SCRIPTDIR/lib.sh
. "$topdir/bench/lib.sh"
cd "$topdir"

runs=${1:-3}
builddir=${BUILDDIR:-build}
out=$builddir/bench
root_uuid=5f1a0c3e-7d4b-4e2a-9c61-0a1b2c3d4e01
lvm_luks_uuid=5f1a0c3e-7d4b-4e2a-9c61-0a1b2c3d4e14      # see the lvm-on-luks recipe
lvm_passphrase=foyer-lvm-pass-5Tw9
host=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
read -ra cases <<<"${BENCH_CASES:-ext4}"
read -ra suites <<<"${BENCH_SUITES:-$host}"
read -ra slot <<<"${BENCH_VM_SLOT:-}"
mkdir -p "$out"

ensure_packages dracut-core busybox
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

mib() { awk -v s="$(stat -c %s "$1")" 'BEGIN { printf "%.1f", s / 1048576 }'; }

declare -A image kernel root inits reals append
for suite in "${suites[@]}"; do
        bench_suite "$suite"
        echo "building images of $suite (kernel $bench_kver, systemd $(bench_systemd_version)) ..."
        bench_foyer "$builddir" "$out/foyer-$suite.img" || { echo "bench: foyer build failed for $suite" >&2; exit 1; }
        bench_dracut "$out/dracut-$suite.img" || { echo "bench: dracut failed for $suite" >&2; exit 1; }
        image[$suite/foyer]=$out/foyer-$suite.img
        image[$suite/dracut]=$out/dracut-$suite.img
        kernel[$suite]=$bench_kernel
        root[$suite]=bookworm
        [[ ! -x test/vm/roots/$suite.sh ]] || root[$suite]=$suite
        if [[ $suite == "$host" ]]; then
                bench/mkfloor.sh "$bench_kver" "$out/floor-$suite.img"
                image[$suite/floor]=$out/floor-$suite.img
                tree=$("test/vm/roots/${root[$suite]}.sh" "$disk_cache")
                if [[ -n ${BENCH_HOSTONLY:-} ]]; then
                        echo "host-only images from $BENCH_HOSTONLY (an earlier bench/mkhostonly.sh)"
                        cp "$BENCH_HOSTONLY/foyer-hostonly.img" "$BENCH_HOSTONLY/dracut-hostonly.img" "$out/"
                else
                        echo "building the host-only images inside a VM (minutes) ..."
                fi
                if [[ -n ${BENCH_HOSTONLY:-} ]] ||
                   "${slot[@]}" bench/mkhostonly.sh "$builddir" "$bench_kver" "$bench_kernel" "$out/foyer-$suite.img" \
                        "$tree" "$root_uuid" "$out"; then
                        mv "$out/foyer-hostonly.img" "$out/foyer-hostonly-$suite.img"
                        mv "$out/dracut-hostonly.img" "$out/dracut-hostonly-$suite.img"
                        image[$suite/foyer-hostonly]=$out/foyer-hostonly-$suite.img
                        image[$suite/dracut-hostonly]=$out/dracut-hostonly-$suite.img
                        bench/mkfloor-systemd.sh "$bench_stage_dir/usr/bin/foyer" "$out/foyer-hostonly-$suite.img" "$out"
                        for n in systemd-floor udev-floor; do
                                mv "$out/$n.img" "$out/$n-$suite.img"
                                image[$suite/$n]=$out/$n-$suite.img
                                append[$suite/$n]=rd.systemd.unit=floor.target
                        done
                else
                        echo "bench: the host-only images could not be made (see $out/hostonly-work)" >&2
                fi
        fi
done
initrds() {     # SUITE CASE: the images that can boot it
        local n
        for n in foyer foyer-hostonly dracut dracut-hostonly floor systemd-floor udev-floor; do
                [[ -n ${image[$1/$n]:-} ]] || continue
                [[ $2 == ext4 || $n == foyer || $n == dracut ]] || continue
                echo "$n"
        done
}
for suite in "${suites[@]}"; do
        tree=$("test/vm/roots/${root[$suite]}.sh" "$disk_cache")
        for c in "${cases[@]}"; do
                [[ -f $out/$c.scenario ]] || { echo "bench: unknown case '$c'" >&2; exit 2; }
                mapfile -t disks < <(test/vm/mkdisk.sh "$disk_cache" "$tree" "$c")
                for ((r = 1; r <= runs; r++)); do
                        for n in $(initrds "$suite" "$c"); do
                                log=$out/$suite-$c-$n-$r.log
                                if ! times=$(bench_boot "$builddir" "$log" "$out/$c.scenario" "${kernel[$suite]}" \
                                        "${image[$suite/$n]}" "${append[$suite/$n]:-}" "${disks[@]}"); then
                                        echo "$suite, $c, $n: boot failed, see $log and $log.err"
                                        continue
                                fi
                                read -r init real <<<"$times"
                                printf '%-9s %-12s %-16s run %d: /init at %6.2f s, real systemd at %6.2f s, initrd phase %6.2f s\n' \
                                        "$suite" "$c" "$n" "$r" "$init" "$real" "$(awk -v a="$init" -v b="$real" 'BEGIN { print b - a }')"
                                inits[$suite/$c/$n]+="$init "
                                reals[$suite/$c/$n]+="$real "
                        done
                done
        done
done

echo
echo "$(nproc) host cores, QEMU/TCG smp ${FOYER_VM_SMP:-2}; median of $runs boot(s); seconds from the kernel's start:"
declare -A med_init med_real med_phase
for suite in "${suites[@]}"; do
        echo "$suite: kernel ${kernel[$suite]}, real root ${root[$suite]}"
        for c in "${cases[@]}"; do
                echo " $c:"
                printf '  %-16s %8s %14s %13s %10s\n' image "/init" "real systemd" "initrd phase" "size MiB"
                for n in $(initrds "$suite" "$c"); do
                        k=$suite/$c/$n
                        if [[ -z ${inits[$k]:-} ]]; then
                                printf '  %-16s failed\n' "$n"
                                continue
                        fi
                        med_init[$k]=$(tr ' ' '\n' <<<"${inits[$k]}" | grep . | bench_median)
                        med_real[$k]=$(tr ' ' '\n' <<<"${reals[$k]}" | grep . | bench_median)
                        # The phase's median, not the difference of the medians.
                        med_phase[$k]=$(paste -d' ' <(tr ' ' '\n' <<<"${inits[$k]}" | grep .) \
                                <(tr ' ' '\n' <<<"${reals[$k]}" | grep .) | awk '{ print $2 - $1 }' | bench_median)
                        printf '  %-16s %8.2f %14.2f %13.2f %10s\n' "$n" "${med_init[$k]}" "${med_real[$k]}" \
                                "${med_phase[$k]}" "$(mib "${image[$suite/$n]}")"
                done
                ratio() {       # LABEL A B [TARGET]: A / B, against issue 19's target if it has one
                        [[ -n ${2:-} && -n ${3:-} ]] || return 0
                        awk -v l="$1" -v a="$2" -v b="$3" -v t="${4:-}" 'BEGIN {
                                printf "  %-52s %5.2f", l, a / b
                                if (t != "") printf " (issue 19: <= %s, %s)", t, a / b <= t ? "met" : "NOT met"
                                printf "\n" }'
                }
                ratio "foyer / dracut, initrd phase" "${med_phase[$suite/$c/foyer]:-}" "${med_phase[$suite/$c/dracut]:-}" 0.3
                ratio "foyer / dracut, kernel start to real systemd" "${med_real[$suite/$c/foyer]:-}" "${med_real[$suite/$c/dracut]:-}" 0.4
                ratio "foyer-hostonly / dracut-hostonly, initrd phase" "${med_phase[$suite/$c/foyer-hostonly]:-}" \
                        "${med_phase[$suite/$c/dracut-hostonly]:-}"
                ratio "foyer-hostonly / floor, kernel start to real systemd" "${med_real[$suite/$c/foyer-hostonly]:-}" \
                        "${med_real[$suite/$c/floor]:-}" 1.5
                ratio "foyer / floor, kernel start to real systemd" "${med_real[$suite/$c/foyer]:-}" \
                        "${med_real[$suite/$c/floor]:-}"
                ratio "systemd-floor / floor, kernel start to real systemd" "${med_real[$suite/$c/systemd-floor]:-}" \
                        "${med_real[$suite/$c/floor]:-}"
                ratio "udev-floor / floor, kernel start to real systemd" "${med_real[$suite/$c/udev-floor]:-}" \
                        "${med_real[$suite/$c/floor]:-}"
        done
done
