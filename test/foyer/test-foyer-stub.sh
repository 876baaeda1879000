#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# What systemd-stub passes in /.extra, taken on by the tree's systemd in a built image
# (docs/image-based.md, src/foyer/plan-stub.c):
#  - every image has the tree's systemd-creds;
#  - a tree whose systemd-sysext.service does not look at /.extra/sysext (252) gives an image without
#    systemd-sysext and its units, and one without 20-systemd-stub.conf none of it nor
#    systemd-tmpfiles-setup.service;
#  - a tree with 20-systemd-stub.conf (257) gives the file, byte for byte, and
#    systemd-tmpfiles-setup.service wanted by sysinit.target, conditioned on /.extra (there is
#    nothing else for it to do in the initrd); the image's systemd-tmpfiles, run
#    in the unpacked image, copies /.extra/os-release to /run/systemd/stub/os-release;
#  - a tree whose systemd-sysext.service (and systemd-confext.service) names /.extra (257)
#    gives those units wanted by sysinit.target, systemd-sysext (which runs there) and the modules
#    overlay, squashfs and erofs;
#  - a tree with systemd-sysext-initrd.service (258 and later) gives that unit, wanted by
#    initrd.target, instead of systemd-sysext.service.
# Without TREE the tree is lib.sh's fake-kernel copy of the build host's /usr (systemd 252), made to
# look like the later versions file by file; with TREE (mktree.sh's, through test-foyer-tree.sh) a
# copy of that tree, whose own units and kernel modules are checked as they are.
# Usage: test-foyer-stub.sh FOYER GENERATOR-DIR UNIT-DIR [TREE]
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh" "$@"
src=${4:-}
require_generator
make_tmp test-foyer-stub
units=usr/lib/systemd/system
stubconf=usr/lib/tmpfiles.d/20-systemd-stub.conf

if [ -n "$src" ]; then
        use_tree_copy "$src"
else
        use_fake_kernel
        # Fake modules for the extensions' file systems (lib.sh's fake kernel has loop).
        for m in kernel/fs/overlayfs/overlay kernel/fs/squashfs/squashfs kernel/fs/erofs/erofs; do
                mkdir -p "$root/usr/lib/modules/$kver/$(dirname "$m")"
                printf 'license=GPL\0name=%s\0vermagic=%s SMP mod_unload\0' "$(basename "$m")" "$kver" >"$tmp/modinfo"
                objcopy --remove-section .modinfo --add-section .modinfo="$tmp/modinfo" \
                        --set-section-flags .modinfo=alloc,readonly,data "$tmp/plain.o" "$root/usr/lib/modules/$kver/$m.ko"
                echo "$m.ko" >>"$root/usr/lib/modules/$kver/modules.order"
        done
        depmod -b "$root" "$kver"
fi
[ -x "$root/usr/bin/systemd-sysext" ] || skip "the tree has no systemd-sysext"

build() {       # build IMAGE: foyer build of $root, uncompressed, unpacked into IMAGE.d
        "$foyer" build --root "$root" --kver "$kver" --compress none -o "$1" >"$tmp/build.log" 2>&1 ||
                { cat "$tmp/build.log"; fail "foyer build ($1)"; }
        mkdir "$1.d"
        (cd "$1.d" && cpio -idm --quiet <"$1")
}
# A file of the tree replaced by new content: the copy's files are hard links into the tree (or the
# build host), which must not change.
replace() {     # replace PATH < CONTENT
        rm -f "$root/$1"
        mkdir -p "$(dirname "$root/$1")"
        cat >"$root/$1"
}
has_module() {  # has_module IMAGE-DIR NAME: the image has the module, or the kernel has it built in
        find "$1/usr/lib/modules/$kver" -name "$2.ko*" | grep -q . ||
                grep -q "/$2.ko" "$root/usr/lib/modules/$kver/modules.builtin" 2>/dev/null
}
check_tmpfiles() {      # check_tmpfiles IMAGE-DIR
        local r=$1
        cmp -s "$root/$stubconf" "$r/$stubconf" || fail "/$stubconf is not the tree's"
        [ -f "$r/$units/systemd-tmpfiles-setup.service" ] || fail "no systemd-tmpfiles-setup.service in the image"
        [ "$(readlink "$r/$units/sysinit.target.wants/systemd-tmpfiles-setup.service")" = ../systemd-tmpfiles-setup.service ] ||
                fail "systemd-tmpfiles-setup.service is not wanted by sysinit.target"
        grep -qx 'ConditionPathIsDirectory=/.extra' "$r/$units/systemd-tmpfiles-setup.service.d/10-foyer-stub.conf" ||
                fail "systemd-tmpfiles-setup.service does not wait for a stub's /.extra"
        # What the unit runs, in the image: the stub's os-release reaches /run/systemd/stub/.
        mkdir -p "$r/.extra" "$r/run"
        echo 'ID=foyer-stub-test' >"$r/.extra/os-release"
        # (systemd-tmpfiles 257 wants /proc: a private one, gone with its namespace.)
        env -i PATH=/usr/bin:/usr/sbin unshare --mount --pid --fork --mount-proc="$r/proc" \
                /usr/sbin/chroot "$r" systemd-tmpfiles --create --prefix=/run/systemd/stub "/$stubconf" \
                >"$tmp/tmpfiles.log" 2>&1 || { cat "$tmp/tmpfiles.log"; fail "systemd-tmpfiles in the image"; }
        grep -qx 'ID=foyer-stub-test' "$r/run/systemd/stub/os-release" 2>/dev/null ||
                { cat "$tmp/tmpfiles.log"; fail "the image's tmpfiles did not copy /.extra/os-release to /run/systemd/stub/"; }
}
check_extensions() {    # check_extensions IMAGE-DIR UNIT TARGET
        local r=$1 unit=$2 target=$3
        [ -f "$r/$units/$unit" ] || fail "no $unit in the image"
        cmp -s "$root/$units/$unit" "$r/$units/$unit" || fail "$unit is not the tree's"
        [ "$(readlink "$r/$units/$target.wants/$unit")" = "../$unit" ] || fail "$unit is not wanted by $target"
        [ -x "$r/usr/bin/systemd-sysext" ] || fail "no systemd-sysext in the image"
        env -i PATH=/usr/bin:/usr/sbin /usr/sbin/chroot "$r" systemd-sysext --help >"$tmp/sysext.log" 2>&1 ||
                { cat "$tmp/sysext.log"; fail "systemd-sysext does not run in the image"; }
        for m in overlay squashfs erofs loop; do
                has_module "$r" "$m" || fail "module $m is not in the image"
        done
}

if [ -z "$src" ]; then
        echo "== the host's tree (systemd $(dpkg-query -W -f='${Version}' systemd 2>/dev/null || echo '?'))"
        grep -q /.extra/sysext "$root/$units/systemd-sysext.service" &&
                skip "the build host's systemd-sysext.service already looks at /.extra (not systemd 252)"
        [ ! -e "$root/$stubconf" ] || skip "the build host already has /$stubconf (not systemd 252)"
        build "$tmp/a.img"
        r=$tmp/a.img.d
        if [ -x "$root/usr/bin/systemd-creds" ]; then
                cmp -s "$root/usr/bin/systemd-creds" "$r/usr/bin/systemd-creds" || fail "no systemd-creds (the tree's) in the image"
        fi
        for f in "$units/systemd-sysext.service" usr/bin/systemd-sysext "$units/systemd-tmpfiles-setup.service" "$stubconf"; do
                [ ! -e "$r/$f" ] || fail "/$f is in the image of a tree whose systemd does not take /.extra"
        done
        for m in overlay squashfs erofs; do
                ! has_module "$r" "$m" || fail "module $m is in an image that merges no extension"
        done

        echo "== the same tree with 257's 20-systemd-stub.conf and systemd-sysext.service naming /.extra"
        replace "$stubconf" <<'CONF'
C /run/systemd/stub/os-release 0444 root root - /.extra/os-release
CONF
        sed 's#^ConditionDirectoryNotEmpty=|/var/lib/extensions$#&\nConditionDirectoryNotEmpty=|/.extra/sysext#' \
                "$root/$units/systemd-sysext.service" >"$tmp/sysext.service"
        grep -q /.extra/sysext "$tmp/sysext.service" || fail "could not make a systemd-sysext.service naming /.extra/sysext"
        replace "$units/systemd-sysext.service" <"$tmp/sysext.service"
        build "$tmp/b.img"
        check_tmpfiles "$tmp/b.img.d"
        check_extensions "$tmp/b.img.d" systemd-sysext.service sysinit.target

        echo "== the same tree with 258's systemd-sysext-initrd.service"
        sed 's#^Description=.*#Description=Merge System Extension Images into /usr/ and /opt/ of the initrd#' \
                "$tmp/sysext.service" | replace "$units/systemd-sysext-initrd.service"
        build "$tmp/c.img"
        check_extensions "$tmp/c.img.d" systemd-sysext-initrd.service initrd.target
        [ ! -e "$tmp/c.img.d/$units/systemd-sysext.service" ] ||
                fail "systemd-sysext.service is in the image beside systemd-sysext-initrd.service"
else
        echo "== the tree $src"
        build "$tmp/a.img"
        r=$tmp/a.img.d
        cmp -s "$root/usr/bin/systemd-creds" "$r/usr/bin/systemd-creds" || fail "no systemd-creds (the tree's) in the image"
        [ -e "$root/$stubconf" ] || fail "the tree has no /$stubconf"
        check_tmpfiles "$r"
        if [ -e "$root/$units/systemd-sysext-initrd.service" ]; then
                check_extensions "$r" systemd-sysext-initrd.service initrd.target
                check_extensions "$r" systemd-confext-initrd.service initrd.target
        else
                check_extensions "$r" systemd-sysext.service sysinit.target
                check_extensions "$r" systemd-confext.service sysinit.target
        fi
fi
echo ok
