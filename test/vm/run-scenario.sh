#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# run-scenario.sh VM_RUN BUILDDIR SCENARIO [FOYER_EXE GENERATOR_DIR UNIT_DIR]
#
# Runs one VM scenario: makes (or reuses) the test root, the scenario's disks and the initrd,
# then lets vm-run boot them and check the console. Scenario files are described in
# docs/testing.md. Exit status: 0 pass, 1 fail, 77 skip (no QEMU or no kernel).
#
# A scenario may name its kernel and its root tree (docs/testing.md):
#   kernel VERSION | PATH [VERSION]
#                     /boot/vmlinuz-VERSION, or the kernel at PATH, whose version (for the modules
#                     in the image) is VERSION or read from a name vmlinuz-VERSION; the scenario is
#                     skipped when that kernel is not there
#   root NAME         the real root made by roots/NAME.sh (default bookworm, mkroot.sh's tree)
#   initrd tree       boot the tree's own /boot/initrd.img-VERSION, which its initrd generator (foyer's
#                     package installed in it: roots/bookworm-installer.sh) made, instead of an image
#                     this build makes; only for a root with a kernel of its own
#
# A root tree with a kernel of its own (/boot/vmlinuz-*: roots/trixie.sh, roots/sid.sh) is a
# system that builds its own initrd: without a kernel line the scenario boots that kernel, the
# image is made with `foyer build --root TREE`, and a UKI is put together on the tree's own
# systemd-stub. In the scenario, @ROOT_SYSTEMD_VERSION@ stands for the tree's systemd package
# version (as systemd prints it at start), escaped for a regular expression.
#
# Environment:
#   FOYER_VM_KVER     kernel version to boot when the scenario names none (default: the newest
#                     /boot/vmlinuz-*)
#   FOYER_VM_ROOTS_DIR
#                     where the root recipes NAME.sh are (default: roots/ here; for the self-test)
#   FOYER_VM_INITRD   boot this initrd instead of building a foyer image
#   FOYER_VM_ALLOW_OTHER_INITRD=1
#                     when foyer's builder is not built, boot Debian's initrd instead of failing
#   FOYER_VM_ACCEL    kvm or tcg (default: probe KVM once, fall back to TCG)
#   FOYER_VM_SMP      vCPUs per VM (default 1)
#   FOYER_VM_BZIMAGE=1
#                     boot the kernel's bzImage as a boot loader would, instead of the same kernel
#                     decompressed once and booted through its PVH entry (mkvmlinux.sh)
set -euo pipefail

vm_run=${1:?usage: run-scenario.sh VM_RUN BUILDDIR SCENARIO [FOYER_EXE GENERATOR_DIR UNIT_DIR]}
builddir=$(realpath "${2:?}")
scenario=$(realpath "${3:?}")
foyer_exe=${4:-}
generator_dir=${5:-}
unit_dir=${6:-}
here=$(dirname "$(realpath "$0")")
name=$(basename "$scenario" .scenario)

skip() { echo "SKIP: $*"; exit 77; }

field() { awk -v k="$1" '$1 == k { $1 = ""; sub(/^ +/, ""); print }' "$scenario"; }
# A scenario's one line of a kind (two are an error: which one would hold?).
single_field() {
        local v
        v=$(field "$1")
        if [[ $(grep -c . <<<"$v") -gt 1 ]]; then
                echo "scenario $name: more than one $1 line" >&2
                exit 1
        fi
        printf '%s' "$v"
}

command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 is not installed"
kernel_line=$(single_field kernel)
read -r kernel_arg kernel_ver kernel_extra <<<"$kernel_line"
[[ -z ${kernel_extra:-} ]] || { echo "scenario $name: kernel VERSION or kernel PATH [VERSION]" >&2; exit 1; }
if [[ $kernel_arg == */* ]]; then
        kernel=$kernel_arg
        kver=$kernel_ver
        if [[ -z $kver && $(basename "$kernel") == vmlinuz-?* ]]; then
                kver=$(basename "$kernel")
                kver=${kver#vmlinuz-}
        fi
        [[ -n $kver ]] || { echo "scenario $name: kernel $kernel: name its version (kernel PATH VERSION)" >&2; exit 1; }
        [[ -r $kernel ]] || skip "the scenario's kernel $kernel is not there"
elif [[ -n $kernel_arg ]]; then
        [[ -z $kernel_ver ]] || { echo "scenario $name: kernel VERSION or kernel PATH [VERSION]" >&2; exit 1; }
        kver=$kernel_arg
        kernel=/boot/vmlinuz-$kver
        [[ -r $kernel ]] || skip "the scenario's kernel $kernel is not installed"
fi
[[ $(id -u) == 0 ]] || skip "making the test disks needs root (loop mounts, debootstrap)"

# The real root's recipe: roots/NAME.sh CACHEDIR makes (once) and prints the tree.
root_name=$(single_field root)
root_name=${root_name:-bookworm}
roots_dir=${FOYER_VM_ROOTS_DIR:-$here/roots}
[[ $root_name =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ && -x $roots_dir/$root_name.sh ]] ||
        { echo "scenario $name: no root recipe $roots_dir/$root_name.sh" >&2; exit 1; }

cache=$builddir/vm-cache
logs=$builddir/vm-logs
mkdir -p "$cache" "$logs"
export FOYER_VM_CACHE=$cache

# The test root and the disks can live in a cache shared between build trees (they depend
# only on the scripts that make them); the image is always this build tree's own.
disk_cache=${FOYER_VM_SHARED_CACHE:-$cache}
tree=$("$roots_dir/$root_name.sh" "$disk_cache")
# A tree with its own kernel builds its own initrd (see above); otherwise the host's kernel
# boots the host's image.
# shellcheck disable=SC2012 # kernel file names are plain: vmlinuz-VERSION
own_kver=$(ls "$tree"/boot/vmlinuz-* 2>/dev/null | sed 's|.*/vmlinuz-||' | sort -V | tail -n1 || true)
build_root=()
if [[ -n $own_kver ]]; then
        build_root=(--root "$tree")
        [[ -n $kernel_arg ]] || { kver=$own_kver; kernel=$tree/boot/vmlinuz-$kver; }
elif [[ -z $kernel_arg ]]; then
        # shellcheck disable=SC2012 # kernel file names are plain: vmlinuz-VERSION
        kver=${FOYER_VM_KVER:-$(ls /boot/vmlinuz-* 2>/dev/null | sed 's|.*/vmlinuz-||' | sort -V | tail -n1)}
        kernel=/boot/vmlinuz-$kver
        [[ -n $kver && -r $kernel ]] || skip "no kernel in /boot (install linux-image-amd64)"
fi

initrd_line=$(single_field initrd)
[[ -z $initrd_line || $initrd_line == tree ]] || { echo "scenario $name: initrd tree, not '$initrd_line'" >&2; exit 1; }

# The initrd: a foyer image unless told otherwise. "image-args" lines add foyer build options
# (paths relative to test/vm), such as a key file; such a scenario needs foyer's image.
needs=$(field needs)
read -ra image_args <<<"$(field image-args | tr '\n' ' ')"
[[ ${#image_args[@]} -eq 0 ]] || needs+=" foyer"
# A system that builds its own initrd is only tested with foyer's image of it.
[[ ${#build_root[@]} -eq 0 ]] || needs+=" foyer"
if [[ -n ${FOYER_VM_INITRD:-} ]]; then
        initrd=$FOYER_VM_INITRD
        kind="given ($initrd)"
        [[ $needs == *foyer* ]] && skip "scenario needs a foyer image, FOYER_VM_INITRD is set"
elif [[ $initrd_line == tree ]]; then
        # What the system's own package made of itself, as its boot loader would load it.
        [[ ${#build_root[@]} -gt 0 ]] || { echo "scenario $name: initrd tree needs a root with a kernel of its own" >&2; exit 1; }
        initrd=$tree/boot/initrd.img-$kver
        [[ -s $initrd ]] || { echo "scenario $name: the tree has no $initrd" >&2; exit 1; }
        kind="the tree's own /boot/initrd.img-$kver"
elif [[ -n $foyer_exe && -x $foyer_exe ]]; then
        initrd=$("$here/mkimage.sh" "$cache" "$kver" "$foyer_exe" "$generator_dir" "$unit_dir" \
                 "${build_root[@]}" "${image_args[@]}")
        kind="foyer${build_root[*]:+ --root of the tree}${image_args[*]:+ with ${image_args[*]}}"
else
        # Never boot another initrd unasked: a scenario passing on Debian's would say nothing
        # about foyer.
        if [[ ${FOYER_VM_ALLOW_OTHER_INITRD:-} != 1 ]]; then
                echo "scenario $name: foyer's builder is not built (${foyer_exe:-no path given}); set" \
                     "FOYER_VM_ALLOW_OTHER_INITRD=1 to boot Debian's initrd instead, or FOYER_VM_INITRD=FILE" >&2
                exit 1
        fi
        [[ $needs == *foyer* ]] && skip "scenario needs a foyer image and foyer is not built"
        initrd=/boot/initrd.img-$kver
        kind="Debian initramfs-tools (foyer's builder is not available, FOYER_VM_ALLOW_OTHER_INITRD=1)"
fi

recipe=$(field disk)
drives=()
if [[ -n $recipe ]]; then
        mkdisk=("$here/mkdisk.sh" "$disk_cache" "$tree" "$recipe")
        # MD RAID disks (md-*) are made by a setup VM, which boots this run's kernel and image
        # (they have mdadm and md's modules): mkdisk-md.sh.
        if [[ $recipe == md-* ]]; then
                [[ $needs == *foyer* ]] || { echo "scenario $name: an md-* disk needs a foyer image (needs foyer)" >&2; exit 1; }
                mkdisk=("$here/mkdisk-md.sh" "$disk_cache" "$tree" "$recipe" "$vm_run" "$kernel" "$initrd" "$logs")
        fi
        mapfile -t imgs < <("${mkdisk[@]}")
        [[ ${#imgs[@]} -gt 0 ]] || { echo "scenario $name: no disk images from ${mkdisk[0]##*/} $recipe" >&2; exit 1; }
        for img in "${imgs[@]}"; do
                drives+=(--drive "$img")
        done
fi

# Values a scenario names by placeholder, filled in here (into a copy of the scenario in the logs):
# @ROOT_SYSTEMD_VERSION@ is the tree's systemd, which the scenario can then expect from the initrd
# without naming a version that changes with the archive (sid's); @DISK_ROOTHASH@ is the dm-verity
# root hash a disk recipe left beside its images (mkdisk.sh's verity-*), which follows the tree.
subst=()
if grep -q '@ROOT_SYSTEMD_VERSION@' "$scenario"; then
        sd_version=$(dpkg-query --admindir="$tree/var/lib/dpkg" -W -f='${Version}' systemd 2>/dev/null || true)
        [[ -n $sd_version ]] || { echo "scenario $name: no systemd package in $tree" >&2; exit 1; }
        # A Debian version is [0-9A-Za-z.+~:-]: of those, . and + mean something in a regex.
        sd_regex=${sd_version//./\\.}
        sd_regex=${sd_regex//+/\\+}
        subst+=(@ROOT_SYSTEMD_VERSION@ "$sd_regex")
        kind+=", systemd $sd_version"
fi
# (What a disk recipe leaves beside its images is in the first image's directory.)
disk_dir=$(dirname "${imgs[0]:-/nonexistent/x}")
if grep -q '@DISK_ROOTHASH@' "$scenario"; then
        roothash_file=$disk_dir/roothash
        roothash=$(cat "$roothash_file" 2>/dev/null || true)
        [[ $roothash =~ ^[0-9a-f]{64,128}$ ]] ||
                { echo "scenario $name: @DISK_ROOTHASH@, but disk recipe ${recipe:-(none)} left no root hash in $roothash_file" >&2; exit 1; }
        subst+=(@DISK_ROOTHASH@ "$roothash")
fi
# @DISK_ROOTHASH_SIG@: the signature of that root hash the recipe left beside it (roothash.p7s), in
# base64, as systemd-veritysetup's root-hash-signature=base64:... takes it.
if grep -q '@DISK_ROOTHASH_SIG@' "$scenario"; then
        sig_file=$disk_dir/roothash.p7s
        [[ -s $sig_file ]] ||
                { echo "scenario $name: @DISK_ROOTHASH_SIG@, but disk recipe ${recipe:-(none)} left no $sig_file" >&2; exit 1; }
        subst+=(@DISK_ROOTHASH_SIG@ "$(base64 -w0 "$sig_file")")
fi
# For server and guestfwd lines (vm-run; servers/*.sh): @TESTDIR@ is this directory (test/vm), where
# the server scripts and test keys are; @TREE:NAME@ the tree of the root recipe roots/NAME.sh (made
# if need be: the server tree net-server, the tree an NFS server exports); @DISK:RECIPE@ the first
# image of mkdisk.sh's RECIPE made from the scenario's root tree, for a server to serve (NBD, iSCSI)
# rather than attached as a disk.
if grep -q '@TESTDIR@' "$scenario"; then
        subst+=(@TESTDIR@ "$here")
fi
mapfile -t phs < <(grep -o '@TREE:[A-Za-z0-9._-]*@' "$scenario" | sort -u)
for ph in "${phs[@]}"; do
        r=${ph#@TREE:}
        r=${r%@}
        [[ $r =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ && -x $roots_dir/$r.sh ]] ||
                { echo "scenario $name: $ph: no root recipe $roots_dir/$r.sh" >&2; exit 1; }
        subst+=("$ph" "$("$roots_dir/$r.sh" "$disk_cache")")
done
mapfile -t phs < <(grep -o '@DISK:[A-Za-z0-9._-]*@' "$scenario" | sort -u)
for ph in "${phs[@]}"; do
        r=${ph#@DISK:}
        r=${r%@}
        img=$("$here/mkdisk.sh" "$disk_cache" "$tree" "$r" | head -n1)
        [[ -n $img && -r $img ]] || { echo "scenario $name: $ph: mkdisk.sh $r made no image" >&2; exit 1; }
        subst+=("$ph" "$img")
done
if [[ ${#subst[@]} -gt 0 ]]; then
        while IFS= read -r line; do
                for ((i = 0; i < ${#subst[@]}; i += 2)); do
                        line=${line//"${subst[i]}"/"${subst[i + 1]}"}
                done
                printf '%s\n' "$line"
        done < "$scenario" > "$logs/$name.scenario"
        scenario=$logs/$name.scenario
fi

# A UKI scenario (`uki signed|unsigned ...`, with `firmware ovmf...`): this tree's foyer puts the
# kernel and the image into a UKI whose .cmdline is the scenario's append lines, on the ESP of a
# copy of the first disk, or on an ESP disk attached after it when it has none (mkuki.sh); the
# firmware boots it from there. "uki ... pcrsig" signs its PCR 11 values with the test key pair,
# with the root tree's own systemd-measure; a `uki-other-append ARGS` line makes a second UKI
# with ARGS added to the command line and the first one's signature, on an ESP disk of its own
# that the scenario's host steps find as $FOYER_VM_UKI_OTHER (to put in place of the first ESP).
uki=$(field uki)
uki_other=$(single_field uki-other-append)
[[ -n $uki || -z $(field esp-files) ]] || { echo "scenario $name: an esp-files line needs a uki line" >&2; exit 1; }
if [[ -n $uki ]]; then
        [[ -n $foyer_exe && -x $foyer_exe ]] || skip "a UKI scenario needs foyer's builder"
        [[ -n $recipe ]] || { echo "scenario $name: a uki line needs a disk" >&2; exit 1; }
        stub=
        measure_root=
        if [[ ${#build_root[@]} -gt 0 ]]; then
                stub=$tree/usr/lib/systemd/boot/efi/linuxx64.efi.stub
                measure_root=$tree
                [[ -r $stub ]] || { echo "scenario $name: the root tree has no $stub (systemd-boot-efi)" >&2; exit 1; }
        fi
        # `esp-files SCRIPT` (relative to test/vm): SCRIPT DIR TREE writes files into DIR, which
        # mkuki.sh copies onto the ESP beside the UKI (the stub's extra.d/, loader/credentials/).
        esp_script=$(single_field esp-files)
        esp_dir=
        if [[ -n $esp_script ]]; then
                [[ $esp_script =~ ^[A-Za-z0-9][A-Za-z0-9._/-]*$ && $esp_script != *..* && -x $here/$esp_script ]] ||
                        { echo "scenario $name: esp-files: no script test/vm/$esp_script" >&2; exit 1; }
                esp_dir=$cache/esp-$name
                rm -rf "$esp_dir"
                mkdir -p "$esp_dir"
                "$here/$esp_script" "$esp_dir" "$tree" >&2
                kind+=", ESP files from $esp_script"
        fi
        uki_disks=$("$here/mkuki.sh" "$cache" "$name" "$foyer_exe" "$kernel" "$initrd" "${imgs[0]}" "$uki" \
                    "console=ttyS0 panic=-1 printk.time=1 $(field append | tr '\n' ' ')" "$stub" "$measure_root" \
                    "$uki_other" "$esp_dir")
        mapfile -t uki_disks <<<"$uki_disks"
        imgs[0]=${uki_disks[0]}
        drives[1]=${imgs[0]}
        for img in "${uki_disks[@]:1}"; do
                drives+=(--drive "$img")
        done
        if [[ -n $uki_other ]]; then
                export FOYER_VM_UKI_OTHER=$cache/uki-$name/esp-other.img
                [[ -s $FOYER_VM_UKI_OTHER ]] || { echo "scenario $name: mkuki.sh left no $FOYER_VM_UKI_OTHER" >&2; exit 1; }
        fi
        kind+=", in a UKI ($uki)"
elif [[ -n $uki_other ]]; then
        echo "scenario $name: uki-other-append needs a uki line" >&2
        exit 1
fi

# What QEMU boots: the same kernel, decompressed once, through its PVH entry (mkvmlinux.sh: saves
# the 5-8 s each boot spends in the bzImage's decompressor under TCG); a UKI ignores it.
boot_kernel=$("$here/mkvmlinux.sh" "$disk_cache" "$kernel")
# A firmware line without a uki line: the firmware starts the kernel itself (vm-run
# --firmware-kernel), which needs the bzImage and its EFI stub.
firmware_kernel=()
if [[ -n $(field firmware) && -z $uki ]]; then
        boot_kernel=$kernel
        firmware_kernel=(--firmware-kernel)
fi
echo "scenario $name: kernel $kernel ($kver${boot_kernel:+, booted as $boot_kernel}), root $root_name, initrd: $kind, disk recipe: ${recipe:-none}"
# For the scenario's host steps: the directory of the helper scripts they run (hibernate-check.sh).
export FOYER_VM_TESTDIR=$here
# ... and the foyer command of this build (timeline-check.py draws the recorded timeline with it).
export FOYER_VM_FOYER=$foyer_exe
exec "$vm_run" --kernel "$boot_kernel" --initrd "$initrd" "${drives[@]}" "${firmware_kernel[@]}" \
        --smp "${FOYER_VM_SMP:-1}" --log "$logs/$name.log" "$scenario"
