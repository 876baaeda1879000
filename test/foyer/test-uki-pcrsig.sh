#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# foyer uki --pcr-private-key/--pcr-public-key: the .pcrpkey and .pcrsig sections. With a key pair
# made here, the UKI's .pcrpkey holds the public key, and .pcrsig, systemd-measure's JSON, holds one
# signature per boot phase that verifies (openssl) against that key over the TPM2 PolicyPCR
# digest of the PCR 11 value that "systemd-measure calculate" gives for the sections read back
# from the UKI (so .pcrpkey is among the signed measurements). Without the keys neither section
# exists. Two runs are identical; --phases; one clear error for each bad input. A stub newer than
# the host's systemd-measure can compute is refused, naming the sections.
# Usage: test-uki-pcrsig.sh FOYER GENERATOR-DIR UNIT-DIR STUB
#   STUB: a systemd stub; "later" fetches 254's from bookworm-backports (skips if unreachable)
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh" "$@"
measure=${FOYER_SYSTEMD_MEASURE:-/usr/lib/systemd/systemd-measure}

tmp=$(mktemp -d /tmp/test-uki-pcrsig.XXXXXX)
cleanup() {
        [[ -s $tmp/swtpm.pid ]] && kill "$(cat "$tmp/swtpm.pid")" 2>/dev/null
        rm -rf "$tmp"
}
trap cleanup EXIT

for t in objdump openssl python3; do
        command -v $t >/dev/null || { echo "$t missing; skipping"; exit 77; }
done
[[ -x $measure ]] || { echo "no $measure (package systemd); skipping"; exit 77; }
require_stub "$4"
require_boot_kernel

mkdir "$tmp/src" && echo hello > "$tmp/src/hello"
(cd "$tmp/src" && echo hello | cpio -o -H newc --quiet > "$tmp/initrd.cpio")
printf 'ID=foyertest\nNAME="foyer test"\n' > "$tmp/os-release"
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$tmp/priv.pem" 2>/dev/null
chmod 0600 "$tmp/priv.pem"
openssl pkey -in "$tmp/priv.pem" -pubout -out "$tmp/pub.pem"
common=(--stub "$stub" --kernel "$kernel" --initrd "$tmp/initrd.cpio" --os-release "$tmp/os-release"
        --cmdline "root=/dev/vda2 rw quiet")
keys=(--pcr-private-key "$tmp/priv.pem" --pcr-public-key "$tmp/pub.pem")

# sections UKI DIR: each section's bytes as the stub maps them (VirtualSize, zeros past the file's
# data) to DIR/NAME without the dot; prints the names in file order.
sections() {
        python3 - "$1" "$2" <<'EOF'
import struct, sys, os
data = open(sys.argv[1], 'rb').read()
pe = struct.unpack_from('<I', data, 0x3c)[0]
assert data[pe:pe + 4] == b'PE\0\0'
n, opt_size = struct.unpack_from('<H', data, pe + 6)[0], struct.unpack_from('<H', data, pe + 20)[0]
table = pe + 24 + opt_size
names = []
for i in range(n):
    h = table + 40 * i
    name = data[h:h + 8].rstrip(b'\0').decode()
    vsize, _, raw_size, raw_off = struct.unpack_from('<IIII', data, h + 8)
    body = data[raw_off:raw_off + min(raw_size, vsize)]
    open(os.path.join(sys.argv[2], name.lstrip('.')), 'wb').write(body + bytes(vsize - len(body)))
    names.append(name)
print(' '.join(names))
EOF
}

echo "== without the keys, no .pcrsig or .pcrpkey"
"$foyer" uki -o "$tmp/plain.efi" "${common[@]}"
mkdir "$tmp/plain" && sections "$tmp/plain.efi" "$tmp/plain" > "$tmp/plain.names"
grep -q '\.pcr' "$tmp/plain.names" && fail "sections without the keys: $(cat "$tmp/plain.names")"
stub_version=$(grep -ao 'systemd-stub [0-9]*' "$tmp/plain/sdmagic" | head -n1 | cut -d' ' -f2)
tool_version=$("$measure" --version | head -n1 | cut -d' ' -f2)
[[ $stub_version =~ ^[0-9]+$ && $tool_version =~ ^[0-9]+$ ]] || fail "versions: stub '$stub_version', tool '$tool_version'"
echo "stub $stub_version, systemd-measure $tool_version"

expect_error() {        # PATTERN ARGS...: exit non-zero, PATTERN on stderr, no UKI written
        local pattern=$1
        shift
        if "$foyer" uki -o "$tmp/x.efi" "$@" 2> "$tmp/err"; then fail "succeeded: $*"; fi
        grep -q -- "$pattern" "$tmp/err" || { cat "$tmp/err"; fail "no \"$pattern\" for: $*"; }
        [[ ! -e $tmp/x.efi ]] || fail "x.efi exists after a failure"
}

# The private key file: the user's own (or root's), kept from group and others, a regular file
# named directly. Checked before any signing, so a stand-in systemd-measure that only names a
# version every stub is measured by does; none of these writes a UKI.
echo "== the private key file"
# shellcheck disable=SC2016  # $1 is the fake's
printf '#!/bin/sh\n[ "$1" = --version ] && echo "systemd 999 (999)" && exit 0\nexit 1\n' > "$tmp/any-measure"
chmod +x "$tmp/any-measure"
key_error() {   # PATTERN KEY: refused, the option and the file named
        FOYER_SYSTEMD_MEASURE=$tmp/any-measure expect_error "$1" "${common[@]}" --pcr-private-key "$2" --pcr-public-key "$tmp/pub.pem"
}
for mode in 0644 0604 0640 0620 0610 0660; do
        cp "$tmp/priv.pem" "$tmp/k$mode.pem" && chmod "$mode" "$tmp/k$mode.pem"
        key_error "^foyer[^:]*: --pcr-private-key $tmp/k$mode.pem may be read by .* (mode $mode).*Refusing" "$tmp/k$mode.pem"
done
ln -s priv.pem "$tmp/link.pem"
key_error "^foyer[^:]*: --pcr-private-key $tmp/link.pem is a symlink" "$tmp/link.pem"
mkfifo -m 0600 "$tmp/fifo.pem"
key_error "PCR private key $tmp/fifo.pem is not a regular file" "$tmp/fifo.pem"
if [[ $(id -u) == 0 ]]; then
        cp "$tmp/priv.pem" "$tmp/theirs.pem" && chmod 0600 "$tmp/theirs.pem" && chown 65534 "$tmp/theirs.pem"
        key_error "^foyer[^:]*: --pcr-private-key $tmp/theirs.pem is owned by uid 65534, neither this user (uid 0) nor root" "$tmp/theirs.pem"
fi
# 0600 and 0400, the user's: past the key checks, to the stand-in's failure.
chmod 0400 "$tmp/k0644.pem"
for k in "$tmp/priv.pem" "$tmp/k0644.pem"; do
        key_error "sign failed" "$k"
done

if (( stub_version >= 254 && tool_version < 254 )); then
        echo "== stub $stub_version measures .uname and .sbat, which systemd-measure $tool_version cannot"
        expect_error "systemd-measure $tool_version ($measure) cannot compute what systemd-stub $stub_version measures: it knows no .uname, .sbat section; that needs systemd-measure 254" \
                "${common[@]}" "${keys[@]}"
        echo "ok"
        exit 0
fi

# systemd-measure before 254 signs through a TPM (a trial policy session): give it swtpm's.
if (( tool_version < 254 )) && [[ -z ${SYSTEMD_TPM2_DEVICE:-} && ! -e /dev/tpmrm0 ]]; then
        if ! command -v swtpm >/dev/null || ! compgen -G '/usr/lib/*/libtss2-tcti-swtpm.so.0' >/dev/null ||
           ! compgen -G '/usr/lib/*/libtss2-esys.so.0' >/dev/null; then
                echo "systemd-measure $tool_version needs a TPM to sign: no swtpm, libtss2-esys or libtss2-tcti-swtpm (tools/packages); skipping"
                exit 77
        fi
        mkdir "$tmp/tpm"
        swtpm socket --tpm2 --tpmstate dir="$tmp/tpm" --server type=unixio,path="$tmp/tpm.sock" \
                --ctrl type=unixio,path="$tmp/tpm.sock.ctrl" --flags not-need-init,startup-clear \
                --daemon --pid file="$tmp/swtpm.pid"
        export SYSTEMD_TPM2_DEVICE=swtpm:path=$tmp/tpm.sock
fi

echo "== foyer uki with the PCR key pair"
"$foyer" uki -o "$tmp/p.efi" "${common[@]}" "${keys[@]}"
mkdir "$tmp/p" && names=$(sections "$tmp/p.efi" "$tmp/p")
want=".osrel .cmdline .uname .pcrpkey .pcrsig .linux .initrd"
[[ $names == *" $want" ]] || fail "sections: $names, want the stub's then $want"
cmp "$tmp/p/pcrpkey" "$tmp/pub.pem" || fail ".pcrpkey is not the public key"
for s in osrel cmdline uname linux initrd; do
        cmp -s "$tmp/p/$s" "$tmp/plain/$s" || fail ".$s differs from the UKI without keys"
done

echo "== two runs identical"
"$foyer" uki -o "$tmp/p2.efi" "${common[@]}" "${keys[@]}"
cmp "$tmp/p.efi" "$tmp/p2.efi" || fail "two runs differ"

# The sections this stub measures, read back from the UKI, for systemd-measure calculate.
args=(--linux="$tmp/p/linux" --osrel="$tmp/p/osrel" --cmdline="$tmp/p/cmdline" --initrd="$tmp/p/initrd"
      --pcrpkey="$tmp/p/pcrpkey" --bank=sha256 --json=short)
(( stub_version >= 254 )) && args+=(--uname="$tmp/p/uname" --sbat="$tmp/p/sbat")
# pkfp: systemd-measure's fingerprint, SHA256 of the key's DER (PKCS#1 RSAPublicKey).
pkfp=$(openssl rsa -pubin -in "$tmp/pub.pem" -RSAPublicKey_out -outform DER 2>/dev/null | sha256sum | cut -d' ' -f1)

# check PCRSIG CALCULATED: every phase of calculate's output has one signed entry whose policy is
# PolicyPCR(PCR 11 = that value) and whose signature verifies against pub.pem.
check() {
        python3 - "$1" "$2" "$pkfp" "$tmp" "$tmp/pub.pem" <<'EOF'
import base64, hashlib, json, subprocess, sys
sig, calc, pkfp, tmp, pub = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), *sys.argv[3:]
assert list(sig) == ['sha256'], f'banks {list(sig)}'
values = calc['sha256']
assert len(sig['sha256']) == len(values) > 0, f"{len(sig['sha256'])} signatures for {len(values)} phases"
for entry, value in zip(sig['sha256'], values):
    assert sorted(entry) == ['pcrs', 'pkfp', 'pol', 'sig'], sorted(entry)
    assert entry['pcrs'] == [11], entry['pcrs']
    assert entry['pkfp'] == pkfp, f"pkfp {entry['pkfp']}, key {pkfp}"
    # TPM2_PolicyPCR from an empty policy: H(0^32 || TPM_CC_PolicyPCR || TPML_PCR_SELECTION
    # {1: sha256, 3 bytes, PCR 11} || H(PCR value)).
    selection = bytes([0, 0, 0, 1, 0, 0x0b, 3, 0, 8, 0])
    pcr = bytes.fromhex(value['hash'])
    pol = hashlib.sha256(bytes(32) + bytes([0, 0, 1, 0x7f]) + selection + hashlib.sha256(pcr).digest()).hexdigest()
    assert entry['pol'] == pol, f"phase {value.get('phase')}: pol {entry['pol']}, PolicyPCR of {value['hash']} is {pol}"
    open(f'{tmp}/pol', 'wb').write(bytes.fromhex(pol))
    open(f'{tmp}/sig', 'wb').write(base64.b64decode(entry['sig']))
    r = subprocess.run(['openssl', 'dgst', '-sha256', '-verify', pub, '-signature', f'{tmp}/sig', f'{tmp}/pol'],
                       capture_output=True, text=True)
    assert r.returncode == 0, f"phase {value.get('phase')}: signature does not verify: {r.stdout}{r.stderr}"
    print(f"phase {value.get('phase')}: PCR 11 {value['hash'][:16]}..., signature verifies")
EOF
}

echo "== .pcrsig signs the PCR 11 values systemd-measure calculates for the UKI's sections"
"$measure" calculate "${args[@]}" > "$tmp/calc.json"
check "$tmp/p/pcrsig" "$tmp/calc.json" || fail ".pcrsig does not match the sections"
[[ $(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["sha256"]))' "$tmp/calc.json") == 4 ]] ||
        fail "not the four default phases"
# The same check fails for a UKI whose .pcrpkey is not what was measured: .pcrpkey is signed too.
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 2>/dev/null | openssl pkey -pubout -out "$tmp/other.pem"
"$measure" calculate "${args[@]/--pcrpkey=*/--pcrpkey=$tmp/other.pem}" > "$tmp/calc-other.json"
check "$tmp/p/pcrsig" "$tmp/calc-other.json" >/dev/null 2>&1 && fail "the signature does not depend on .pcrpkey"

echo "== --phases"
"$foyer" uki -o "$tmp/ph.efi" "${common[@]}" "${keys[@]}" --phases "enter-initrd enter-initrd:leave-initrd"
mkdir "$tmp/ph" && sections "$tmp/ph.efi" "$tmp/ph" >/dev/null
"$measure" calculate "${args[@]}" --phase=enter-initrd --phase=enter-initrd:leave-initrd > "$tmp/calc-ph.json"
check "$tmp/ph/pcrsig" "$tmp/calc-ph.json" || fail "--phases: .pcrsig does not match"
[[ $(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["sha256"]))' "$tmp/ph/pcrsig") == 2 ]] ||
        fail "--phases: not two signatures"

echo "== bad input"
expect_error "go together" "${common[@]}" --pcr-private-key "$tmp/priv.pem"
expect_error "go together" "${common[@]}" --pcr-public-key "$tmp/pub.pem"
expect_error "only applies with --pcr-private-key" "${common[@]}" --phases enter-initrd
expect_error "Failed to read PCR private key $tmp/none" "${common[@]}" --pcr-private-key "$tmp/none" --pcr-public-key "$tmp/pub.pem"
expect_error "Failed to read PCR public key $tmp/none" "${common[@]}" --pcr-private-key "$tmp/priv.pem" --pcr-public-key "$tmp/none"
expect_error "PCR public key $tmp/priv.pem is not a PEM public key" "${common[@]}" --pcr-private-key "$tmp/priv.pem" --pcr-public-key "$tmp/priv.pem"
cp "$tmp/pub.pem" "$tmp/pub-0600.pem" && chmod 0600 "$tmp/pub-0600.pem"
expect_error "PCR private key $tmp/pub-0600.pem is not a PEM private key" "${common[@]}" --pcr-private-key "$tmp/pub-0600.pem" --pcr-public-key "$tmp/pub.pem"
FOYER_SYSTEMD_MEASURE=$tmp/no-measure expect_error "systemd-measure $tmp/no-measure: No such file or directory" "${common[@]}" "${keys[@]}"
# shellcheck disable=SC2016  # $1 is the fake's
printf '#!/bin/sh\n[ "$1" = --version ] && echo "systemd 252 (252)" && exit 0\necho "not json"\n' > "$tmp/fake-measure"
chmod +x "$tmp/fake-measure"
FOYER_SYSTEMD_MEASURE=$tmp/fake-measure expect_error "sign printed no JSON object" "${common[@]}" "${keys[@]}"
# shellcheck disable=SC2016
printf '#!/bin/sh\n[ "$1" = --version ] && echo "systemd 252 (252)" && exit 0\nexit 1\n' > "$tmp/fake-measure"
FOYER_SYSTEMD_MEASURE=$tmp/fake-measure expect_error "sign failed" "${common[@]}" "${keys[@]}"
echo "ok"
