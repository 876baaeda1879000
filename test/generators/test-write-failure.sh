#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test-write-failure.sh GENERATOR
#
# Output that cannot be written is the only reason to exit non-zero, and it never leaves a partial or
# temporary file behind: a pre-existing sysroot.mount stays untouched (EEXIST, "Duplicate entry?"), and
# an output directory that cannot be created fails cleanly.
set -u
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$(realpath "$0")")/lib.sh"
begin_error_test "$1"

run() {
        env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin SYSTEMD_IN_INITRD=1 SYSTEMD_EFI_OPTIONS= FOYER_CMDLINE_DIR=/nonexistent \
                SYSTEMD_FSTAB=/dev/null SYSTEMD_SYSROOT_FSTAB=/dev/null SYSTEMD_PROC_CMDLINE="root=/dev/sda2 rd.timeout=5" \
                "$generator" "$@" 2>"$tmp/log"
}

# 1. An existing unit is never replaced.
mkdir -p "$tmp/a"
echo "precious" >"$tmp/a/sysroot.mount"
run "$tmp/a"
check_kept "$tmp/a/sysroot.mount" $? "existing sysroot.mount" || fail=1

# 2. An output directory below a regular file cannot be created.
touch "$tmp/file"
run "$tmp/file/out"
rc=$?
if [[ $rc == 0 ]]; then
        echo "FAIL: unwritable output directory: exit 0"
        fail=1
fi

# 3. The same command line into a fresh directory works, and leaves only complete files.
run "$tmp/b" "$tmp/b" "$tmp/b"
rc=$?
if [[ $rc != 0 ]] || find "$tmp/b" -name '.#*' | grep -q .; then
        echo "FAIL: fresh directory: exit $rc"
        cat "$tmp/log"
        fail=1
fi

# 4. Wrong argument counts.
for args in "" "$tmp/c $tmp/c"; do
        # shellcheck disable=SC2086
        if run $args; then
                echo "FAIL: '$args' accepted"
                fail=1
        fi
done

((fail == 0)) && echo "ok"
exit "$fail"
