#!/usr/bin/env bash
# link-order.sh [BUILD_DIR] — rewrites Sources/StrataC/link/order.txt, the order in which lld lays out
# libstrata.so's functions (Package.swift: --symbol-ordering-file), from what a fresh process runs.
#
# The functions a process runs to open a store and answer its first query are spread over the
# library's 7 MB of code; the kernel maps its code a 64 kB window at a time, on the first touch of
# each. Laid out one after the other, in the order they first run, they take fewer windows: fewer
# page faults at every start. The list is the functions of libstrata.so (the shim, Strata, the Swift
# runtime; each in a section of its own, -function-sections) that one `bench_strata open` of the
# bench runs under callgrind, in the order callgrind first names them. A name the library no longer
# has is skipped by the linker (--no-warn-symbol-ordering); one it does not list is laid out after
# the listed ones, as before: a stale list costs speed, never correctness. Run it after a change
# to the open or first-query path, with the bench built (make build), and commit order.txt.
#
# The static Swift standard library's Swift.o keeps most of its code in one .text section: naming one
# of its functions would move all 1.6 MB of it to that place, between the functions listed after it.
# Its functions are left out (the section goes after the listed ones); those of its own sections stay.
#
# Needs valgrind. Builds a 1,000-trip bench store under BUILD_DIR/link-order/ (bench_driver).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$here/build}" && pwd)
work="$build/link-order"
out="$here/Sources/StrataC/link/order.txt"
command -v valgrind >/dev/null || { echo "link-order: valgrind is needed" >&2; exit 1; }
mkdir -p "$work"
"$build/bench_driver" --trips 1000 --repeat 1 --workloads open --work "$work" >"$work/bench.log" 2>&1 || { cat "$work/bench.log" >&2; exit 1; }
store=$(ls "$work"/trips-1000.store)
LD_LIBRARY_PATH="$build" valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/callgrind.out" \
  "$build/bench_strata" open "$store" 1000 "$work/trips-1000.json" 3>/dev/null >/dev/null 2>"$work/valgrind.log"
# The functions of Swift.o's one big .text section (section name ".text", not ".text.<name>").
stdlib=$(dirname "$(readlink -f "$(command -v swift)")")/../lib/swift_static/linux/libswiftCore.a
( cd "$work" && ar x "$stdlib" Swift.o )
readelf -SW "$work/Swift.o" | sed -n 's/^ *\[ *\([0-9]*\)\] \.text .*/\1/p' > "$work/text-index"
readelf -sW "$work/Swift.o" | awk -v ndx="$(cat "$work/text-index")" '$4 == "FUNC" && $7 == ndx { print $8 }' > "$work/unordered"
python3 - "$work/callgrind.out" "$out" "$work/unordered" <<'PY'
import re, sys
# callgrind names an object (ob=, cob=) and a function (fn=, cfn=) in full once, as "(id) name",
# then by "(id)" alone; a function belongs to the object named before it (cob= for a cfn=).
objects, names, owner, order = {}, {}, {}, []
ob = cob = None
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"^(c?ob|c?fn)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
    if not m:
        continue
    kind, key, name = m.groups()
    if kind in ("ob", "cob"):
        if name:
            objects[key] = name
        if kind == "ob":
            ob = cob = objects[key]
        else:
            cob = objects[key]
        continue
    if name:
        names[key] = name
    if key not in owner:
        owner[key] = ob if kind == "fn" else cob
        order.append(key)
    if kind == "fn":
        cob = ob
seen, out = set(open(sys.argv[3]).read().split()), []
for key in order:
    if not (owner[key] or "").endswith("libstrata.so.0.1.0"):
        continue
    name = re.sub(r"'\d+$", "", names[key])  # callgrind's mark of a recursive call
    if name.startswith("0x") or name in seen:
        continue
    seen.add(name)
    out.append(name)
with open(sys.argv[2], "w") as f:
    f.write("\n".join(out) + "\n")
print(f"link-order: {len(out)} functions -> {sys.argv[2]}")
PY
