#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# mkesp-extra.sh DIR TREE: the ESP files of scenario trixie-uki-esp-extra (its `esp-files` line),
# written into DIR at their paths on the ESP; mkuki.sh copies them beside the UKI.
#
#  - EFI/BOOT/BOOTX64.EFI.extra.d/foyer-test.raw: a system extension for the initrd (its
#    extension-release says SYSEXT_SCOPE=initrd), which systemd-stub passes as
#    /.extra/sysext/foyer-test.raw. A plain ext4 image, made with mkfs.ext4 -d (no mount, no
#    squashfs-tools here), not signed: the scenario's image relaxes systemd-sysext's policy for it.
#    It ships a marker and the program the scenario's test unit runs (esp-extra/), which prints the
#    marker, the credential and whether the stub's os-release reached /run/systemd/stub/.
#  - loader/credentials/foyer-test.cred: the credential foyer-test, encrypted with the null key by
#    the tree's own systemd-creds (run with the tree's loader and libraries), as a system without
#    a TPM takes it; the stub passes it as /.extra/global_credentials/foyer-test.cred.
set -euo pipefail

dir=${1:?usage: mkesp-extra.sh DIR TREE}
tree=${2:?usage: mkesp-extra.sh DIR TREE}
MARKER=foyer-sysext-initrd-marker
CREDENTIAL=foyer-credential-value

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

s=$work/sysext
install -D -m 0644 /dev/stdin "$s/usr/lib/extension-release.d/extension-release.foyer-test" <<'REL'
ID=_any
SYSEXT_SCOPE=initrd
REL
install -D -m 0644 /dev/stdin "$s/usr/lib/foyer-test/marker" <<<"$MARKER"
install -D -m 0755 /dev/stdin "$s/usr/lib/foyer-test/show" <<'SHOW'
#!/bin/sh
# foyer's test system extension: what the initrd got from the ESP, on one line.
marker=- credential=- osrel=0
read -r marker </usr/lib/foyer-test/marker
read -r credential <"$CREDENTIALS_DIRECTORY/foyer-test"
[ -s /run/systemd/stub/os-release ] && osrel=1
echo "FOYER-ESP-EXTRA marker=$marker credential=$credential stub_osrel=$osrel"
SHOW
mkdir -p "$dir/EFI/BOOT/BOOTX64.EFI.extra.d"
mkfs.ext4 -q -F -t ext4 -O ^has_journal -b 1024 -N 32 -L foyer-test -E root_owner=0:0 -d "$s" \
        "$dir/EFI/BOOT/BOOTX64.EFI.extra.d/foyer-test.raw" 1M >/dev/null

creds=$tree/usr/bin/systemd-creds
loader=$tree/usr/lib64/ld-linux-x86-64.so.2
[[ -x $creds && -x $loader ]] || { echo "mkesp-extra: $tree has no systemd-creds or no $loader" >&2; exit 1; }
mkdir -p "$dir/loader/credentials"
printf '%s\n' "$CREDENTIAL" |
        "$loader" --library-path "$tree/usr/lib/x86_64-linux-gnu:$tree/usr/lib/x86_64-linux-gnu/systemd" \
                "$creds" encrypt --with-key=null --name=foyer-test - "$dir/loader/credentials/foyer-test.cred"
