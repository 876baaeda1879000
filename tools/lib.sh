# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# Shared by tools/demo and tools/test. Sourced, not run.

topdir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Installs the packages of tools/packages that are missing (apt-get, as root).
# shellcheck disable=SC2120 # the extra package names are optional
ensure_packages() {
        local missing=() p
        for p in $(sed 's/#.*//' "$topdir/tools/packages") "$@"; do
                dpkg-query -W -f='${db:Status-Status}\n' "$p" 2>/dev/null | grep -qx installed ||
                        missing+=("$p")
        done
        [[ ${#missing[@]} -eq 0 ]] && return 0
        if [[ $(id -u) != 0 ]]; then
                echo "missing Debian packages: ${missing[*]} (run as root to install them)" >&2
                return 1
        fi
        echo ">>> apt-get install ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -q
        apt-get install -y -q "${missing[@]}"
}

# The newest kernel installed in /boot (or $FOYER_KVER).
installed_kver() {
        if [[ -n ${FOYER_KVER:-} ]]; then
                echo "$FOYER_KVER"
                return
        fi
        # shellcheck disable=SC2012 # kernel file names are plain: vmlinuz-VERSION
        ls /boot/vmlinuz-* 2>/dev/null | sed 's|.*/vmlinuz-||' | sort -V | tail -n1
}

# meson setup (once) and build in $1.
build_foyer() {
        local builddir=$1
        if [[ ! -e $builddir/build.ninja ]]; then
                meson setup "$builddir" "$topdir"
        fi
        ninja -C "$builddir"
}
