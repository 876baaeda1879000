#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# trixie-tpm.sh CACHEDIR: roots/trixie.sh's tree with tpm2-tss (libtss2-esys, -rc, -mu and the
# device TCTI: what systemd-cryptsetup and systemd-cryptenroll dlopen()) and foyer-tpm-enroll.service
# for the tpm-luks scenario. `foyer build --root` of it puts TPM2 unlocking into the image; in the
# booted root the service prints how the initrd's systemd-cryptsetup unlocked the root (its journal
# lines, FOYER-CRYPTSETUP:) and, on the first boot that finds no systemd-tpm2 token in the root's
# LUKS2 header (mkdisk.sh's recipe luks), enrols the volume to the VM's TPM with
# systemd-cryptenroll, bound to a signed PCR 11 policy alone: the public key
# /etc/foyer-tpm/pcr-public.pem, test/vm/tpm-pcr-test.pem, whose private half signs the scenario's
# UKI (mkuki.sh's pcrsig), and no PCR of its own. It unlocks the volume with the key file
# /etc/foyer-tpm/luks.key (the disk's passphrase: it lies on the encrypted root only, never in the
# image). A copy of the trixie tree (apt writes into it), cached as
# CACHEDIR/tree-trixie-tpm-<hash>, keyed by this script's text, the public key and the trixie
# tree's path. Prints the tree's path.
set -euo pipefail

cachedir=${1:?usage: trixie-tpm.sh CACHEDIR}
here=$(dirname "$(realpath "$0")")
base=$("$here/trixie.sh" "$cachedir")
# shellcheck source=SCRIPTDIR/../../lib/cache.sh
source "$here/../../lib/cache.sh"
pcr_public=$here/../tpm-pcr-test.pem
hash=$(cache_key "$0" "$pcr_public" -- "$base")
tree=$cachedir/tree-trixie-tpm-$hash
# mkdisk.sh's LUKS_UUID and LUKS_PASSPHRASE (recipe luks).
luks_uuid=4c554b53-2d70-4000-8000-000000000001
luks_passphrase=foyer-luks-pass-7Rq2

if cache_begin "$cachedir/tree-trixie-tpm.lock" "$tree"; then
        echo "$tree"
        exit 0
fi
cp -a "$base" "$tree.tmp"
t=$tree.tmp
{
        chroot "$t" apt-get update -q
        chroot "$t" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
                libtss2-esys-3.0.2-0t64 libtss2-rc0t64 libtss2-mu-4.0.1-0t64 libtss2-tcti-device0t64
} >&2
rm -rf "$t"/var/lib/apt/lists/* "$t"/var/cache/apt/*.bin "$t"/var/cache/apt/archives/*.deb "$t"/var/log/*.log

install -d -m 0700 "$t/etc/foyer-tpm"
printf '%s' "$luks_passphrase" >"$t/etc/foyer-tpm/luks.key"
chmod 0400 "$t/etc/foyer-tpm/luks.key"
install -m 0444 "$pcr_public" "$t/etc/foyer-tpm/pcr-public.pem"
install -D -m 0755 /dev/stdin "$t/usr/local/sbin/foyer-tpm-enroll" <<EOF2
#!/bin/bash
# How the initrd unlocked the root, then enrolment to the TPM if the header has no TPM2 token yet:
# a signed PCR 11 policy (--tpm2-pcrs= empty: no PCR is bound by its value), so that any UKI whose
# .pcrsig the key signed unlocks it, and no other.
dev=/dev/disk/by-uuid/$luks_uuid
journalctl -b -q -o cat --no-pager -t systemd-cryptsetup 2>/dev/null | sed 's/^/FOYER-CRYPTSETUP: /'
# The PCRs the token binds by value and by signature, from its JSON ("tpm2-pcrs":[],
# "tpm2_pubkey_pcrs":[11]).
token() {
        local id
        id=\$(cryptsetup luksDump "\$dev" | sed -n 's/^ *\([0-9]*\): systemd-tpm2\$/\1/p' | head -n1)
        echo "FOYER-TPM: token \$(cryptsetup token export --token-id "\$id" "\$dev" |
                grep -o '"tpm2[-_]p[a-z_-]*crs":\[[0-9,]*\]' | tr '\n' ' ')"
}
if cryptsetup luksDump "\$dev" | grep -q 'systemd-tpm2'; then
        echo "FOYER-TPM: enrolled already"
        token
else
        echo "FOYER-TPM: enrolling"
        start=\$SECONDS
        if systemd-cryptenroll --tpm2-device=auto --tpm2-pcrs= \\
                --tpm2-public-key=/etc/foyer-tpm/pcr-public.pem --tpm2-public-key-pcrs=11 \\
                --unlock-key-file=/etc/foyer-tpm/luks.key "\$dev"; then
                echo "FOYER-TPM: enrolled now (\$((SECONDS - start)) s)"
                token
        else
                echo "FOYER-TPM: enrolment failed (\$((SECONDS - start)) s); TPM devices: \$(echo /dev/tpm*)"
        fi
fi
EOF2
cat >"$t/etc/systemd/system/foyer-tpm-enroll.service" <<'EOF2'
[Unit]
Description=foyer test: TPM2 enrolment of the root volume
Before=foyer-report.service

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/foyer-tpm-enroll
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS0

[Install]
WantedBy=multi-user.target
EOF2
chroot "$t" systemctl enable foyer-tpm-enroll.service >/dev/null 2>&1
cache_commit "$tree"
# Trees of earlier recipes (or of an earlier trixie tree) are garbage now.
for old in "$cachedir"/tree-trixie-tpm-*; do
        [[ $old == "$tree" || $old == "$tree.ok" || $old == *.lock ]] || rm -rf "$old"
done
echo "$tree"
