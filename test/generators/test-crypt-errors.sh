#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test-crypt-errors.sh GENERATOR
#
# foyer-crypt-generator on bad input: every malformed rd.luks.* value and crypttab line is logged with
# the parameter (or file:line) named, the good volumes are still written, and the exit status is 0.
# Output it cannot write is the only other failure: an existing unit is never replaced ("Duplicate
# entry"), an unwritable directory fails, and no temporary file is left behind.
set -u
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$(realpath "$0")")/lib.sh"
begin_error_test "$1"
U=3f5ad593-4546-4a94-a374-bcfb68aa11f7

run() {
        local cmdline=$1
        shift
        env -i PATH=/usr/bin:/bin SYSTEMD_IN_INITRD=1 SYSTEMD_EFI_OPTIONS= FOYER_CMDLINE_DIR=/nonexistent \
                SYSTEMD_CRYPTTAB="$tmp/crypttab" SYSTEMD_LOG_LEVEL=info SYSTEMD_PROC_CMDLINE="$cmdline" \
                "$generator" "$@" 2>"$tmp/log"
}

check_log() {
        if ! grep -qF -- "$1" "$tmp/log"; then
                echo "FAIL: no log line naming $1"
                fail=1
        fi
}

# 1. Bad values next to good ones.
printf 'onlyname\nbad/name /dev/sda1\nok /dev/sda2 none discard\n' >"$tmp/crypttab"
mkdir "$tmp/a"
run "rd.luks=maybe rd.luks.crypttab=perhaps rd.luks.uuid=zzz rd.luks.name=$U=a/b rd.luks.name=oops \
rd.luks.options=abc=discard rd.luks.key=nothex=/k rd.luks.data=/dev/sdb rd.luks.uuid" "$tmp/a"
rc=$?
if [[ $rc != 0 ]]; then
        echo "FAIL: bad input: exit $rc"
        fail=1
fi
for p in "luks= kernel command line switch maybe" "luks.crypttab= kernel command line switch perhaps" \
         'luks.uuid= kernel command line switch. UUID "zzz"' "luks.name=$U=a/b" "luks name switch oops" \
         'luks.options= kernel command line switch. UUID "abc"' 'luks.key= kernel command line switch. UUID "nothex"' \
         "luks.data= kernel command line switch" "Missing argument for luks.uuid=" \
         "$tmp/crypttab:1" "$tmp/crypttab:2"; do
        check_log "$p"
done
# (None of the command-line volumes is valid, so crypttab is not an allow-list.)
if [[ ! -f $tmp/a/systemd-cryptsetup@ok.service ]]; then
        echo "FAIL: good volume ok not written"
        fail=1
fi
if [[ $(find "$tmp/a" -type f -name 'systemd-cryptsetup@*.service' | wc -l) != 1 ]]; then
        echo "FAIL: bad volumes were written:"
        find "$tmp/a" -name 'systemd-cryptsetup@*.service'
        fail=1
fi
((fail)) && cat "$tmp/log"

# 2. An existing unit is never replaced.
: >"$tmp/crypttab"
mkdir "$tmp/b"
echo precious >"$tmp/b/systemd-cryptsetup@x.service"
run "rd.luks.name=$U=x" "$tmp/b"
check_kept "$tmp/b/systemd-cryptsetup@x.service" $? "existing unit" || fail=1

# 3. An output directory below a regular file cannot be created.
touch "$tmp/file"
if run "rd.luks.uuid=$U" "$tmp/file/out"; then
        echo "FAIL: unwritable output directory: exit 0"
        fail=1
fi

((fail == 0)) && echo "ok"
exit "$fail"
