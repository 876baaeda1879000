#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test-write-failure.sh GENERATOR
#
# Output that cannot be written is the only reason to exit non-zero, and it never leaves a partial or
# temporary file behind: a pre-existing sysroot.mount stays untouched (EEXIST, "Duplicate entry?"), and
# an output directory that cannot be created fails cleanly.
set -u
generator=$(realpath "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

run() {
        env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin SYSTEMD_IN_INITRD=1 SYSTEMD_EFI_OPTIONS= FOYER_CMDLINE_DIR=/nonexistent \
                SYSTEMD_FSTAB=/dev/null SYSTEMD_SYSROOT_FSTAB=/dev/null SYSTEMD_PROC_CMDLINE="root=/dev/sda2 rd.timeout=5" \
                "$generator" "$@" 2>"$tmp/log"
}

# 1. An existing unit is never replaced.
mkdir -p "$tmp/a"
echo "precious" >"$tmp/a/sysroot.mount"
run "$tmp/a"
rc=$?
if [[ $rc == 0 || $(cat "$tmp/a/sysroot.mount") != precious ]] || ! grep -q "Duplicate entry" "$tmp/log"; then
        echo "FAIL: existing sysroot.mount: exit $rc, content $(cat "$tmp/a/sysroot.mount")"
        cat "$tmp/log"
        fail=1
fi
if find "$tmp/a" -name '.#*' | grep -q .; then
        echo "FAIL: temporary files left behind:"
        find "$tmp/a" -name '.#*'
        fail=1
fi

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
exit $fail
