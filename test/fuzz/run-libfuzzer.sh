#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# run-libfuzzer.sh SOURCEDIR FUZZBUILDDIR NAME...
#
# Sets up (once) a clang build of foyer in FUZZBUILDDIR with -Dlibfuzzer=true, the libraries
# instrumented for coverage and ASan+UBSan, builds the harnesses fuzz-NAME and runs each one for
# $FOYER_FUZZ_SECONDS (default 20) with a fixed seed, starting from its corpus in
# test/fuzz/corpus/NAME (read-only: new inputs go to a scratch copy). A crash, leak, timeout or
# out-of-memory fails the run; the input that caused it is kept in FUZZBUILDDIR/artifacts/NAME/
# and the message says how to add it to the corpus, where the replay test keeps it fixed.
# Exit status: 0 all passed, 1 a harness failed, 77 no clang or no libFuzzer runtime.
set -euo pipefail

src=$(realpath "${1:?usage: run-libfuzzer.sh SOURCEDIR FUZZBUILDDIR NAME...}")
build=${2:?}
shift 2
[[ $# -gt 0 ]] || { echo "run-libfuzzer.sh: no harness named" >&2; exit 1; }
seconds=${FOYER_FUZZ_SECONDS:-20}

command -v clang >/dev/null || { echo "SKIP: clang is not installed"; exit 77; }
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' > "$probe/p.c"
clang -fsanitize=fuzzer "$probe/p.c" -o "$probe/p" 2>/dev/null ||
        { echo "SKIP: clang cannot link libFuzzer (install libclang-rt-14-dev)"; exit 77; }

instrument='-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer'
if [[ ! -e $build/build.ninja ]]; then
        CC=clang meson setup "$build" "$src" -Dlibfuzzer=true -Dsanitizers=false \
                -Dvm_tests=false -Dmkosi_tests=false -Dbuildtype=debugoptimized \
                "-Dc_args=$instrument" "-Dc_link_args=-fsanitize=address,undefined" >/dev/null
fi
targets=()
for name in "$@"; do
        targets+=("test/fuzz/fuzz-$name")
done
ninja -C "$build" "${targets[@]}" >/dev/null

failed=()
for name in "$@"; do
        work=$build/corpus/$name
        artifacts=$build/artifacts/$name
        rm -rf "$work"
        mkdir -p "$work" "$artifacts"
        log=$build/fuzz-$name.log
        # -seed fixes the run; -max_total_time bounds it; -timeout and -rss_limit_mb turn a hang or
        # a runaway allocation into a failure; -len_control=0 tries long inputs from the start.
        if "$build/test/fuzz/fuzz-$name" -seed=1 -max_total_time="$seconds" -timeout=10 \
                -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
                -artifact_prefix="$artifacts/" "$work" "$src/test/fuzz/corpus/$name" >"$log" 2>&1; then
                echo "fuzz-$name: ok, $(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$') runs in ${seconds}s"
        else
                echo "fuzz-$name: FAILED (log: $log)"
                tail -n 40 "$log"
                for a in "$artifacts"/*; do
                        [[ -e $a ]] && echo "  input: $a — once fixed, keep it: cp '$a' test/fuzz/corpus/$name/"
                done
                failed+=("$name")
        fi
done
if [[ ${#failed[@]} -gt 0 ]]; then
        echo "libFuzzer found problems in: ${failed[*]}"
        exit 1
fi
echo "all ${#@} harnesses ran ${seconds}s each without a finding"
