#!/bin/sh
# check-readme-tour.sh README TOUR_C TOUR_SCHEMA [TOUR_BINARY]
#
# The README's tour must be the program examples/tour/tour.c (which ctest
# compiles and runs), so that it cannot rot:
# - its JSON block is examples/tour/schema.json, line for line;
# - each paragraph (lines between blank lines) of each C block is a run of
#   consecutive lines of tour.c, in the README's order; leading blanks are
#   ignored (the program's lines are indented inside main()); the section
#   "Change tracking and history" is checked the same way, its order counted
#   from the top of tour.c again (its callback is defined before main()).
set -eu
readme=${1:?usage: check-readme-tour.sh README TOUR_C TOUR_SCHEMA}
tour=${2:?usage: check-readme-tour.sh README TOUR_C TOUR_SCHEMA}
schema=${3:?usage: check-readme-tour.sh README TOUR_C TOUR_SCHEMA}
binary=${4:-}
awk -v tour="$tour" -v schema="$schema" '
function strip(s) { sub(/^[ \t]+/, "", s); sub(/[ \t\r]+$/, "", s); return s }
function flush(   i, j, k, ok) {
    if (np == 0) return
    for (i = from; i + np - 1 <= nt; i++) {
        ok = 1
        for (j = 1; j <= np; j++) if (t[i + j - 1] != p[j]) { ok = 0; break }
        if (ok) { from = i + np; np = 0; return }
    }
    printf "README.md:%d: this tour paragraph is not in %s (or not in the same order):\n", pstart, tour
    for (k = 1; k <= np; k++) printf "    %s\n", p[k]
    bad = 1; np = 0
}
BEGIN {
    while ((getline line < tour) > 0) t[++nt] = strip(line)
    while ((getline line < schema) > 0) s[++ns] = line
    from = 1
}
/^## / {
    intour = ($0 ~ /^## A five-minute tour/ || $0 ~ /^## Change tracking and history/)
    if ($0 ~ /^## A five-minute tour/) seen = 1
    if ($0 ~ /^## Change tracking and history/) { history = 1; from = 1 }   # its own order (a callback before main())
}
!intour { next }
/^```/ {
    if (!block) { block = substr($0, 4); np = 0; nj = 0; next }
    if (block == "c") flush()
    if (block == "json") {
        jsons++
        if (nj != ns) { printf "README.md:%d: the JSON block has %d lines, %s has %d\n", NR, nj, schema, ns; bad = 1 }
        else for (k = 1; k <= nj; k++) if (j[k] != s[k]) {
            printf "README.md: JSON block line %d differs from %s:\n    %s\n    %s\n", k, schema, j[k], s[k]; bad = 1; break
        }
    }
    if (block == "c") cblocks++
    block = ""; next
}
block == "json" { j[++nj] = $0; next }
block == "c" {
    if (strip($0) == "") { flush(); next }
    if (np == 0) pstart = NR
    p[++np] = strip($0); next
}
END {
    if (!seen) { print "README.md: no \"## A five-minute tour\" section"; exit 1 }
    if (!history) { print "README.md: no \"## Change tracking and history\" section"; exit 1 }
    if (jsons != 1) { printf "README.md: expected one JSON block in the tour, found %d\n", jsons; bad = 1 }
    if (cblocks < 5) { printf "README.md: expected the tour C blocks, found %d\n", cblocks; bad = 1 }
    if (!bad) printf "README tour: %d C blocks and the schema match %s\n", cblocks, tour
    exit bad
}' "$readme"

[ -n "$binary" ] || exit 0
out=$("$binary") || { echo "$binary failed:"; echo "$out"; exit 1; }
echo "$out"
fail=0
expect() {
  printf '%s\n' "$out" | grep -qF -- "$1" || { echo "tour output lacks: $1"; fail=1; }
}
expect 'inserted PersonalTrip/1'
expect 'upserted PersonalTrip/1'
expect '"title":"Christmas market","trip":null}'
expect '"title":"Ski day","trip":"PersonalTrip/1"}'
expect '"reason":"family","bucketList":["BucketListItem/2"]}'
expect '"reason":"reunion","bucketList":[{"_id":"BucketListItem/2"'
expect '["PersonalTrip/1"]'
expect '"parameterCount":0,"queryPlan":['
expect '0 bucket list items left'
expect '{"code":"validation","status":6,"message":"'"'"'Trip.name'"'"' (string): expected a string, found a number","entity":"Trip","attribute":"name","path":"/name"}'
expect 'pending changes: 0'
expect 'changed: {"token":"'
expect '"inserted":{"Trip":["Trip/'
expect '"changes":[{"kind":"insert","id":"Trip/'
# What the comments say a line prints is what it prints: each one-line comment on a line that prints
# (puts(json), the observer's printf, a save that makes it print) must match one line of the output,
# its parts between "…" in order (so a stale token such as "6@…" where the program prints "5@…" fails).
comments=$(sed -n 's/.*\(puts(json);\|printf("changed: %s\\n", changes_json);\|strata_save(ctx));\) *\/\* \(prints: \)\{0,1\}\(.*\) \*\/ *$/\3/p' "$tour")
[ -n "$comments" ] || { echo "$tour: no output comments found"; fail=1; }
while IFS= read -r comment; do
  case "$comment" in '['*|'{'*|'changed: {'*) ;; *) continue ;; esac   # prose, not output
  printf '%s\n' "$out" | awk -v want="$comment" '
    BEGIN { n = split(want, part, "…") }
    { pos = 1; ok = 1
      for (i = 1; i <= n; i++) {
        if (part[i] == "") continue
        k = index(substr($0, pos), part[i])
        if (k == 0) { ok = 0; break }
        pos += k - 1 + length(part[i])
      }
      if (ok) { found = 1; exit } }
    END { exit !found }' || { echo "tour comment is not what the program prints: /* $comment */"; fail=1; }
done <<EOF
$comments
EOF
exit $fail
