#!/usr/bin/env bash
# The open floor: what a fresh process pays before Strata does any work of its own, set beside
# the bench's open row (open + one tiny query) on both sides. See README.md.
#
#   benchmarks/open-floor/run.sh [BUILD_DIR]     (default: build; run `make build` first)
#
# Environment: RUNS (default 500: processes per row and round), ROUNDS (default 3: the rows run
# in turn, ROUNDS times; each figure is the median of its rounds' medians), TRIPS (default 1000:
# the store's size; the open row reads one trip), WORK (default BUILD_DIR/bench-open-floor: made
# afresh for each run), CC (default cc), SWIFTC (default swiftc, else /opt/swift/usr/bin/swiftc).
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

for f in libstrata.so bench_strata bench_raw benchmarks/bench_schema.h; do
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
"$cc" "${cflags[@]}" "$here/floor.c" -o "$work/floor_sqlite" -Wl,--no-as-needed -lsqlite3
# The minimal Swift library, linked as Package.swift links libstrata.so.
"$swiftc" -O -emit-library -static-stdlib -module-name StrataOpenFloor "$here/minimal.swift" \
  -o "$work/libfloorminimal.so" -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs \
  -Xlinker --gc-sections -Xclang-linker -static-libgcc -L "$root/Sources/StrataC/link" \
  -Xlinker -soname=libfloorminimal.so
"$cc" "${cflags[@]}" -DFLOOR_SWIFT "$here/floor.c" -o "$work/floor_swift" \
  -Wl,--no-as-needed -lsqlite3 -L"$work" -lfloorminimal -Wl,-rpath,"$work"
"$cc" "${cflags[@]}" -DFLOOR_STEPS -I"$root/include" -I"$build/benchmarks" "$here/floor.c" -o "$work/floor_steps" \
  -L"$build" -lstrata -Wl,-rpath,"$build"

store="$work/trips.store"
"$build/bench_strata" setup "$store" "$work/trips.json" "$trips"

rows=(
  "C \`main\`, no library||$work/floor_c"
  "C \`main\` with libsqlite3 loaded|1|$work/floor_sqlite"
  "C \`main\` with libsqlite3 and a one-function Swift library loaded|2|$work/floor_swift"
  "the same, its function called once (one \`[String: Int]\`)|3|$work/floor_swift call"
  "C \`main\` with libstrata (and so libsqlite3) loaded, not called|2|$work/floor_steps 0 $store"
  "libstrata: \`strata_config_new\`|5|$work/floor_steps 1 $store"
  "libstrata: and \`strata_open\`, \`strata_close\`|6|$work/floor_steps 2 $store"
  "libstrata: and a context's first \`strata_fetch\` (the bench's open row)|7|$work/floor_steps 3 $store"
  "raw: \`bench_raw open\` (the row's raw side; it loads json-c too)|2|$build/bench_raw open $store $trips $work/trips.json"
)

results="$work/medians"
: > "$results"
for ((round = 1; round <= rounds; round++)); do
  for k in "${!rows[@]}"; do
    IFS='|' read -r _ _ command <<< "${rows[$k]}"
    # shellcheck disable=SC2086
    median=$("$work/timer" "$runs" $command)
    echo "$k $median" >> "$results"
  done
done

echo "Whole process, fork to reaped: median of $rounds rounds' medians of $runs processes each, $(date -u '+%Y-%m-%d %H:%M') UTC"
echo
echo "| | process | time | more than |"
echo "|---:|---|---:|---|"
for k in "${!rows[@]}"; do
  IFS='|' read -r label ref _ <<< "${rows[$k]}"
  median=$(awk -v k="$k" '$1 == k { print $2 }' "$results" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
  echo "$k $median" >> "$results.final"
  more=""
  if [ -n "$ref" ]; then
    more=$(awk -v r="$((ref - 1))" -v m="$median" -v n="$ref" '$1 == r { printf "row %d: %+.0f µs", n, m - $2 }' "$results.final")
  fi
  printf '| %d | %s | %.0f µs | %s |\n' "$((k + 1))" "$label" "$median" "$more"
done
awk '
  { v[$1] = $2 }
  END {
    raw = v[8]; strata = v[7]; load = v[4]; sqlite = v[1]
    floor = load + (raw - sqlite)
    printf "\nThe open row: %.2fx (%.0f against %.0f µs); its target, 1.5x, is %.0f µs.\n", strata / raw, strata, raw, 1.5 * raw
    printf "Loading libstrata and doing only the raw side'\''s SQLite work (row 5, plus row 9 less row 2): %.0f µs, %.2fx,\n", floor, floor / raw
    printf "which leaves %.0f µs under the target for everything Strata does in a fresh process beyond it.\n", 1.5 * raw - floor
  }' "$results.final"
