#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs a builder test on a cached Debian tree of SUITE: makes the tree with mktree.sh (once; in
# $FOYER_TREE_CACHE, default /var/cache/foyer-trees), then runs TEST FOYER GENERATOR-DIR UNIT-DIR
# TREE. When debootstrap cannot make the tree (no network, no debootstrap), the test is skipped with
# the reason; a test that fails on the tree fails.
# Usage: test-foyer-tree.sh FOYER GENERATOR-DIR UNIT-DIR SUITE TEST
set -eu
foyer=$1 gendir=$2 unitdir=$3 suite=$4 test=$5
cache=${FOYER_TREE_CACHE:-/var/cache/foyer-trees}

command -v debootstrap >/dev/null || { echo "debootstrap is not installed; skipping"; exit 77; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! tree=$("$(dirname "$0")/mktree.sh" "$suite" "$cache" 2>"$log"); then
        tail -n 5 "$log"
        echo "mktree.sh $suite failed (see above); skipping"
        exit 77
fi
# The tree's real path: a test that copies it with cp -al "$tree" (or removes files from a copy)
# must get new directories, never a copy of a link that leads back into the shared cache.
tree=$(realpath -e "$tree")
echo "tree: $tree"
exec "$test" "$foyer" "$gendir" "$unitdir" "$tree"
