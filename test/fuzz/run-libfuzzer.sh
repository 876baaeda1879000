#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# run-libfuzzer.sh SOURCEDIR FUZZBUILDDIR NAME...
#
# Sets up (once) a clang build of foyer in FUZZBUILDDIR with -Dlibfuzzer=true, the libraries
# instrumented for coverage and ASan+UBSan, builds the harnesses fuzz-NAME and runs each one for
# $FOYER_FUZZ_SECONDS (default 12), one per CPU at a time, with a fixed seed, starting from its corpus in
# test/fuzz/corpus/NAME (read-only: new inputs go to a scratch copy). A crash, leak, timeout or
# out-of-memory fails the run; the input that caused it is kept in FUZZBUILDDIR/artifacts/NAME/
# and the message says how to add it to the corpus, where the replay test keeps it fixed.
# Exit status: 0 all passed, 1 a harness failed, 77 no clang or no libFuzzer runtime.
set -euo pipefail

src=$(realpath "${1:?usage: run-libfuzzer.sh SOURCEDIR FUZZBUILDDIR NAME...}")
build=${2:?}
shift 2
[[ $# -gt 0 ]] || { echo "run-libfuzzer.sh: no harness named" >&2; exit 1; }
seconds=${FOYER_FUZZ_SECONDS:-12}

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
ninja -C "$build" "${targets[@]}" >"$build/ninja.log" 2>&1 ||
        { tail -n 40 "$build/ninja.log"; echo "run-libfuzzer.sh: building the harnesses failed (log: $build/ninja.log)"; exit 1; }

# One harness: prints its verdict (with the log's tail and the inputs on failure); exit 1 on a finding.
run_one() {
        local name=$1 work=$build/corpus/$1 artifacts=$build/artifacts/$1 log=$build/fuzz-$1.log a
        rm -rf "$work"
        mkdir -p "$work" "$artifacts"
        # -seed fixes the run; -max_total_time bounds it; -timeout and -rss_limit_mb turn a hang or
        # a runaway allocation into a failure; -len_control=0 tries long inputs from the start.
        if "$build/test/fuzz/fuzz-$name" -seed=1 -max_total_time="$seconds" -timeout=10 \
                -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
                -artifact_prefix="$artifacts/" "$work" "$src/test/fuzz/corpus/$name" >"$log" 2>&1; then
                echo "fuzz-$name: ok, $(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$') runs in ${seconds}s"
                return 0
        fi
        echo "fuzz-$name: FAILED (log: $log)"
        tail -n 40 "$log"
        for a in "$artifacts"/*; do
                [[ -e $a ]] && echo "  input: $a — once fixed, keep it: cp '$a' test/fuzz/corpus/$name/"
        done
        return 1
}

# The harnesses are single-threaded: one per CPU at a time (each still runs its full time). Each
# one's report is written whole when it ends, so reports do not interleave.
jobs=$(nproc)
declare -A pid_of=()
failed=()
reap() {
        local name
        for name in "${!pid_of[@]}"; do
                if [[ ! -s $build/fuzz-$name.status ]]; then
                        # Still running, or killed before it could say (then it failed).
                        kill -0 "${pid_of[$name]}" 2>/dev/null && continue
                        echo 1 >"$build/fuzz-$name.status"
                fi
                [[ $(<"$build/fuzz-$name.status") == 0 ]] || failed+=("$name")
                cat "$build/fuzz-$name.report"
                unset "pid_of[$name]"
        done
}
for name in "$@"; do
        while [[ ${#pid_of[@]} -ge $jobs ]]; do
                wait -n || true
                reap
        done
        rm -f "$build/fuzz-$name.status"
        { run_one "$name"; echo $? >"$build/fuzz-$name.status"; } >"$build/fuzz-$name.report" &
        pid_of[$name]=$!
done
while [[ ${#pid_of[@]} -gt 0 ]]; do
        wait -n || true
        reap
done
if [[ ${#failed[@]} -gt 0 ]]; then
        echo "libFuzzer found problems in: ${failed[*]}"
        exit 1
fi
echo "all ${#@} harnesses ran ${seconds}s each without a finding"
