#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test-lvm-write-failure.sh FOYER_LVM_GENERATOR
#
# foyer-lvm-generator exits non-zero only when it cannot write its output, and then leaves nothing
# behind: an existing lvmlocal.conf stays as it was ("Duplicate entry"), no drop-in is written
# without it, and an output directory that cannot be created fails cleanly.
set -u
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$(realpath "$0")")/lib.sh"
begin_error_test "$1"

run() {
        env -i SYSTEMD_IN_INITRD=1 SYSTEMD_EFI_OPTIONS= FOYER_CMDLINE_DIR=/nonexistent \
                SYSTEMD_PROC_CMDLINE="root=/dev/vg0/root rd.lvm.lv=vg0/root" "$generator" "$@" 2>"$tmp/log"
}

# 1. An existing lvmlocal.conf is never replaced, and the LV wait is not written without it.
mkdir -p "$tmp/a/foyer-lvm"
echo precious >"$tmp/a/foyer-lvm/lvmlocal.conf"
run "$tmp/a"
check_kept "$tmp/a/foyer-lvm/lvmlocal.conf" $? "existing lvmlocal.conf" || fail=1
if [[ $(find "$tmp/a" -mindepth 1 | sort | tr '\n' ' ') != "$tmp/a/foyer-lvm $tmp/a/foyer-lvm/lvmlocal.conf " ]]; then
        echo "FAIL: files other than the existing one:"
        find "$tmp/a"
        fail=1
fi

# 2. An output directory below a regular file cannot be created.
touch "$tmp/file"
run "$tmp/file/out"
rc=$?
if [[ $rc == 0 ]] || ! grep -q "Not a directory" "$tmp/log"; then
        echo "FAIL: output below a file: exit $rc"
        cat "$tmp/log"
        fail=1
fi

# 3. The same parameters with a writable directory succeed (the failures above are the output's).
mkdir "$tmp/b"
run "$tmp/b"
rc=$?
if [[ $rc != 0 || ! -s $tmp/b/foyer-lvm/lvmlocal.conf || ! -s $tmp/b/initrd-root-device.target.d/50-lvm-lv.conf ]]; then
        echo "FAIL: writable output: exit $rc"
        cat "$tmp/log"
        fail=1
fi

((fail == 0)) && echo "foyer-lvm-generator write failures: ok"
exit "$fail"
