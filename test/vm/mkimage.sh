#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# mkimage.sh CACHEDIR KVER FOYER_EXE GENERATOR_DIR UNIT_DIR [BUILD_ARGS...]
#
# Builds the foyer image the VM scenarios boot, once per change of the builder, the generators,
# the units, foyer's helper programs ($FOYER_HELPER_DIR, passed on to foyer build) or this script,
# and prints its path. All scenarios share it, so it carries every
# file system module they need.
#
# A scenario that needs more in its image (a key file, a crypttab) names foyer build options in
# an `image-args` line; they come here as BUILD_ARGS, with paths relative to test/vm. Such an
# image is cached apart from the shared one, keyed by the options and the files they name.
# For a root tree that builds its own initrd, run-scenario.sh passes `--root TREE` first: the
# image is then cached apart too, keyed by the tree's path (which changes with its recipe).
# The image of the build host (no --root) is the generic test image: it ignores the host's own
# /etc/crypttab and /etc/fstab (--no-target-settings), which say nothing about the test disks. A
# tree's image reads the tree's, as a system building its own initrd does.
set -euo pipefail

cachedir=${1:?usage: mkimage.sh CACHEDIR KVER FOYER_EXE GENERATOR_DIR UNIT_DIR}
kver=${2:?}
foyer=${3:?}
generator_dir=${4:?}
unit_dir=${5:?}
shift 5
build_args=("$@")
host_args=()
[[ " ${build_args[*]} " == *" --root "* ]] || host_args=(--no-target-settings)
# SSH unlocking makes host keys once and keeps them: here in the cache, never in the build host's (or a
# cached tree's) /etc/foyer/ssh. ssh-unlock.sh checks the server's key against their .pub files.
if [[ " ${build_args[*]} " == *" --ssh-unlock "* && " ${build_args[*]} " != *" --ssh-host-keys "* ]]; then
        host_args+=(--ssh-host-keys "$(realpath -m "$cachedir")/ssh-host-keys")
fi
here=$(dirname "$(realpath "$0")")
# The build runs in test/vm, for the relative paths of BUILD_ARGS.
mkdir -p "$cachedir"
cachedir=$(realpath "$cachedir")
foyer=$(realpath "$foyer")
generator_dir=$(realpath "$generator_dir")
unit_dir=$(realpath "$unit_dir")

hash=$( { sha256sum "$0" "$foyer"; echo "$kver";
          { find "$generator_dir" -maxdepth 1 -type f -perm -u+x; find "$unit_dir" -type f;
            [[ -z ${FOYER_HELPER_DIR:-} ]] || { IFS=: read -ra helper_dirs <<<"$FOYER_HELPER_DIR";
                                                 find "${helper_dirs[@]}" -maxdepth 1 -type f -perm -u+x; }; } |
                sort | xargs -r sha256sum;
          # the extra options, and the content of each file they name (SRC of SRC:DEST)
          if [[ ${#build_args[@]} -gt 0 ]]; then
                  echo "${build_args[*]}"
                  for a in "${build_args[@]}"; do
                          f=${a%%:*}
                          if [[ -f $here/$f ]]; then (cd "$here" && sha256sum "$f"); fi
                  done
          fi; } | sha256sum | cut -c1-12)
variant=std
if [[ ${#build_args[@]} -gt 0 ]]; then
        variant=args-$(echo "${build_args[*]}" | sha256sum | cut -c1-8)
fi
img=$cachedir/foyer-$kver-$variant-$hash.img

# shellcheck source=SCRIPTDIR/../lib/cache.sh
source "$here/../lib/cache.sh"
cache_lock "$cachedir/image.lock"
if [[ ! -s $img ]]; then
        rm -f "$cachedir"/foyer-"$kver"-"$variant"-*.img
        echo "mkimage: building $img" >&2
        # zstd's fastest level (before BUILD_ARGS, which may name another): a sixth of the CPU to make
        # (1.4 s against 8.2 s for the generic image); zstd decompresses about as fast at any level
        # (the scenarios' initrd times were not compared for this). The image the package's kernel
        # hook makes (installer-encrypted-lvm) keeps the default.
        (cd "$here" && FOYER_GENERATOR_DIR=$generator_dir FOYER_UNIT_DIR=$unit_dir \
                "$foyer" build -o "$img.tmp" --kver "$kver" --compress-level 1 \
                --add-module virtio_blk --add-module virtio_pci \
                --add-module ext4 --add-module xfs --add-module btrfs "${host_args[@]}" "${build_args[@]}") >&2
        mv "$img.tmp" "$img"
fi
echo "$img"
