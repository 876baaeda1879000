#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# tiny.sh CACHEDIR: a root recipe for run-scenario-choice.sh, as roots/*.sh (a few files, no
# debootstrap); /foyer-root-name says which recipe made the disk.
set -euo pipefail
tree=${1:?usage: tiny.sh CACHEDIR}/tree-tiny-$(sha256sum "$0" | cut -c1-12)
if [[ ! -e $tree.ok ]]; then
        rm -rf "$tree"
        mkdir -p "$tree/etc"
        echo tiny >"$tree/foyer-root-name"
        touch "$tree.ok"
fi
echo "$tree"
