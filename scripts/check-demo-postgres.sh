#!/bin/sh
# check-demo-postgres.sh TRIPS_BINARY WORK_DIR
#
# Run by scripts/postgres-test.sh (STRATA_TEST_POSTGRES names the throw-away server):
# the demo on a PostgreSQL store tells the same story as on a store file, from
# "== Version 4 data" to "== History" (history tokens and times differ from run to run).
set -eu
trips=${1:?usage: check-demo-postgres.sh TRIPS_BINARY WORK_DIR}
work=${2:?usage: check-demo-postgres.sh TRIPS_BINARY WORK_DIR}
: "${STRATA_TEST_POSTGRES:?run me through scripts/postgres-test.sh}"
mkdir -p "$work"
store="$work/demo.store"
rm -rf "$store" "$store-wal" "$store-shm" "$store.strata"
"$trips" --from 1 "$store" > "$work/file.out" 2>&1 || { cat "$work/file.out"; exit 1; }
"$trips" --from 1 "$STRATA_TEST_POSTGRES&options=-csearch_path%3Dtrips_demo" > "$work/postgres.out" 2>&1 \
  || { cat "$work/postgres.out"; exit 1; }
cat "$work/postgres.out"
final() { sed -n '/^== Version 4 data/,/^== History/p' "$1" | grep -v '^== History'; }
final "$work/file.out" > "$work/file.final"
final "$work/postgres.out" > "$work/postgres.final"
[ -s "$work/file.final" ] || { echo "the demo printed no '== Version 4 data' section"; exit 1; }
if ! diff -u "$work/file.final" "$work/postgres.final"; then
  echo "FAIL: the demo on PostgreSQL tells another story than on a store file (diff above)"; exit 1
fi
echo "OK: the demo on PostgreSQL prints the same final data as on a store file"
