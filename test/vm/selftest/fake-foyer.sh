#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A stand-in for foyer's builder, for run-scenario-choice.sh: "build -o OUT --kver K ..." writes an
# "image" that says which kernel version it was built for (and from which tree, with --root).
set -euo pipefail
[[ ${1:-} == build ]] || exit 2
shift
while (($# > 0)); do
        case $1 in
        -o) out=$2; shift ;;
        --kver) kver=$2; shift ;;
        --root) root=$2; shift ;;
        esac
        shift
done
echo "fake image for ${kver:?}${root:+ from $root}" >"${out:?}"
