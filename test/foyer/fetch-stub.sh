#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# fetch-stub.sh DIR
#
# Puts a later systemd-stub (254 from bookworm-backports: ImageBase 0x14df90000, 4 KiB section
# alignment, built by elf2efi) at DIR/linuxx64.efi.stub and prints its path. The package is
# fetched with apt-get under a private configuration (nothing is installed, the host's apt state
# is not touched) and kept in DIR for the next run. Exits 77 when the archive cannot be reached.
set -euo pipefail

dir=${1:?usage: fetch-stub.sh DIR}
suite=${FOYER_STUB_SUITE:-bookworm-backports}
mirror=${FOYER_STUB_MIRROR:-http://deb.debian.org/debian}
stub=$dir/$suite/usr/lib/systemd/boot/efi/linuxx64.efi.stub

if [[ -s $stub ]]; then
        echo "$stub"
        exit 0
fi
mkdir -p "$dir"
exec 9>"$dir/fetch.lock"
flock 9
[[ -s $stub ]] && { echo "$stub"; exit 0; }

apt=$(mktemp -d "$dir/apt.XXXXXX")
trap 'rm -rf "$apt"' EXIT
mkdir -p "$apt/etc/apt.conf.d" "$apt/etc/preferences.d" "$apt/state/lists/partial" \
         "$apt/cache/archives/partial" "$apt/deb"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $suite main" \
        > "$apt/etc/sources.list"
opts=(-o "Dir::Etc=$apt/etc" -o "Dir::State=$apt/state" -o "Dir::Cache=$apt/cache"
      -o "Dir::State::status=/dev/null" -o "APT::Get::List-Cleanup=0" -o "Acquire::Retries=1"
      -o "Acquire::http::Timeout=30" -o "APT::Sandbox::User=root")
if ! apt-get "${opts[@]}" update -qq >&2; then
        echo "SKIP: $mirror $suite is unreachable" >&2
        exit 77
fi
if ! (cd "$apt/deb" && apt-get "${opts[@]}" download -qq "systemd-boot-efi/$suite" >&2); then
        echo "SKIP: could not download systemd-boot-efi from $suite" >&2
        exit 77
fi
dpkg-deb -x "$apt"/deb/systemd-boot-efi_*.deb "$dir/$suite.tmp"
rm -rf "${dir:?}/${suite:?}"
mv "$dir/$suite.tmp" "$dir/$suite"
[[ -s $stub ]] || { echo "fetch-stub: the package has no $stub" >&2; exit 1; }
echo "$stub"
