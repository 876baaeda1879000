#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Early microcode, from a --root tree holding synthetic intel-microcode and amd64-microcode files
# (the non-free-firmware packages need not be installed on the build host):
# - foyer build: the image starts with an uncompressed newc archive holding exactly kernel/,
#   kernel/x86/, kernel/x86/microcode/ and AuthenticAMD.bin and GenuineIntel.bin, each the
#   concatenation of the vendor's files in name order (and, when GenuineIntel.bin's data would
#   not start on 16 bytes, the empty file that moves it there); the compressed archive follows at a
#   512-byte boundary; two builds are byte-identical; foyer ls shows both archives and prints the
#   files; --microcode=host keeps this CPU's vendor only, none and a tree without the packages
#   give no early archive; a symlink in the package directory resolves inside the tree.
# - foyer uki on STUB: a systemd-stub 256 or later gets the archive as a .ucode section and an
#   .initrd without it; an earlier one gets it in front of the image in .initrd.
# Usage: test-foyer-microcode.sh FOYER GENERATOR-DIR UNIT-DIR STUB
#   STUB: a systemd stub (the build checks and the UKI on it); "trixie" fetches trixie's (257)
#   with fetch-stub.sh and checks only the UKI on it (skips if the archive is unreachable).
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh" "$@"
stub=$4
make_tmp test-foyer-microcode
use_fake_kernel

# Synthetic microcode: Intel's files are named by CPU signature, AMD's package ships *.bin beside
# other files, which stay out.
fw=$root/usr/lib/firmware
mkdir -p "$fw/intel-ucode" "$fw/amd-ucode" "$root/opt/ucode"
printf 'intel 06-9e-0a\n' >"$fw/intel-ucode/06-9e-0a"
printf 'intel 06-8e-09\n' >"$fw/intel-ucode/06-8e-09"
head -c 4097 /dev/urandom >"$fw/intel-ucode/06-a5-02"
printf 'amd fam19h\n' >"$fw/amd-ucode/microcode_amd_fam19h.bin"
printf 'amd fam17h\n' >"$fw/amd-ucode/microcode_amd_fam17h.bin"
printf 'signature\n' >"$fw/amd-ucode/microcode_amd_fam17h.bin.asc"
printf 'readme\n' >"$fw/amd-ucode/README"
# An absolute symlink: the tree's /opt/ucode/..., never the host's.
printf 'amd fam15h, from the tree\n' >"$root/opt/ucode/fam15h"
ln -s /opt/ucode/fam15h "$fw/amd-ucode/microcode_amd_fam15h.bin"
[ ! -e /opt/ucode/fam15h ] || skip "/opt/ucode/fam15h exists on this host"
cat "$fw/intel-ucode/06-8e-09" "$fw/intel-ucode/06-9e-0a" "$fw/intel-ucode/06-a5-02" >"$tmp/want-intel"
cat "$root/opt/ucode/fam15h" "$fw/amd-ucode/microcode_amd_fam17h.bin" "$fw/amd-ucode/microcode_amd_fam19h.bin" \
        >"$tmp/want-amd"

# zstd's fastest level: the checks are about the archives' layout, not the compression.
build() { "$foyer" build --root "$root" --kver "$kver" --compress-level 1 "$@"; }
# The size of the first (uncompressed) archive of IMAGE, with its padding: where the next starts.
first_archive_size() {
        local n
        # cpio counts the 512-byte blocks it read: the archive is padded to a block.
        n=$(cpio -t <"$1" 2>&1 >/dev/null | sed -n 's/^\([0-9]*\) blocks*$/\1/p')
        echo $((n * 512))
}
magic() { od -An -tx1 -j "$2" -N "$3" "$1" | tr -d ' \n'; }
# check_early IMAGE VENDORS...: the first archive of IMAGE holds exactly the directories and the
# files of VENDORS (amd, intel), with the expected bytes.
check_early() {
        local img=$1 v want=$'kernel\nkernel/x86\nkernel/x86/microcode'
        shift
        [ "$(head -c 6 "$img")" = 070701 ] || fail "$img does not start with an uncompressed newc archive"
        for v in "$@"; do
                case $v in
                amd) want+=$'\nkernel/x86/microcode/AuthenticAMD.bin' ;;
                intel) want+=$'\nkernel/x86/microcode/GenuineIntel.bin' ;;
                esac
        done
        # Before GenuineIntel.bin, an empty file whose name puts the data on 16 bytes, when needed.
        cpio -t --quiet <"$img" >"$tmp/entries"
        [ "$(grep -vx 'kernel/x86/microcode/\.GenuineIntel\.bin\.align0*' "$tmp/entries")" = "$want" ] ||
                { cat "$tmp/entries"; fail "$img: early archive entries"; }
        [ "$(grep -c 'GenuineIntel\.bin\.align' "$tmp/entries")" -le 1 ] || fail "$img: more than one alignment entry"
        for v in "$@"; do
                case $v in
                amd) f=AuthenticAMD.bin ;;
                intel) f=GenuineIntel.bin ;;
                esac
                cmp <(cpio -i --quiet --to-stdout "kernel/x86/microcode/$f" <"$img") "$tmp/want-$v" ||
                        fail "$img: $f is not the $v files concatenated in name order"
        done
        if [[ " $* " == *" intel "* ]]; then
                local name_at
                name_at=$(grep -abo 'kernel/x86/microcode/GenuineIntel\.bin' "$img" | head -n1 | cut -d: -f1)
                (( ((name_at + 38 + 3) / 4 * 4) % 16 == 0 )) || fail "$img: GenuineIntel.bin's data is not on 16 bytes"
        fi
        # Owners 0 and the SOURCE_DATE_EPOCH mtime: the listing shows no build-time trace.
        cpio -tv --quiet <"$img" | awk '$3 != "root" && $3 != "0" { bad = 1 } END { exit bad }' ||
                fail "$img: early archive entries not owned by root"
}

if [[ $stub != trixie ]]; then
        echo "== foyer build: early archive in front of the zstd one"
        build -o "$tmp/a.img" 2>"$tmp/err" || { cat "$tmp/err"; fail "build"; }
        cat "$tmp/err"
        grep -q "Early microcode: GenuineIntel.bin, $(stat -c %s "$tmp/want-intel") bytes" "$tmp/err" ||
                fail "no message about GenuineIntel.bin"
        check_early "$tmp/a.img" amd intel
        early=$(first_archive_size "$tmp/a.img")
        (( early > 0 && early % 512 == 0 )) || fail "early archive size $early is not a multiple of 512"
        [ "$(magic "$tmp/a.img" "$early" 4)" = 28b52ffd ] || fail "no zstd frame right after the early archive (offset $early)"
        # Between the trailer and the zstd frame only zeros, which the kernel skips.
        trailer_end=$(grep -abo 'TRAILER!!!' "$tmp/a.img" | head -n1 | cut -d: -f1)
        [ -z "$(tail -c +$((trailer_end + 12)) "$tmp/a.img" | head -c $((early - trailer_end - 11)) | tr -d '\0')" ] ||
                fail "bytes other than zeros between the early archive and the compressed one"

        echo "== the same inputs give the same bytes"
        build -o "$tmp/b.img" 2>/dev/null || fail "second build"
        cmp "$tmp/a.img" "$tmp/b.img" || fail "two builds differ"
        touch "$fw/intel-ucode/06-8e-09"
        SOURCE_DATE_EPOCH=1700000000 build -o "$tmp/c.img" 2>/dev/null || fail "third build"
        cmp "$tmp/a.img" "$tmp/c.img" || fail "a new mtime on a microcode file changed the image"

        echo "== foyer ls shows both archives"
        "$foyer" ls "$tmp/a.img" >"$tmp/ls" 2>"$tmp/ls.err" || { cat "$tmp/ls.err"; fail "foyer ls"; }
        cat "$tmp/ls.err"
        grep -qx "Offset 0: uncompressed cpio" "$tmp/ls.err" || fail "ls: no uncompressed archive at 0"
        grep -qx "Offset $early: zstd-compressed cpio" "$tmp/ls.err" || fail "ls: no zstd archive at $early"
        [ "$(grep -c '^Offset' "$tmp/ls.err")" = 2 ] || fail "ls: not exactly two archives"
        grep -q " $(stat -c %s "$tmp/want-intel") kernel/x86/microcode/GenuineIntel.bin$" "$tmp/ls" || fail "ls: no GenuineIntel.bin"
        grep -q " kernel/x86/microcode/AuthenticAMD.bin$" "$tmp/ls" || fail "ls: no AuthenticAMD.bin"
        grep -q "^-.* usr/lib/systemd/systemd$" "$tmp/ls" || fail "ls: the main archive is not listed"
        [ "$(grep -n 'kernel/x86/microcode/GenuineIntel.bin$' "$tmp/ls" | cut -d: -f1)" -lt \
          "$(grep -n '^-.* usr/lib/systemd/systemd$' "$tmp/ls" | cut -d: -f1)" ] || fail "ls: the early archive is not listed first"
        "$foyer" ls "$tmp/a.img" /kernel/x86/microcode/AuthenticAMD.bin >"$tmp/cat" || fail "foyer ls IMAGE PATH"
        cmp "$tmp/cat" "$tmp/want-amd" || fail "foyer ls IMAGE PATH: bytes differ"

        echo "== --compress none: two uncompressed archives"
        build --compress none -o "$tmp/n.img" 2>/dev/null || fail "build --compress none"
        check_early "$tmp/n.img" amd intel
        early=$(first_archive_size "$tmp/n.img")
        [ "$(head -c $((early + 6)) "$tmp/n.img" | tail -c 6)" = 070701 ] || fail "no second newc archive at $early"
        "$foyer" ls "$tmp/n.img" 2>&1 >/dev/null | grep -qx "Offset $early: uncompressed cpio" || fail "ls: second archive"

        echo "== --microcode=host: this CPU's vendor only"
        vendor=$(sed -n 's/^vendor_id[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo | head -n1)
        build --microcode=host -o "$tmp/h.img" 2>"$tmp/err" || { cat "$tmp/err"; fail "build --microcode=host"; }
        case $vendor in
        GenuineIntel) check_early "$tmp/h.img" intel ;;
        AuthenticAMD|HygonGenuine) check_early "$tmp/h.img" amd ;;
        *) [ "$(magic "$tmp/h.img" 0 4)" = 28b52ffd ] || fail "--microcode=host on a $vendor CPU: early archive" ;;
        esac

        echo "== Microcode=none in foyer.conf, and --microcode=none"
        mkdir -p "$tmp/conf/etc/foyer"
        echo "Microcode=none" >"$tmp/conf/etc/foyer/foyer.conf"
        FOYER_CONFIG_ROOT=$tmp/conf build -o "$tmp/x.img" 2>/dev/null || fail "build with Microcode=none"
        [ "$(magic "$tmp/x.img" 0 4)" = 28b52ffd ] || fail "Microcode=none: the image does not start with zstd"
        "$foyer" ls "$tmp/x.img" 2>/dev/null | grep -q 'kernel/x86' && fail "Microcode=none: microcode in the image"
        FOYER_CONFIG_ROOT=$tmp/conf build --microcode=all -o "$tmp/y.img" 2>/dev/null || fail "--microcode=all over the file"
        cmp "$tmp/a.img" "$tmp/y.img" || fail "--microcode=all does not override Microcode=none"
        build --microcode=none -o "$tmp/z.img" 2>/dev/null || fail "build --microcode=none"
        cmp "$tmp/x.img" "$tmp/z.img" || fail "--microcode=none differs from Microcode=none"

        echo "== a tree without the packages: no early archive"
        mv "$fw/intel-ucode" "$fw/amd-ucode" "$tmp/"
        build -o "$tmp/e.img" 2>/dev/null || fail "build without microcode"
        cmp "$tmp/e.img" "$tmp/z.img" || fail "no microcode packages: the image differs from --microcode=none"
        mv "$tmp/intel-ucode" "$fw/"
        build -o "$tmp/i.img" 2>/dev/null || fail "build with intel-ucode only"
        check_early "$tmp/i.img" intel
        mv "$tmp/amd-ucode" "$fw/"

        out=$tmp/bad.img
        expect_error "--microcode=bogus" 'unknown microcode setting "bogus" (all, host, none)' \
                build --microcode=bogus -o "$out"
fi

echo "== foyer uki"
command -v objdump >/dev/null || skip "objdump missing (package binutils)"
require_stub "$stub"
version=$(strings "$stub" | sed -n 's/.*LoaderInfo: systemd-stub \([0-9]*\).*/\1/p' | head -n1)
[[ -n $version ]] || fail "cannot read the version of $stub"
require_boot_kernel
# section EFI NAME OUT: the bytes of section NAME, or a failure when it is missing.
section() {
        local size off
        read -r size off < <(objdump -h "$1" | awk -v n="$2" '$2 == n { print $3, $6 }')
        [[ -n $size ]] || return 1
        tail -c +$((0x$off + 1)) "$1" | head -c $((0x$size)) >"$3"
}
"$foyer" uki -o "$tmp/u.efi" --stub "$stub" --kernel "$kernel" --root "$root" --kver "$kver" --compress-level 1 2>"$tmp/err" ||
        { cat "$tmp/err"; fail "foyer uki"; }
cat "$tmp/err"
section "$tmp/u.efi" .initrd "$tmp/u.initrd" || fail "no .initrd section"
"$foyer" ls "$tmp/u.efi" >"$tmp/ls" 2>"$tmp/ls.err" || { cat "$tmp/ls.err"; fail "foyer ls on the UKI"; }
if (( version >= 256 )); then
        echo "== systemd-stub $version: .ucode"
        section "$tmp/u.efi" .ucode "$tmp/u.ucode" || fail "systemd-stub $version: no .ucode section"
        check_early "$tmp/u.ucode" amd intel
        (( $(stat -c %s "$tmp/u.ucode") % 512 == 0 )) || fail ".ucode is not padded to 512 bytes"
        [ "$(magic "$tmp/u.initrd" 0 4)" = 28b52ffd ] || fail ".initrd does not start with the zstd archive"
        grep -q "microcode in .ucode" "$tmp/err" || fail "foyer uki does not say where the microcode went"
        grep -qx '.ucode:' "$tmp/ls" || fail "ls: no .ucode listing"
        [ "$(sed -n '/^\.ucode:$/,/^\.initrd:$/p' "$tmp/ls" | grep -c ' kernel/x86/microcode\(/[A-Za-z]*\.bin\)\{0,1\}$')" = 3 ] ||
                fail "ls: .ucode does not list the microcode directory and two files"
else
        echo "== systemd-stub $version: in front of the image in .initrd"
        section "$tmp/u.efi" .ucode "$tmp/u.ucode" && fail "systemd-stub $version has a .ucode section"
        grep -qx '.ucode:' "$tmp/ls" && fail "ls: a .ucode listing"
        check_early "$tmp/u.initrd" amd intel
        early=$(first_archive_size "$tmp/u.initrd")
        [ "$(magic "$tmp/u.initrd" "$early" 4)" = 28b52ffd ] || fail ".initrd: no zstd archive after the early one"
fi
grep -q ' kernel/x86/microcode/GenuineIntel.bin$' "$tmp/ls" || fail "ls: the UKI's GenuineIntel.bin"
"$foyer" ls "$tmp/u.efi" kernel/x86/microcode/GenuineIntel.bin >"$tmp/cat" || fail "foyer ls UKI PATH"
cmp "$tmp/cat" "$tmp/want-intel" || fail "foyer ls UKI PATH: bytes differ"
"$foyer" uki -o "$tmp/v.efi" --stub "$stub" --kernel "$kernel" --root "$root" --kver "$kver" --compress-level 1 2>/dev/null ||
        fail "second foyer uki"
cmp "$tmp/u.efi" "$tmp/v.efi" || fail "two UKIs differ"
echo "PASS"
