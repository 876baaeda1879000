#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# gpt-auto-interplay.sh ROOT_GENERATOR GPT_AUTO_GENERATOR
#
# The root generator and the gpt-auto generator run side by side in the initrd, into the same three
# directories, as PID 1 runs them. For each command line both must exit 0 and between them write exactly
# the expected number of sysroot.mount units, from the expected generator:
#   no root=, root=gpt-auto      one, from gpt-auto (late/), the root generator writes none
#   root=UUID=..., root=/dev/..  one, from the root generator (normal/), gpt-auto writes nothing
#   root=gpt-auto + mount.usr=   one sysroot.mount (gpt-auto) and the root generator's sysusr-usr.mount
#   root=/dev/sda2 root=gpt-auto none: the root generator takes the last root= (gpt-auto) and gpt-auto is
#                                off after any other root=, both exactly as systemd 252's generators
#   systemd.gpt_auto=0           none (discovery off and no root=)
# and the root generator's initrd-usr-fs.target link to sysroot.mount must not be duplicated or broken.
set -u
root_gen=$(realpath "$1")
gpt_gen=$(realpath "$2")
here=$(dirname "$(realpath "$0")")
casedir=$here
# shellcheck source=SCRIPTDIR/lib.sh
source "$here/lib.sh"
fake_fsck_bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$fakebin"' EXIT
mkdir -p "$tmp/sys/firmware/efi/efivars"
{ printf '\x07\x00\x00\x00'; printf 'c12a7328-0000-4000-8000-00000000e5f0\0' | iconv -f UTF-8 -t UTF-16LE; } \
        >"$tmp/sys/firmware/efi/efivars/LoaderDevicePartUUID-4a67b082-0a4c-41cf-b6c7-440b29bb8c4f"
fail=0 n=0

# check NAME CMDLINE EXPECTED_SYSROOT_DIR(normal|late|none) [EXTRA_FILE...]
check() {
        local name=$1 cmdline=$2 want=$3 out=$tmp/$1 g rc found
        shift 3
        mkdir -p "$out"/{normal,early,late}
        for g in "$root_gen" "$gpt_gen"; do
                env -i PATH="$fakebin:/usr/bin:/bin" SYSTEMD_IN_INITRD=1 SYSTEMD_EFI_OPTIONS= \
                        FOYER_CMDLINE_DIR=/nonexistent SYSTEMD_FSTAB=/dev/null SYSTEMD_SYSROOT_FSTAB=/dev/null \
                        FOYER_SYSFS="$tmp/sys" SYSTEMD_PROC_CMDLINE="$cmdline" \
                        "$g" "$out/normal" "$out/early" "$out/late" 2>>"$out.log"
                rc=$?
                if ((rc != 0)); then
                        echo "FAIL $name: $(basename "$g") exited $rc"
                        sed 's/^/    /' "$out.log"
                        fail=1
                fi
        done
        found=$(cd "$out" && find . -name sysroot.mount -type f | sed 's|^\./||; s|/sysroot.mount$||' | sort | paste -sd' ')
        [[ $want == none ]] && want=""
        if [[ $found != "$want" ]]; then
                echo "FAIL $name ($cmdline): sysroot.mount in '${found}', expected '${want}'"
                fail=1
        fi
        for f in "$@"; do
                if [[ ! -e $out/$f && ! -L $out/$f ]]; then
                        echo "FAIL $name: $f missing"
                        fail=1
                fi
        done
        # The root generator's link for /usr must point at the one sysroot.mount there is.
        if [[ -L $out/normal/initrd-usr-fs.target.requires/sysroot.mount && -n $want &&
              ! -e $out/$want/sysroot.mount ]]; then
                echo "FAIL $name: initrd-usr-fs.target.requires/sysroot.mount has no sysroot.mount behind it"
                fail=1
        fi
        n=$((n + 1))
}

check no-root "" late late/foyer-gpt-auto-root.service normal/initrd-usr-fs.target.requires/sysroot.mount
check gpt-auto "root=gpt-auto rw" late late/systemd-cryptsetup@root.service
check uuid "root=UUID=3f5ad593-4546-4a94-a374-bcfb68aa11f7" normal normal/initrd-root-device.target.d/50-root-device.conf
check dev "root=/dev/sda2 rw" normal
check gpt-auto-usr "root=gpt-auto mount.usr=/dev/sda3" late normal/sysusr-usr.mount normal/sysroot-usr.mount
check root-then-gpt-auto "root=/dev/sda2 root=gpt-auto" none
check gpt-auto-then-root "root=gpt-auto root=/dev/sda2" normal
check disabled "systemd.gpt_auto=0" none
check roothash "roothash=0123456789abcdef" normal

# Both generators write initrd-root-device.target.d/50-root-device.conf only for their own root.
if [[ -e $tmp/uuid/late/initrd-root-device.target.d/50-root-device.conf ||
      -e $tmp/no-root/normal/initrd-root-device.target.d/50-root-device.conf ]]; then
        echo "FAIL: a generator wrote the root device drop-in for the other's root"
        fail=1
fi

echo "gpt-auto-interplay: $n command lines, $([[ $fail == 0 ]] && echo ok || echo FAILED)"
exit $fail
