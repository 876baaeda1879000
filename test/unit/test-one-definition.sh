#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# One utility layer: each generic helper below is defined exactly once across the code every foyer
# program is built from (the shared library, the builder's core library, the generators' and
# foyer-explain's objects), and that once is in src/shared's library. A second copy, even a static
# one or a compiler's clone of it (name.constprop.0, name.isra.0, ...), fails the test; so does a
# helper that is not defined at all (nm saw no objects, the list went stale, or the helper was
# renamed) or one defined elsewhere than the shared library.
#
# Copies under another name, or inlined into their caller, leave no symbol to find; for the grammars
# the builder and the generators both read (the rd.luks.* UUID rules, keymap names) the sources are
# searched for the tell-tale code of such copies instead, which may only appear in src/shared.
set -eu

build="${1:?usage: $0 BUILD_DIR [SOURCE_DIR]}"
src="${2:-$(cd "$(dirname "$0")/../.." && pwd)}"

helpers=(
        read_full_file read_full_fd write_all read_tree_file
        strv_split strv_sort
        path_simplify path_is_safe mkdir_p mkdir_parents chase_below_root
        rm_rf
        spawn_process wait_process spawn_and_wait
        write_string_file_atomic
        sysfs_dir
        unit_name_build
        generator_parse_timeout_option generator_write_timeout_dropin
        id128_is_valid
        luks_uuid_skip_prefix luks_uuid_split_word luks_uuid_split_prefix
        keymap_name_is_valid
)

# Names the copies had before they were replaced by the helpers above: defined nowhere any more.
retired=(
        id128_string_is_whole split_uuid_word split_uuid_prefix keymap_name_valid
)

# Tell-tale code of a copy of a shared grammar (extended regular expressions, matched per line in
# the C sources outside src/shared), each with what it gives away.
patterns=(
        '(\b8 *\|\|.*\b13 *\|\|.*\b18 *\|\|.*\b23\b)'$'\t''the dash offsets of a UUID (id128_is_valid())'
        '"0123456789abcdefABCDEF'$'\t''the hex digits of a UUID spelled out (id128_is_valid(), luks_uuid_split_word())'
        'ABCDEFGHIJKLMNOPQRSTUVWXYZ-"'$'\t''the characters of luks.key=/luks.data= UUIDs (luks_uuid_split_prefix())'
        '0-9a-fA-F-\]='$'\t''systemd'"'"'s sscanf() form of UUID=WORD (luks_uuid_split_word())'
        '"luks-"'$'\t''the luks-UUID prefix (LUKS_UUID_NAME_PREFIX, luks_uuid_skip_prefix())'
        '"-_\.\+"'$'\t''the characters of keymap names (keymap_name_is_valid())'
        'define +KEYMAP_NAME_MAX\b'$'\t''the length limit of keymap names (keymap-name.h)'
)

inputs=()
for lib in src/shared/libfoyer-shared.a src/foyer/libfoyer-core.a src/failure/libfoyer-explain-core.a; do
        [[ -f "$build/$lib" ]] || { echo "missing $build/$lib" >&2; exit 1; }
        inputs+=("$build/$lib")
done
# The programs' own objects (not the -asan copies, which are the same sources built again).
while IFS= read -r -d '' o; do
        inputs+=("$o")
done < <(find "$build/generators" "$build/src/failure" "$build/src/foyer" -path '*-asan*' -prune -o \
              -path '*.p/*' -name '*.o' ! -path '*/lib*.a.p/*' -print0)

# Defined text symbols, global or static ("T"/"t", "W"/"w" for weak ones), as "OBJECT NAME" with
# GCC's clone suffixes taken off the name; a function and its clones in one object count once.
defs=$(nm -A --defined-only "${inputs[@]}" 2>/dev/null |
       awk '$2 ~ /^[TtWw]$/ { obj = $1; sub(/:[0-9a-f]+$/, "", obj); name = $3; sub(/\..*$/, "", name); print obj, name }' |
       sort -u)

# Lines of stdin, indented under a FAIL line.
indent() {
        local line

        while IFS= read -r line; do
                printf '   %s\n' "$line"
        done
}

# The objects that define name (one a line).
defined_in() {
        awk -v h="$1" '$2 == h { print $1 }' <<<"$defs"
}

status=0 found=0
for h in "${helpers[@]}"; do
        where=$(defined_in "$h")
        n=$(grep -c . <<<"$where" || true)
        if (( n > 1 )); then
                echo "FAIL: $h is defined $n times:" >&2
                indent <<<"$where" >&2
                status=1
        elif (( n == 0 )); then
                echo "FAIL: $h is not defined in any of the ${#inputs[@]} inputs" >&2
                status=1
        elif [[ "$where" != "$build/src/shared/libfoyer-shared.a:"* ]]; then
                echo "FAIL: $h is defined in $where, not in src/shared's library" >&2
                status=1
        fi
        (( n > 0 )) && found=$((found + 1))
done

if (( found == 0 )); then
        echo "FAIL: nm found none of the helpers in ${#inputs[@]} inputs; is the build dir right?" >&2
        exit 1
fi

for h in "${retired[@]}"; do
        where=$(defined_in "$h")
        if [[ -n "$where" ]]; then
                echo "FAIL: $h, a copy of a shared helper, is defined again:" >&2
                indent <<<"$where" >&2
                status=1
        fi
done

[[ -d "$src/src/shared" && -d "$src/generators" ]] || { echo "missing sources in $src" >&2; exit 1; }
sources=()
while IFS= read -r -d '' f; do
        sources+=("$f")
done < <(find "$src/src" "$src/generators" -path "$src/src/shared" -prune -o \
              -type f \( -name '*.c' -o -name '*.h' \) -print0 | sort -z)
for p in "${patterns[@]}"; do
        re="${p%%$'\t'*}" what="${p#*$'\t'}"
        if hits=$(grep -nE -- "$re" "${sources[@]}"); then
                echo "FAIL: a copy of a shared grammar outside src/shared, $what:" >&2
                indent <<<"${hits//"$src/"/}" >&2
                status=1
        fi
done
# Whoever reads a luks.* parameter that names volumes by UUID reads it with the shared grammar.
while IFS= read -r f; do
        if ! grep -qF '#include "luks-uuid.h"' "$f"; then
                echo "FAIL: ${f#"$src/"} reads luks.uuid/name/options/key/data= without luks-uuid.h" >&2
                status=1
        fi
done < <(grep -lE '"(rd\.)?luks\.(uuid|name|options|key|data)\b' "${sources[@]}" || true)

echo "checked ${#helpers[@]} helpers ($found defined) and ${#retired[@]} retired names in ${#inputs[@]} inputs," \
     "${#patterns[@]} patterns in ${#sources[@]} sources"
exit $status
