#!/bin/sh
# run-fuzz.sh BUILD_DIR SECONDS [HARNESS...] — runs each libFuzzer harness of
# BUILD_DIR/fuzz (all by default) for SECONDS on its seed corpus
# fuzz/corpus/<name> plus the working corpus BUILD_DIR/fuzz/corpus/<name>
# (kept between runs), with the tokens of fuzz/strata.dict, then prints
# executions per second and coverage (libFuzzer's cov: edges and ft:
# features) per harness. Crashes, leaks,
# timeouts and oracle failures are saved as BUILD_DIR/fuzz/artifacts/<name>-*;
# the script fails if any harness failed.
set -eu
build=${1:?usage: run-fuzz.sh BUILD_DIR SECONDS [HARNESS...]}
seconds=${2:?usage: run-fuzz.sh BUILD_DIR SECONDS [HARNESS...]}
shift 2
src=$(cd "$(dirname "$0")/.." && pwd)
fuzz=$(cd "$build/fuzz" && pwd)
if [ $# -eq 0 ]; then
    set -- $(cd "$fuzz" && ls fuzz_* | sed 's/^fuzz_//')
fi
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
mkdir -p "$fuzz/artifacts" "$fuzz/logs"
summary=""
failed=""
for name in "$@"; do
    mkdir -p "$fuzz/corpus/$name"
    log="$fuzz/logs/$name.log"
    echo "== fuzz_$name for $seconds s (log: $log)"
    start=$(date +%s)
    if (cd "$fuzz" && "./fuzz_$name" "-max_total_time=$seconds" -timeout=30 -print_final_stats=1 "-dict=$src/fuzz/strata.dict" \
            "-artifact_prefix=$fuzz/artifacts/$name-" "$fuzz/corpus/$name" "$src/fuzz/corpus/$name") >"$log" 2>&1; then
        status=ok
    else
        status=FAILED
        failed="$failed $name"
        grep -E 'strata fuzz oracle|ERROR: |SUMMARY: |Test unit written to' "$log" | head -n 12 || true
    fi
    last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
    runs=$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}')
    eps=$(grep -E '^stat::average_exec_per_sec' "$log" | awk '{print $2}')
    cov=$(echo "$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
    ft=$(echo "$last" | sed -n 's/.*ft: \([0-9]*\).*/\1/p')
    corp=$(echo "$last" | sed -n 's/.*corp: \([0-9]*\/[0-9a-zA-Z]*\).*/\1/p')
    line=$(printf '%-14s %-6s %4ss %9s runs %7s exec/s  cov %6s  ft %6s  corpus %s' \
        "$name" "$status" "$(( $(date +%s) - start ))" "${runs:-?}" "${eps:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}")
    echo "$line"
    summary="$summary$line
"
done
echo "== fuzz summary"
printf '%s' "$summary"
if [ -n "$failed" ]; then
    echo "fuzz: failed:$failed (inputs in $fuzz/artifacts/)" >&2
    exit 1
fi
