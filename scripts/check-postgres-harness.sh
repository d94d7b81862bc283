#!/usr/bin/env bash
# check-postgres-harness.sh [postgres-test.sh] — checks scripts/postgres-test.sh itself (ctest
# postgres_harness): the cluster starts; both URIs connect with psql (the TCP one as strata_pw
# with PGPASSWORD only, and strata_pw may create a schema); the search_path option check.h
# appends works; COMMAND's status passes through (3, 77); a test may stop, restart and kill the
# server; a missing PostgreSQL fails with a message; and after a normal end, TERM, INT or SIGKILL
# of the script the folder is gone and no process of its server remains.
set -uo pipefail

harness=${1:-$(dirname "$0")/postgres-test.sh}
work=$(mktemp -d /tmp/strata-pg-check.XXXXXX)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }

# Inside COMMAND: note the data folder, the postmaster and its children for the checks after.
record='
    d=$STRATA_TEST_POSTGRES_DATA
    echo "$d" >"$1/data"
    pm=$(head -n 1 "$d/postmaster.pid")
    { echo "$pm"; ps -o pid= --ppid "$pm"; } >"$1/pids"
'

# A process runs (a zombie does not: init may reap it late).
alive() { local st; st=$(ps -o stat= -p "$1" 2>/dev/null); [ -n "$st" ] && [ "${st#Z}" = "$st" ]; }

# The cluster of the last run is gone: its folder and every process of its server.
gone() {
    local what=$1 data folder pid
    data=$(cat "$work/data" 2>/dev/null)
    if [ -z "$data" ]; then fail "$what: COMMAND did not run"; return; fi
    folder=$(dirname "$data")
    for _ in $(seq 50); do [ -d "$folder" ] || break; sleep 0.1; done
    if [ -d "$folder" ]; then fail "$what: $folder still exists"; else ok "$what: $folder removed"; fi
    local alive=""
    for pid in $(cat "$work/pids"); do
        for _ in $(seq 50); do alive "$pid" || break; sleep 0.1; done
        alive "$pid" && alive="$alive $pid"
    done
    if [ -n "$alive" ]; then fail "$what: server processes still alive:$alive"
    else ok "$what: no server process left ($(wc -w <"$work/pids") checked)"; fi
    rm -f "$work/data" "$work/pids"
}

# 1. Connections, as the tests will make them.
"$harness" bash -c "$record"'
    set -e
    test "$(psql -X -w -At "$STRATA_TEST_POSTGRES" -c "select current_user || '"' '"' || current_database()")" = "postgres strata"
    echo "ok: superuser over the socket: $STRATA_TEST_POSTGRES"
    test "$(PGPASSWORD=$STRATA_TEST_POSTGRES_PASSWORD psql -X -q -w -At "$STRATA_TEST_POSTGRES_TCP" \
            -c "create schema harness_check" -c "select current_user")" = "strata_pw"
    echo "ok: strata_pw over TCP with PGPASSWORD, creates a schema: $STRATA_TEST_POSTGRES_TCP"
    if psql -X -w -At "$STRATA_TEST_POSTGRES_TCP" -c "select 1" >/dev/null 2>&1; then
        echo "FAIL: strata_pw connected over TCP without a password" >&2; exit 1
    fi
    echo "ok: no password, no TCP connection"
    test "$(psql -X -w -At "$STRATA_TEST_POSTGRES&options=-csearch_path%3Dcheck_1_0" -c "show search_path")" = "check_1_0"
    echo "ok: &options=-csearch_path%3D<ns> sets the search_path"
    if [ "$(id -u)" = 0 ]; then
        runuser -u nobody -- "$STRATA_TEST_POSTGRES_BIN/psql" -X -w -At "$STRATA_TEST_POSTGRES" -c "select 1" >/dev/null
        echo "ok: the socket is reachable by another user (nobody)"
    fi
    test -n "$STRATA_TEST_POSTGRES_PGCTL" && $STRATA_TEST_POSTGRES_PGCTL status -D "$STRATA_TEST_POSTGRES_DATA" >/dev/null
    echo "ok: STRATA_TEST_POSTGRES_PGCTL status"
' pgcheck "$work"
status=$?
if [ "$status" = 0 ]; then ok "connections"; else fail "connections (status $status)"; fi
gone "after success"

# 2. COMMAND's status passes through.
for want in 3 77; do
    "$harness" bash -c "$record"'exit '"$want" pgcheck "$work"
    status=$?
    if [ "$status" = "$want" ]; then ok "status $want passes through"; else fail "status $want came back as $status"; fi
    gone "after exit $want"
done

# 3. TERM, INT and SIGKILL of the script while COMMAND runs. Job control (set -m) gives the
# background script its own process group and leaves INT to it (a non-interactive shell
# otherwise starts background commands with INT ignored).
set -m
for sig in TERM INT KILL; do
    "$harness" bash -c "$record"'echo $$ >"$1/ready"; exec sleep 120' pgcheck "$work" >"$work/out" 2>&1 &
    pid=$!
    for _ in $(seq 300); do [ -s "$work/ready" ] && break; sleep 0.1; done
    cmd=$(cat "$work/ready")
    rm -f "$work/ready"
    kill -"$sig" "$pid"
    wait "$pid" 2>/dev/null   # (no "Killed" line from the shell)
    status=$?
    case $sig in TERM) want=143 ;; INT) want=130 ;; KILL) want=137 ;; esac
    if [ "$status" = "$want" ]; then ok "$sig: status $status"; else fail "$sig: status $status, expected $want"; cat "$work/out" >&2; fi
    if [ "$sig" = KILL ]; then
        # Nothing could stop COMMAND: end it here (the watchdog needs a second or two: gone waits).
        kill -TERM "$cmd" 2>/dev/null
    else
        # COMMAND got TERM from the script.
        for _ in $(seq 50); do alive "$cmd" || break; sleep 0.1; done
        if alive "$cmd"; then fail "$sig: COMMAND (pid $cmd) still runs"; kill -TERM "$cmd"
        else ok "$sig: COMMAND ended"; fi
    fi
    gone "after $sig"
done
set +m

# 4. A test that stops the server with STRATA_TEST_POSTGRES_PGCTL and starts it again, then
# kills it: the clean-up still removes everything, and says nothing.
"$harness" bash -c "$record"'
    set -e
    $STRATA_TEST_POSTGRES_PGCTL stop -m immediate -D "$STRATA_TEST_POSTGRES_DATA" >/dev/null
    $STRATA_TEST_POSTGRES_PGCTL start -w -D "$STRATA_TEST_POSTGRES_DATA" -l "$STRATA_TEST_POSTGRES_LOG" >/dev/null
    test "$(psql -X -w -At "$STRATA_TEST_POSTGRES" -c "select 42")" = 42
    kill -KILL "$(head -n 1 "$STRATA_TEST_POSTGRES_DATA/postmaster.pid")"
' pgcheck "$work" 2>"$work/err"
status=$?
if [ "$status" = 0 ] && [ ! -s "$work/err" ]; then ok "restart through STRATA_TEST_POSTGRES_PGCTL, then a killed server"
else fail "restart, then a killed server: status $status: $(cat "$work/err")"; fi
gone "after a killed server"

# 5. A missing PostgreSQL is an error that says what to do, not a skip.
out=$(STRATA_POSTGRES_BINDIR=/nonexistent "$harness" true 2>&1)
status=$?
if [ "$status" = 1 ] && [[ $out == *"make deps"* ]]; then ok "missing PostgreSQL: status 1, says make deps"
else fail "missing PostgreSQL: status $status: $out"; fi

if [ "$failures" != 0 ]; then echo "$failures check(s) failed" >&2; exit 1; fi
echo "postgres-test.sh: every check passed"
