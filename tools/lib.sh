# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# Shared by tools/demo and tools/test. Sourced, not run.

topdir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# ensure_packages [--list FILE] [NAME...]: installs, with apt-get as root and without recommended
# packages, those of the list FILE (default tools/packages, the test suite's; tools/demo gives
# tools/packages.demo) and the NAMEs that are missing.
# shellcheck disable=SC2120 # the arguments are optional
ensure_packages() {
        local list=$topdir/tools/packages missing=() p
        if [[ ${1:-} == --list ]]; then
                list=${2:?ensure_packages --list FILE}
                shift 2
        fi
        [[ -r $list ]] || { echo "no package list $list" >&2; return 1; }
        for p in $(sed 's/#.*//' "$list") "$@"; do
                dpkg-query -W -f='${db:Status-Status}\n' "$p" 2>/dev/null | grep -qx installed ||
                        missing+=("$p")
        done
        [[ ${#missing[@]} -eq 0 ]] && return 0
        if [[ $(id -u) != 0 ]]; then
                echo "missing Debian packages: ${missing[*]} (run as root to install them)" >&2
                return 1
        fi
        echo ">>> apt-get install --no-install-recommends ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -q
        apt-get install -y -q --no-install-recommends "${missing[@]}"
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
