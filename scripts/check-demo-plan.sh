#!/bin/sh
# check-demo-plan.sh TRIPS_EXAMPLE_DIR
#
# examples/trips/plan.json is a complete migration plan (what a program hands
# to strata_config_new); its schemas must be schema-v1.json … schema-v4.json,
# which the demo also opens on their own. Compares them as JSON (sqlite3's
# json functions) and checks the stages chain the versions as the sessions do.
set -eu
dir=${1:?usage: check-demo-plan.sh TRIPS_EXAMPLE_DIR}
command -v sqlite3 >/dev/null 2>&1 || { echo "sqlite3 shell not installed"; exit 1; }
cd "$dir"
fail=0
q() { sqlite3 -batch :memory: "$1"; }
[ "$(q "SELECT json_array_length(readfile('plan.json'), '\$.schemas')")" = 4 ] ||
  { echo "plan.json: expected 4 schemas"; fail=1; }
for v in 1 2 3 4; do
  same=$(q "SELECT json_extract(readfile('plan.json'), '\$.schemas[$((v - 1))]') = json(readfile('schema-v$v.json'))")
  [ "$same" = 1 ] || { echo "plan.json: schemas[$((v - 1))] differs from schema-v$v.json"; fail=1; }
  [ "$(q "SELECT json_extract(readfile('schema-v$v.json'), '\$.version')")" = "$v.0.0" ] ||
    { echo "schema-v$v.json: version should be $v.0.0"; fail=1; }
done
stages=$(q "SELECT group_concat(json_extract(value, '\$.name') || ':' || json_extract(value, '\$.kind') || ':' ||
                                json_extract(value, '\$.from') || '>' || json_extract(value, '\$.to'), ' ')
            FROM json_each(readfile('plan.json'), '\$.stages')")
expected="migrateV1toV2:custom:1.0.0>2.0.0 migrateV2toV3:custom:2.0.0>3.0.0 migrateV3toV4:lightweight:3.0.0>4.0.0"
[ "$stages" = "$expected" ] || { echo "plan.json stages: $stages"; echo "expected:         $expected"; fail=1; }
[ "$fail" = 0 ] && echo "plan.json: schemas 1-4 and stages as expected"
exit $fail
