#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test-injection.sh ROOT_GENERATOR CRYPT_GENERATOR DEBUG_GENERATOR DRIVER_GENERATOR
#
# Input that would escape the output directories or add lines to a unit (deliberate differences from
# systemd 252, see docs/kernel-command-line.md):
#  1. A name from the input that becomes a path component (rd.systemd.unit=, x-systemd.wanted-by=,
#     x-systemd.required-by=, rd.systemd.wants=/mask=, a crypttab NAME) with ".." or "/": the value is
#     refused with a log line naming it, nothing is created outside the three output directories (they
#     sit deep in a scratch directory that must hold nothing else), and the rest is written.
#  2. A value with a control character (a newline in a quoted rd.systemd.debug_shell=, \012 in any
#     fstab field) or a trailing backslash (rootflags=, fstab options, crypttab fields): that value or
#     entry is refused with a log line naming the parameter or file, no file contains the injected
#     text, and the rest is written. A '%' in rd.systemd.debug_shell= is doubled, so that no value of
#     the command line puts a specifier into a unit (252 and 257 write it as it is).
#  3. A module name of rd.driver.*= that is a path, holds a newline, a space or a '#', or starts with
#     '-': that name is refused with a log line naming the parameter, no file contains it, and the
#     other names of the list are written.
set -u
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$(realpath "$0")")/lib.sh"
begin_error_test "$1"
root=$generator crypt=$(realpath "$2") debug=$(realpath "$3") driver=$(realpath "$4")

# run GENERATOR CMDLINE [VAR=value...]: into $tmp/s/a/b/{normal,early,late}, stderr in $tmp/log;
# $out is the output parent.
run() {
        local gen=$1 cmdline=$2
        shift 2
        rm -rf "$tmp/s"
        out=$tmp/s/a/b
        mkdir -p "$out"/{normal,early,late}
        env -i PATH=/usr/bin:/bin SYSTEMD_IN_INITRD=1 SYSTEMD_EFI_OPTIONS= FOYER_CMDLINE_DIR=/nonexistent \
                SYSTEMD_FSTAB=/dev/null SYSTEMD_SYSROOT_FSTAB=/dev/null SYSTEMD_CRYPTTAB=/dev/null \
                RUNTIME_DIRECTORY="$tmp/run" SYSTEMD_LOG_LEVEL=info SYSTEMD_PROC_CMDLINE="$cmdline" "$@" \
                "$gen" "$out/normal" "$out/early" "$out/late" 2>"$tmp/log"
        rc=$?
}

fail_with() {
        echo "FAIL ($what): $1"
        sed 's/^/    log: /' "$tmp/log"
        (cd "$tmp/s" && find . | sed 's/^/    tree: /')
        fail=1
}

# Nothing but the output directories (and what is below them) in the scratch directory.
check_contained() {
        local stray
        stray=$(cd "$tmp/s" && find . -mindepth 1 | grep -vxE '\./a|\./a/b|\./a/b/(normal|early|late)(/.*)?')
        [[ -z $stray ]] || fail_with "written outside the output directories: $stray"
        # ... and no symlink below them resolving outside, other than to units and /dev/null.
        while IFS= read -r -d '' l; do
                local t
                t=$(readlink "$l")
                [[ $t == /usr/lib/systemd/* || $t == /dev/null ]] && continue
                [[ $(realpath -m "$(dirname "$l")/$t") == "$out"/* ]] || fail_with "symlink $l -> $t leaves the output directories"
        done < <(find "$tmp/s" -type l -print0)
}
check_log() {
        grep -qF -- "$1" "$tmp/log" || fail_with "no log line naming $1"
}
check_exists() {
        [[ -e $out/$1 || -L $out/$1 ]] || fail_with "$1 was not written"
}
check_absent() {
        [[ ! -e $out/$1 && ! -L $out/$1 ]] || fail_with "$1 was written"
}
# No file below the outputs contains the injected text $1.
check_not_injected() {
        ! grep -rqF -- "$1" "$out" || fail_with "injected text '$1' reached $(grep -rlF -- "$1" "$out")"
}
# No line of a file below the outputs holds a '%' that is not doubled ("%%" is a literal '%').
check_no_specifier() {
        local f
        f=$(find "$out" -type f -exec grep -l '%' {} + | while IFS= read -r f; do
                sed 's/%%//g' "$f" | grep -q '%' && echo "$f"
        done)
        [[ -z $f ]] || fail_with "a specifier reached $f: $(grep -h '%' "$f")"
}
check_exit() {
        [[ $rc == "$1" ]] || fail_with "exit status $rc, expected $1"
}

# 1a. rd.systemd.unit= with "..": refused; the wants go to initrd.target as without it.
what="rd.systemd.unit=../../.."
run "$debug" "rd.systemd.unit=../../../x.target rd.systemd.wants=../../y.service rd.systemd.mask=../../../z.service rd.systemd.wants=foo.service"
check_exit 0
check_contained
check_log "rd.systemd.unit=../../../x.target"
check_exists early/initrd.target.wants/foo.service
check_exists early/initrd.target.wants/..-..-y.service
check_exists early/..-..-..-z.service

what="rd.systemd.unit=a/b.target"
run "$debug" "rd.systemd.unit=a/b.target rd.systemd.wants=foo.service"
check_exit 0
check_contained
check_log "rd.systemd.unit=a/b.target"
check_exists early/initrd.target.wants/foo.service

# 1b. x-systemd.wanted-by=/required-by= in fstab: the bad values are dropped, the good ones kept.
what="x-systemd.wanted-by"
cat >"$tmp/fstab" <<EOF
/dev/sdb1 /x ext4 x-initrd.mount,x-systemd.wanted-by=../../../evil.target,x-systemd.wanted-by=good.target 0 0
/dev/sdb2 /y ext4 x-initrd.mount,x-systemd.required-by=a/../../evil.target,x-systemd.requires=../../r 0 0
/dev/sdb3 /z ext4 x-initrd.mount 0 0
EOF
run "$root" "root=/dev/sda1" SYSTEMD_SYSROOT_FSTAB="$tmp/fstab"
check_exit 0
check_contained
check_log "x-systemd.wanted-by=../../../evil.target"
check_log "x-systemd.required-by=a/../../evil.target"
check_exists normal/sysroot-x.mount
check_exists normal/good.target.wants/sysroot-x.mount
check_exists normal/sysroot-y.mount
check_exists normal/initrd-fs.target.requires/sysroot-z.mount
check_exists normal/sysroot.mount

# 1c. A crypttab NAME with "/" or "..".
what="crypttab NAME"
printf '../../../evil /dev/sdb1\na/../../evil /dev/sdb2\nok /dev/sdb3\n' >"$tmp/crypttab"
run "$crypt" "" SYSTEMD_CRYPTTAB="$tmp/crypttab"
check_exit 0
check_contained
check_log "$tmp/crypttab:1"
check_log "$tmp/crypttab:2"
check_exists normal/systemd-cryptsetup@ok.service

# 2a. A newline in a quoted rd.systemd.debug_shell=: no drop-in, the rest written.
what="rd.systemd.debug_shell newline"
run "$debug" 'rd.systemd.debug_shell="ttyS1
ExecStartPre=/bin/evil" rd.systemd.wants=foo.service'
check_exit 0
check_contained
check_log "rd.systemd.debug_shell"
check_not_injected /bin/evil
check_absent early/debug-shell.service.d
check_exists early/initrd.target.wants/foo.service

# 2b. \012 in each fstab field (libmount unescapes it), and a trailing backslash in the options: each
# entry is skipped with the field named; the good entry is written.
what="fstab \\012"
cat >"$tmp/fstab" <<'EOF'
/dev/sdb1\012Evil=1 /a ext4 x-initrd.mount 0 0
/dev/sdb2 /b\012Evil=1 ext4 x-initrd.mount 0 0
/dev/sdb3 /c ext4\012Evil=1 x-initrd.mount 0 0
/dev/sdb4 /d ext4 x-initrd.mount,x\012Evil=1 0 0
/dev/sdb5 /e ext4 x-initrd.mount,Evil\ 0 0
/dev/sdb7 /g ext4 x-initrd.mount 0 0
EOF
run "$root" "root=/dev/sda1" SYSTEMD_SYSROOT_FSTAB="$tmp/fstab"
check_exit 0
check_contained
for f in "device field" "mount point field" "type field" "options field"; do
        check_log "$f"
done
check_not_injected Evil
check_exists normal/sysroot-g.mount
check_exists normal/sysroot.mount
n=$(find "$out/normal" -name 'sysroot-*.mount' -type f | wc -l)
[[ $n == 1 ]] || fail_with "$n fstab mounts written, expected only sysroot-g.mount"

# 2c. A trailing backslash in rootflags=: the value is ignored (as one with a control character), the
# mounts are written without it.
what="rootflags= trailing backslash"
# shellcheck disable=SC1003 # the backslash ends the command line on purpose
run "$root" 'root=/dev/sda1 mount.usr=/dev/sda3 rootflags=ro,Evil\'
check_exit 0
check_contained
check_log "rootflags="
check_not_injected Evil
check_exists normal/sysusr-usr.mount

# 2d. A trailing backslash in each crypttab field but NAME (refused already as a name), and on the
# command line.
what="crypttab trailing backslash"
cat >"$tmp/crypttab" <<'EOF'
a /dev/sdb1\ none
b /dev/sdb2 /Evil\ discard
c /dev/sdb3 none discard,Evil\
ok /dev/sdb4 none discard
EOF
# shellcheck disable=SC1003 # the backslash ends the command line on purpose
run "$crypt" 'rd.luks.options=Evil\' SYSTEMD_CRYPTTAB="$tmp/crypttab"
check_exit 0
check_contained
for l in 1 2 3; do
        check_log "$tmp/crypttab:$l"
done
check_log "luks.options="
check_not_injected Evil
check_exists normal/systemd-cryptsetup@ok.service
n=$(find "$out/normal" -name 'systemd-cryptsetup@*.service' -type f | wc -l)
[[ $n == 1 ]] || fail_with "$n volumes written, expected only ok"

# 2e. A '%' in rd.systemd.debug_shell= (PID 1 would expand "%n" to the unit's name, "%1" fails): doubled in
# both lines of the drop-in, so the TTY named is the one used; no '%' that starts a specifier is left.
for tty in 'tty%n' 'ttyS%%1' '%' 'tty%' '/dev/tty%i' '%%%' 'tty%{x}'; do
        what="rd.systemd.debug_shell=$tty"
        run "$debug" "rd.systemd.debug_shell=$tty rd.systemd.wants=foo.service"
        check_exit 0
        check_contained
        check_exists early/initrd.target.wants/foo.service
        check_exists early/debug-shell.service.d/50-tty.conf
        escaped=${tty#/dev/}
        escaped=${escaped//%/%%}
        grep -qxF "TTYPath=/dev/$escaped" "$out/early/debug-shell.service.d/50-tty.conf" 2>/dev/null ||
                fail_with "no line TTYPath=/dev/$escaped"
        check_no_specifier
done

# 3. rd.driver.*: the bad names are refused, each with its parameter named; the good ones are written.
what="rd.driver.* names"
run "$driver" $'rd.driver.pre=../../../Evil,loop rd.driver.blacklist="floppy\nEvil=1",pcspkr rd.driver.post="zram Evil",brd,-Evil rd.driver.blacklist=#Evil'
check_exit 0
check_contained
for p in rd.driver.pre= rd.driver.blacklist= rd.driver.post=; do
        check_log "$p"
done
check_not_injected Evil
check_exists normal/sysinit.target.wants/foyer-driver-pre@loop.service
check_exists normal/initrd-root-device.target.wants/foyer-driver-post@brd.service
grep -qx 'blacklist pcspkr' "$out/normal/foyer-driver/modprobe.conf" || fail_with "pcspkr is not blacklisted"
grep -qx 'blacklist brd' "$out/normal/foyer-driver/modprobe.conf" || fail_with "brd is not blacklisted"
n=$(find "$out/normal" -name 'foyer-driver-*@*.service' | wc -l)
[[ $n == 2 ]] || fail_with "$n module units linked, expected loop and brd"

((fail == 0)) && echo "ok"
exit "$fail"
