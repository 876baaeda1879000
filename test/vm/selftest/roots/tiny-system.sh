#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# tiny-system.sh CACHEDIR: a root recipe for run-scenario-choice.sh standing for a system that builds
# its own initrd (roots/trixie.sh): a kernel in /boot and an image its own package made of it, its modules, systemd-stub and a dpkg status
# naming systemd's version, beside /foyer-root-name.
set -euo pipefail
tree=${1:?usage: tiny-system.sh CACHEDIR}/tree-tiny-system-$(sha256sum "$0" | cut -c1-12)
if [[ ! -e $tree.ok ]]; then
        rm -rf "$tree"
        mkdir -p "$tree/etc" "$tree/boot" "$tree/usr/lib/modules/8.8.8-tree" "$tree/usr/lib/systemd/boot/efi" \
                 "$tree/var/lib/dpkg"
        echo tiny-system >"$tree/foyer-root-name"
        echo "not a kernel" >"$tree/boot/vmlinuz-8.8.8-tree"
        echo "the tree's own image of 8.8.8-tree" >"$tree/boot/initrd.img-8.8.8-tree"
        echo "not a module" >"$tree/usr/lib/modules/8.8.8-tree/modules.dep"
        echo "not a stub" >"$tree/usr/lib/systemd/boot/efi/linuxx64.efi.stub"
        printf 'Package: systemd\nStatus: install ok installed\nArchitecture: amd64\nVersion: 999.1-1+x\nDescription: fake\n' \
                >"$tree/var/lib/dpkg/status"
        touch "$tree.ok"
fi
echo "$tree"
