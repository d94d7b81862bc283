#!/usr/bin/env bash
# check-cli.sh BUILD_DIR SOURCE_DIR [postgres]
#
# The `strata` command (docs/cli.md) on the demo's stores, run by ctest (label cli):
#   - schema, fetch, count, explain, history: their text on a pseudo-terminal and their JSON
#     (read with the sqlite3 shell's JSON functions), compared with expected fragments;
#   - usage errors give the usage on stderr and exit 2; a missing, an empty, a foreign (text)
#     and a damaged file, an unknown entity and a bad predicate exit 1 with the library's message;
#   - check and migrate with the demo's plan: the plan as it is (custom stages with C hooks) is
#     refused naming the stage, the store's bytes unchanged; its --json-ops form (deduplicate
#     operations) brings a version-1 store made by make_store to version 4, the duplicates
#     merged; --dry-run changes nothing; the progress is a bar redrawn with \r on a
#     pseudo-terminal (script(1)) and one plain line per event when piped;
#   - cmake --install puts a self-contained bin/strata beside the library.
# With `postgres` (inside scripts/postgres-test.sh, STRATA_TEST_POSTGRES set): schema, fetch,
# count, history, check and migrate on PostgreSQL stores, the fetches equal to a store file's.
#
# Prints one line per check and ends with "N passed, N failed"; exits 1 when any failed.
set -u
build=${1:?usage: check-cli.sh BUILD_DIR SOURCE_DIR [postgres]}
src=${2:?usage: check-cli.sh BUILD_DIR SOURCE_DIR [postgres]}
mode=${3:-file}
build=$(cd "$build" && pwd) || exit 1
src=$(cd "$src" && pwd) || exit 1
strata="$build/strata"
trips="$build/trips"
make_store="$build/cli_make_store"
for program in "$strata" "$trips" "$make_store"; do
  [ -x "$program" ] || { echo "check-cli: $program is not built (make build)"; exit 1; }
done
command -v sqlite3 >/dev/null || { echo "check-cli: the sqlite3 shell is missing (make deps)"; exit 1; }
command -v script >/dev/null || { echo "check-cli: script(1) is missing (make deps: bsdutils)"; exit 1; }

work="${STRATA_TEST_DIR:-$(mktemp -d)}/cli-$mode"
rm -rf "$work"
mkdir -p "$work"
passed=0
failed=0

ok() { passed=$((passed + 1)); echo "ok: $1"; }
bad() {
  failed=$((failed + 1)); echo "FAIL: $1"
  echo "  exit $rc; stdout:"; sed 's/^/    /' "$work/out" | head -40
  echo "  stderr:"; sed 's/^/    /' "$work/err" | head -20
}
# run CMD...: stdout to $work/out, stderr to $work/err, the status in $rc.
run() { "$@" >"$work/out" 2>"$work/err"; rc=$?; }
# tty CMD...: the command on a pseudo-terminal (script(1)); its output, \r\n made \n, in $work/out.
tty() {
  local line="" a
  for a in "$@"; do line="$line $(printf '%q' "$a")"; done
  script -qec "$line" /dev/null </dev/null >"$work/raw" 2>"$work/err"; rc=$?
  sed 's/\r$//' "$work/raw" >"$work/out"
}
# expect WHAT RC [FRAGMENT...]: the last run exited RC and its stdout has each fragment (grep -E).
expect() {
  local what=$1 want=$2; shift 2
  [ "$rc" = "$want" ] || { bad "$what: exit $rc, expected $want"; return; }
  local f
  for f in "$@"; do grep -Eq -- "$f" "$work/out" || { bad "$what: stdout lacks /$f/"; return; }; done
  ok "$what"
}
# expect_err WHAT RC [FRAGMENT...]: the same for stderr (fragments as fixed strings); stdout empty.
expect_err() {
  local what=$1 want=$2; shift 2
  [ "$rc" = "$want" ] || { bad "$what: exit $rc, expected $want"; return; }
  [ ! -s "$work/out" ] || { bad "$what: a failure printed on stdout"; return; }
  local f
  for f in "$@"; do grep -Fq -- "$f" "$work/err" || { bad "$what: stderr lacks '$f'"; return; }; done
  ok "$what"
}
# json EXPR: the sqlite3 shell's value of EXPR over the last stdout as JSON (j).
json() { sqlite3 -batch :memory: "WITH d(j) AS (SELECT CAST(readfile('$work/out') AS TEXT)) SELECT $1 FROM d"; }
# expect_json WHAT EXPR VALUE: the last run exited 0, printed valid JSON, and EXPR is VALUE.
expect_json() {
  local what=$1 expr=$2 want=$3 got
  [ "$rc" = 0 ] || { bad "$what: exit $rc"; return; }
  [ "$(json 'json_valid(j)')" = 1 ] || { bad "$what: stdout is not JSON"; return; }
  got=$(json "$expr")
  [ "$got" = "$want" ] || { bad "$what: $expr is '$got', expected '$want'"; return; }
  ok "$what"
}

# The --json-ops form of the demo's plan (trips --json-ops builds the same in C): a deduplicate
# operation in each custom stage, by the properties its unique constraint takes.
ops_plan="$work/plan-json-ops.json"
sed -e 's|{"name": "migrateV1toV2", "kind": "custom", "from": "1.0.0", "to": "2.0.0"}|{"name": "migrateV1toV2", "kind": "custom", "from": "1.0.0", "to": "2.0.0", "willMigrate": [{"op": "deduplicate", "entity": "Trip", "by": ["name"], "keep": "first", "mergeRelationships": true}]}|' \
    -e 's|{"name": "migrateV2toV3", "kind": "custom", "from": "2.0.0", "to": "3.0.0"}|{"name": "migrateV2toV3", "kind": "custom", "from": "2.0.0", "to": "3.0.0", "willMigrate": [{"op": "deduplicate", "entity": "Trip", "by": ["name", "start_date", "end_date"], "keep": "first", "mergeRelationships": true}]}|' \
    "$src/examples/trips/plan.json" >"$ops_plan"
[ "$(grep -c '"willMigrate"' "$ops_plan")" = 2 ] || { echo "check-cli: could not give plan.json's custom stages operations"; exit 1; }

# A version-1 store: four trips, the Paris trip twice (version 2 makes names unique); the
# duplicate's bucket-list item moves to the kept trip.
cat >"$work/trips-v1.json" <<'EOF'
[{"name": "Paris Getaway", "destination": "Paris", "start_date": "2026-04-10T00:00:00Z", "end_date": "2026-04-17T00:00:00Z"},
 {"name": "Tokyo Spring", "destination": "Tokyo", "start_date": "2026-03-28T00:00:00Z", "end_date": "2026-04-06T00:00:00Z"},
 {"name": "Paris Getaway", "destination": "Paris", "start_date": "2026-04-10T00:00:00Z", "end_date": "2026-04-17T00:00:00Z"},
 {"name": "Lisbon Long Weekend", "destination": "Lisbon", "start_date": "2026-10-09T00:00:00Z", "end_date": "2026-10-12T00:00:00Z"}]
EOF
cat >"$work/items-v1.json" <<'EOF'
[{"title": "Eiffel Tower at night", "trip": "Trip/1"}, {"title": "Seine cruise", "trip": "Trip/3"},
 {"title": "Cherry blossoms in Ueno", "trip": "Trip/2"}]
EOF
make_v1() {
  "$make_store" "$1" "$src/examples/trips/schema-v1.json" Trip "$work/trips-v1.json" BucketListItem "$work/items-v1.json" \
    || { echo "check-cli: make_store failed"; exit 1; }
}

# The migration of a version-1 store with the --json-ops plan, piped: plain lines, then version 4.
check_migrate() {
  local store=$1 label=$2
  make_v1 "$store"
  run "$strata" check "$store" --plan "$ops_plan" --json
  expect_json "$label: check of a version-1 store: migratable" "json_extract(j, '\$.status') || ' ' || json_array_length(j, '\$.stages')" "migratable 3"
  run "$strata" migrate "$store" --plan "$ops_plan"
  expect "$label: migrate 1 -> 4 with the --json-ops plan, piped" 0 \
    '^migrateV1toV2: begin$' '^migrateV1toV2: willMigrate$' '^migrateV1toV2: commit$' '^migrateV2toV3: commit$' \
    '^migrateV2toV3: renameAttribute Trip$' '^migrateV3toV4: addSearchIndex BucketListItem$' '^migrateV3toV4: commit$' 'is at version 4\.0\.0 \(from 1\.0\.0'
  if grep -q $'\r' "$work/out"; then bad "$label: piped progress holds a carriage return"; else ok "$label: piped progress is plain lines"; fi
  run "$strata" schema "$store"
  expect "$label: the migrated store's schema is 4.0.0" 0 '^version +4\.0\.0$' '^ +└─ entity BusinessTrip : Trip'
  run "$strata" fetch "$store" Trip --sort name --prefetch bucketList --json
  expect_json "$label: the duplicate is gone, its item merged into the kept trip" \
    "json_array_length(j) || ' ' || json_extract(j, '\$[1].name') || ' ' || json_array_length(j, '\$[1].bucketList')" \
    "3 Paris Getaway 2"
  run "$strata" migrate "$store" --plan "$ops_plan"
  expect "$label: migrate again: nothing to do" 0 'nothing to migrate'
}

if [ "$mode" = postgres ]; then
  : "${STRATA_TEST_POSTGRES:?check-cli.sh postgres runs inside scripts/postgres-test.sh}"
  pg="$STRATA_TEST_POSTGRES&options=-csearch_path%3Dcli_demo"
  "$trips" --from 1 "$pg" >"$work/demo.out" 2>&1 || { cat "$work/demo.out"; exit 1; }
  "$trips" --from 1 "$work/demo.store" >"$work/demo-file.out" 2>&1 || { cat "$work/demo-file.out"; exit 1; }
  run "$strata" schema "$pg"
  expect "postgres: schema" 0 '^version +4\.0\.0$' '^entity Trip ' 'bucketList +-> \[BucketListItem\] +to-many, inverse trip, delete rule cascade'
  run "$strata" schema "$pg" --json
  expect_json "postgres: schema --json" "json_extract(j, '\$.schema.version') || ' ' || json_extract(j, '\$.version')" "4.0.0 4.0.0"
  descriptor=(Trip --where '$0.startDate >= since' --bind since='"2026-04-01T00:00:00Z"' --sort name --fields name,destination,startDate,endDate --prefetch livingAccommodation)
  run "$strata" fetch "$pg" "${descriptor[@]}"
  cp "$work/out" "$work/pg-fetch.json"
  expect_json "postgres: fetch (piped: JSON)" "json_extract(j, '\$[0].name')" "Client Workshop"
  run "$strata" fetch "$work/demo.store" "${descriptor[@]}"
  if cmp -s "$work/out" "$work/pg-fetch.json"; then ok "postgres: fetch gives the store file's JSON"; else bad "postgres: fetch differs from the store file's"; fi
  tty "$strata" fetch "$pg" Trip --sort startDate --limit 2
  expect "postgres: fetch table on a terminal" 0 '^_id +_entity +name +destination +startDate' '^Trip/2 +Trip +Tokyo Spring +Tokyo ' '^\(2 objects\)$'
  run "$strata" count "$pg" Trip --where '$0.destination == city' --bind city=Paris
  expect "postgres: count" 0 '^1$'
  run "$strata" history "$pg" --entity LivingAccommodation --json
  expect_json "postgres: history --entity" "json_extract(j, '\$[0].changes[0].kind')" "insert"
  run "$strata" explain "$pg" Trip --where '$0.endDate >= now' --bind now='"2026-11-22T00:00:00Z"' --json
  expect_json "postgres: explain --json" "json_extract(j, '\$.parameterCount')" "1"
  run "$strata" check "$pg" --plan "$src/examples/trips/plan.json"
  expect "postgres: check: compatible" 0 '^status +compatible$'
  run "$strata" schema "$STRATA_TEST_POSTGRES&options=-csearch_path%3Dno_such_store"
  expect_err "postgres: an empty schema: exit 1" 1 "strata: the PostgreSQL store holds no Strata store"
  if grep -Fq "$STRATA_TEST_POSTGRES" "$work/err"; then bad "postgres: the message repeats the URI"; else ok "postgres: the message does not repeat the URI"; fi
  check_migrate "$STRATA_TEST_POSTGRES&options=-csearch_path%3Dcli_v1" postgres
  echo "$passed passed, $failed failed"
  [ "$failed" = 0 ]
  exit
fi

# ---------------------------------------------------------------- the demo's store (version 4)
store="$work/trips.store"
"$trips" --from 1 "$store" >"$work/demo.out" 2>&1 || { cat "$work/demo.out"; exit 1; }

run "$strata" schema "$store"
expect "schema: text" 0 '^version +4\.0\.0$' '^version hash +[0-9a-f]{64}$' '^entity Trip +\(version hash [0-9a-f]{64}\)$' \
  '^ +name +string +kept on delete$' '^ +startDate +date +kept on delete, was start_date$' \
  '^ +bucketList +-> \[BucketListItem\] +to-many, inverse trip, delete rule cascade$' \
  '^ +livingAccommodation +-> LivingAccommodation\? +to-one, inverse trip, delete rule cascade$' \
  '^ +unique +\(name, startDate, endDate\)$' '^ +indexes +\(name\) \(startDate\) \(endDate\) \(name, startDate, endDate\)$' \
  '^    └─ entity BusinessTrip : Trip ' '^ +perdiem +double +default 0$' '^ +reason +string +one of "family", "reunion", "wellness"$' \
  '^ +title +string +searchable$' '^ +trip +-> Trip\? +to-one, inverse bucketList, delete rule nullify$'
run "$strata" schema "$store" --json
expect_json "schema --json: the stored schema and its hashes" \
  "json_extract(j, '\$.schema.version') || ' ' || json_extract(j, '\$.schema.entities[1].superentity') || ' ' || length(json_extract(j, '\$.versionHash')) || ' ' || length(json_extract(j, '\$.entityHashes.Trip'))" \
  "4.0.0 Trip 64 64"

# fetch: JSON when piped (and with --json), a table on a terminal.
run "$strata" fetch "$store" Trip
expect_json "fetch: piped gives the JSON array" "json_array_length(j) || ' ' || json_extract(j, '\$[0]._id') || ' ' || json_extract(j, '\$[0].name')" "7 Trip/1 Paris Getaway"
cp "$work/out" "$work/fetch-piped.json"
run "$strata" fetch "$store" Trip --json
if cmp -s "$work/out" "$work/fetch-piped.json"; then ok "fetch --json is what the pipe gets"; else bad "fetch --json differs from piped"; fi
run "$strata" fetch "$store" Trip --where '$0.destination == city' --bind city=Paris --fields name,startDate --prefetch bucketList
expect_json "fetch --where --bind --fields --prefetch" \
  "json_array_length(j) || ' ' || json_extract(j, '\$[0].startDate') || ' ' || ifnull(json_extract(j, '\$[0].destination'), 'absent') || ' ' || json_array_length(j, '\$[0].bucketList') || ' ' || json_extract(j, '\$[0].bucketList[0]._id')" \
  "1 2026-04-10T00:00:00Z absent 3 BucketListItem/1"
run "$strata" fetch "$store" Trip --sort startDate:reverse --limit 2 --offset 1 --fields name
expect_json "fetch --sort key:reverse --limit --offset" "json_extract(j, '\$[0].name') || ', ' || json_extract(j, '\$[1].name') || ' ' || json_array_length(j)" "Family Visit, Client Workshop 2"
run "$strata" fetch "$store" BusinessTrip --where '$0.perdiem > p' --bind p=90 --fields name,perdiem
expect_json "fetch --bind p=90 binds a number" "json_array_length(j) || ' ' || json_extract(j, '\$[0].name')" "1 Client Workshop"
tty "$strata" fetch "$store" Trip --sort startDate --limit 3
expect "fetch: an aligned table on a terminal" 0 '^_id +_entity +name +destination +startDate +endDate +perdiem +reason$' \
  '^------ +------- +-' '^Trip/2 +Trip +Tokyo Spring +Tokyo +2026-03-28T00:00:00Z +2026-04-06T00:00:00Z$' '^\(3 objects\)$'
tty "$strata" fetch "$store" Trip --fields name,bucketList --prefetch bucketList --limit 1
expect "fetch: long values cut with … on a terminal" 0 '^_id +_entity +name +bucketList$' '^Trip/1 +Trip +Paris Getaway +\[\{"_id":"BucketListItem/1".*…$'
tty "$strata" fetch "$store" Trip --limit 1 --json
expect "fetch --json on a terminal" 0 '^\[\{"_id":"Trip/1"'

run "$strata" count "$store" Trip
expect "count" 0 '^7$'
run "$strata" count "$store" Trip --where '$0.startDate >= since' --bind since='"2026-06-01T00:00:00Z"'
expect "count --where --bind (a date as a JSON string)" 0 '^5$'
run "$strata" count "$store" PersonalTrip
expect "count of a subentity" 0 '^2$'

run "$strata" explain "$store" Trip --where '$0.endDate >= now' --bind now='"2026-11-22T00:00:00Z"' --sort endDate
expect "explain: SQL and plan" 0 '^SQL:$' 'FROM "Trip" t' '^parameters: 1$' '^plan:$' 'SEARCH t USING INDEX Trip\.index\(endDate\)'
run "$strata" explain "$store" Trip --json
expect_json "explain --json" "json_extract(j, '\$.parameterCount') || ' ' || (json_extract(j, '\$.sql') LIKE 'SELECT%')" "0 1"

run "$strata" history "$store"
expect_json "history: piped gives the JSON" "json_extract(j, '\$[0].token') LIKE '1@%' AND json_extract(j, '\$[0].changes[0].kind') = 'insert'" "1"
last=$(json "json_extract(j, '\$[#-1].token')")
count_all=$(json "json_array_length(j)")
run "$strata" history "$store" --after "$last" --json
expect_json "history --after the latest token: nothing" "json_array_length(j)" "0"
run "$strata" history "$store" --entity LivingAccommodation --json
expect_json "history --entity: only transactions that changed it" \
  "(json_array_length(j) < $count_all) AND json_array_length(j) > 0 AND NOT EXISTS (SELECT 1 FROM json_each(j) t WHERE NOT EXISTS (SELECT 1 FROM json_each(t.value, '\$.changes') c WHERE json_extract(c.value, '\$.entity') = 'LivingAccommodation'))" "1"
tty "$strata" history "$store" --limit 2
expect "history: a listing on a terminal" 0 '^token 1@[0-9a-f]+  [0-9T:.-]+Z' '^  insert +Trip/1$' '^token 2@' '^\(2 transactions\)$'
run "$strata" history "$store" --after 'not a token'
expect_err "history --after with a bad token: exit 1, the library's message" 1 "strata: "

run "$strata" check "$store" --plan "$src/examples/trips/plan.json"
expect "check: the demo's store is compatible with its plan" 0 '^status +compatible$' '^stored version +4\.0\.0$'

# ---------------------------------------------------------------- export, import, backup, integrity
run "$strata" export "$store"
expect "export: JSON lines, the schema first, an end line with the counts" 0 '^\{"strata":"export","version":1,' '^\{"_id":"Trip/1",' '^\{"strata":"links"\}$' '^\{"strata":"end","objects":[0-9]+,'
cp "$work/out" "$work/trips.jsonl"
run "$strata" import "$work/copy.store" <"$work/trips.jsonl"
[ "$rc" = 0 ] && grep -Fq "imported" "$work/err" && ok "import: a new store from the export" || bad "import: a new store from the export"
for entity in Trip BucketListItem LivingAccommodation; do
  "$strata" fetch "$store" "$entity" --json >"$work/a.json" 2>&1
  "$strata" fetch "$work/copy.store" "$entity" --json >"$work/b.json" 2>&1
  if cmp -s "$work/a.json" "$work/b.json" && [ -s "$work/a.json" ]; then ok "export | import: $entity fetches identically (identifiers too)"; else rc=1; bad "export | import: $entity differs"; fi
done
run "$strata" import "$work/copy.store" <"$work/trips.jsonl"
expect_err "import into a store that holds objects: exit 1, nothing written" 1 "strata: "
printf 'not an export\n' >"$work/bad.jsonl"
run "$strata" import "$work/bad-copy.store" <"$work/bad.jsonl"
expect_err "import of a file that is not an export: exit 1" 1 "line 1"
run "$strata" backup "$store" "$work/backup.store"
[ "$rc" = 0 ] && [ -s "$work/backup.store" ] && ok "backup: a copy" || bad "backup: a copy"
run "$strata" backup "$store" "$work/backup.store"
expect_err "backup onto an existing file: exit 1 naming it" 1 "backup.store"
run "$strata" integrity "$work/backup.store"
expect "integrity of the backup: sound" 0 '^ok: no problem found'
run "$strata" count "$work/backup.store" Trip
expect "the backup holds the trips" 0 '^7$'
cp "$work/backup.store" "$work/damaged-links.store"
sqlite3 "$work/damaged-links.store" 'UPDATE "BucketListItem" SET "trip" = 9999 WHERE _pk = 1' || exit 1
run "$strata" integrity "$work/damaged-links.store"
expect "integrity finds a dangling link (made with the sqlite3 shell): exit 1, named" 1 '^link BucketListItem/1: ' '^\(1 problem\)$'
run "$strata" integrity "$work/damaged-links.store" --json
[ "$rc" = 1 ] && [ "$(json "json_extract(j, '\$.ok') || ' ' || json_extract(j, '\$.problems[0].kind') || ' ' || json_extract(j, '\$.problems[0].id')")" = "0 link BucketListItem/1" ] \
  && ok "integrity --json: the report" || bad "integrity --json: the report"

# ---------------------------------------------------------------- usage errors: exit 2
run "$strata" frobnicate "$store"
expect_err "an unknown command: exit 2 with the usage" 2 "Usage: strata"
run "$strata" fetch
expect_err "fetch without arguments: exit 2 with the usage" 2 "Missing expected argument" "Usage: strata fetch"
run "$strata" fetch "$store" Trip --limit many
expect_err "fetch --limit many: exit 2" 2 "Usage: strata fetch"
run "$strata" fetch "$store" Trip --bind novalue
expect_err "fetch --bind without =: exit 2" 2 "--bind takes name=value" "Usage: strata fetch"
run "$strata" fetch "$store" Trip --sort name:sideways
expect_err "fetch --sort key:sideways: exit 2" 2 "--sort takes key or key:reverse"
run "$strata" fetch "$store" Trip --bogus
expect_err "an unknown option: exit 2" 2 "Unknown option '--bogus'"
run "$strata" migrate "$store"
expect_err "migrate without --plan: exit 2" 2 "Missing expected argument '--plan <plan.json>'"
for command in schema fetch count explain history check migrate; do
  run "$strata" "$command" --help
  expect "$command --help: exit 0 with an example" 0 "^USAGE: strata $command" '^Example:$' "^  strata $command "
done
run "$strata" --version
expect "--version" 0 '^[0-9]+\.[0-9]+\.[0-9]+$'

# ---------------------------------------------------------------- failures: exit 1
run "$strata" schema "$work/missing.store"
expect_err "a missing file: exit 1" 1 "strata: " "missing.store': no such file"
: >"$work/empty.store"
run "$strata" fetch "$work/empty.store" Trip
expect_err "an empty file: exit 1" 1 "strata: '$work/empty.store' holds no Strata store"
echo "just some text, not a store" >"$work/notes.txt"
run "$strata" schema "$work/notes.txt"
expect_err "a foreign (text) file: exit 1 with the library's message" 1 "strata: '$work/notes.txt' is not a Strata store: it is not a SQLite database"
cp "$store" "$work/damaged.store"
# Garbage over every page after the first: the tables and the stored schema are unreadable.
size=$(stat -c %s "$work/damaged.store")
head -c $((size - 4096)) /dev/zero | tr '\0' '\377' | dd of="$work/damaged.store" bs=4096 seek=1 conv=notrunc status=none
run "$strata" schema "$work/damaged.store"
expect_err "a damaged file: exit 1 with the library's message" 1 "strata: " "database disk image is malformed"
cp "$store" "$work/bad-schema.store"
sqlite3 "$work/bad-schema.store" "UPDATE strata_metadata SET value = '{\"version\": 3' WHERE key = 'schema'"
run "$strata" fetch "$work/bad-schema.store" Trip
expect_err "a store whose stored schema is damaged: exit 1" 1 "strata: '$work/bad-schema.store' is damaged: its stored schema cannot be read (malformed JSON"
run "$strata" fetch "$store" Voyage
expect_err "an unknown entity: exit 1 naming it" 1 "strata: unknown entity 'Voyage'"
run "$strata" fetch "$store" Trip --where '$0.bogus == 1'
expect_err "a predicate naming no attribute: exit 1" 1 "strata: unknown key path 'bogus'"
run "$strata" check "$store" --plan "$work/missing-plan.json"
expect_err "a missing plan file: exit 1" 1 "strata: cannot read '$work/missing-plan.json'"
run "$strata" check "$store" --plan "$work/notes.txt"
expect_err "a plan that is not JSON: exit 1 with the library's message" 1 "strata: "

# ---------------------------------------------------------------- check and migrate
v1="$work/v1.store"
make_v1 "$v1"
run "$strata" check "$v1" --plan "$src/examples/trips/plan.json"
expect "check: a version-1 store is migratable, stages listed" 0 '^status +migratable$' '^stored version +1\.0\.0$' '^current version +4\.0\.0$' \
  '^  migrateV1toV2 +custom +1\.0\.0 -> 2\.0\.0 +needs C hooks: strata migrate refuses it$' '^  migrateV3toV4 +lightweight +3\.0\.0 -> 4\.0\.0'
run "$strata" check "$v1" --plan "$ops_plan"
expect "check: the --json-ops plan's stages have operations" 0 '^  migrateV1toV2 +custom +1\.0\.0 -> 2\.0\.0 +1 operation$'
run "$strata" check "$v1" --plan "$src/examples/trips/schema-v4.json"
expect_err "check with a schema that is not a plan: exit 1" 1 "strata: "

sum_before=$(cat "$v1" | cksum)
run "$strata" migrate "$v1" --plan "$src/examples/trips/plan.json"
expect_err "migrate: a plan needing C hooks is refused naming the stage" 1 "strata: stage 'migrateV1toV2' is custom without declarative operations: it needs C hooks"
if [ "$(cat "$v1" | cksum)" = "$sum_before" ]; then ok "the refused migration left the store's bytes unchanged"; else bad "the refused migration changed the store"; fi
run "$strata" migrate "$v1" --plan "$ops_plan" --dry-run
expect "migrate --dry-run: the stages and their steps" 0 '^  migrateV1toV2 \(custom, 1\.0\.0 -> 2\.0\.0\)$' \
  '^    willMigrate: deduplicate Trip by \(name\), keep first, relationships merged into the kept object$' \
  '^    addUniqueConstraint +Trip' '^  migrateV3toV4 \(lightweight, 3\.0\.0 -> 4\.0\.0\)$' '^nothing was changed'
if [ "$(cat "$v1" | cksum)" = "$sum_before" ]; then ok "--dry-run left the store's bytes unchanged"; else bad "--dry-run changed the store"; fi
run "$strata" schema "$v1"
expect "the store is still at version 1" 0 '^version +1\.0\.0$'

check_migrate "$work/v1-piped.store" file

# The progress on a pseudo-terminal: one bar redrawn with \r, a line kept per finished stage.
make_v1 "$work/v1-tty.store"
tty "$strata" migrate "$work/v1-tty.store" --plan "$ops_plan"
if [ "$rc" = 0 ] && grep -q $'\r\e\[K\[█*░*\] 1/3 migrateV1toV2: ' "$work/raw" && grep -q '✓ migrateV1toV2 ([0-9]* steps)' "$work/out" \
   && grep -q '✓ migrateV3toV4 (' "$work/out" && ! grep -q '^migrateV1toV2: begin$' "$work/out"; then
  ok "migrate on a terminal: a progress bar redrawn with \\r"
else
  bad "migrate on a terminal: no progress bar"
fi
run "$strata" schema "$work/v1-tty.store"
expect "the store migrated on a terminal is at version 4" 0 '^version +4\.0\.0$'

# ---------------------------------------------------------------- install
if [ -n "${CMAKE_COMMAND:-}" ]; then
  "$CMAKE_COMMAND" --install "$build" --prefix "$work/prefix" >"$work/install.log" 2>&1 || { cat "$work/install.log"; exit 1; }
  run env -i "$work/prefix/bin/strata" count "$store" Trip
  expect "cmake --install puts a self-contained bin/strata beside the library" 0 '^7$'
  [ -e "$work/prefix/lib/libstrata.so" ] || [ -e "$work/prefix/lib64/libstrata.so" ] || [ -n "$(find "$work/prefix" -name 'libstrata.so*' -print -quit)" ] \
    && ok "the library is installed beside it" || bad "no libstrata.so under the prefix"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
