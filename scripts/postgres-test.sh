#!/usr/bin/env bash
# postgres-test.sh COMMAND [ARGS...] — runs COMMAND against a throw-away PostgreSQL cluster.
#
# Starts a fresh cluster in /tmp/strata-pg.XXXXXX (data/, the socket folder sock/, server.log),
# runs COMMAND with the variables below, then stops the cluster (pg_ctl stop -m immediate) and
# removes the folder: also when COMMAND fails, when this script gets INT, TERM or HUP (COMMAND
# gets TERM), and, through a detached watchdog, when it is killed outright (ctest's timeout).
# Exits with COMMAND's status (77, ctest's skip code, passes through); 130/143/129 on
# INT/TERM/HUP; 1 when PostgreSQL is missing (make deps installs it) or the cluster cannot start.
#
# The cluster: initdb --locale=C.UTF-8 -E UTF8 --auth-local=trust --auth-host=scram-sha-256
# -U postgres; the server listens on the Unix socket in sock/ and on 127.0.0.1 at a free TCP
# port, with fsync off. Database `strata`; role `strata_pw` (LOGIN, password
# `strata-test-secret`, owns nothing) may CONNECT to it and CREATE (schemas) in it. As root the
# cluster runs as the Debian user postgres (PostgreSQL refuses root), else as the current user;
# COMMAND always runs as the caller.
#
# COMMAND sees:
#   STRATA_TEST_POSTGRES           postgresql://postgres@/strata?host=<sock>&port=<port>
#                                  (superuser over the socket, trust; append "&name=value")
#   STRATA_TEST_POSTGRES_TCP       postgresql://strata_pw@127.0.0.1:<port>/strata (no password)
#   STRATA_TEST_POSTGRES_PASSWORD  strata-test-secret (strata_pw's password, for PGPASSWORD)
#   STRATA_TEST_POSTGRES_PORT      <port> (TCP, and the socket's name .s.PGSQL.<port>)
#   STRATA_TEST_POSTGRES_SOCKET    <sock>, the socket folder
#   STRATA_TEST_POSTGRES_BIN       PostgreSQL's bindir (psql, pg_ctl, ...)
#   STRATA_TEST_POSTGRES_DATA      the cluster's data folder (its postmaster.pid: the server's pid)
#   STRATA_TEST_POSTGRES_LOG       the server's log
#   STRATA_TEST_POSTGRES_PGCTL     a command prefix running pg_ctl as the cluster's user, for the
#                                  shell to split (no quotes inside), so a test can stop, kill or
#                                  restart the server:
#                                    $STRATA_TEST_POSTGRES_PGCTL stop -m immediate -D "$STRATA_TEST_POSTGRES_DATA"
#                                    $STRATA_TEST_POSTGRES_PGCTL start -w -D "$STRATA_TEST_POSTGRES_DATA" -l "$STRATA_TEST_POSTGRES_LOG"
#                                  (the port, socket folder and settings live in postgresql.conf)
#
# PostgreSQL is found in STRATA_POSTGRES_BINDIR when set (CMake sets it to what it found), else
# in `pg_config --bindir`, else in the newest /usr/lib/postgresql/*/bin.
#
# Examples:
#   scripts/postgres-test.sh sh -c 'psql "$STRATA_TEST_POSTGRES" -c "select 1"'
#   scripts/postgres-test.sh env STRATA_TEST_STORE=postgres build/test_values
set -uo pipefail

me=postgres-test.sh
if [ $# -eq 0 ]; then
    echo "usage: $me COMMAND [ARGS...]   (runs COMMAND with a throw-away PostgreSQL cluster)" >&2
    exit 2
fi

# ---- PostgreSQL's bindir ----
bindir=""
is_bindir() { [ -n "$1" ] && [ -x "$1/initdb" ] && [ -x "$1/pg_ctl" ] && [ -x "$1/postgres" ] && [ -x "$1/psql" ]; }
if [ -n "${STRATA_POSTGRES_BINDIR:-}" ]; then
    if ! is_bindir "$STRATA_POSTGRES_BINDIR"; then
        echo "$me: PostgreSQL is not installed in STRATA_POSTGRES_BINDIR=$STRATA_POSTGRES_BINDIR" \
             "(no initdb, pg_ctl, postgres and psql there): make deps installs it" >&2
        exit 1
    fi
    bindir=$STRATA_POSTGRES_BINDIR
elif command -v pg_config >/dev/null 2>&1 && is_bindir "$(pg_config --bindir 2>/dev/null)"; then
    bindir=$(pg_config --bindir)
else
    for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
        if is_bindir "$d"; then bindir=$d; break; fi
    done
fi
if [ -z "$bindir" ]; then
    echo "$me: PostgreSQL is not installed (no initdb, pg_ctl, postgres and psql in" \
         "pg_config --bindir nor in /usr/lib/postgresql/*/bin):" \
         "make deps installs it (Debian: postgresql postgresql-contrib libpq5 libpq-dev)" >&2
    exit 1
fi

# ---- who runs the cluster ----
as_pg=()
if [ "$(id -u)" = 0 ]; then
    if ! id -u postgres >/dev/null 2>&1; then
        echo "$me: running as root, but there is no user postgres to run the cluster" \
             "(PostgreSQL refuses root; the Debian package postgresql creates it)" >&2
        exit 1
    fi
    as_pg=(runuser -u postgres --)
fi
# Runs a PostgreSQL program as the cluster's user, from the cluster's folder (the caller's
# current folder may be closed to that user).
pg() { (cd "$tmp" && "${as_pg[@]}" "$@"); }

# ---- clean-up: on every way out ----
tmp=""
cmd_pid=""
stop_cluster() {
    [ -n "$tmp" ] && [ -d "$tmp" ] || return 0
    if [ -f "$tmp/data/postmaster.pid" ]; then
        pg "$bindir/pg_ctl" stop -D "$tmp/data" -m immediate -w -t 30 >/dev/null 2>&1
        # Still there (pg_ctl failed): kill the postmaster itself, if the pid is still this
        # cluster's (not a stale file's pid taken by another process); its backends follow it.
        local pid
        pid=$(head -n 1 "$tmp/data/postmaster.pid" 2>/dev/null)
        if [ -n "$pid" ] && tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -qF -- "$tmp/data"; then
            kill -KILL "$pid" 2>/dev/null
            for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        fi
    fi
    rm -rf "$tmp"
}
cleanup() {
    trap - EXIT INT TERM HUP
    if [ -n "$cmd_pid" ] && kill -0 "$cmd_pid" 2>/dev/null; then
        # TERM, then KILL after 10 s.
        kill -TERM "$cmd_pid" 2>/dev/null
        (for _ in $(seq 100); do sleep 0.1; done; kill -KILL "$cmd_pid") >/dev/null 2>&1 &
        local killer=$!
        wait "$cmd_pid" 2>/dev/null
        kill "$killer" 2>/dev/null
    fi
    stop_cluster
}
trap 'cleanup' EXIT
trap 'cleanup; exit 130' INT
trap 'cleanup; exit 143' TERM
trap 'cleanup; exit 129' HUP

fail() {
    echo "$me: $*" >&2
    exit 1
}

# ---- the folder ----
tmp=$(mktemp -d /tmp/strata-pg.XXXXXX) || fail "mktemp -d /tmp/strata-pg.XXXXXX failed"
data=$tmp/data
sock=$tmp/sock
log=$tmp/server.log
mkdir "$data" "$sock" || fail "cannot create $data and $sock"
# Reachable by any user (the data folder itself stays private: initdb makes it 0700).
chmod 755 "$tmp" "$sock"
if [ ${#as_pg[@]} -gt 0 ]; then
    chown -R postgres: "$tmp" || fail "cannot chown $tmp to postgres"
fi

# A watchdog outside this process tree: if this script dies without its traps (SIGKILL, ctest's
# timeout), it stops the cluster and removes the folder. It quits once the folder is gone.
if command -v setsid >/dev/null 2>&1; then
    setsid -f bash -c '
        script=$1 tmp=$2; shift 2
        while kill -0 "$script" 2>/dev/null && [ -d "$tmp" ]; do sleep 1; done
        [ -d "$tmp" ] || exit 0
        if [ -f "$tmp/data/postmaster.pid" ]; then
            (cd "$tmp" && "$@" stop -D "$tmp/data" -m immediate -w -t 30)
            pid=$(head -n 1 "$tmp/data/postmaster.pid" 2>/dev/null)
            if [ -n "$pid" ] && tr "\\0" " " <"/proc/$pid/cmdline" | grep -qF -- "$tmp/data"; then
                kill -KILL "$pid"; sleep 1
            fi
        fi
        rm -rf "$tmp"' strata-pg-watchdog "$$" "$tmp" "${as_pg[@]}" "$bindir/pg_ctl" \
        </dev/null >/dev/null 2>&1
fi

# ---- initdb ----
if ! pg "$bindir/initdb" -D "$data" --locale=C.UTF-8 -E UTF8 --auth-local=trust \
        --auth-host=scram-sha-256 -U postgres --no-sync >"$tmp/initdb.log" 2>&1; then
    cat "$tmp/initdb.log" >&2
    fail "initdb failed"
fi
cat >>"$data/postgresql.conf" <<EOF

# scripts/postgres-test.sh
listen_addresses = '127.0.0.1'
unix_socket_directories = '$sock'
unix_socket_permissions = 0777
fsync = off
synchronous_commit = off
full_page_writes = off
EOF

# ---- start, on a free port ----
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
port=""
for attempt in $(seq 1 20); do
    # 20000-31999: below Linux's ephemeral ports (32768-60999).
    candidate=$(( 20000 + RANDOM % 12000 ))
    port_in_use "$candidate" && continue
    echo "port = $candidate" >>"$data/postgresql.conf"
    rm -f "$log"
    if pg "$bindir/pg_ctl" start -D "$data" -l "$log" -w -t 60 >"$tmp/pg_ctl.log" 2>&1; then
        port=$candidate
        break
    fi
    # Another process took the port meanwhile: try the next one.
    if grep -q -e 'could not bind' -e 'Address already in use' "$log" 2>/dev/null; then
        pg "$bindir/pg_ctl" stop -D "$data" -m immediate >/dev/null 2>&1
        continue
    fi
    cat "$tmp/pg_ctl.log" >&2
    echo "$me: the server's log ($log), last lines:" >&2
    tail -n 30 "$log" >&2
    fail "PostgreSQL did not start"
done
if [ -z "$port" ]; then
    tail -n 30 "$log" >&2
    fail "PostgreSQL did not start: no free TCP port found in 20 tries"
fi

# ---- the database and the password role ----
if ! "$bindir/psql" -X -q -w -v ON_ERROR_STOP=1 -h "$sock" -p "$port" -U postgres -d postgres \
        -c "CREATE DATABASE strata" >"$tmp/setup.log" 2>&1 ||
   ! "$bindir/psql" -X -q -w -v ON_ERROR_STOP=1 -h "$sock" -p "$port" -U postgres -d strata \
        -c "CREATE ROLE strata_pw LOGIN PASSWORD 'strata-test-secret'" \
        -c "GRANT CREATE, CONNECT ON DATABASE strata TO strata_pw" >>"$tmp/setup.log" 2>&1; then
    cat "$tmp/setup.log" >&2
    fail "cannot create the database strata and the role strata_pw"
fi

export STRATA_TEST_POSTGRES="postgresql://postgres@/strata?host=$sock&port=$port"
export STRATA_TEST_POSTGRES_TCP="postgresql://strata_pw@127.0.0.1:$port/strata"
export STRATA_TEST_POSTGRES_PASSWORD=strata-test-secret
export STRATA_TEST_POSTGRES_PORT=$port
export STRATA_TEST_POSTGRES_SOCKET=$sock
export STRATA_TEST_POSTGRES_BIN=$bindir
export STRATA_TEST_POSTGRES_DATA=$data
export STRATA_TEST_POSTGRES_LOG=$log
export STRATA_TEST_POSTGRES_PGCTL="${as_pg[*]}${as_pg[*]:+ }$bindir/pg_ctl"

# ---- COMMAND ----
# In the background, so that a TERM to this script is handled at once (bash runs traps only
# between commands); stdin stays the caller's.
"$@" 0<&0 &
cmd_pid=$!
wait "$cmd_pid"
status=$?
cmd_pid=""
exit "$status"
