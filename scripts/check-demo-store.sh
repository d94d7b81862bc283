#!/bin/sh
# check-demo-store.sh TRIPS_BINARY WORK_DIR
#
# Runs the trips demo into a fresh store (created at schema version 1, then
# migrated to version 4), then checks that the store is an ordinary SQLite
# file that the sqlite3 shell reads: `.schema` shows readable tables named
# after the root entities (subentities share their root's table through the
# _entity column), with version 4's columns and indexes, and the rows are there.
set -eu
trips=${1:?usage: check-demo-store.sh TRIPS_BINARY WORK_DIR}
work=${2:?usage: check-demo-store.sh TRIPS_BINARY WORK_DIR}
mkdir -p "$work"
store="$work/demo.store"
rm -rf "$store" "$store-wal" "$store-shm" "$store.strata"
"$trips" "$store" > "$work/demo.out" || { echo "the demo failed:"; cat "$work/demo.out"; exit 1; }
grep -q "the store holds 8 trips" "$work/demo.out" || { echo "demo output unexpected:"; cat "$work/demo.out"; exit 1; }
# What would puzzle a newcomer is explained: the fixed "now" of the widget's query.
grep -q "now is fixed at 2026-11-22" "$work/demo.out" || { echo "demo output does not say its now is fixed"; exit 1; }
# The aggregate fetch: trips per destination, with their bucket-list counts (Paris's trip has 3 items).
grep -Eq "^    Paris +1 +3  2026-04-10$" "$work/demo.out" || { echo "demo output lacks trips per destination:"; cat "$work/demo.out"; exit 1; }
# The search: folded ("musee" finds "Musée d'Orsay"), a prefix, the most relevant first.
grep -q "musee  *Musée d'Orsay (Paris Getaway)" "$work/demo.out" || { echo "demo output lacks the folded search"; exit 1; }
grep -q "b\*  *Blue Lagoon (Iceland Ring Road); Tsukiji breakfast (Tokyo Spring); Cherry blossoms in Ueno (Tokyo Spring)" "$work/demo.out" ||
  { echo "demo output lacks the prefix search in relevance order"; exit 1; }
command -v sqlite3 >/dev/null 2>&1 || { echo "sqlite3 shell not installed"; exit 1; }
schema=$(sqlite3 "$store" .schema)
echo "$schema"
fail=0
for table in Trip BucketListItem LivingAccommodation strata_metadata; do
  echo "$schema" | grep -Eq "CREATE TABLE (IF NOT EXISTS )?\"?$table\"? \(" || { echo "missing table $table"; fail=1; }
done
for table in PersonalTrip BusinessTrip; do
  echo "$schema" | grep -Eq "CREATE TABLE (IF NOT EXISTS )?\"?$table\"? \(" && { echo "subentity $table must share the Trip table"; fail=1; }
done
echo "$schema" | grep -q '"_entity" TEXT NOT NULL' || { echo "no _entity discriminator"; fail=1; }
# Version 3 renamed start_date/end_date (originalName), replaced the unique
# name by #Unique name+startDate+endDate and added the #Index es.
echo "$schema" | grep -q '"startDate" REAL' || { echo "no startDate column"; fail=1; }
echo "$schema" | grep -q '"start_date"' && { echo "start_date was not renamed to startDate"; fail=1; }
echo "$schema" | grep -Eq 'CREATE UNIQUE INDEX .* ON "Trip" \("name", "startDate", "endDate"\)' ||
  { echo "no unique index on name, startDate, endDate"; fail=1; }
echo "$schema" | grep -Eq 'CREATE UNIQUE INDEX .* ON "Trip" \("name"\);' && { echo "version 2's unique name is still there"; fail=1; }
for column in startDate endDate; do
  echo "$schema" | grep -Eq "CREATE INDEX .* ON \"Trip\" \(\"$column\"\)" || { echo "no index on $column"; fail=1; }
done
echo "$schema" | grep -q '"perdiem" REAL' || { echo "no perdiem column (BusinessTrip)"; fail=1; }
rows=$(sqlite3 "$store" "SELECT _entity || ':' || name FROM Trip ORDER BY name")
echo "$rows"
# (The demo's history part deletes WWDC26 and its one bucket-list item at the end.)
echo "$rows" | grep -qx "BusinessTrip:Client Workshop" || { echo "BusinessTrip row missing"; fail=1; }
echo "$rows" | grep -qx "PersonalTrip:Family Visit" || { echo "PersonalTrip row missing"; fail=1; }
[ "$(echo "$rows" | grep -cx "Trip:Paris Getaway")" = 1 ] || { echo "Paris Getaway should be there once (de-duplicated)"; fail=1; }
[ "$(sqlite3 "$store" 'SELECT count(*) FROM BucketListItem')" = 8 ] || { echo "expected 8 bucket-list items"; fail=1; }
# Every save was recorded: the history tables are there, with the demo's last saves.
[ "$(sqlite3 "$store" "SELECT count(*) FROM strata_history_transaction WHERE author = 'trips-demo'")" = 3 ] ||
  { echo "expected the demo's 3 history transactions by trips-demo"; fail=1; }
[ "$(sqlite3 "$store" 'PRAGMA journal_mode')" = wal ] || { echo "store is not in WAL mode"; fail=1; }
exit $fail
