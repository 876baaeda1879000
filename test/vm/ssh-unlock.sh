#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# ssh-unlock.sh wrong|unlock PORT [PASSPHRASE]
#
# The host side of the ssh-unlock-* scenarios: logs into the initrd's SSH server through the
# scenario's forwarded loopback PORT (vm-run's hostfwd 22, @PORT@), checking the server's host key
# against the .pub files the builder wrote beside the keys it made ($FOYER_VM_CACHE/ssh-host-keys,
# see mkimage.sh), as a client's known_hosts would.
#   wrong   with the key that is not in the image's authorized_keys (ssh-unlock-wrong.key): passes
#           when the server refuses it with "Permission denied (publickey)";
#   unlock  with the authorized key (ssh-unlock-test.key), giving PASSPHRASE on ssh's input (no
#           terminal: foyer-unlock's agent reads one line per question): passes when the login ends
#           with status 0 after foyer-unlock said that no passphrase is asked for any more.
# Until the server answers (QEMU's user network accepts the connection before the guest listens),
# each try is repeated every 2 s; the scenario's host step bounds the whole.
# The private keys are committed, and git checks them out 0644, which ssh refuses: each is copied
# into a 0600 file of a temporary directory first.
set -euo pipefail

mode=${1:?usage: ssh-unlock.sh wrong|unlock PORT [PASSPHRASE]}
port=${2:?}
pass=${3:-}
here=$(dirname "$(realpath "$0")")
keydir=${FOYER_VM_CACHE:?}/ssh-host-keys

case $mode in
wrong) key=ssh-unlock-wrong.key ;;
unlock) key=ssh-unlock-test.key; [[ -n $pass ]] || { echo "ssh-unlock.sh: unlock needs the passphrase" >&2; exit 2; } ;;
*) echo "ssh-unlock.sh: wrong or unlock, not '$mode'" >&2; exit 2 ;;
esac

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
install -m 0600 "$here/$key" "$tmp/key"
shopt -s nullglob
pubs=("$keydir"/*.pub)
[[ ${#pubs[@]} -gt 0 ]] || { echo "ssh-unlock.sh: no host keys in $keydir" >&2; exit 1; }
for pub in "${pubs[@]}"; do
        read -r type blob _ < "$pub"
        echo "[127.0.0.1]:$port $type $blob"
done > "$tmp/known_hosts"

opts=(-F /dev/null -i "$tmp/key" -p "$port" -o IdentitiesOnly=yes -o BatchMode=yes -o ConnectTimeout=10
      -o UserKnownHostsFile="$tmp/known_hosts" -o GlobalKnownHostsFile=/dev/null -o StrictHostKeyChecking=yes
      -o LogLevel=ERROR -T)

for try in $(seq 1 150); do
        rc=0
        if [[ $mode == wrong ]]; then
                ssh "${opts[@]}" root@127.0.0.1 true </dev/null >"$tmp/out" 2>&1 || rc=$?
        else
                printf '%s\n' "$pass" | ssh "${opts[@]}" root@127.0.0.1 >"$tmp/out" 2>&1 || rc=$?
        fi
        if grep -q 'Permission denied (publickey)' "$tmp/out"; then
                cat "$tmp/out" >&2
                if [[ $mode == wrong ]]; then
                        echo "ssh-unlock.sh: the wrong key was refused (try $try)" >&2
                        exit 0
                fi
                echo "ssh-unlock.sh: the authorized key was refused" >&2
                exit 1
        fi
        if grep -q 'REMOTE HOST IDENTIFICATION HAS CHANGED\|Host key verification failed' "$tmp/out"; then
                cat "$tmp/out" >&2
                echo "ssh-unlock.sh: the server's host key is not one of $keydir" >&2
                exit 1
        fi
        if [[ $mode == unlock ]] && grep -q 'foyer-unlock' "$tmp/out"; then
                cat "$tmp/out" >&2
                if [[ $rc == 0 ]] && grep -q 'no passphrase is asked for any more' "$tmp/out"; then
                        echo "ssh-unlock.sh: logged in and unlocked (try $try)" >&2
                        exit 0
                fi
                echo "ssh-unlock.sh: the login ended with status $rc before the unlocking was over" >&2
                exit 1
        fi
        if [[ $mode == wrong && $rc == 0 ]]; then
                cat "$tmp/out" >&2
                echo "ssh-unlock.sh: the wrong key logged in" >&2
                exit 1
        fi
        sleep 2
done
cat "$tmp/out" >&2
echo "ssh-unlock.sh: no answer from the SSH server on port $port" >&2
exit 1
