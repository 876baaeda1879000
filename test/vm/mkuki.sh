#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# mkuki.sh CACHEDIR NAME FOYER_EXE KERNEL INITRD DISK MODE CMDLINE [STUB [ESP_FILES]]
#
# For a UKI scenario (a `uki` line): builds a UKI with this tree's foyer from KERNEL and INITRD
# (the image run-scenario.sh built) with CMDLINE as its .cmdline, signed with Debian's snakeoil
# Secure Boot test key (package ovmf) when MODE is "signed", and puts it as \EFI\BOOT\BOOTX64.EFI
# into the ESP of a copy of DISK (the first disk of a gpt-auto* recipe). Prints the copy's path.
# MODE "... later-stub" builds on systemd 254's stub instead of the installed 252 one
# (test/foyer/fetch-stub.sh; exit 77 when the archive cannot be reached). STUB is the stub to
# build on otherwise: a root tree's own (run-scenario.sh), instead of the host's (empty: the host's).
# ESP_FILES is a directory whose files go onto the ESP at the same paths (a scenario's esp-files:
# the stub's EFI/BOOT/BOOTX64.EFI.extra.d/, loader/credentials/).
# The UKI takes a second to build, so it is made on every run; the copy is sparse.
set -euo pipefail

cachedir=${1:?usage: mkuki.sh CACHEDIR NAME FOYER_EXE KERNEL INITRD DISK MODE CMDLINE}
name=${2:?}
foyer=${3:?}
kernel=${4:?}
initrd=${5:?}
disk=${6:?}
mode=${7:?}
cmdline=${8:?}
own_stub=${9:-}
esp_files=${10:-}
keydir=${FOYER_VM_SNAKEOIL_DIR:-/usr/share/ovmf}
out=$cachedir/uki-$name

exec 3>&1 1>&2
mkdir -p "$out"
exec 9>"$out/lock"
flock 9
rm -f "$out"/*

stub=()
[[ -z $own_stub ]] || stub=(--stub "$own_stub")
if [[ $mode == *" later-stub" ]]; then
        mode=${mode% later-stub}
        rc=0
        path=$("$(dirname "$(realpath "$0")")/../foyer/fetch-stub.sh" "$cachedir/stubs") || rc=$?
        [[ $rc == 0 ]] || exit $rc
        stub=(--stub "$path")
fi
sign=()
case $mode in
unsigned) ;;
signed)
        # The key is encrypted with the password "snakeoil" (the package's README); sbsign cannot
        # be given a password, so it gets a decrypted copy.
        openssl pkey -in "$keydir/PkKek-1-snakeoil.key" -passin pass:snakeoil -out "$out/db.key"
        sign=(--sign-key "$out/db.key" --sign-cert "$keydir/PkKek-1-snakeoil.pem")
        ;;
*)
        echo "mkuki: uki is 'signed' or 'unsigned' (then optionally 'later-stub'), not '$mode'" >&2
        exit 2
        ;;
esac

"$foyer" uki -o "$out/BOOTX64.EFI" --kernel "$kernel" --initrd "$initrd" --cmdline "$cmdline" "${sign[@]}" "${stub[@]}"
rm -f "$out/db.key"
"$foyer" ls "$out/BOOTX64.EFI" > "$out/ls.txt"
sed -n '/^\.initrd:/q;p' "$out/ls.txt"

# The ESP is the partition of type C12A7328-...; mtools writes into it at its byte offset.
start=$(sfdisk -d "$disk" | awk '/type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B/ { sub(/,/, "", $4); print $4 }')
[[ $start =~ ^[0-9]+$ ]] || { echo "mkuki: $disk has no ESP" >&2; exit 1; }
cp --sparse=always "$disk" "$out/disk.img.tmp"
mcopy -o -i "$out/disk.img.tmp@@$((start * 512))" "$out/BOOTX64.EFI" ::/EFI/BOOT/BOOTX64.EFI
if [[ -n $esp_files ]]; then
        # Directories first (mmd fails on one that is there: EFI, EFI/BOOT), then the files.
        while IFS= read -r d; do
                mmd -i "$out/disk.img.tmp@@$((start * 512))" "::/$d" 2>/dev/null || true
        done < <(cd "$esp_files" && find . -mindepth 1 -type d -printf '%P\n' | sort)
        while IFS= read -r f; do
                mcopy -o -i "$out/disk.img.tmp@@$((start * 512))" "$esp_files/$f" "::/$f"
                echo "mkuki: ESP: /$f"
        done < <(cd "$esp_files" && find . -type f -printf '%P\n' | sort)
fi
mv "$out/disk.img.tmp" "$out/disk.img"
echo "$out/disk.img" >&3
