#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# foyer uki from the outside: the UKI's sections as objdump sees them (names, aligned
# non-overlapping addresses after the stub's, SizeOfImage), the bytes of each section, two runs
# byte-identical, foyer ls on the UKI, signing (sbverify), an image built by foyer uki itself, and
# one clear error for each bad input, with nothing left at the output path.
# Usage: test-uki.sh FOYER GENERATOR-DIR UNIT-DIR STUB
#   STUB: a systemd stub; "later" fetches 254's from bookworm-backports (skips if unreachable)
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh" "$@"

tmp=$(mktemp -d /tmp/test-uki.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

command -v objdump >/dev/null || { echo "objdump missing (package binutils); skipping"; exit 77; }
require_stub "$4"
require_boot_kernel
kver=${kernel#/boot/vmlinuz-}

# A small initrd and the text sections.
mkdir "$tmp/src" && echo hello > "$tmp/src/hello"
(cd "$tmp/src" && echo hello | cpio -o -H newc --quiet > "$tmp/initrd.cpio")
printf 'ID=foyertest\nNAME="foyer test"\n' > "$tmp/os-release"
printf 'root=PARTUUID=00000000-0000-0000-0000-000000000001 rw quiet\n' > "$tmp/cmdline"

echo "== foyer uki with $stub"
"$foyer" uki -o "$tmp/a.efi" --stub "$stub" --kernel "$kernel" --initrd "$tmp/initrd.cpio" \
        --cmdline @"$tmp/cmdline" --os-release "$tmp/os-release"
compgen -G "$tmp/.#*" >/dev/null && fail "temporary file left behind"

echo "== objdump -h"
objdump -h "$tmp/a.efi" > "$tmp/h" || fail "objdump cannot read the UKI"
objdump -p "$tmp/a.efi" > "$tmp/p"
objdump -h "$stub" > "$tmp/stub.h"
hex() { printf '%d' "0x$1"; }
base=$(hex "$(awk '$1 == "ImageBase" { print $2 }' "$tmp/p")")
salign=$(hex "$(awk '$1 == "SectionAlignment" { print $2 }' "$tmp/p")")
falign=$(hex "$(awk '$1 == "FileAlignment" { print $2 }' "$tmp/p")")
image_size=$(hex "$(awk '$1 == "SizeOfImage" { print $2 }' "$tmp/p")")
[[ $base == $(hex "$(objdump -p "$stub" | awk '$1 == "ImageBase" { print $2 }')") ]] || fail "ImageBase changed"
stub_end=0
while read -r idx name size vma rest; do
        [[ $idx =~ ^[0-9]+$ ]] || continue
        e=$(( $(hex "$vma") + $(hex "$size") )); (( e > stub_end )) && stub_end=$e
done < "$tmp/stub.h"
# The stub's sections come first and unchanged.
diff <(awk '$1 ~ /^[0-9]+$/ && $2 !~ /^\.(osrel|cmdline|uname|linux|initrd|splash)$/' "$tmp/h") \
     <(awk '$1 ~ /^[0-9]+$/' "$tmp/stub.h") || fail "the stub's sections changed"
prev_end=$stub_end names=
while read -r idx name size vma _ off _; do
        [[ $idx =~ ^[0-9]+$ ]] || continue
        case $name in .osrel|.cmdline|.uname|.linux|.initrd) ;; *) continue ;; esac
        names+="$name "
        v=$(hex "$vma") s=$(hex "$size") o=$(hex "$off")
        (( v >= prev_end )) || fail "$name at $vma overlaps what comes before it (ends $(printf %x $prev_end))"
        (( (v - base) % 4096 == 0 && (v - base) % salign == 0 )) || fail "$name at $vma is not aligned"
        (( o % falign == 0 )) || fail "$name at file offset $off is not FileAlignment-aligned"
        prev_end=$(( v + s ))
        # The bytes at the file offset are the input's.
        case $name in
        .osrel) want=$tmp/os-release ;;
        .linux) want=$kernel ;;
        .initrd) want=$tmp/initrd.cpio ;;
        .cmdline) printf '%s' "$(cat "$tmp/cmdline")" > "$tmp/want"; want=$tmp/want ;;
        .uname) printf '%s' "$kver" > "$tmp/want"; want=$tmp/want ;;
        esac
        (( s == $(stat -c %s "$want") )) || fail "$name: size $s, input $(stat -c %s "$want")"
        cmp -s <(tail -c +$((o + 1)) "$tmp/a.efi" | head -c "$s") "$want" || fail "$name: bytes differ from the input"
done < "$tmp/h"
[[ $names == ".osrel .cmdline .uname .linux .initrd " ]] || fail "sections: $names"
want_size=$(( (prev_end - base + salign - 1) / salign * salign ))
(( image_size == want_size )) || fail "SizeOfImage $image_size, want $want_size"
grep -q "EFI application" "$tmp/p" || fail "not an EFI application any more"

echo "== modes: the UKI is as secret as its initrd"
[[ $(stat -c %a "$tmp/a.efi") == 644 ]] || fail "UKI of a 0644 initrd has mode $(stat -c %a "$tmp/a.efi")"
cp "$tmp/initrd.cpio" "$tmp/secret.cpio" && chmod 0600 "$tmp/secret.cpio"
"$foyer" uki -o "$tmp/secret.efi" --stub "$stub" --kernel "$kernel" --initrd "$tmp/secret.cpio" \
        --os-release "$tmp/os-release"
[[ $(stat -c %a "$tmp/secret.efi") == 600 ]] || fail "UKI of a 0600 initrd has mode $(stat -c %a "$tmp/secret.efi")"

echo "== modes: the UKI of a 0644 initrd that holds a key is 0600, and says so"
# key_initrd NAME DIR: a 0644 initrd of DIR's files with their modes, plain; NAME.gz compressed
# after an uncompressed archive (as an early microcode archive precedes the main one).
key_initrd() {
        (cd "$2" && find . -mindepth 1 | sort | cpio -o -H newc --quiet > "$tmp/$1")
        cat "$tmp/initrd.cpio" > "$tmp/$1.gz" && gzip -c "$tmp/$1" >> "$tmp/$1.gz"
        chmod 0644 "$tmp/$1" "$tmp/$1.gz"
}
mkdir -p "$tmp/k1/etc/keys" "$tmp/k2/etc/foyer/ssh" "$tmp/k3/etc/cryptsetup-keys.d" "$tmp/k4/etc"
echo hello > "$tmp/k1/hello" && echo secret > "$tmp/k1/etc/keys/data.key" && chmod 0400 "$tmp/k1/etc/keys/data.key"
cp "$tmp/k1/hello" "$tmp/k2/" && echo secret > "$tmp/k2/etc/foyer/ssh/dropbear_ed25519_host_key"
chmod 0644 "$tmp/k2/etc/foyer/ssh/dropbear_ed25519_host_key"
cp "$tmp/k1/hello" "$tmp/k3/" && echo secret > "$tmp/k3/etc/cryptsetup-keys.d/root.key"
chmod 0644 "$tmp/k3/etc/cryptsetup-keys.d/root.key"
# A password hash in /etc/shadow; foyer's own, 0600 with root locked, is no secret.
# shellcheck disable=SC2016 # the hash's "$" are the file's
cp "$tmp/k1/hello" "$tmp/k4/" && printf 'root:*:1::::::\nuser:$6$salt$hash:1::::::\n' > "$tmp/k4/etc/shadow"
chmod 0640 "$tmp/k4/etc/shadow"
printf 'root:*:1::::::\nnobody:!:1::::::\n' > "$tmp/k1/etc/shadow" && chmod 0600 "$tmp/k1/etc/shadow"
key_initrd k1.cpio "$tmp/k1"
key_initrd k2.cpio "$tmp/k2"
key_initrd k3.cpio "$tmp/k3"
key_initrd k4.cpio "$tmp/k4"
for i in k1.cpio:/etc/keys/data.key:0400 k1.cpio.gz:/etc/keys/data.key:0400 \
         k2.cpio:/etc/foyer/ssh/dropbear_ed25519_host_key:0644 k2.cpio.gz:/etc/foyer/ssh/dropbear_ed25519_host_key:0644 \
         k3.cpio:/etc/cryptsetup-keys.d/root.key:0644 k3.cpio.gz:/etc/cryptsetup-keys.d/root.key:0644 \
         k4.cpio:/etc/shadow:'0640, a password hash' k4.cpio.gz:/etc/shadow:'0640, a password hash'; do
        IFS=: read -r initrd path mode <<< "$i"
        rm -f "$tmp/key.efi"
        "$foyer" uki -o "$tmp/key.efi" --stub "$stub" --kernel "$kernel" --initrd "$tmp/$initrd" \
                --os-release "$tmp/os-release" 2> "$tmp/err" || { cat "$tmp/err"; fail "uki --initrd $initrd"; }
        [[ $(stat -c %a "$tmp/key.efi") == 600 ]] || fail "UKI of the 0644 $initrd has mode $(stat -c %a "$tmp/key.efi")"
        grep -qF "holds a key, $path (mode $mode): the UKI is written with mode 0600" "$tmp/err" ||
                { cat "$tmp/err"; fail "$initrd: no warning naming $path"; }
done
# The same files, none of them a key (the data file 0644, /etc/shadow 0600 without a hash): 0644 stays.
chmod 0644 "$tmp/k1/etc/keys/data.key" && key_initrd plain.cpio "$tmp/k1"
"$foyer" uki -o "$tmp/plain.efi" --stub "$stub" --kernel "$kernel" --initrd "$tmp/plain.cpio.gz" --os-release "$tmp/os-release"
[[ $(stat -c %a "$tmp/plain.efi") == 644 ]] || fail "UKI of an initrd without keys has mode $(stat -c %a "$tmp/plain.efi")"

echo "== deterministic"
"$foyer" uki -o "$tmp/b.efi" --stub "$stub" --kernel "$kernel" --initrd "$tmp/initrd.cpio" \
        --cmdline @"$tmp/cmdline" --os-release "$tmp/os-release"
cmp "$tmp/a.efi" "$tmp/b.efi" || fail "two runs differ"

echo "== -o through a symlink replaces the file it points to, atomically, and keeps the link"
mkdir "$tmp/esp"
echo old > "$tmp/esp/linux.efi"
ln -s esp/linux.efi "$tmp/link.efi"
ino=$(stat -c %i "$tmp/esp/linux.efi")
"$foyer" uki -o "$tmp/link.efi" --stub "$stub" --kernel "$kernel" --initrd "$tmp/initrd.cpio" \
        --cmdline @"$tmp/cmdline" --os-release "$tmp/os-release"
[[ -L $tmp/link.efi && $(readlink "$tmp/link.efi") == esp/linux.efi ]] || fail "the symlink was replaced"
[[ $(stat -c %i "$tmp/esp/linux.efi") != "$ino" ]] || fail "the target was rewritten in place"
cmp "$tmp/esp/linux.efi" "$tmp/a.efi" || fail "the target is not the UKI"
[[ $(ls -A "$tmp/esp") == linux.efi ]] || fail "temporary files left beside the target"

echo "== foyer uki --initrd takes a compressed initrd, and concatenated archives"
gzip -c "$tmp/initrd.cpio" > "$tmp/initrd.cpio.gz"
cat "$tmp/initrd.cpio" "$tmp/initrd.cpio.gz" > "$tmp/concat.img"
"$foyer" uki -o "$tmp/z.efi" --stub "$stub" --kernel "$kernel" --initrd "$tmp/concat.img" \
        --os-release "$tmp/os-release" || fail "uki --initrd with concatenated archives"
[[ $("$foyer" ls "$tmp/z.efi" hello) == hello ]] || fail "foyer ls UKI hello: not the initrd's file"

echo "== foyer ls"
"$foyer" ls "$tmp/a.efi" > "$tmp/ls"
grep -q '^  \.uname .*"'"$kver"'"$' "$tmp/ls" || fail "ls: no .uname"
grep -q '^\.initrd:$' "$tmp/ls" || fail "ls: no .initrd listing"
grep -q ' hello$' "$tmp/ls" || fail "ls: the initrd's file is not listed"

echo "== signed"
key=/usr/share/ovmf/PkKek-1-snakeoil.key cert=/usr/share/ovmf/PkKek-1-snakeoil.pem
if command -v sbsign >/dev/null && command -v sbverify >/dev/null && [[ -r $key ]]; then
        openssl pkey -in "$key" -passin pass:snakeoil -out "$tmp/db.key"
        "$foyer" uki -o "$tmp/s.efi" --stub "$stub" --kernel "$kernel" --initrd "$tmp/initrd.cpio" \
                --os-release "$tmp/os-release" --sign-key "$tmp/db.key" --sign-cert "$cert"
        sbverify --cert "$cert" "$tmp/s.efi" || fail "signature does not verify"
        db_key=$tmp/db.key
        sbverify --cert "$cert" "$tmp/a.efi" >/dev/null 2>&1 && fail "unsigned UKI verifies"
        compgen -G "$tmp/.#*" >/dev/null && fail "temporary file left behind after signing"
else
        echo "sbsigntool or the ovmf snakeoil key missing: signing not checked"
fi

echo "== the image built by foyer uki"
if compgen -G "$FOYER_GENERATOR_DIR/foyer-*" >/dev/null && [[ -d /usr/lib/modules/$kver ]]; then
        "$foyer" uki -o "$tmp/c.efi" --stub "$stub" --kver "$kver" --compress none --cmdline "rw"
        "$foyer" ls "$tmp/c.efi" > "$tmp/ls"
        grep -q ' usr/lib/systemd/systemd$' "$tmp/ls" || fail "the built image has no systemd"
        grep -q '^  \.linux ' "$tmp/ls" || fail "no .linux"
        [[ $(stat -c %a "$tmp/c.efi") == 644 ]] || fail "UKI without key files has mode $(stat -c %a "$tmp/c.efi")"
        echo "== foyer uki --add-key-file: the UKI is 0600 and says so"
        head -c 32 /dev/urandom > "$tmp/data.key"
        "$foyer" uki -o "$tmp/k.efi" --stub "$stub" --kver "$kver" --compress none \
                --add-key-file "$tmp/data.key:/etc/keys/data.key" 2> "$tmp/err" || { cat "$tmp/err"; fail "uki with a key"; }
        [[ $(stat -c %a "$tmp/k.efi") == 600 ]] || fail "UKI with a key file has mode $(stat -c %a "$tmp/k.efi")"
        grep -q "etc/keys/data.key.*the UKI is written with mode 0600" "$tmp/err" || { cat "$tmp/err"; fail "no warning"; }
        ! grep "key files" "$tmp/err" | grep -q "foyer-uki\|initrd.img" ||
                { cat "$tmp/err"; fail "the warning names the temporary initrd"; }
        grep -aq ' etc/keys/data.key$' <("$foyer" ls "$tmp/k.efi") || fail "the key is not in the UKI's initrd"
        if [[ -n ${db_key:-} ]]; then
                "$foyer" uki -o "$tmp/ks.efi" --stub "$stub" --kver "$kver" --compress none \
                        --add-key-file "$tmp/data.key:/etc/keys/data.key" --sign-key "$db_key" --sign-cert "$cert" 2>/dev/null
                [[ $(stat -c %a "$tmp/ks.efi") == 600 ]] || fail "signed UKI with a key file has mode $(stat -c %a "$tmp/ks.efi")"
        fi
fi

echo "== bad input"
expect_error() {        # PATTERN OUT ARGS...: exit non-zero, PATTERN on stderr, nothing at OUT
        local pattern=$1 out=$2
        shift 2
        if "$foyer" uki -o "$out" "$@" 2> "$tmp/err"; then fail "succeeded: $*"; fi
        grep -q -- "$pattern" "$tmp/err" || { cat "$tmp/err"; fail "no \"$pattern\" for: $*"; }
        [[ ! -e $out ]] || fail "$out exists after a failure"
        ! compgen -G "$(dirname "$out")/.#*" >/dev/null || fail "temporary file left behind"
}
common=(--kernel "$kernel" --initrd "$tmp/initrd.cpio" --os-release "$tmp/os-release")
expect_error "Stub $tmp/os-release is not a PE image" "$tmp/x.efi" --stub "$tmp/os-release" "${common[@]}"
expect_error "Stub $tmp/a.efi already holds a .linux section" "$tmp/x.efi" --stub "$tmp/a.efi" "${common[@]}"
expect_error "Kernel $tmp/initrd.cpio is not an EFI image" "$tmp/x.efi" --stub "$stub" --kernel "$tmp/initrd.cpio" \
        --initrd "$tmp/initrd.cpio" --os-release "$tmp/os-release"
expect_error "/nonexistent-dir" /nonexistent-dir/x.efi --stub "$stub" "${common[@]}"
expect_error "Output /dev/null is a character device, not a regular file" "$tmp/x.efi" --stub "$stub" "${common[@]}" -o /dev/null
[[ -c /dev/null ]] || fail "/dev/null is no longer a character device"
expect_error "Output $tmp/esp is a directory" "$tmp/esp/x.efi" --stub "$stub" "${common[@]}" -o "$tmp/esp"
ln -s "$tmp/nowhere.efi" "$tmp/dangling.efi"
expect_error "Output $tmp/dangling.efi is a symlink to $tmp/nowhere.efi, which does not exist" "$tmp/nowhere.efi" \
        --stub "$stub" "${common[@]}" -o "$tmp/dangling.efi"
expect_error "Cannot write the image into /proc" /proc/x.efi --stub "$stub" "${common[@]}"
mkdir "$tmp/ro" && chattr +i "$tmp/ro" 2>/dev/null && {
        expect_error "Output directory $tmp/ro is not writable" "$tmp/ro/x.efi" --stub "$stub" "${common[@]}"
        chattr -i "$tmp/ro"
}
expect_error "Failed to read initrd $tmp/none" "$tmp/x.efi" --stub "$stub" --kernel "$kernel" --initrd "$tmp/none" \
        --os-release "$tmp/os-release"
# --initrd is read as foyer ls reads an image, before anything is written.
expect_error "$tmp/os-release is not an initrd: neither a cpio archive" "$tmp/x.efi" --stub "$stub" --kernel "$kernel" \
        --initrd "$tmp/os-release" --os-release "$tmp/os-release"
expect_error "$kernel is a PE image (a UKI or a kernel), not an initrd" "$tmp/x.efi" --stub "$stub" --kernel "$kernel" \
        --initrd "$kernel" --os-release "$tmp/os-release"
head -c 200 "$tmp/initrd.cpio" > "$tmp/truncated.cpio"
expect_error "$tmp/truncated.cpio: cpio archive at offset 0 is truncated" "$tmp/x.efi" --stub "$stub" --kernel "$kernel" \
        --initrd "$tmp/truncated.cpio" --os-release "$tmp/os-release"
gzip -c "$tmp/initrd.cpio" | head -c 40 > "$tmp/truncated.cpio.gz"
expect_error "$tmp/truncated.cpio.gz: gzip data at offset 0 is truncated" "$tmp/x.efi" --stub "$stub" --kernel "$kernel" \
        --initrd "$tmp/truncated.cpio.gz" --os-release "$tmp/os-release"
expect_error "image options (.*--no-shell, ...) only apply" "$tmp/x.efi" --stub "$stub" "${common[@]}" --no-shell
expect_error "Splash $tmp/os-release is not a BMP" "$tmp/x.efi" --stub "$stub" "${common[@]}" --splash "$tmp/os-release"
expect_error "go together" "$tmp/x.efi" --stub "$stub" "${common[@]}" --sign-key "$tmp/os-release"
expect_error "needs --output" "" --stub "$stub" "${common[@]}"
# An open quote, refused as foyer build refuses it in its --cmdline: from the text and from a file.
expect_error '^foyer[a-z-]*: --cmdline: unbalanced quote in kernel command line parameter rd.luks.options="discard' \
        "$tmp/x.efi" --stub "$stub" "${common[@]}" --cmdline 'root=/dev/sda1 rd.luks.options="discard quiet'
printf 'root=/dev/sda1\nfoo=bar b='"'"'c\n' > "$tmp/badcmdline"
expect_error "^foyer[a-z-]*: $tmp/badcmdline: unbalanced quote in kernel command line parameter b='c" \
        "$tmp/x.efi" --stub "$stub" "${common[@]}" --cmdline @"$tmp/badcmdline"
echo "ok"
