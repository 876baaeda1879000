# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# Sourced by the builder tests, which all take FOYER GENERATOR-DIR UNIT-DIR:
#   . "$(dirname "$0")/lib.sh" "$@"
# Builds from the build tree (FOYER_GENERATOR_DIR, FOYER_UNIT_DIR), with the tests' configuration
# root (config/: zstd's fastest level, nothing else) and a fixed timestamp, so the images only depend
# on what a test asks for.
set -eu
# shellcheck disable=SC2034 # read by the tests that source this
foyer=$1
export FOYER_GENERATOR_DIR=$2 FOYER_UNIT_DIR=$3
FOYER_CONFIG_ROOT=$(realpath "$(dirname "${BASH_SOURCE[0]}")/config")
export FOYER_CONFIG_ROOT SOURCE_DATE_EPOCH=1700000000
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}

fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "$*; skipping"; exit 77; }

# Skips unless the named generator (or, without a name, any foyer generator) is built.
# shellcheck disable=SC2120 # the generator name is optional
require_generator() {
        if [ -n "${1:-}" ]; then
                [ -x "$FOYER_GENERATOR_DIR/$1" ] || skip "$1 is not built in $FOYER_GENERATOR_DIR yet"
        else
                compgen -G "$FOYER_GENERATOR_DIR/foyer-*" >/dev/null ||
                        skip "no foyer generators built in $FOYER_GENERATOR_DIR yet"
        fi
}

# Sets kver to the (last) installed kernel with modules, or skips.
require_kernel() {
        kver=
        for d in /usr/lib/modules/*/; do
                [ -e "$d/modules.order" ] && kver=$(basename "$d")
        done
        [ -n "$kver" ] || skip "no kernel with modules installed (package linux-image-amd64)"
}

# Sets stub to the systemd stub a test was given (its STUB argument), or skips: a path, or "later"
# (254 from bookworm-backports, or $FOYER_STUB_SUITE's), "trixie" (257) or "sid" (the newest) for one fetch-stub.sh
# fetches into $FOYER_TEST_STUB_CACHE; fetch-stub.sh exits 77 when the archive is unreachable.
require_stub() {
        local suite='' rc=0

        stub=$1
        case $stub in
                later) suite=${FOYER_STUB_SUITE:-bookworm-backports} ;;
                trixie|sid) suite=$stub ;;
        esac
        if [[ -n $suite ]]; then
                stub=$(FOYER_STUB_SUITE=$suite "$(dirname "${BASH_SOURCE[0]}")/fetch-stub.sh" \
                        "${FOYER_TEST_STUB_CACHE:-/var/tmp/foyer-test-stubs}") || rc=$?
                [[ $rc == 0 ]] || exit $rc
        fi
        [[ -r $stub ]] || skip "no stub $stub (package systemd-boot-efi)"
}

# Sets kernel to the newest /boot/vmlinuz-*, or skips.
require_boot_kernel() {
        kernel=$(printf '%s\n' /boot/vmlinuz-* | sort -V | tail -n1)
        [[ -r $kernel ]] || skip "no kernel in /boot (package linux-image-amd64)"
}

# Sets tmp to a scratch directory removed when the test exits.
make_tmp() {
        tmp=$(mktemp -d "/tmp/$1.XXXXXX")
        trap 'rm -rf "$tmp"' EXIT
}

# expect_error DESCRIPTION PATTERN COMMAND...: the command fails with exactly one line on stderr,
# matching PATTERN, and creates nothing at $out (the output path the test uses, if set).
expect_error() {
        local what=$1 pattern=$2 existed=
        shift 2
        echo "== bad input: $what"
        [ -e "${out:-}" ] && existed=1
        if "$@" >"$tmp/stdout" 2>"$tmp/stderr"; then
                fail "$what: exit status 0"
        fi
        cat "$tmp/stderr"
        grep -q -- "$pattern" "$tmp/stderr" || fail "$what: message does not match '$pattern'"
        [ "$(grep -c . "$tmp/stderr")" -eq 1 ] || fail "$what: expected exactly one line on stderr"
        [ -n "$existed" ] || [ ! -e "${out:-}" ] || fail "$what: output $out left behind"
}

# For builds that do not need the build host's kernel: sets kver to a made-up version and root to a
# tree for foyer build --root: a hard-linked copy of the host's /usr parts an image needs (as
# test-foyer-root.sh makes) with a small fake module tree usr/lib/modules/$kver instead of the
# host's. Each module of the builder's default set is a tiny relocatable ELF object with a
# .modinfo section; dm_crypt uses a symbol dm_mod exports, so depmod -b records a dependency. Needs
# make_tmp first, gcc, objcopy and depmod (kmod).
# use_tree_copy TREE: $root is a hard-linked copy of TREE (a mktree.sh tree, never written itself)
# in $tmp/tree and $kver its newest kernel. The --root tests that take an optional tree use it, and
# use_fake_kernel without one.
use_tree_copy() {
        [ -d "$1/usr/lib/modules" ] || fail "$1 is not a tree with kernels"
        kver=$(find "$1/usr/lib/modules" -mindepth 1 -maxdepth 1 -printf '%f\n' | sort | tail -n1)
        root=$tmp/tree
        mkdir "$root"
        cp -al "$1/." "$root/" 2>/dev/null || cp -a "$1/." "$root/"
}

fake_modules="kernel/drivers/block/virtio_blk kernel/drivers/scsi/virtio_scsi kernel/drivers/virtio/virtio_pci
        kernel/drivers/scsi/sd_mod kernel/drivers/ata/ahci kernel/drivers/nvme/host/nvme
        kernel/fs/ext4/ext4 kernel/fs/xfs/xfs kernel/fs/btrfs/btrfs kernel/fs/fat/vfat
        kernel/fs/nls/nls_cp437 kernel/fs/nls/nls_iso8859-1 kernel/fs/efivarfs/efivarfs
        kernel/drivers/md/dm-mod kernel/drivers/md/dm-crypt kernel/drivers/md/dm-thin-pool
        kernel/drivers/block/loop kernel/fs/autofs/autofs4"
use_fake_kernel() {
        local d m name base
        command -v gcc >/dev/null || skip "gcc is not installed (the fake kernel modules)"
        command -v depmod >/dev/null || skip "depmod is not installed (kmod)"
        command -v objcopy >/dev/null || skip "objcopy is not installed (binutils)"
        kver=0.0.0-foyer-fake
        root=$tmp/fake-root
        mkdir -p "$root/usr/lib/modules/$kver" "$root/etc"
        for d in bin sbin lib64 lib/x86_64-linux-gnu lib/systemd lib/udev lib/os-release lib/modprobe.d; do
                [ -e "/usr/$d" ] || continue
                mkdir -p "$root/usr/$(dirname "$d")"
                cp -al "/usr/$d" "$root/usr/$d" 2>/dev/null || cp -a "/usr/$d" "$root/usr/$d"
        done
        for d in bin sbin lib lib64; do ln -s "usr/$d" "$root/$d"; done
        cp -a /etc/ld.so.conf /etc/ld.so.conf.d "$root/etc/"
        [ ! -e /etc/ld.so.cache ] || cp -a /etc/ld.so.cache "$root/etc/"
        # Three compilations; every module's .modinfo is then written in with objcopy (fast).
        printf 'static const char modinfo[] __attribute__((section(".modinfo"), used, aligned(1))) = "";\n' >"$tmp/plain.c"
        printf '%s\n' 'const char __kstrtab_dm_fake_get[] __attribute__((section("__ksymtab_strings"))) = "dm_fake_get";' \
                'int dm_fake_get(void) { return 0; }' >"$tmp/dm_mod.c"
        printf '%s\n' 'extern int dm_fake_get(void);' 'int dm_crypt_fake(void) { return dm_fake_get(); }' >"$tmp/dm_crypt.c"
        for name in plain dm_mod dm_crypt; do
                gcc -c -O0 -o "$tmp/$name.o" "$tmp/$name.c"
        done
        for m in $fake_modules; do
                name=$(basename "$m" | tr - _)
                mkdir -p "$root/usr/lib/modules/$kver/$(dirname "$m")"
                printf 'license=GPL\0name=%s\0vermagic=%s SMP mod_unload\0' "$name" "$kver" >"$tmp/modinfo"
                base=plain
                [ ! -e "$tmp/$name.o" ] || base=$name
                objcopy --remove-section .modinfo --add-section .modinfo="$tmp/modinfo" \
                        --set-section-flags .modinfo=alloc,readonly,data "$tmp/$base.o" "$root/usr/lib/modules/$kver/$m.ko"
                echo "$m.ko" >>"$root/usr/lib/modules/$kver/modules.order"
        done
        : >"$root/usr/lib/modules/$kver/modules.builtin"
        : >"$root/usr/lib/modules/$kver/modules.builtin.modinfo"
        depmod -b "$root" "$kver"
        grep -q '^kernel/drivers/md/dm-crypt.ko: kernel/drivers/md/dm-mod.ko$' "$root/usr/lib/modules/$kver/modules.dep" ||
                fail "fake kernel: depmod did not record dm_crypt's dependency on dm_mod"
}
