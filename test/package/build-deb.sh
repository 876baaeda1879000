#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# build-deb.sh SOURCE-ROOT OUTDIR
#
# Builds foyer's Debian package as a user does (dpkg-buildpackage -us -uc -b), from a copy of the
# source tree (the files git tracks or would track, without build directories), into OUTDIR, and
# prints the path of foyer_VERSION_ARCH.deb. A package already in OUTDIR is reused when no source
# file is newer than it; a lock lets the package tests share one build.
set -euo pipefail
src=$(realpath "${1:?usage: build-deb.sh SOURCE-ROOT OUTDIR}")
out=${2:?usage: build-deb.sh SOURCE-ROOT OUTDIR}
mkdir -p "$out"
out=$(realpath "$out")

# shellcheck source=SCRIPTDIR/../lib/cache.sh
source "$(dirname "$(realpath "$0")")/../lib/cache.sh"
cache_lock "$out/.lock"
version=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)
deb=$out/foyer_${version}_$(dpkg-architecture -qDEB_HOST_ARCH).deb
files=$(git -C "$src" ls-files -co --exclude-standard)
fresh() {
        [[ -s $deb ]] || return 1
        local f
        while IFS= read -r f; do
                [[ ! $src/$f -nt $deb ]] || return 1
        done <<<"$files"
}
if fresh; then
        echo "$deb"
        exit 0
fi

for p in dpkg-buildpackage dh; do
        command -v "$p" >/dev/null || { echo "build-deb: $p missing (apt-get install dpkg-dev debhelper)" >&2; exit 77; }
done
rm -rf "$out/work" "$deb"
mkdir -p "$out/work/foyer"
# The package is as fresh as the copy: a file changed while dpkg-buildpackage runs is newer.
copied=$(date +%s.%N)
(cd "$src" && xargs -d '\n' cp --parents -a -t "$out/work/foyer/" <<<"$files" 2>/dev/null) || true
echo "build-deb: dpkg-buildpackage -us -uc -b in $out/work/foyer" >&2
start=$(date +%s)
(cd "$out/work/foyer" && dpkg-buildpackage -us -uc -b) >"$out/build.log" 2>&1 ||
        { tail -40 "$out/build.log" >&2; echo "build-deb: dpkg-buildpackage failed (log: $out/build.log)" >&2; exit 1; }
echo "build-deb: built in $(( $(date +%s) - start )) s" >&2
mv "$out/work/$(basename "$deb")" "$deb"
touch -d "@$copied" "$deb"
rm -rf "$out/work"
echo "$deb"
