#!/usr/bin/env bash
# The open floor: what a fresh process pays before Strata does any work of its own, set beside
# the bench's open row (open + one tiny query) on both sides. See README.md.
#
#   benchmarks/open-floor/run.sh [BUILD_DIR]     (default: build; run `make build` first)
#   POSTGRES=postgresql://… benchmarks/open-floor/run.sh [BUILD_DIR]
#                                              the same on a PostgreSQL store (a schema of that
#                                              database, strata_open_floor_<pid>, made and dropped),
#                                              against bench_raw_pg's open
#
# Environment: RUNS (default 500: processes per row and round), ROUNDS (default 3: the rows run
# in turn, ROUNDS times; each figure is the median of its rounds' medians), TRIPS (default 1000:
# the store's size; the open row reads one trip), WORK (default BUILD_DIR/bench-open-floor: made
# afresh for each run), TARGET (the row's target ratio: default 1.5, with POSTGRES 1.3), CC
# (default cc), SWIFTC (default swiftc, else /opt/swift/usr/bin/swiftc).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
runs="${RUNS:-500}"
rounds="${ROUNDS:-3}"
trips="${TRIPS:-1000}"
cc="${CC:-cc}"
swiftc="${SWIFTC:-swiftc}"
command -v "$swiftc" >/dev/null || swiftc=/opt/swift/usr/bin/swiftc
work="${WORK:-$build/bench-open-floor}"

postgres="${POSTGRES:-}"
raw_prog=bench_raw
[ -z "$postgres" ] || raw_prog=bench_raw_pg
target="${TARGET:-1.5}"
[ -z "$postgres" ] || target="${TARGET:-1.3}"
for f in libstrata.so bench_strata "$raw_prog" benchmarks/bench_schema.h; do
  [ -e "$build/$f" ] || { echo "run.sh: $build/$f not found: run make build" >&2; exit 1; }
done
if grep -q 'CMAKE_BUILD_TYPE:STRING=Debug' "$build/CMakeCache.txt" 2>/dev/null; then
  echo "run.sh: $build is a debug build; the figures need a release build" >&2; exit 1
fi

rm -rf "$work"
mkdir -p "$work"
cflags=(-O2 -std=c99 -Wall -Wextra)
"$cc" "${cflags[@]}" -DFLOOR_TIMER "$here/floor.c" -o "$work/timer"
"$cc" "${cflags[@]}" "$here/floor.c" -o "$work/floor_c"
# The engine's client library: what the raw side links for its engine.
engine=(-lsqlite3)
engine_name=libsqlite3
if [ -n "$postgres" ]; then
  engine=(-lpq)
  engine_name=libpq
fi
"$cc" "${cflags[@]}" "$here/floor.c" -o "$work/floor_engine" -Wl,--no-as-needed "${engine[@]}"
# The minimal Swift library, linked as Package.swift links libstrata.so (StrataC's linkerSettings,
# less the link order and the version script, which only name libstrata's own symbols): keep the
# two in step.
"$swiftc" -O -emit-library -static-stdlib -module-name StrataOpenFloor "$here/minimal.swift" \
  -o "$work/libfloorminimal.so" -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs \
  -Xlinker --gc-sections -Xclang-linker -static-libgcc -L "$root/Sources/StrataC/link" \
  -Xlinker -soname=libfloorminimal.so
"$cc" "${cflags[@]}" -DFLOOR_SWIFT "$here/floor.c" -o "$work/floor_swift" \
  -Wl,--no-as-needed "${engine[@]}" -L"$work" -lfloorminimal -Wl,-rpath,"$work"
"$cc" "${cflags[@]}" -DFLOOR_STEPS -I"$root/include" -I"$build/benchmarks" -I"$root/benchmarks/bench" "$here/floor.c" -o "$work/floor_steps" \
  -L"$build" -lstrata -Wl,-rpath,"$build"

if [ -n "$postgres" ]; then
  schema="strata_open_floor_$$"
  "$build/bench_raw_pg" reset "$postgres" "$schema"
  trap '"$build/bench_raw_pg" drop "$postgres" "$schema" >/dev/null 2>&1 || true' EXIT
  case "$postgres" in *\?*) sep='&' ;; *) sep='?' ;; esac
  store="${postgres}${sep}options=-csearch_path%3D${schema}"
  "$build/bench_strata" setup "$store" "$work/trips.json" "$trips"
  "$build/bench_raw_pg" vacuum "$store"
else
  store="$work/trips.store"
  "$build/bench_strata" setup "$store" "$work/trips.json" "$trips"
fi

# Each row: its label and the row its difference is taken from (row_command gives its command).
labels=(
  "C \`main\`, no library"
  "C \`main\` with $engine_name loaded"
  "C \`main\` with $engine_name and a one-function Swift library loaded"
  "the same, its function called once (one \`[String: Int]\`)"
  "C \`main\` with libstrata (and so libsqlite3) loaded, not called"
  "libstrata: \`strata_config_new\`"
  "libstrata: and \`strata_open\`, \`strata_close\`"
  "libstrata: and a context's first \`strata_fetch\` (the bench's open row)"
  "raw: \`$raw_prog open\` (the row's raw side; it loads json-c too)"
)
refs=("" 1 2 3 1 5 6 7 2)
row_command() {
  case "$1" in
    0) command=("$work/floor_c") ;;
    1) command=("$work/floor_engine") ;;
    2) command=("$work/floor_swift") ;;
    3) command=("$work/floor_swift" call) ;;
    4 | 5 | 6 | 7) command=("$work/floor_steps" "$(($1 - 4))" "$store") ;;
    8) command=("$build/$raw_prog" open "$store" "$trips" "$work/trips.json") ;;
  esac
}

results="$work/medians"
: > "$results"
for ((round = 1; round <= rounds; round++)); do
  for k in "${!labels[@]}"; do
    row_command "$k"
    median=$("$work/timer" "$runs" "${command[@]}")
    echo "$k $median" >> "$results"
  done
done

echo "Whole process, fork to reaped: median of $rounds rounds' medians of $runs processes each, $(date -u '+%Y-%m-%d %H:%M') UTC"
echo
echo "| | process | time | more than |"
echo "|---:|---|---:|---|"
for k in "${!labels[@]}"; do
  label="${labels[$k]}"
  ref="${refs[$k]}"
  median=$(awk -v k="$k" '$1 == k { print $2 }' "$results" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
  echo "$k $median" >> "$results.final"
  more=""
  if [ -n "$ref" ]; then
    more=$(awk -v r="$((ref - 1))" -v m="$median" -v n="$ref" '$1 == r { printf "row %d: %+.0f µs", n, m - $2 }' "$results.final")
  fi
  printf '| %d | %s | %.0f µs | %s |\n' "$((k + 1))" "$label" "$median" "$more"
done
awk -v target="$target" '
  { v[$1] = $2 }
  END {
    raw = v[8]; strata = v[7]; swift = v[2] - v[1]
    floor = raw + swift
    printf "\nThe open row: %.2fx (%.0f against %.0f µs); its target, %sx, is %.0f µs.\n", strata / raw, strata, raw, target, target * raw
    printf "The raw side plus loading a Swift library (row 9, plus row 3 less row 2): %.0f µs, %.2fx,\n", floor, floor / raw
    printf "which leaves %.0f µs under the target for everything Strata does in a fresh process beyond it.\n", target * raw - floor
  }' "$results.final"
