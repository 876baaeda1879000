#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# trixie-microcode.sh CACHEDIR: roots/trixie.sh's tree with synthetic microcode files where
# Debian's intel-microcode and amd64-microcode put theirs (usr/lib/firmware/intel-ucode/,
# amd-ucode/*.bin; those non-free-firmware packages need not be reachable), for the
# trixie-microcode scenario: `foyer build --root` of it puts the early microcode archive in front
# of the image. A hard-linked copy of the trixie tree (nothing of that tree is changed), cached as
# CACHEDIR/tree-trixie-microcode-<hash>, keyed by this script's text and the trixie tree's path
# (which changes with its recipe). Prints the tree's path.
set -euo pipefail

cachedir=${1:?usage: trixie-microcode.sh CACHEDIR}
here=$(dirname "$(realpath "$0")")
base=$("$here/trixie.sh" "$cachedir")
# shellcheck source=SCRIPTDIR/../../lib/cache.sh
source "$here/../../lib/cache.sh"
hash=$(cache_key "$0" -- "$base")
tree=$cachedir/tree-trixie-microcode-$hash

if cache_begin "$cachedir/tree-trixie-microcode.lock" "$tree"; then
        echo "$tree"
        exit 0
fi
cp -al "$base" "$tree.tmp"
fw=$tree.tmp/usr/lib/firmware
# New files only: the hard links shared with the trixie tree stay as they are.
mkdir -p "$fw/intel-ucode" "$fw/amd-ucode"
printf 'foyer synthetic intel microcode 06-8e-09\n' > "$fw/intel-ucode/06-8e-09"
printf 'foyer synthetic intel microcode 06-9e-0a\n' > "$fw/intel-ucode/06-9e-0a"
printf 'foyer synthetic amd microcode fam17h\n' > "$fw/amd-ucode/microcode_amd_fam17h.bin"
printf 'foyer synthetic amd microcode fam19h\n' > "$fw/amd-ucode/microcode_amd_fam19h.bin"
cache_commit "$tree"
# Trees of earlier recipes (or of an earlier trixie tree) are garbage now.
for old in "$cachedir"/tree-trixie-microcode-*; do
        [[ $old == "$tree" || $old == "$tree.ok" || $old == *.lock ]] || rm -rf "$old"
done
echo "$tree"
