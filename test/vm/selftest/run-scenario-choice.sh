#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# run-scenario-choice.sh RUN_SCENARIO: a scenario's kernel and root lines reach what is booted.
# run-scenario.sh runs with stand-ins for vm-run (print-vm-run.sh), foyer's builder (fake-foyer.sh)
# and the root recipes (roots/tiny.sh here, through $FOYER_VM_ROOTS_DIR) on an ext4 disk made by
# mkdisk.sh into a scratch cache: kernel PATH (version from its name), kernel PATH VERSION,
# kernel VERSION, the default kernel, a root recipe by name, a root with a kernel of its own
# (roots/tiny-system.sh: its kernel and --root, unless a kernel line; with initrd tree, the tree's own
# /boot/initrd.img-VERSION), the default root's name, the errors (two kernel lines, a path without a
# version, an unknown root, initrd tree without a tree's kernel, another initrd word) and the skip (a
# kernel that is not there).
set -euo pipefail

run_scenario=$(realpath "${1:?usage: run-scenario-choice.sh RUN_SCENARIO}")
here=$(dirname "$(realpath "$0")")
fail() { echo "FAIL: $*"; exit 1; }
[[ $(id -u) == 0 ]] || { echo "SKIP: run-scenario.sh needs root"; exit 77; }
command -v qemu-system-x86_64 >/dev/null || { echo "SKIP: qemu-system-x86_64 is not installed"; exit 77; }
command -v debugfs >/dev/null || { echo "SKIP: debugfs is not installed"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/boot" "$tmp/build" "$tmp/gen" "$tmp/units"
echo "not a kernel" >"$tmp/boot/vmlinuz-9.9.9-fake"
cp "$tmp/boot/vmlinuz-9.9.9-fake" "$tmp/boot/bzImage"
# Nothing of this test goes into a cache shared with the real scenarios.
unset FOYER_VM_SHARED_CACHE FOYER_VM_INITRD FOYER_VM_KVER
export FOYER_VM_ROOTS_DIR=$here/roots
# The kernel as chosen, not its PVH copy (mkvmlinux.sh, tested by mkvmlinux.sh here).
export FOYER_VM_BZIMAGE=1

# run SCENARIO-LINES...: runs a scenario of these lines (and an expect step); output in $tmp/out.
run() {
        printf '%s\n' "$@" "expect 5 x" >"$tmp/s.scenario"
        "$run_scenario" "$here/print-vm-run.sh" "$tmp/build" "$tmp/s.scenario" "$here/fake-foyer.sh" \
                "$tmp/gen" "$tmp/units" >"$tmp/out" 2>&1
}
want() {
        grep -qxF -- "$1" "$tmp/out" || { cat "$tmp/out"; fail "$2: no line '$1'"; }
}

echo "== kernel PATH, root tiny"
run "kernel $tmp/boot/vmlinuz-9.9.9-fake" "root tiny" "disk ext4" || { cat "$tmp/out"; fail "run failed"; }
want "KERNEL: $tmp/boot/vmlinuz-9.9.9-fake" "kernel PATH"
want "INITRD: fake image for 9.9.9-fake" "kernel PATH: the image's version from the name"
want "ROOT: tiny" "root tiny"

echo "== kernel PATH VERSION"
run "kernel $tmp/boot/bzImage 9.9.8-given" "root tiny" || { cat "$tmp/out"; fail "run failed"; }
want "KERNEL: $tmp/boot/bzImage" "kernel PATH VERSION"
want "INITRD: fake image for 9.9.8-given" "kernel PATH VERSION: the image's version"

# shellcheck disable=SC2012 # kernel file names are plain: vmlinuz-VERSION
host_kver=$(ls /boot/vmlinuz-* 2>/dev/null | sed 's|.*/vmlinuz-||' | sort -V | tail -n1)
if [[ -n $host_kver ]]; then
        echo "== kernel VERSION, and the default"
        run "kernel $host_kver" "root tiny" || { cat "$tmp/out"; fail "run failed"; }
        want "KERNEL: /boot/vmlinuz-$host_kver" "kernel VERSION"
        want "INITRD: fake image for $host_kver" "kernel VERSION: the image's version"
        run "root tiny" || { cat "$tmp/out"; fail "run failed"; }
        want "KERNEL: /boot/vmlinuz-$host_kver" "the default kernel"
fi

echo "== a root with a kernel of its own: that kernel, an image built with --root of the tree, a disk"
echo "   without /boot, and @ROOT_SYSTEMD_VERSION@ read from the tree (escaped for a regex)"
tree=$("$here/roots/tiny-system.sh" "$tmp/build/vm-cache")
run "root tiny-system" "disk ext4" 'expect 5 systemd @ROOT_SYSTEMD_VERSION@ running' || { cat "$tmp/out"; fail "run failed"; }
want "KERNEL: $tree/boot/vmlinuz-8.8.8-tree" "the tree's kernel"
want "INITRD: fake image for 8.8.8-tree from $tree" "the image built from the tree"
want "ROOT: tiny-system" "root tiny-system"
want "DISK /boot: 0" "no kernel on the disk"
want 'STEP: expect 5 systemd 999\.1-1\+x running' "the tree's systemd version"
echo "== ... unless the scenario names a kernel"
run "kernel $tmp/boot/vmlinuz-9.9.9-fake" "root tiny-system" || { cat "$tmp/out"; fail "run failed"; }
want "KERNEL: $tmp/boot/vmlinuz-9.9.9-fake" "kernel PATH with root tiny-system"
want "INITRD: fake image for 9.9.9-fake from $tree" "kernel PATH with root tiny-system: the image"

echo "== initrd tree: the tree's own /boot/initrd.img-VERSION"
run "root tiny-system" "initrd tree" "disk ext4" || { cat "$tmp/out"; fail "run failed"; }
want "KERNEL: $tree/boot/vmlinuz-8.8.8-tree" "initrd tree: the tree's kernel"
want "INITRD: the tree's own image of 8.8.8-tree" "initrd tree: the tree's image"

echo "== errors and skips"
bad() {
        local what=$1 rc=$2 pattern=$3
        shift 3
        local got=0
        run "$@" || got=$?
        cat "$tmp/out"
        [[ $got == "$rc" ]] || fail "$what: exit status $got, expected $rc"
        grep -q -- "$pattern" "$tmp/out" || fail "$what: no '$pattern'"
}
bad "two kernel lines" 1 "more than one kernel line" "kernel $tmp/boot/bzImage 1" "kernel $tmp/boot/bzImage 2" "root tiny"
bad "a path without a version" 1 "name its version" "kernel $tmp/boot/bzImage" "root tiny"
bad "the default root is bookworm" 1 "no root recipe $here/roots/bookworm.sh" "kernel $tmp/boot/bzImage 1"
bad "an unknown root" 1 "no root recipe .*/nosuch.sh" "root nosuch"
bad "initrd tree of a root without a kernel" 1 "initrd tree needs a root with a kernel of its own" \
        "kernel $tmp/boot/bzImage 1" "root tiny" "initrd tree"
bad "initrd other than tree" 1 "initrd tree, not 'host'" "root tiny-system" "initrd host"
bad "a missing kernel" 77 "SKIP: the scenario's kernel $tmp/boot/vmlinuz-0-none is not there" \
        "kernel $tmp/boot/vmlinuz-0-none" "root tiny"
echo ok
