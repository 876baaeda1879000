#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test-dhcp-root.sh GENERATOR
#
# foyer-netroot-generator's foyer-dhcp-root mode (root=dhcp), started under that name as its units do:
#   - "network" writes RequestOptions=17 drop-ins for the image's default network and for each .network
#     of the run directory (systemd-network-generator's), and nothing else;
#   - "mount" with no lease, or leases without a root path, fails naming root=dhcp and what is missing,
#     without calling systemctl; with a root path it runs "systemctl daemon-reload" and
#     "systemctl start sysroot.mount" (a fake systemctl records the calls), and a failing start fails it;
#   - outside the initrd, or with another argument, it refuses.
set -u
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$(realpath "$0")")/lib.sh"
begin_error_test "$1"

cat >"$tmp/systemctl" <<'EOS'
#!/bin/sh
echo "$*" >>"$LOG"
[ "$*" != "start sysroot.mount" ] || [ -z "$FAIL_START" ] || exit 1
EOS
chmod +x "$tmp/systemctl"

# check WHAT IN_INITRD EXPECTED_RC EXPECTED_CALLS [ENV=VALUE...] -- ARGS...
check() {
        local what=$1 in_initrd=$2 expected_rc=$3 expected_calls=$4
        shift 4
        local -a env=()
        while [[ $1 != -- ]]; do env+=("$1"); shift; done
        shift
        rm -f "$tmp/calls"
        touch "$tmp/calls"
        # shellcheck disable=SC2016 # "$0" "$@" are for the inner bash
        env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin SYSTEMD_IN_INITRD="$in_initrd" SYSTEMD_PROC_CMDLINE="root=dhcp" \
                FOYER_CMDLINE_DIR=/nonexistent FOYER_SYSTEMCTL="$tmp/systemctl" LOG="$tmp/calls" \
                FOYER_DHCP_LEASES_DIR="$tmp/leases" FOYER_NETWORK_RUN_DIR="$tmp/network" "${env[@]}" \
                bash -c 'exec -a foyer-dhcp-root "$0" "$@"' "$generator" "$@" 2>"$tmp/log"
        check_calls "$what" $? "$expected_rc" "$expected_calls"
}
has_log() {
        grep -qF -- "$1" "$tmp/log" || { echo "FAIL: no message '$1'"; sed 's/^/    /' "$tmp/log"; fail=1; }
}

echo "== network"
mkdir -p "$tmp/network"
printf '[Match]\nName=eth0\n[Network]\nDHCP=yes\n' >"$tmp/network/90-eth0.network"
touch "$tmp/network/README"
check "network" 1 0 "" -- network
for n in 99-foyer-default.network 90-eth0.network; do
        f=$tmp/network/$n.d/50-foyer-root-dhcp.conf
        if ! grep -qx 'RequestOptions=17' "$f" 2>/dev/null || ! grep -qx '\[DHCPv4\]' "$f"; then
                echo "FAIL: no RequestOptions=17 drop-in $f"
                fail=1
        fi
done
got=$(cd "$tmp/network" && find . -mindepth 1 | LC_ALL=C sort | tr '\n' ' ')
want="./90-eth0.network ./90-eth0.network.d ./90-eth0.network.d/50-foyer-root-dhcp.conf ./99-foyer-default.network.d ./99-foyer-default.network.d/50-foyer-root-dhcp.conf ./README "
[[ $got == "$want" ]] || { echo "FAIL: network wrote other files: $got"; fail=1; }
rm -rf "$tmp/network"
check "network, no run directory" 1 0 "" -- network
[[ -f $tmp/network/99-foyer-default.network.d/50-foyer-root-dhcp.conf ]] || { echo "FAIL: no default drop-in"; fail=1; }

echo "== mount"
check "no lease" 1 1 "" -- mount
has_log "root=dhcp: no interface got a DHCPv4 lease (none in $tmp/leases)"
mkdir -p "$tmp/leases"
printf 'ADDRESS=10.0.2.15\nSERVER_ADDRESS=10.0.2.2\n' >"$tmp/leases/1"
printf 'ADDRESS=10.0.3.15\nROOT_PATH=\n' >"$tmp/leases/999999"
check "no root path" 1 1 "" -- mount
has_log "root=dhcp: no DHCP lease holds a root path (option 17, root-path); leases on: "
has_log "ifindex 999999"
grep -q "leases on: .*lo[,.]" "$tmp/log" || { echo "FAIL: lo's lease not named"; fail=1; }
printf 'ADDRESS=10.0.3.15\nROOT_PATH=nfs4:10.0.2.2:/srv/root\n' >"$tmp/leases/999998"
check "root path" 1 0 $'daemon-reload\nstart sysroot.mount' -- mount
has_log "root=dhcp: the root path nfs4:10.0.2.2:/srv/root from the DHCP lease of ifindex 999998."
check "mount fails" 1 1 $'daemon-reload\nstart sysroot.mount' FAIL_START=1 -- mount
has_log "root=dhcp: the root path nfs4:10.0.2.2:/srv/root from the DHCP lease of ifindex 999998 was not mounted"

echo "== refusals"
check "outside the initrd" 0 1 "" -- mount
check "no argument" 1 1 ""  --
check "another argument" 1 1 "" -- umount
has_log "Usage: foyer-dhcp-root network|mount"
exit "$fail"
