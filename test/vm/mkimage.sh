#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# mkimage.sh CACHEDIR KVER FOYER_EXE GENERATOR_DIR UNIT_DIR
#
# Builds the foyer image the VM scenarios boot, once per change of the builder, the generators,
# the units, foyer's helper programs ($FOYER_HELPER_DIR, passed on to foyer build) or this script,
# and prints its path. All scenarios share it, so it carries every
# file system module they need.
set -euo pipefail

cachedir=${1:?usage: mkimage.sh CACHEDIR KVER FOYER_EXE GENERATOR_DIR UNIT_DIR}
kver=${2:?}
foyer=${3:?}
generator_dir=${4:?}
unit_dir=${5:?}

mkdir -p "$cachedir"
hash=$( { sha256sum "$0" "$foyer"; echo "$kver";
          { find "$generator_dir" -maxdepth 1 -type f -perm -u+x; find "$unit_dir" -type f;
            [[ -z ${FOYER_HELPER_DIR:-} ]] || find "$FOYER_HELPER_DIR" -maxdepth 1 -type f -perm -u+x; } |
                sort | xargs -r sha256sum; } | sha256sum | cut -c1-12)
img=$cachedir/foyer-$kver-$hash.img

exec 9>"$cachedir/image.lock"
flock 9
if [[ ! -s $img ]]; then
        rm -f "$cachedir"/foyer-"$kver"-*.img
        echo "mkimage: building $img" >&2
        FOYER_GENERATOR_DIR=$generator_dir FOYER_UNIT_DIR=$unit_dir \
                "$foyer" build -o "$img.tmp" --kver "$kver" \
                --add-module virtio_blk --add-module virtio_pci \
                --add-module ext4 --add-module xfs --add-module btrfs >&2
        mv "$img.tmp" "$img"
fi
echo "$img"
