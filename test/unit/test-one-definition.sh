#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# One utility layer: each generic helper below is defined exactly once across the code every foyer
# program is built from (the shared library, the builder's core library, the generators' and
# foyer-explain's objects). A second copy, even a static one, fails the test; so does a helper that
# is not defined at all (nm saw no objects, the list went stale, or the helper was renamed).
set -eu

build="${1:?usage: $0 BUILD_DIR}"

helpers=(
        read_full_file read_full_fd write_all
        strv_split strv_sort
        path_simplify path_is_safe mkdir_p mkdir_parents chase_below_root
        rm_rf
        spawn_process wait_process spawn_and_wait
        write_string_file_atomic
        sysfs_dir
        unit_name_build
        generator_parse_timeout_option generator_write_timeout_dropin
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

# Defined text symbols, global or static: "T name" / "t name" (W/w for weak ones).
defs=$(nm --defined-only "${inputs[@]}" 2>/dev/null | awk '$2 ~ /^[TtWw]$/ { print $3 }')

status=0 found=0
for h in "${helpers[@]}"; do
        n=$(grep -cxF -- "$h" <<<"$defs" || true)
        if (( n > 1 )); then
                echo "FAIL: $h is defined $n times:" >&2
                for f in "${inputs[@]}"; do
                        nm -A --defined-only "$f" 2>/dev/null | awk -v h="$h" '$3 == h && $2 ~ /^[TtWw]$/ { print "   " $1 }' >&2
                done
                status=1
        fi
        if (( n == 0 )); then
                echo "FAIL: $h is not defined in any of the ${#inputs[@]} inputs" >&2
                status=1
        fi
        (( n > 0 )) && found=$((found + 1))
done

if (( found == 0 )); then
        echo "FAIL: nm found none of the helpers in ${#inputs[@]} inputs; is the build dir right?" >&2
        exit 1
fi
echo "checked ${#helpers[@]} helpers ($found defined) in ${#inputs[@]} inputs"
exit $status
