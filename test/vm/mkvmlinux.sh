#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# mkvmlinux.sh CACHE KERNEL: prints the file QEMU is to boot for the bzImage KERNEL.
#
# Under TCG a Debian kernel spends 5 to 8 seconds decompressing itself (XZ in Debian 12, zstd in
# 13) before its first message, in every boot of the suite. The same kernel, decompressed once
# here, boots through QEMU's PVH entry (the ELF note XEN_ELFNOTE_PHYS32_ENTRY, present with
# CONFIG_PVH=y, as in Debian's kernels) with the same command line and initrd: only the bzImage's
# decompressor stub is skipped. The result is cached as CACHE/vmlinux-HASH (HASH of the bzImage).
# The bzImage itself is printed when the kernel has no PVH entry or no payload this script can
# unpack, and when FOYER_VM_BZIMAGE=1 (boot exactly as a boot loader would). The UKI scenarios
# never use this: the EFI stub boots the bzImage inside the UKI.
set -euo pipefail
cache=${1:?usage: mkvmlinux.sh CACHE KERNEL}
kernel=${2:?usage: mkvmlinux.sh CACHE KERNEL}

if [[ ${FOYER_VM_BZIMAGE:-0} == 1 ]]; then
        echo "$kernel"
        exit 0
fi
mkdir -p "$cache"
key=$(sha256sum "$kernel" | cut -c1-16)
out=$cache/vmlinux-$key
if [[ -s $out ]]; then
        echo "$out"
        exit 0
fi
exec 9>"$cache/vmlinux.lock"
flock 9
if [[ -s $out ]]; then
        echo "$out"
        exit 0
fi

# An ELF file holding every byte its program headers load (a truncated stream gives a shorter
# file) and the PVH entry note.
complete_pvh_elf() {
        local f=$1 size end=0 type offset filesz
        readelf -h "$f" 2>/dev/null | grep -q 'Type: *EXEC' || return 1
        size=$(stat -c %s "$f")
        # Program headers: Type Offset VirtAddr PhysAddr FileSiz ...
        while read -r type offset _ _ filesz _; do
                [[ $type == LOAD ]] || continue
                ((offset + filesz > end)) && end=$((offset + filesz))
        done < <(readelf -lW "$f")
        ((end > 0 && end <= size)) || return 1
        readelf -nW "$f" | grep -q 'Xen .*(0x00000012)'
}

tmp=$out.tmp
trap 'rm -f "$tmp"' EXIT
# The payload's magic as grep -P sees it, and the command that unpacks one stream of it (trailing
# data after the stream, the bzImage's own, makes xz and zstd complain: the result is checked above).
for format in 'xz:\xfd7zXZ\x00:xz --single-stream -dc' 'zstd:\x28\xb5\x2f\xfd:zstd -dcq' 'gzip:\x1f\x8b\x08:gzip -dcq'; do
        IFS=: read -r _ magic unpack <<<"$format"
        command -v "${unpack%% *}" >/dev/null || continue
        while IFS= read -r offset; do
                # shellcheck disable=SC2086 # $unpack is a command with its options
                tail -c +$((offset + 1)) "$kernel" | $unpack >"$tmp" 2>/dev/null || true
                if complete_pvh_elf "$tmp"; then
                        mv "$tmp" "$out"
                        echo "$out"
                        exit 0
                fi
        done < <(LC_ALL=C grep -obUaP "$magic" "$kernel" | cut -d: -f1 | head -n 4)
done
echo "mkvmlinux.sh: $kernel: no PVH-capable ELF kernel inside; booting the bzImage" >&2
echo "$kernel"
