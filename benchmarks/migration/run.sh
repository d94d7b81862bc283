#!/usr/bin/env bash
# Migration benchmark: Strata's migrations against the same change written by hand in SQL
# and run by the sqlite3 shell, on a store of 1,000,000 trips. See README.md.
#
#   benchmarks/migration/run.sh [BUILD_DIR]      (default: build; run `make build` first)
#
# Environment: TRIPS (default 1000000; 1% of them are duplicate names), REPEAT (default 3:
# each figure is the median of REPEAT runs; peak RSS is the largest), CC (default cc).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
trips="${TRIPS:-1000000}"
repeat="${REPEAT:-3}"
duplicates=$(( trips / 100 ))
work="$build/bench-migration"
TIME=/usr/bin/time

[ -e "$build/libstrata.so" ] || { echo "run.sh: $build/libstrata.so not found: run make build" >&2; exit 1; }
[ -x "$TIME" ] || { echo "run.sh: $TIME not found: apt-get install time" >&2; exit 1; }
command -v sqlite3 >/dev/null || { echo "run.sh: sqlite3 not found: apt-get install sqlite3" >&2; exit 1; }
if grep -q 'CMAKE_BUILD_TYPE:STRING=Debug' "$build/CMakeCache.txt" 2>/dev/null; then
  echo "run.sh: $build is a debug build; the figures need a release build" >&2; exit 1
fi

mkdir -p "$work"
"${CC:-cc}" -O2 -std=c99 -Wall -Wextra -I"$root/include" "$here/driver.c" \
  -L"$build" -lstrata -Wl,-rpath,"$build" -o "$work/driver"
driver="$work/driver"

# The V1 store, built once through Strata (its own layout) and copied for every timed run.
v1="$work/v1-$trips.store"
stamp="$trips $(md5sum < "$build/libstrata.so" | cut -c1-32) $(md5sum < "$here/driver.c" | cut -c1-32)"
if [ ! -s "$v1" ] || [ "$(cat "$v1.stamp" 2>/dev/null)" != "$stamp" ]; then
  rm -f "$v1" "$v1-wal" "$v1-shm" "$v1.stamp"
  echo "building a V1 store of $trips trips ($duplicates duplicate names) through Strata..."
  start=$(date +%s.%N)
  "$driver" build "$v1" "$trips" "$duplicates"
  awk -v a="$start" -v b="$(date +%s.%N)" -v mb="$(( $(stat -c %s "$v1") / 1000000 ))" \
    'BEGIN { printf "built in %.1f s, %d MB\n", b - a, mb }'
  echo "$stamp" > "$v1.stamp"
fi
[ ! -s "$v1-wal" ] || { echo "run.sh: $v1 was not closed cleanly" >&2; exit 1; }
# The layout the hand-written SQL below assumes.
[ "$(sqlite3 "$v1" "SELECT group_concat(name, ',') FROM pragma_table_info('Trip')")" = \
  "_pk,_entity,name,destination,start_date,end_date" ] || { echo "run.sh: unexpected Trip table" >&2; exit 1; }

# The same changes by hand.
cat > "$work/rename-index.sql" <<'SQL'
PRAGMA synchronous=FULL;
BEGIN;
ALTER TABLE "Trip" RENAME COLUMN "start_date" TO "startDate";
ALTER TABLE "Trip" RENAME COLUMN "end_date" TO "endDate";
CREATE INDEX "Trip_startDate" ON "Trip" ("startDate");
COMMIT;
SQL
cat > "$work/rename-only.sql" <<'SQL'
PRAGMA synchronous=FULL;
BEGIN;
ALTER TABLE "Trip" RENAME COLUMN "start_date" TO "startDate";
ALTER TABLE "Trip" RENAME COLUMN "end_date" TO "endDate";
COMMIT;
SQL
# SQLite's 12-step table rebuild (https://sqlite.org/lang_altertable.html#otheralter), the
# duplicates dropped by INSERT OR IGNORE in key order (the first one is kept).
cat > "$work/dedup-unique.sql" <<'SQL'
PRAGMA synchronous=FULL;
PRAGMA foreign_keys=OFF;
BEGIN;
CREATE TABLE "Trip_new" ("_pk" INTEGER PRIMARY KEY, "_entity" TEXT NOT NULL, "name" TEXT UNIQUE,
                         "destination" TEXT, "start_date" REAL, "end_date" REAL);
INSERT OR IGNORE INTO "Trip_new" SELECT * FROM "Trip" ORDER BY "_pk";
DROP TABLE "Trip";
ALTER TABLE "Trip_new" RENAME TO "Trip";
PRAGMA foreign_key_check;
COMMIT;
SQL
# Not a rebuild: delete the duplicates, then a unique index (what an expert would write).
cat > "$work/dedup-unique-index.sql" <<'SQL'
PRAGMA synchronous=FULL;
BEGIN;
DELETE FROM "Trip" WHERE "_pk" NOT IN (SELECT min("_pk") FROM "Trip" GROUP BY "name");
CREATE UNIQUE INDEX "Trip_name" ON "Trip" ("name");
COMMIT;
SQL

run_store="$work/run.store"
fresh_copy() {
  rm -f "$run_store" "$run_store-wal" "$run_store-shm"
  cp "$v1" "$run_store"
}

# timed LABEL CMD... : runs CMD REPEAT times on fresh copies; sets SEC (median), KB (max), OUT (last stdout).
timed() {
  local secs=() kb=0 i
  for (( i = 0; i < repeat; i++ )); do
    fresh_copy
    "$TIME" -f '%e %M' -o "$work/time.txt" "$@" > "$work/out.txt"
    read -r s k < "$work/time.txt"
    secs+=("$s")
    (( k > kb )) && kb=$k
  done
  SEC=$(printf '%s\n' "${secs[@]}" | sort -g | sed -n "$(( (repeat + 1) / 2 ))p")
  KB=$kb
  OUT=$(cat "$work/out.txt")
}

q() { sqlite3 "$run_store" "$1"; }
expect() { # expect WHAT GOT WANT
  [ "$2" = "$3" ] || { echo "run.sh: $1: got '$2', want '$3'" >&2; exit 1; }
}

check_renamed() {
  expect "$1: Trip columns" "$(q "SELECT group_concat(name, ',') FROM pragma_table_info('Trip')")" \
    "_pk,_entity,name,destination,startDate,endDate"
  expect "$1: trips" "$(q 'SELECT count(*) FROM Trip')" "$trips"
}
check_indexed() {
  expect "$1: index on startDate" "$(q "SELECT count(*) FROM pragma_index_list('Trip') l
    WHERE (SELECT group_concat(name) FROM pragma_index_info(l.name)) = 'startDate'")" 1
}
check_dedup() {
  expect "$1: trips" "$(q 'SELECT count(*) FROM Trip')" "$(( trips - duplicates ))"
  expect "$1: distinct names" "$(q 'SELECT count(DISTINCT name) FROM Trip')" "$(( trips - duplicates ))"
  # Trips 0 and 97 have later duplicates (other destinations): the first ones stay.
  expect "$1: the first of each name kept" "$(q "SELECT group_concat(destination, ',') FROM Trip
    WHERE name IN ('Trip 0', 'Trip 97') ORDER BY name")" "City 0,City 97"
  expect "$1: unique on name" "$(q "SELECT count(*) FROM pragma_index_list('Trip') l WHERE l.\"unique\" = 1
    AND (SELECT group_concat(name) FROM pragma_index_info(l.name)) = 'name'")" 1
}

rows=()
row() { # row CASE STRATA_SEC STRATA_KB SQL_SEC SQL_KB OPEN_MS SQL_LABEL
  local ratio
  ratio=$(awk -v a="$2" -v b="$4" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "-" }')
  rows+=("$(printf '%-32s %9s %11s %9s %11s %7s %18s' "$1" "$2 s" "$(( $3 / 1024 )) MB" "$4 s" \
    "$(( $5 / 1024 )) MB" "$ratio" "$6")")
}

echo "timing ($repeat runs each, median wall time of the whole process; peak RSS)..."

# (a) rename two attributes + an index
timed "$driver" open "$run_store" rename-index; s_sec=$SEC s_kb=$KB open_ms=$(sed 's/strata_open \([0-9.]*\) ms.*/\1/' <<<"$OUT")
check_renamed "Strata rename-index"; check_indexed "Strata rename-index"
timed sqlite3 "$run_store" -init /dev/null -batch ".read $work/rename-index.sql"
check_renamed "SQL rename-index"; check_indexed "SQL rename-index"
row "(a) rename 2 + index" "$s_sec" "$s_kb" "$SEC" "$KB" "$open_ms ms"

# (b) de-duplicate 1% + unique
timed "$driver" open "$run_store" dedup-unique; s_sec=$SEC s_kb=$KB open_ms=$(sed 's/strata_open \([0-9.]*\) ms.*/\1/' <<<"$OUT")
check_dedup "Strata dedup-unique"
timed sqlite3 "$run_store" -init /dev/null -batch ".read $work/dedup-unique.sql"
check_dedup "SQL dedup-unique (rebuild)"
row "(b) dedup 1% + unique" "$s_sec" "$s_kb" "$SEC" "$KB" "$open_ms ms"
b_sec=$s_sec b_kb=$s_kb b_ms=$open_ms
timed sqlite3 "$run_store" -init /dev/null -batch ".read $work/dedup-unique-index.sql"
check_dedup "SQL dedup-unique (delete + unique index)"
row "(b') same, SQL: delete+index" "$b_sec" "$b_kb" "$SEC" "$KB" "$b_ms ms"

# (c) rename only: no row touched
timed "$driver" open "$run_store" rename-only; s_sec=$SEC s_kb=$KB open_ms=$(sed 's/strata_open \([0-9.]*\) ms.*/\1/' <<<"$OUT")
check_renamed "Strata rename-only"
timed sqlite3 "$run_store" -init /dev/null -batch ".read $work/rename-only.sql"
check_renamed "SQL rename-only"
row "(c) rename 2 only" "$s_sec" "$s_kb" "$SEC" "$KB" "$open_ms ms"

# For scale: opening the V1 store without any migration, and the shell doing nothing.
timed "$driver" open "$run_store" none; s_sec=$SEC s_kb=$KB open_ms=$(sed 's/strata_open \([0-9.]*\) ms.*/\1/' <<<"$OUT")
timed sqlite3 "$run_store" -init /dev/null -batch "SELECT 1" 
row "no migration (open, close)" "$s_sec" "$s_kb" "$SEC" "$KB" "$open_ms ms"

echo
echo "migration benchmark: $trips trips ($(( $(stat -c %s "$v1") / 1000000 )) MB store), $(nproc) cores, SQLite $(sqlite3 --version | cut -d' ' -f1), median of $repeat"
printf '%-32s %9s %11s %9s %11s %7s %18s\n' "case" "Strata" "peak RSS" "SQL" "peak RSS" "ratio" "in strata_open"
for r in "${rows[@]}"; do echo "$r"; done
rm -f "$run_store" "$run_store-wal" "$run_store-shm"
