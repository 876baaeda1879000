#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# foyer uki on a systemd-stub 258 or later (Debian sid's: STUB "sid", fetched by fetch-stub.sh), whose
# .sbat section leaves room after the stub's own SBAT entries: the UKI's SBAT is written there, as
# ukify writes it (uki-sbat.h): the header, the stub's entries, the kernel's, and one "uki" entry,
# zeros after them. The UKI has one .sbat, at the stub's address, offset and size; no other section
# of the stub changes. A kernel with a .sbat of its own has its entries merged after the stub's (systemd-boot, an EFI application with SBAT entries, stands in
# for such a kernel). The host's 252 stub, whose .sbat has no room, keeps its
# .sbat byte for byte. A "stub" with a .profile section (a UKI profile; multi-profile UKIs are not
# foyer's) is refused by name.
# Usage: test-uki-sbat.sh FOYER GENERATOR-DIR UNIT-DIR STUB
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh" "$@"
command -v objdump >/dev/null || skip "objdump missing (package binutils)"
make_tmp test-uki-sbat
require_stub "$4"
require_boot_kernel
kver=${kernel#/boot/vmlinuz-}

mkdir "$tmp/src" && echo hello > "$tmp/src/hello"
(cd "$tmp/src" && echo hello | cpio -o -H newc --quiet > "$tmp/initrd.cpio")
printf 'ID=foyertest\n' > "$tmp/os-release"
hex() { printf '%d' "0x$1"; }
# section FILE NAME: "SIZE VMA OFFSET" of the section as objdump -h prints it (hex), one line each.
section() { objdump -h "$1" | awk -v n="$2" '$2 == n { print $3, $4, $6 }'; }
# bytes FILE NAME: the section's bytes, SIZE of them from its file offset.
bytes() {
        local size off
        read -r size _ off <<< "$(section "$1" "$2")"
        [[ -n $size ]] || return 1
        tail -c +$(( $(hex "$off") + 1 )) "$1" | head -c "$(hex "$size")"
}
# entries FILE: the SBAT entries of a PE's .sbat (its lines up to the first NUL, without the header).
entries() { bytes "$1" .sbat | tr -d '\0' | sed 1d; }
uki() { "$foyer" uki --kernel "$kernel" --initrd "$tmp/initrd.cpio" --os-release "$tmp/os-release" "$@"; }

version=$(bytes "$stub" .sdmagic | sed -n 's/.*LoaderInfo: systemd-stub \([0-9]*\).*/\1/p')
echo "stub: $stub (systemd-stub $version)"
(( version >= 258 )) || skip "$stub is systemd-stub $version, not 258 or later"
read -r sbat_size _ <<< "$(section "$stub" .sbat)"
stub_text=$(bytes "$stub" .sbat | tr -d '\0')
(( $(hex "$sbat_size") > ${#stub_text} + 200 )) ||
        fail "the stub's .sbat ($sbat_size bytes) leaves no room after its text (${#stub_text} bytes)"

echo "== foyer uki: the UKI's SBAT in the stub's .sbat"
uki --stub "$stub" -o "$tmp/a.efi"
[[ $(objdump -h "$tmp/a.efi" | awk '$2 == ".sbat"' | wc -l) == 1 ]] || fail "the UKI has not exactly one .sbat"
[[ $(section "$tmp/a.efi" .sbat) == "$(section "$stub" .sbat)" ]] ||
        fail ".sbat moved or changed size: $(section "$tmp/a.efi" .sbat), the stub's $(section "$stub" .sbat)"
# Every section of the stub is where it was, with its size and flags.
diff <(objdump -h "$stub" | sed -n '/^Idx/,$p' | grep -A1 -E '^ +[0-9]+ ' | grep -v '^--') \
     <(objdump -h "$tmp/a.efi" | sed -n '/^Idx/,$p' | grep -A1 -E '^ +[0-9]+ ' | grep -v '^--' |
       head -n "$(objdump -h "$stub" | grep -cE '^ +[0-9]+ ' | awk '{ print 2 * $1 }')") ||
        fail "the stub's sections changed"
{
        echo "sbat,1,SBAT Version,sbat,1,https://github.com/rhboot/shim/blob/main/SBAT.md"
        entries "$stub"
        entries "$kernel" 2>/dev/null || true
        echo "uki,1,UKI,uki,1,https://uapi-group.org/specifications/specs/unified_kernel_image/"
} > "$tmp/want"
bytes "$tmp/a.efi" .sbat | tr -d '\0' > "$tmp/got"
diff "$tmp/want" "$tmp/got" || fail "the UKI's .sbat is not the stub's entries, the kernel's and \"uki\""
grep -q '^systemd-stub,' "$tmp/got" || fail "the stub's own entry is missing"
# After the text, zeros to the end of the section.
text_len=$(stat -c %s "$tmp/got")
[[ -z $(bytes "$tmp/a.efi" .sbat | tail -c +$(( text_len + 1 )) | tr -d '\0') ]] || fail "non-zero bytes after the SBAT text"
(( $(bytes "$tmp/a.efi" .sbat | wc -c) == $(hex "$sbat_size") )) || fail ".sbat is not $sbat_size bytes"

echo "== a kernel with a .sbat of its own: its entries follow the stub's"
addon=$(dirname "$stub")/systemd-bootx64.efi
if [[ -r $addon ]] && entries "$addon" | grep -q .; then
        "$foyer" uki --stub "$stub" --kernel "$addon" --uname "$kver" --initrd "$tmp/initrd.cpio" \
                --os-release "$tmp/os-release" -o "$tmp/k.efi"
        { head -n -1 "$tmp/want" | grep -vxF -f <(entries "$kernel" 2>/dev/null || true) || true
          entries "$addon"; tail -n 1 "$tmp/want"; } > "$tmp/want-k"
        bytes "$tmp/k.efi" .sbat | tr -d '\0' > "$tmp/got-k"
        diff "$tmp/want-k" "$tmp/got-k" || fail "the kernel's SBAT entries are not merged after the stub's"
else
        echo "no systemd-boot with SBAT entries beside $stub: not checked"
fi

echo "== deterministic"
uki --stub "$stub" -o "$tmp/b.efi"
cmp "$tmp/a.efi" "$tmp/b.efi" || fail "two runs differ"

old=/usr/lib/systemd/boot/efi/linuxx64.efi.stub
if [[ -r $old ]] && [[ $(bytes "$old" .sdmagic | tr -d '\0') == *"systemd-stub 25"[0-7]* ]]; then
        echo "== $old (before 258): its .sbat stays as it is"
        uki --stub "$old" -o "$tmp/old.efi"
        cmp <(bytes "$old" .sbat) <(bytes "$tmp/old.efi" .sbat) || fail "the old stub's .sbat changed"
fi

echo "== a stub with a .profile section is refused"
printf 'ID=rescue\nTITLE=Rescue\n' > "$tmp/profile"
objcopy --add-section .profile="$tmp/profile" --set-section-flags .profile=data,readonly \
        "$stub" "$tmp/profile.stub" 2>/dev/null || fail "objcopy cannot add a .profile section to $stub"
section "$tmp/profile.stub" .profile | grep -q . || fail "objcopy made no .profile section"
out=$tmp/profile.efi
expect_error ".profile in the stub" \
        "Stub $tmp/profile.stub holds a .profile section (it is a UKI profile or a multi-profile UKI, not a stub). foyer uki makes single-profile UKIs" \
        uki --stub "$tmp/profile.stub" -o "$out"
echo ok
