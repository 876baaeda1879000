#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# mkuki.sh CACHEDIR NAME FOYER_EXE KERNEL INITRD DISK MODE CMDLINE [STUB [ROOT [OTHER_APPEND [ESP_FILES]]]]
#
# For a UKI scenario (a `uki` line): builds a UKI with this tree's foyer from KERNEL and INITRD
# (the image run-scenario.sh built) with CMDLINE as its .cmdline, signed with Debian's snakeoil
# Secure Boot test key (package ovmf) when MODE is "signed", and puts it as \EFI\BOOT\BOOTX64.EFI
# into the ESP of a copy of DISK (the first disk of a gpt-auto* recipe). A DISK without an ESP
# stays as it is, and the UKI goes onto an ESP disk of its own, attached after it. Prints the
# disks that take DISK's place, one a line.
# MODE "... later-stub" builds on systemd 254's stub instead of the installed 252 one
# (test/foyer/fetch-stub.sh; exit 77 when the archive cannot be reached). STUB is the stub to
# build on otherwise: a root tree's own (run-scenario.sh), instead of the host's (empty: the host's).
# MODE "... pcrsig" adds .pcrpkey and .pcrsig (foyer uki --pcr-private-key) with the test key
# pair tpm-pcr-test.key/.pem, signed by ROOT's own systemd-measure (the stub's version; run with
# ROOT's dynamic loader and libraries) when ROOT is given. With OTHER_APPEND, a second UKI whose
# command line is CMDLINE and OTHER_APPEND, but whose .pcrpkey and .pcrsig are the first UKI's
# (a command line changed after signing: the signature is not for the PCR 11 it measures to),
# lies on an ESP disk of its own, CACHEDIR/uki-NAME/esp-other.img, for a host step to swap in.
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
root=${10:-}
other_append=${11:-}
esp_files=${12:-}
here=$(dirname "$(realpath "$0")")
keydir=${FOYER_VM_SNAKEOIL_DIR:-/usr/share/ovmf}
out=$cachedir/uki-$name

exec 3>&1 1>&2
mkdir -p "$out"
exec 9>"$out/lock"
flock 9
rm -f "$out"/*

stub=()
[[ -z $own_stub ]] || stub=(--stub "$own_stub")
read -r mode flags <<<"$mode"
pcrsig=0
for flag in $flags; do
        case $flag in
        later-stub)
                rc=0
                path=$("$here/../foyer/fetch-stub.sh" "$cachedir/stubs") || rc=$?
                [[ $rc == 0 ]] || exit $rc
                stub=(--stub "$path")
                ;;
        pcrsig) pcrsig=1 ;;
        *)
                echo "mkuki: uki is 'signed' or 'unsigned', then optionally 'later-stub' and 'pcrsig', not '$mode $flags'" >&2
                exit 2
                ;;
        esac
done
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
        echo "mkuki: uki is 'signed' or 'unsigned' (then optionally 'later-stub', 'pcrsig'), not '$mode'" >&2
        exit 2
        ;;
esac
pcr=()
if ((pcrsig)); then
        # foyer takes a private key only its owner can read: git checks the file out 0644.
        install -m 0600 "$here/tpm-pcr-test.key" "$out/pcr.key"
        pcr=(--pcr-private-key "$out/pcr.key" --pcr-public-key "$here/tpm-pcr-test.pem")
        if [[ -n $root ]]; then
                # The tree's systemd-measure knows the sections its stub measures (the host's 252
                # refuses a 257 stub); it runs on the tree's loader and libraries, not in a chroot,
                # so that the /proc/self/fd/N paths foyer hands it resolve.
                lib=$root/usr/lib/x86_64-linux-gnu
                printf '#!/bin/sh\nexec %q --library-path %q %q "$@"\n' "$lib/ld-linux-x86-64.so.2" \
                        "$lib/systemd:$lib" "$root/usr/lib/systemd/systemd-measure" >"$out/measure"
                chmod 0755 "$out/measure"
                export FOYER_SYSTEMD_MEASURE=$out/measure
        fi
fi

"$foyer" uki -o "$out/BOOTX64.EFI" --kernel "$kernel" --initrd "$initrd" --cmdline "$cmdline" \
        "${sign[@]}" "${stub[@]}" "${pcr[@]}"
"$foyer" ls "$out/BOOTX64.EFI" > "$out/ls.txt"
sed -n '/^\.initrd:/q;p' "$out/ls.txt"

# esp IMG UKI: a GPT disk holding one ESP (FAT32, written in place with mtools) with UKI as
# \EFI\BOOT\BOOTX64.EFI, big enough for it.
esp() {
        local mib=$(( $(stat -c %s "$2") / 1048576 + 40 ))
        truncate -s $((mib + 2))M "$1"
        sfdisk -q --label gpt "$1" <<<"start=2048, size=$((mib * 2048)), type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B, name=esp"
        mkfs.vfat -F 32 -s 1 -n ESP --offset 2048 "$1" $((mib * 1024)) >/dev/null 2>&1
        mmd -i "$1@@1M" ::/EFI ::/EFI/BOOT
        mcopy -i "$1@@1M" "$2" ::/EFI/BOOT/BOOTX64.EFI
}

if [[ -n $other_append ]]; then
        ((pcrsig)) || { echo "mkuki: another command line (OTHER_APPEND) needs pcrsig" >&2; exit 2; }
        # The second UKI gets the first one's signature: foyer's systemd-measure is a stand-in that
        # prints it (and the real tool's version).
        objcopy --dump-section .pcrsig="$out/pcrsig.raw" "$out/BOOTX64.EFI" "$out/objcopy.tmp"
        rm -f "$out/objcopy.tmp"
        tr -d '\0' <"$out/pcrsig.raw" >"$out/pcrsig.json"
        # shellcheck disable=SC2016 # $1 is the stand-in's own argument
        printf '#!/bin/sh\n[ "$1" != --version ] || exec %q --version\nexec cat %q\n' \
                "${FOYER_SYSTEMD_MEASURE:-/usr/lib/systemd/systemd-measure}" "$out/pcrsig.json" >"$out/replay"
        chmod 0755 "$out/replay"
        FOYER_SYSTEMD_MEASURE=$out/replay "$foyer" uki -o "$out/OTHER.EFI" --kernel "$kernel" --initrd "$initrd" \
                --cmdline "$cmdline $other_append" "${sign[@]}" "${stub[@]}" "${pcr[@]}"
        # The check that the swap means something: the same signature, another command line.
        objcopy --dump-section .pcrsig="$out/other-pcrsig.raw" "$out/OTHER.EFI" "$out/objcopy.tmp"
        rm -f "$out/objcopy.tmp"
        if ! cmp -s <(tr -d '\0' <"$out/other-pcrsig.raw") "$out/pcrsig.json" || cmp -s "$out/OTHER.EFI" "$out/BOOTX64.EFI"; then
                echo "mkuki: $out/OTHER.EFI is the first UKI, or does not carry its .pcrsig" >&2
                exit 1
        fi
        esp "$out/esp-other.img.tmp" "$out/OTHER.EFI"
        mv "$out/esp-other.img.tmp" "$out/esp-other.img"
        echo "mkuki: $out/esp-other.img: the UKI with '$other_append' added to its command line and the first one's signature"
fi
rm -f "$out/db.key" "$out/pcr.key"

# The ESP is the partition of type C12A7328-...; mtools writes into it at its byte offset.
start=$( { sfdisk -d "$disk" 2>/dev/null || true; } | awk '/type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B/ { sub(/,/, "", $4); print $4 }')
if [[ -z $start ]]; then
        # No partition table or no ESP (a whole-disk LUKS volume): an ESP disk of its own.
        [[ -z $esp_files ]] || { echo "mkuki: ESP_FILES need a DISK with an ESP ($disk has none)" >&2; exit 2; }
        esp "$out/esp.img.tmp" "$out/BOOTX64.EFI"
        mv "$out/esp.img.tmp" "$out/esp.img"
        printf '%s\n' "$disk" "$out/esp.img" >&3
        exit 0
fi
[[ $start =~ ^[0-9]+$ ]] || { echo "mkuki: $disk: cannot read the ESP's start ('$start')" >&2; exit 1; }
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
