#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A stand-in for vm-run, for run-scenario-choice.sh: prints what run-scenario.sh chose, the kernel
# (--kernel), the image's first line (--initrd) and, for each --drive, the /foyer-root-name on
# its ext4 (which root recipe the disk was made from) and whether the disk has a /boot/vmlinuz-*,
# then the scenario's expect lines (the last argument) as vm-run would read them.
set -euo pipefail
while (($# > 1)); do
        case $1 in
        --kernel) echo "KERNEL: $2"; shift ;;
        --initrd) echo "INITRD: $(head -n1 "$2")"; shift ;;
        --drive)
                echo "ROOT: $(debugfs -R 'cat /foyer-root-name' "$2" 2>/dev/null)"
                echo "DISK /boot: $(debugfs -R 'ls -p /boot' "$2" 2>/dev/null | grep -c vmlinuz)"
                shift ;;
        esac
        shift
done
grep '^expect' "$1" | sed 's/^/STEP: /'
