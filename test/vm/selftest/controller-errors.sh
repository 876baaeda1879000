#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# controller-errors.sh VM_RUN: the controller lines vm-run refuses, each before QEMU starts (exit 2)
# with a message that names the scenario file and the controller line: an unknown name (also after a
# good one), a name twice, more names than disks, more disks on the last controller than it holds,
# and a controller with drive-if none. QEMU is print-args.sh, so a line that got through would start
# it and the scenario's expect step would pass.
set -euo pipefail

# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"
selftest_begin "${1:-}" "usage: controller-errors.sh VM_RUN"
export FOYER_VM_QEMU=$here/print-args.sh

# refused SCENARIO DISKS MESSAGE: vm-run with DISKS --drive arguments exits 2, its stderr matching
# "vm-run: SCENARIO_PATH:MESSAGE" (MESSAGE a basic regex that starts with the line number).
refused() {
        local scenario=$1 disks=$2 message=$3 rc=0 drives=()
        for ((i = 0; i < disks; i++)); do
                drives+=(--drive /dev/null)
        done
        echo "== $(basename "$scenario") with $disks disks"
        "$vm_run" --kernel /dev/null --accel tcg "${drives[@]}" "$scenario" >"$tmp/stdout" 2>"$tmp/stderr" || rc=$?
        cat "$tmp/stderr"
        [[ $rc == 2 ]] || fail "$(basename "$scenario"): exit status $rc, not 2"
        grep -q -- "^vm-run: $scenario:$message" "$tmp/stderr" ||
                fail "$(basename "$scenario"): message does not match '$scenario:$message'"
        ! grep -q '^ARGS:' "$tmp/stdout" || fail "$(basename "$scenario"): QEMU was started"
}

refused "$here/controller-unknown.scenario" 2 \
        "2: controller is virtio-blk, nvme, .* or usb-uas, not 'lsi53c895a'$"
printf 'controller nvme lsi53c895a\nexpect 5 ^ARGS:\n' >"$tmp/unknown-second.scenario"
refused "$tmp/unknown-second.scenario" 2 "1: controller is virtio-blk, nvme, .* not 'lsi53c895a'$"
refused "$here/controller-twice.scenario" 3 "3: controller nvme named twice"
refused "$here/controller-more-than-disks.scenario" 2 "2: 3 controllers but 2 disks"
refused "$here/controller-too-many-disks.scenario" 6 "2: 5 disks on usb-storage, which holds at most 4 here$"
refused "$here/controller-drive-if.scenario" 2 "2: controller and drive-if none exclude each other$"
echo ok
