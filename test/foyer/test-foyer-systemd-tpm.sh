#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Debian's systemd 261 and later ship the TPM2 units, programs and NvPCR definitions in a package
# of their own, systemd-tpm, which systemd only recommends: the sid tree (mktree.sh, debootstrap
# without recommends) has none of it. On a copy of the tree with stand-ins for tpm2-tss's libraries
# (so that only systemd-tpm is missing):
#   - a volume asking for TPM2 (tpm2-device= or tpm2-signature= in --crypttab, tpm2-device= in
#     rd.luks.options= of --cmdline)
#     fails the build with one line naming the package and each file it lacks, and leaves nothing;
#   - with systemd-tpm's initrd files in the copy (stand-ins at the package's paths, with its
#     links), the image holds them: the PCR phase, OS separator and NvPCR separator units, the SRK
#     setup, their programs and stock links, and every NvPCR definition (systemd-cryptsetup's too);
#   - a generic image, which no volume asks TPM2 of, is built without systemd-tpm.
# Usage: test-foyer-systemd-tpm.sh FOYER GENERATOR-DIR UNIT-DIR TREE (run by test-foyer-tree.sh)
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh" "$@"
set -o pipefail
tree=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
kver=$(find "$tree/usr/lib/modules" -mindepth 1 -maxdepth 1 -printf "%f\n" | sort | head -n1)
lib=$(find "$tree/usr/lib" -maxdepth 3 -name 'libsystemd-shared-*.so' -printf '%f\n' | head -n1)
version=${lib#libsystemd-shared-}
version=${version%%[!0-9]*}
echo "tree: systemd ${version:-?}, kernel $kver"
[[ $version =~ ^[0-9]+$ ]] || fail "no libsystemd-shared-NNN.so in $tree"
if (( version < 261 )); then
        echo "systemd $version keeps its TPM2 units in the systemd package; skipping"
        exit 77
fi

# The copy: new directories throughout (cp -a), never the cached tree's.
mkdir "$work/tree"
cp -a "$tree/." "$work/tree/"
t=$work/tree
multiarch=usr/lib/x86_64-linux-gnu
units=usr/lib/systemd/system
# systemd-tpm's files, as Debian's 262.1-1 ships them for the initrd.
tpm_files=("$units/systemd-pcrphase-initrd.service" "$units/systemd-tpm2-setup-early.service"
           usr/lib/systemd/systemd-pcrextend usr/lib/systemd/systemd-tpm2-setup
           usr/lib/nvpcr/hardware.nvpcr usr/lib/nvpcr/verity.nvpcr)
rm -f "${tpm_files[@]/#/$t/}" "$t/$units/systemd-pcrosseparator.service" "$t/$units/systemd-pcrnvdone.service" \
      "$t/usr/lib/nvpcr/login.nvpcr" "$t/var/lib/dpkg/info/systemd-tpm.list"
small=$(find "$t/$multiarch" -name 'libacl.so.1.*' | head -n1)
[[ -f $small ]] || fail "no libacl in the tree to stand in for tpm2-tss"
for n in libtss2-esys.so.0 libtss2-rc.so.0 libtss2-mu.so.0 libtss2-tcti-device.so.0; do
        [[ -e $t/$multiarch/$n ]] || cp "$small" "$t/$multiarch/$n"
done

build() {       # NAME ARGS...: foyer build of the copy; stderr in NAME.log
        local name=$1 rc=0
        shift
        "$foyer" build --root "$t" --kver "$kver" --compress none -o "$work/$name.img" "$@" >"$work/$name.log" 2>&1 || rc=$?
        grep -v -e 'mdadm is not installed' -e 'recommended feature' "$work/$name.log" >&2 || true
        return "$rc"
}
uuid=3f5ad593-4546-4a94-a374-bcfb68aa11f7
printf 'root UUID=%s none tpm2-device=auto,discard\n' "$uuid" >"$work/crypttab"

check_refused() {       # NAME WHY ARGS...
        local name=$1 why=$2
        shift 2
        echo "== without systemd-tpm, $why: the build fails naming the package and the files"
        if build "$name" "$@"; then fail "$name: built without systemd-tpm"; fi
        [[ ! -e $work/$name.img ]] || fail "$name: an image was left"
        local msg
        msg=$(grep -v -e 'mdadm is not installed' -e 'recommended feature' "$work/$name.log")
        [[ $(grep -c . <<<"$msg") == 1 ]] || fail "$name: not exactly one line of error"
        grep -qF "$why asks for TPM2 unlocking, but $t lacks systemd $version's TPM2 units, programs and NvPCR files" <<<"$msg" ||
                fail "$name: the error does not say what asks and what the tree lacks"
        grep -qF "(Debian: systemd-tpm, a package of its own since systemd 261)" <<<"$msg" || fail "$name: systemd-tpm not named"
        for f in "${tpm_files[@]}"; do
                grep -qF "/$f" <<<"$msg" || fail "$name: /$f not named"
        done
        ! grep -q libtss2 <<<"$msg" || fail "$name: libtss2 named, though the copy has it"
}
check_refused crypttab "tpm2-device= in the image's /etc/crypttab" --crypttab "$work/crypttab"
printf 'root UUID=%s none tpm2-signature=/etc/systemd/tpm2-pcr-signature.json\n' "$uuid" >"$work/crypttab-sig"
check_refused signature "tpm2-signature= in the image's /etc/crypttab" --crypttab "$work/crypttab-sig"
check_refused cmdline "tpm2-device= in rd.luks.options= of --cmdline" \
        --cmdline "rd.luks.uuid=$uuid rd.luks.options=$uuid=tpm2-device=auto root=/dev/mapper/luks-$uuid"

echo "== a generic image, which nothing asks TPM2 of: built without systemd-tpm"
build generic || fail "the generic image failed"
"$foyer" ls "$work/generic.img" | awk '{ print $3 }' >"$work/generic.list"
! grep -q 'systemd-pcrextend' "$work/generic.list" || fail "generic: systemd-pcrextend from nowhere"

echo "== with systemd-tpm's files: the image holds them all"
true_bin=$(find "$t/usr/bin" -maxdepth 1 -name true -type f | head -n1)
[[ -n $true_bin ]] || fail "no /usr/bin/true in the tree"
cp "$true_bin" "$t/usr/lib/systemd/systemd-pcrextend"
cp "$true_bin" "$t/usr/lib/systemd/systemd-tpm2-setup"
unit() {        # NAME EXEC: a oneshot unit as systemd-tpm's, reduced to what the builder reads
        printf '[Unit]\nDescription=%s\nDefaultDependencies=no\nAfter=tpm2.target\n[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=%s\n' \
                "$1" "$2" >"$t/$units/$1"
}
unit systemd-pcrphase-initrd.service "/usr/lib/systemd/systemd-pcrextend --graceful enter-initrd"
unit systemd-pcrosseparator.service "/usr/lib/systemd/systemd-pcrextend --graceful os-separator"
unit systemd-pcrnvdone.service "/usr/lib/systemd/systemd-pcrextend --graceful nvpcr-separator"
unit systemd-tpm2-setup-early.service "/usr/lib/systemd/systemd-tpm2-setup --early=yes --graceful"
mkdir -p "$t/$units/initrd.target.wants" "$t/$units/sysinit.target.wants" "$t/usr/lib/nvpcr"
ln -sf ../systemd-pcrphase-initrd.service "$t/$units/initrd.target.wants/"
for u in systemd-pcrosseparator systemd-pcrnvdone systemd-tpm2-setup-early; do
        ln -sf ../$u.service "$t/$units/sysinit.target.wants/"
done
for n in hardware verity login; do
        printf '{ "name" : "%s", "algorithm" : "sha256" }\n' "$n" >"$t/usr/lib/nvpcr/$n.nvpcr"
done
build with --crypttab "$work/crypttab" || fail "the build with systemd-tpm's files failed"
"$foyer" ls "$work/with.img" | awk '{ print $3 }' >"$work/with.list"
for f in "${tpm_files[@]}" $units/systemd-pcrosseparator.service $units/systemd-pcrnvdone.service \
         usr/lib/nvpcr/login.nvpcr $units/initrd.target.wants/systemd-pcrphase-initrd.service \
         $units/sysinit.target.wants/systemd-tpm2-setup-early.service \
         $units/sysinit.target.wants/systemd-pcrnvdone.service $multiarch/libtss2-tcti-device.so.0; do
        grep -qxF "$f" "$work/with.list" || fail "the image lacks /$f"
done
if [[ -e $t/usr/lib/nvpcr/cryptsetup.nvpcr ]]; then
        grep -qxF usr/lib/nvpcr/cryptsetup.nvpcr "$work/with.list" || fail "the image lacks systemd-cryptsetup's NvPCR"
fi
echo OK
