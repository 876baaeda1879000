#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# mkroot.sh CACHEDIR [SUITE]
#
# Builds (once) the real root the VM tests switch into: a minimal Debian SUITE (default bookworm)
# made with debootstrap, plus foyer-report.service, which prints one FOYER-REPORT line on ttyS0
# and powers the machine off. Prints the tree's path on stdout.
#
# bookworm's tree is cached as CACHEDIR/root-<hash>, where <hash> covers this script, so editing
# the recipe rebuilds it; it has no kernel and no LVM tools: the host's kernel boots it, with an
# image the host's foyer builds. Any other suite's tree (CACHEDIR/tree-SUITE-<hash>) is a system
# that builds its own initrd: it also has the suite's kernel (modules included), kmod, the
# cryptsetup and LVM tools, systemd-boot's EFI stub and less, and run-scenario.sh boots its kernel with
# `foyer build --root TREE` (see roots/). mkdisk.sh leaves /boot and the modules off the disks.
#
# SUITE bookworm-installer (roots/bookworm-installer.sh) is Debian 12 with its own kernel, as the
# installer's guided "encrypted LVM" leaves it: cryptsetup and lvm2 installed, /etc/crypttab
# naming the LUKS volume vda5_crypt (UUID INSTALLER_LUKS_UUID below, which mkdisk.sh's recipe
# "installer" uses) and /etc/fstab naming /dev/mapper/debian--vg-root and -swap_1. `foyer build
# --root` of it must find the volume, the root and the swap there (no --crypttab, no rd.luks).
#
# Exit status 3: debootstrap itself failed (the archive may be mid-transition; roots/sid.sh
# turns that into a skip).
set -euo pipefail

cachedir=${1:?usage: mkroot.sh CACHEDIR [SUITE]}
suite=${2:-bookworm}
mirror=${FOYER_DEBIAN_MIRROR:-$(sed -n 's/^URIs: *\(http[^ ]*debian\)$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1)}
mirror=${mirror:-http://deb.debian.org/debian}
[[ $suite =~ ^[a-z][a-z0-9-]*$ ]] || { echo "mkroot: bad suite name '$suite'" >&2; exit 2; }
dist=$suite
INSTALLER_LUKS_UUID=4c554b53-2d70-4000-8000-000000000051

# shellcheck source=SCRIPTDIR/../lib/cache.sh
source "$(dirname "$(realpath "$0")")/../lib/cache.sh"

mkdir -p "$cachedir"
packages=systemd-sysv,udev,e2fsprogs,dmsetup
if [[ $suite == bookworm ]]; then
        hash=$(cache_key "$0")
        prefix=root
else
        hash=$(cache_key "$0" -- "$suite")
        prefix=tree-$suite
        # What the system needs to build its own initrd (as mktree.sh's trees; since trixie,
        # systemd-cryptsetup is a package of its own) and a UKI on its own stub, and less (not in
        # minbase; the host's image has it), the pager of the emergency shell.
        packages+=,linux-image-amd64,kmod,cryptsetup-bin,systemd-cryptsetup,lvm2,systemd-boot-efi,less
        if [[ $suite == bookworm-installer ]]; then
                # bookworm's systemd-cryptsetup is in the systemd package; no UKI here.
                dist=bookworm
                packages=${packages/,systemd-cryptsetup/}
                packages=${packages/,systemd-boot-efi/}
        fi
fi
tree=$cachedir/$prefix-$hash

if cache_begin "$cachedir/$prefix.lock" "$tree"; then
        echo "$tree"
        exit 0
fi

echo "mkroot: debootstrap $suite ($packages) from $mirror into $tree" >&2
# INITRD=No: the kernel's postinst hooks (initramfs-tools', dracut's) make no image; it would only
# be deleted below (the scenarios boot foyer's), and costs minutes of CPU beside the suite.
if ! INITRD=No debootstrap --variant=minbase --include="$packages" "$dist" "$tree.tmp" "$mirror" >&2; then
        echo "mkroot: debootstrap of $suite from $mirror failed" >&2
        rm -rf "$tree.tmp"
        exit 3
fi

t=$tree.tmp
# Keep the tree small: disk images are made from it for every scenario.
rm -rf "$t"/usr/share/doc/* "$t"/usr/share/man/* "$t"/usr/share/info/* \
       "$t"/usr/share/locale/* "$t"/usr/share/i18n/* "$t"/usr/share/zoneinfo/right \
       "$t"/var/lib/apt/lists/* "$t"/var/cache/apt/*.bin "$t"/var/cache/apt/archives/*.deb \
       "$t"/var/cache/debconf/*-old "$t"/var/log/*.log
if [[ $suite == bookworm ]]; then
        # Kernel modules are not needed inside the test root (the initrd loads what it needs).
        rm -rf "$t"/usr/lib/modules/* "$t"/lib/modules/* 2>/dev/null || true
else
        # The image is foyer's, built from this tree; initramfs-tools' own would only take room.
        rm -f "$t"/boot/initrd.img-*
fi

echo foyer-test > "$t/etc/hostname"
# A banner of its own ("Welcome to Debian GNU/Linux 12 (bookworm, foyer test root)!", sid's
# "Debian GNU/Linux forky/sid (foyer test root)"), so the console tells the real root's systemd
# from an initrd that reuses Debian's os-release.
rm -f "$t/etc/os-release"
sed -e 's/^PRETTY_NAME="\(.*\))"$/PRETTY_NAME="\1, foyer test root)"/' \
    -e '/foyer test root/!s/^PRETTY_NAME="\(.*\)"$/PRETTY_NAME="\1 (foyer test root)"/' \
    "$t/usr/lib/os-release" > "$t/etc/os-release"
: > "$t/etc/machine-id"
# Root without password: the console is the test's only interface.
chroot "$t" passwd -d root >/dev/null
# Persistent journal, so the initrd's messages flushed from /run can be checked.
mkdir -p "$t/var/log/journal"
# Disk recipes write their own /etc/fstab; the default has no entries.
printf '# foyer test root: no entries unless the disk recipe adds them\n' > "$t/etc/fstab"
if [[ $suite == bookworm-installer ]]; then
        # As debian-installer 12 writes them for guided "encrypted LVM" on the first disk (its
        # /boot partition left out: the VM boots the kernel directly).
        printf '%s\n' "vda5_crypt UUID=$INSTALLER_LUKS_UUID none luks,discard" > "$t/etc/crypttab"
        cat > "$t/etc/fstab" <<'EOF'
# /etc/fstab: static file system information.
#
# Use 'blkid' to print the universally unique identifier for a
# device; this may be used with UUID= as a more robust way to name devices
# that works even if disks are added and removed. See fstab(5).
#
# systemd generates mount units based on this file, see systemd.mount(5).
# Please run 'systemctl daemon-reload' after making changes here.
#
# <file system> <mount point>   <type>  <options>       <dump>  <pass>
/dev/mapper/debian--vg-root /               ext4    errors=remount-ro 0       1
/dev/mapper/debian--vg-swap_1 none            swap    sw              0       0
EOF
fi
# Nothing but the report should talk on the serial console after boot.
chroot "$t" systemctl mask serial-getty@ttyS0.service getty@tty1.service \
        systemd-timesyncd.service apt-daily.timer apt-daily-upgrade.timer \
        getty-static.service getty.target e2scrub_reap.service e2scrub_all.timer fstrim.timer 2>/dev/null || true
# The real root only has to report: what a minimal Debian system starts that no scenario looks at is
# masked, since under TCG every process costs (measured: switch-root to sysinit.target took 12.3 s
# in bookworm's root and 17.1 s in trixie's, 5.6 s and 11.2 s without these). The generators,
# units and checks the scenarios need stay: fstab, cryptsetup, veritysetup, gpt-auto,
# hibernate-resume, debug (systemd.debug_shell=) and tpm2, the file system, swap, LVM and
# hibernation units. Masking a generator is a link to /dev/null under its name in /etc.
mkdir -p "$t/etc/systemd/system-generators"
for g in getty rc-local run system-update sysv ssh integritysetup bless-boot; do
        ln -sf /dev/null "$t/etc/systemd/system-generators/systemd-$g-generator"
done
for u in modprobe@configfs.service modprobe@drm.service modprobe@efi_pstore.service modprobe@fuse.service \
         modprobe@loop.service dev-hugepages.mount dev-mqueue.mount sys-kernel-debug.mount \
         sys-kernel-tracing.mount sys-fs-fuse-connections.mount sys-kernel-config.mount \
         proc-sys-fs-binfmt_misc.automount systemd-binfmt.service systemd-pstore.service \
         systemd-random-seed.service systemd-sysctl.service systemd-update-utmp.service \
         systemd-update-utmp-runlevel.service dpkg-db-backup.timer systemd-tmpfiles-clean.timer; do
        ln -sf /dev/null "$t/etc/systemd/system/$u"
done
if [[ $suite != bookworm ]]; then
        # The machine-id is empty (each boot is a first boot): newer systemd-firstboot would wait
        # for a key press on the console.
        chroot "$t" systemctl mask systemd-firstboot.service >/dev/null 2>&1
fi

install -D -m 0755 /dev/stdin "$t/usr/local/sbin/foyer-report" <<'EOF'
#!/bin/bash
# Prints one machine-readable line about how this boot went, then powers off.
prop() { systemctl show -p "$1" --value; }
now_us=$(awk '{ printf "%d", $1 * 1000000 }' /proc/uptime)
initrd=$(prop InitRDTimestampMonotonic)
user=$(prop UserspaceTimestampMonotonic)
initrd_ms=-1
if [[ ${initrd:-0} -gt 0 && ${user:-0} -gt 0 ]]; then
        initrd_ms=$(( (user - initrd) / 1000 ))
fi
userspace_ms=$(( (now_us - ${user:-0}) / 1000 ))

opts=$(findmnt -n -o OPTIONS /)
case ",$opts," in *,rw,*) rw=1 ;; *) rw=0 ;; esac
src=$(findmnt -n -o SOURCE / | sed 's/\[.*//')
fstype=$(findmnt -n -o FSTYPE /)
subvol=$(sed -n 's/.*subvol=\([^,]*\).*/\1/p' <<<"$opts")
usr=none
if mountpoint -q /usr; then
        usr=$(findmnt -n -o SOURCE /usr)
fi
fstab_root=$(findmnt --fstab -n -o SOURCE / 2>/dev/null || true)
fstab_usr=$(findmnt --fstab -n -o SOURCE /usr 2>/dev/null || true)

# This boot's journal, read once (each journalctl is a second or more under TCG), as
# "[MONOTONIC] HOST IDENTIFIER[PID]: MESSAGE" lines: messages from before the switch-root are kept in it.
journal=$(journalctl -b -q -o short-monotonic --no-pager 2>/dev/null)
initrd_journal=0
grep -q 'Switching root' <<<"$journal" && initrd_journal=1
# Entries from foyer's own programs (foyer-root-generator, ...): they only run in the initrd.
foyer_log=$(grep -cE '^\[ *[0-9]+\.[0-9]+\] [^ ]+ foyer-[A-Za-z0-9_.-]+(\[[0-9]+\])?: ' <<<"$journal" || true)
fsck_log=$(journalctl -b -q -o cat --no-pager -u systemd-fsck-root.service -t systemd-fsck 2>/dev/null)
fsck_lines=$(grep -c . <<<"$fsck_log" || true)
fsck_fixed=0
grep -Eq 'not cleanly unmounted|check forced|FILE SYSTEM WAS MODIFIED' <<<"$fsck_log" && fsck_fixed=1

# The block device stack under / (for example "crypt+part+disk" or "lvm+crypt+disk").
stack=$(lsblk -s -n -r -o TYPE "$src" 2>/dev/null | paste -sd+ -)
# The drivers that serve the disks under / ("sd,virtio_scsi,virtio-pci"): for each disk of the stack,
# the sysfs driver of its device and of each parent up to the bus, as the kernel names them
# (virtio_pci's driver is virtio-pci, xhci-pci's xhci_hcd); several disks' lists are merged in order.
drivers=$(lsblk -s -n -r -o NAME,TYPE "$src" 2>/dev/null | awk '$2 == "disk" { print $1 }' |
          while read -r disk; do
                  d=$(readlink -f "/sys/class/block/$disk/device")
                  while [[ $d == /sys/devices/?* ]]; do
                          [[ -L $d/driver ]] && basename "$(readlink "$d/driver")"
                          d=${d%/*}
                  done
          done | awk '!seen[$0]++' | paste -sd, -)
# Active logical volumes, as VG/LV, comma-separated ("-" without LVM).
# Only dmsetup is installed here, not lvm2: the real root must not activate anything itself,
# so what is active is what the initrd activated.
lvs_active=$(dmsetup info -c --noheadings --separator ' ' -o name,uuid 2>/dev/null |
             while read -r name uuid; do
                     [[ $uuid == LVM-* ]] && dmsetup splitname --noheadings --separator / -o vg_name,lv_name "$name"
             done | sort | paste -sd, -)
# What the EFI boot loader or stub said about where it came from ("-" without EFI).
# (efivarfs files cannot seek, so tail reads them through a pipe.)
loader_part=$(cat /sys/firmware/efi/efivars/LoaderDevicePartUUID-4a67b082-0a4c-41cf-b6c7-440b29bb8c4f 2>/dev/null |
              tail -c +5 | tr -d '\0' | tr 'A-Z' 'a-z')
# What foyer-gpt-auto-generator --root-discovered logged in the initrd (the journal keeps the
# initrd's part): root_discovered=gpt-auto and root_partuuid= once it confirmed /sysroot as the
# discovered root partition, usr_discovered= when it mounted a discovered /usr.
notes=
gpt_log=$(grep -E 'discovered (root|/usr) partition' <<<"$journal" || true)
root_pu=$(sed -n 's/.*is mounted from the discovered root partition .*(PARTUUID=\([0-9a-f-]*\)).*/\1/p' <<<"$gpt_log" | head -n1)
usr_pu=$(sed -n 's/.*Mounting the discovered \/usr partition .*(PARTUUID=\([0-9a-f-]*\),.*/\1/p' <<<"$gpt_log" | head -n1)
[[ -n $root_pu ]] && notes+=" root_discovered=gpt-auto root_partuuid=$root_pu"
[[ -n $usr_pu ]] && notes+=" usr_discovered=$usr_pu"

failed=$(systemctl list-units --state=failed --no-legend --plain 2>/dev/null | awk '{ print $1 }' | grep -v '^foyer-report' || true)
nfailed=$(grep -c . <<<"$failed" || true)

# Details first: the harness stops the machine as soon as it has the report line.
sed 's/^/FOYER-CMDLINE: /' /proc/cmdline
dmsetup table 2>/dev/null | sed 's/^/FOYER-DM: /' || true
# What a failed unit said, so that a failure seen only on another machine can be read from its log.
for unit in $failed; do
        journalctl -b -u "$unit" -o short-monotonic --no-pager 2>/dev/null | tail -n 25 |
                sed "s/^/FOYER-FAILED: $unit: /" || true
done
if [[ $fsck_lines -gt 0 ]]; then
        sed 's/^/FOYER-FSCK: /' <<<"$fsck_log"
fi
echo "FOYER-REPORT root=reached rw=$rw fstype=$fstype src=$src subvol=${subvol:--}" \
     "usr=$usr fstab_root=${fstab_root:--} fstab_usr=${fstab_usr:--}" \
     "initrd_ms=$initrd_ms userspace_ms=$userspace_ms initrd_journal=$initrd_journal foyer_log=$foyer_log" \
     "fsck_lines=$fsck_lines fsck_fixed=$fsck_fixed failed_units=$nfailed" \
     "failed=$(tr '\n' ',' <<<"$failed" | sed 's/,$//; s/^$/-/')" \
     "stack=${stack:--} lvs_active=${lvs_active:--} loader_part=${loader_part:--}" \
     "drivers=${drivers:--}$notes"
systemctl --no-block --check-inhibitors=no poweroff
EOF

cat > "$t/etc/systemd/system/foyer-report.service" <<'EOF'
[Unit]
Description=foyer test report
After=multi-user.target
ConditionKernelCommandLine=!foyer.noreport

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/foyer-report
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS0

[Install]
WantedBy=multi-user.target
EOF
chroot "$t" systemctl enable foyer-report.service >/dev/null 2>&1

cache_commit "$tree"
# Old trees of earlier recipes (of this suite) are garbage now.
for old in "$cachedir/$prefix"-????????????{,.ok}; do
        [[ $old == "$tree" || $old == "$tree.ok" ]] || rm -rf "$old"
done
echo "$tree"
