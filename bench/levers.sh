#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# bench/levers.sh [RUNS]: what each boot lever of docs/performance.md saves, against the udev floor.
#
# Takes the images of a finished bench/boot.sh run of the host's suite (BUILDDIR/bench: foyer's
# generic and host-only images and the udev floor) and makes, by appending an archive to each of
# the two foyer images (as bench/mkfloor-systemd.sh makes the floors; the kernel unpacks it over the
# image), one variant per lever:
#   reload         initrd-parse-etc.service always runs daemon-reload, as systemd's unit did before
#                  it learned to check first, instead of the check that reloads only when the real
#                  root's fstab has an entry for the initrd (what foyer's unit and systemd 252's do):
#                  the check's saving;
#   one-generator  the image's generators masked and build/bench/one-generator (all of them in one
#                  process, bench/one-generator.c) in their place: what one generator process instead
#                  of nine would save;
#   rules          the udev rules that serve no device of the bench VM masked (BENCH_RULES, a list of
#                  file names of /usr/lib/udev/rules.d; by default those below): what trimmed rules
#                  in a host-only image would save.
# Then boots the unchanged images, the variants and the udev floor round-robin, RUNS times (default
# 5), as bench/boot.sh does (same disk, kernel, QEMU settings), and prints each boot, the medians of
# the initrd phase and each image's ratio to the udev floor's (issue 34's targets: host-only <= 1.2,
# generic <= 1.35).
# Environment: BUILDDIR (default build), FOYER_VM_SMP (default 2), FOYER_VM_SHARED_CACHE,
# BENCH_VM_SLOT, BENCH_RULES, BENCH_LEVERS (default "reload one-generator rules").
set -euo pipefail
topdir=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=SCRIPTDIR/../tools/lib.sh
. "$topdir/tools/lib.sh"
# shellcheck source=SCRIPTDIR/lib.sh
. "$topdir/bench/lib.sh"
cd "$topdir"

runs=${1:-5}
builddir=${BUILDDIR:-build}
out=$builddir/bench
host=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
read -ra levers <<<"${BENCH_LEVERS:-reload one-generator rules}"
# Rules of Debian 12's generic image that no device of the bench VM (an ext4 on a virtio disk: no
# RAID, LVM, device-mapper, btrfs, CD drive or FIDO token, no network device the initrd uses) gets
# anything from; udev reads the rules at its start and runs them for every event.
read -ra rules <<<"${BENCH_RULES:-01-md-raid-creating.rules 11-foyer-dm-persist.rules 55-dm.rules \
        56-lvm.rules 60-cdrom_id.rules 60-fido-id.rules 60-persistent-storage-dm.rules \
        63-md-raid-arrays.rules 64-btrfs.rules 64-md-raid-assembly.rules 69-lvm.rules \
        75-net-description.rules 95-dm-notify.rules}"

bench_suite "$host"
ninja -C "$builddir" bench/one-generator >/dev/null
for f in "foyer-$host.img" "foyer-hostonly-$host.img" "udev-floor-$host.img"; do
        [[ -f $out/$f ]] || { echo "levers: no $out/$f: run bench/boot.sh first" >&2; exit 1; }
done

t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT

# variant BASE LEVER: $out/levers/BASE-LEVER.img, BASE's image with LEVER's archive appended.
variant() {
        local base=$1 lever=$2 img=$out/foyer-$1-$host.img o=$t/$1-$2 g r
        [[ $base == generic ]] && img=$out/foyer-$host.img
        mkdir -p "$o/etc/systemd/system"
        case $lever in
        reload)
                mkdir -p "$o/etc/systemd/system/initrd-parse-etc.service.d"
                cat >"$o/etc/systemd/system/initrd-parse-etc.service.d/99-bench-reload.conf" <<-EOF
		[Service]
		ExecStart=
		ExecStart=systemctl daemon-reload
		ExecStart=-systemctl --no-block start initrd-fs.target
		ExecStart=systemctl --no-block start initrd-cleanup.service
		EOF
                ;;
        one-generator)
                mkdir -p "$o/etc/systemd/system-generators"
                while read -r g; do
                        ln -s /dev/null "$o/etc/systemd/system-generators/$g"
                done < <(bench_generators "$builddir/src/foyer/foyer" "$img" | grep -x 'foyer-.*-generator')
                install -m 0755 "$builddir/bench/one-generator" "$o/etc/systemd/system-generators/foyer-generators"
                strip "$o/etc/systemd/system-generators/foyer-generators"
                ;;
        rules)
                mkdir -p "$o/etc/udev/rules.d"
                for r in "${rules[@]}"; do
                        ln -s /dev/null "$o/etc/udev/rules.d/$r"
                done
                ;;
        *)
                echo "levers: unknown lever '$lever'" >&2
                exit 2
                ;;
        esac
        mkdir -p "$out/levers"
        bench_append_archive "$img" "$o" "$out/levers/$base-$lever.img"
}

declare -A image append
image[generic]=$out/foyer-$host.img
image[hostonly]=$out/foyer-hostonly-$host.img
image[udev-floor]=$out/udev-floor-$host.img
append[udev-floor]=rd.systemd.unit=floor.target
names=(hostonly generic udev-floor)
for base in hostonly generic; do
        for l in "${levers[@]}"; do
                variant "$base" "$l"
                image[$base-$l]=$out/levers/$base-$l.img
                names+=("$base-$l")
        done
done

disk_cache=${FOYER_VM_SHARED_CACHE:-$builddir/vm-cache}
tree=$(test/vm/roots/bookworm.sh "$disk_cache")
mapfile -t disks < <(test/vm/mkdisk.sh "$disk_cache" "$tree" ext4)
[[ -f $out/ext4.scenario ]] || { echo "levers: no $out/ext4.scenario: run bench/boot.sh first" >&2; exit 1; }

declare -A phases
for ((r = 1; r <= runs; r++)); do
        for n in "${names[@]}"; do
                log=$out/levers/$n-$r.log
                if ! times=$(bench_boot "$builddir" "$log" "$out/ext4.scenario" "$bench_kernel" "${image[$n]}" \
                        "${append[$n]:-}" "${disks[@]}"); then
                        echo "$n: boot failed, see $log and $log.err"
                        continue
                fi
                read -r init real <<<"$times"
                phase=$(awk -v a="$init" -v b="$real" 'BEGIN { printf "%.2f", b - a }')
                printf '%-24s run %d: /init at %6.2f s, real systemd at %6.2f s, initrd phase %6.2f s\n' \
                        "$n" "$r" "$init" "$real" "$phase"
                phases[$n]+="$phase "
        done
done

echo
echo "$(nproc) host cores, QEMU/TCG smp ${FOYER_VM_SMP:-2}; initrd phase, median of $runs boots; ratio to the udev floor's:"
floor=$(tr ' ' '\n' <<<"${phases[udev-floor]:-}" | grep . | bench_median || true)
for n in "${names[@]}"; do
        [[ -n ${phases[$n]:-} ]] || { printf '  %-24s failed\n' "$n"; continue; }
        m=$(tr ' ' '\n' <<<"${phases[$n]}" | grep . | bench_median)
        printf '  %-24s %6.2f s' "$n" "$m"
        [[ -z $floor ]] || awk -v m="$m" -v f="$floor" 'BEGIN { printf "  %.2f x the udev floor", m / f }'
        echo
done
