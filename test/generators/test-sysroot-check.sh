#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test-sysroot-check.sh GENERATOR
#
# The systemd-sysroot-fstab-check mode: started under that name, the generator scans the host fstab and
# only if an x-initrd.mount or /usr entry exists runs "systemctl daemon-reload" and
# "systemctl --no-block start initrd-fs.target swap.target" (a fake systemctl records the calls).
set -u
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$(realpath "$0")")/lib.sh"
begin_error_test "$1"

cat >"$tmp/systemctl" <<'EOS'
#!/bin/sh
echo "$*" >>"$LOG"
EOS
chmod +x "$tmp/systemctl"

check() {
        local what=$1 fstab=$2 in_initrd=$3 expected_rc=$4 expected_calls=$5
        shift 5
        rm -f "$tmp/calls"
        touch "$tmp/calls"
        # shellcheck disable=SC2016 # "$0" "$@" are for the inner bash
        env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin SYSTEMD_IN_INITRD="$in_initrd" SYSTEMD_PROC_CMDLINE="root=/dev/sda2" \
                SYSTEMD_EFI_OPTIONS= FOYER_CMDLINE_DIR=/nonexistent SYSTEMD_SYSROOT_FSTAB="$fstab" \
                FOYER_SYSTEMCTL="$tmp/systemctl" LOG="$tmp/calls" \
                bash -c 'exec -a systemd-sysroot-fstab-check "$0" "$@"' "$generator" "$@" 2>"$tmp/log"
        check_calls "$what" $? "$expected_rc" "$expected_calls"
}

printf '/dev/sda2 / ext4 defaults 0 1\nLABEL=home /home ext4 defaults 0 2\n' >"$tmp/boring"
printf '/dev/sda2 / ext4 defaults 0 1\n/dev/sdb1 /var ext4 x-initrd.mount 0 2\n' >"$tmp/initrd-mount"
printf '/dev/sdb2 /usr ext4 ro 0 2\n' >"$tmp/usr"

check "nothing interesting" "$tmp/boring" 1 0 ""
grep -q "Nothing interesting found, not doing daemon-reload." "$tmp/log" || { echo "FAIL: message missing"; fail=1; }
check "missing fstab" "$tmp/none" 1 0 ""
check "x-initrd.mount" "$tmp/initrd-mount" 1 0 $'daemon-reload\n--no-block start initrd-fs.target swap.target'
check "/usr entry" "$tmp/usr" 1 0 $'daemon-reload\n--no-block start initrd-fs.target swap.target'
check "outside the initrd" "$tmp/usr" 0 1 ""
check "with an argument" "$tmp/usr" 1 1 "" extra

# A failing systemctl makes the check fail (initrd-parse-etc.service then goes to emergency mode).
printf '#!/bin/sh\nexit 3\n' >"$tmp/systemctl"
check "systemctl fails" "$tmp/usr" 1 1 ""

exit "$fail"
