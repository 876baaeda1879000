#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Makes a manual page of a markdown document with lowdown, and gives it the NAME section that man,
# apropos and mandb read ("NAME \- DESCRIPTION"), which lowdown does not write.
# Usage: md2man.sh LOWDOWN INPUT.md OUTPUT NAME SECTION DESCRIPTION
set -eu
lowdown=$1 input=$2 output=$3 name=$4 section=$5 description=$6

"$lowdown" -s -Tman -M "title=$name" -M "section=$section" -o "$output.tmp" "$input"
# The NAME section goes in front of the first section of the document.
awk -v name="$name" -v desc="$description" '
        !done && /^\.SH/ { printf ".SH NAME\n%s \\- %s\n", name, desc; done = 1 }
        { print }
        END { if (!done) exit 1 }' "$output.tmp" >"$output" || { rm -f "$output.tmp" "$output"; exit 1; }
rm -f "$output.tmp"
