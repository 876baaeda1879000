#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# image-based.sh MKOSI-VM OUTPUT-DIR
#
# The profile image-based (suite mkosi): run.sh builds it with tools/mkosi-vm and boots it in
# plain QEMU with OVMF, and checks the boot as for the trixie image (foyer's initrd with
# systemd 257, the real root reached, no failed units). Then, from the image's
# FOYER-MKOSI-VERITY line on the console (mkosi.profiles/image-based/mkosi.extra), that /usr was
# mounted read-only from /dev/mapper/usr, a dm-verity device the kernel has seen no corrupted
# block on, whose root hash is the usrhash= the kernel was booted with and the rootHash of the
# disk's usr-verity-sig partition; and, on image.raw itself, that this partition has the type
# UUID of an x86-64 usr verity signature, and that its signature is a valid PKCS#7 signature of
# the root hash by the certificate tools/mkosi-vm made for the build.
set -euo pipefail

usage="usage: image-based.sh MKOSI-VM OUTPUT-DIR"
mkosi_vm=${1:?$usage}
outdir=${2:?$usage}
here=$(dirname "${BASH_SOURCE[0]}")
console=$outdir/console.log
cert=$outdir/verity-keys/verity.crt
# The Discoverable Partitions Specification's usr-x86-64-verity-sig (systemd-id128 show).
sig_type=E7BB33FB-06CF-4E81-8273-E543B413E2E2

fail() { echo "FAIL: $*" >&2; exit 1; }

"$here/run.sh" "$mkosi_vm" "$outdir" 13 257 --profile image-based --qemu

plain=$(sed 's/\x1b\[[0-9;]*[A-Za-z]//g' "$console")
verity=$(grep -m1 'FOYER-MKOSI-VERITY ' <<<"$plain") || fail "no FOYER-MKOSI-VERITY line on the console"
verity=FOYER-MKOSI-VERITY${verity#*FOYER-MKOSI-VERITY}
echo "verity:    $verity"
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $verity"; }
[[ $(field usr_src) == /dev/mapper/usr ]] || fail "/usr is not mounted from /dev/mapper/usr: $verity"
[[ $(field usr_ro) == 1 ]] || fail "/usr is not mounted read-only: $verity"
[[ $(field dm) == dm-* ]] || fail "no /sys/block/dm-*/dm/name says usr: $verity"
[[ $(field target) == verity ]] || fail "the device-mapper target of usr is not verity: $verity"
# V: every block read so far matched the hash tree (C would mean a corrupted one).
[[ $(field status) == V ]] || fail "dm-verity's status of usr is not V (verified): $verity"
hash=$(field verity_hash)
[[ $hash =~ ^[0-9a-f]{64}$ ]] || fail "no sha256 root hash from veritysetup status usr: $verity"
[[ $(field cmdline_usrhash) == "$hash" ]] ||
        fail "the kernel's usrhash= is not the root hash of /dev/mapper/usr ($hash): $verity"
[[ $(field sig_roothash) == "$hash" ]] ||
        fail "the usr-verity-sig partition's rootHash is not the root hash of /dev/mapper/usr ($hash): $verity"

# The same partition read from the image: its type, its JSON, and the signature in it.
image=$outdir/image.raw
[[ -s $cert ]] || fail "no certificate at $cert (tools/mkosi-vm makes it for the build)"
table=$(sfdisk --json "$image") || fail "sfdisk cannot read the partition table of $image"
read -r sector start size < <(python3 -c '
import json, sys
t = json.loads(sys.argv[1])["partitiontable"]
parts = [p for p in t["partitions"] if p["type"].upper() == sys.argv[2]]
if len(parts) == 1:
    print(t.get("sectorsize", 512), parts[0]["start"], parts[0]["size"])' "$table" "$sig_type") || true
[[ -n ${start:-} ]] || fail "$image has not exactly one partition of type $sig_type (usr-x86-64-verity-sig)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dd if="$image" of="$tmp/sig.part" bs="$sector" skip="$start" count="$size" status=none
python3 -c '
import base64, json, sys
j = json.loads(open(sys.argv[1], "rb").read().rstrip(b"\0"))
open(sys.argv[2] + "/roothash", "w").write(j["rootHash"])
open(sys.argv[2] + "/sig.der", "wb").write(base64.b64decode(j["signature"]))
open(sys.argv[2] + "/fingerprint", "w").write(j["certificateFingerprint"])' "$tmp/sig.part" "$tmp" ||
        fail "the usr-verity-sig partition of $image holds no JSON with rootHash, signature and certificateFingerprint"
[[ $(cat "$tmp/roothash") == "$hash" ]] ||
        fail "the usr-verity-sig partition of $image says rootHash $(cat "$tmp/roothash"), the booted /usr has $hash"
fingerprint=$(openssl x509 -in "$cert" -noout -fingerprint -sha256 | sed 's/.*=//; s/://g' | tr 'A-F' 'a-f')
[[ $(cat "$tmp/fingerprint") == "$fingerprint" ]] ||
        fail "the signature names certificate $(cat "$tmp/fingerprint"), not the build's $fingerprint"
# systemd-repart signs the hash as text, detached, without attributes (what the kernel's
# dm-verity and systemd's dissection check).
openssl smime -verify -binary -inform DER -in "$tmp/sig.der" -content "$tmp/roothash" \
        -CAfile "$cert" -purpose any -out /dev/null 2>"$tmp/openssl.err" ||
        fail "the usr-verity-sig signature does not verify against $cert: $(cat "$tmp/openssl.err")"
echo "signature: usr-verity-sig partition of $image: rootHash $hash, PKCS#7 signature valid for $cert"
