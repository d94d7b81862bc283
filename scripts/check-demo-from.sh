#!/bin/sh
# check-demo-from.sh TRIPS_BINARY WORK_DIR
#
# The migration plan carries a store of every starting version to version 4
# with the same data: runs the demo with --from 1, 2 and 3, each on a fresh
# store. Each run must succeed, run the stages its version needs (version 1's
# duplicates removed by the custom stages' C hooks, their bucket-list items
# and accommodations kept), keep identifiers, and print the same output from
# "== Version 4 data" to "== History". --from 1 --json-ops (the plan's "deduplicate"
# operations instead of the C hooks) must end the same. The history part (its
# tokens, times and identifiers differ from store to store) must list the
# same kinds of changes from every version.
set -eu
trips=${1:?usage: check-demo-from.sh TRIPS_BINARY WORK_DIR}
work=${2:?usage: check-demo-from.sh TRIPS_BINARY WORK_DIR}
mkdir -p "$work"
fail=0
for v in 1 2 3 1ops; do
  store="$work/from$v.store"
  rm -rf "$store" "$store-wal" "$store-shm" "$store.strata"
  case $v in *ops) args="--from ${v%ops} --json-ops" ;; *) args="--from $v" ;; esac
  # shellcheck disable=SC2086
  if ! "$trips" $args "$store" > "$work/from$v.out" 2>&1; then
    echo "trips $args failed:"; cat "$work/from$v.out"; fail=1; continue
  fi
  sed -n '/^== Version 4 data/,/^== History/p' "$work/from$v.out" > "$work/from$v.final"
done
[ "$fail" = 0 ] || exit 1
cat "$work/from1.out"

expect() {  # expect VERSION TEXT: the output of --from VERSION has the line part TEXT
  grep -qF -- "$2" "$work/from$1.out" || { echo "trips --from $1: output lacks: $2"; fail=1; }
}
expect 1 "stages run: migrateV1toV2, migrateV2toV3, migrateV3toV4"
expect 2 "stages run: migrateV2toV3, migrateV3toV4"
expect 3 "stages run: migrateV3toV4"
expect 1 "duplicate Paris Getaway  Trip/4: 1 bucket-list item moved to Trip/1, then deleted"
expect 1 "duplicate Tokyo Spring   Trip/5: 1 bucket-list item and its accommodation moved to Trip/2, then deleted"
expect 1 "trips: 6 before, 4 after: 2 duplicates removed (Paris Getaway (Trip/4), Tokyo Spring (Trip/5))"
expect 1 "bucket-list items: 7 before, 7 after; accommodations: 3 before, 3 after"
for v in 2 3; do
  expect $v "trips: 4 before, 4 after: 0 duplicates removed"
  expect $v "bucket-list items: 7 before, 7 after; accommodations: 3 before, 3 after"
done
expect 1ops "stages run: migrateV1toV2, migrateV2toV3, migrateV3toV4"
expect 1ops "trips: 6 before, 4 after: 2 duplicates removed"
expect 1ops "bucket-list items: 7 before, 7 after; accommodations: 3 before, 3 after"
for v in 1 2 3 1ops; do
  expect $v "no trip was lost but the duplicates"
  expect $v "== Version 4 data: the store holds 8 trips"
  expect $v "changes (step 4's save): insert BusinessTrip x2, insert LivingAccommodation x2, insert BucketListItem x2, insert PersonalTrip x2"
  expect $v "(served by the key, no scan"
  # One observer line per save that changed a Trip or a LivingAccommodation (a and c, not b).
  n=$(grep -c '^     \[observer\] saved [0-9]*@[0-9a-f]*:' "$work/from$v.out" || true)
  [ "$n" = 2 ] || { echo "trips --from $v: expected 2 observer lines, found $n"; fail=1; }
  expect $v "updated BusinessTrip/"
  expect $v " (destination)"
  # Listing 2: saves a and c, each by the demo's author and context; c with its cascade.
  n=$(grep -c ', author trips-demo, context editor$' "$work/from$v.out" || true)
  [ "$n" = 2 ] || { echo "trips --from $v: listing 2 should hold 2 transactions, found $n"; fail=1; }
  expect $v 'changed: ["destination"]'
  n=$(grep -Ec '^       delete +(BusinessTrip|LivingAccommodation)/[0-9]+ ' "$work/from$v.out" || true)
  [ "$n" = 2 ] || { echo "trips --from $v: listing 2 should show WWDC26 and its accommodation deleted, found $n deletes"; fail=1; }
  expect $v 'tombstone: {"name":"WWDC26",'
  expect $v "(and 1 change to other entities)"
done
# Identifiers survive the migration: Paris Getaway is Trip/1 before (step 1) and after (step 3).
n=$(grep -c '^    Trip/1 *Paris Getaway ' "$work/from1.out" || true)
[ "$n" = 2 ] || { echo "trips --from 1: 'Trip/1 Paris Getaway' should be listed before and after the migration, found $n"; fail=1; }

# The same final data from every starting version (and not an empty section).
lines=$(wc -l < "$work/from1.final")
[ "$lines" -ge 30 ] || { echo "trips --from 1: the final section has $lines lines, expected the trips and the queries"; fail=1; }
for v in 2 3 1ops; do
  if ! diff -u "$work/from1.final" "$work/from$v.final"; then
    echo "trips --from $v ends with other data than --from 1 (1ops: --from 1 --json-ops)"; fail=1
  fi
done
exit $fail
