/*
 * notify_pg.c — bench_notify_pg: what a NOTIFY costs a save on PostgreSQL, in plain libpq
 * (benchmarks/bench/README.md).
 *
 *   bench_notify_pg URI [SAVES]
 *
 * A save is one transaction writing one row (BEGIN; a prepared INSERT; COMMIT), the smallest
 * save a store makes. Four kinds of save, SAVES of each (default 5,000), interleaved in a
 * rotating order after 200 untimed of each, each timed alone (CLOCK_MONOTONIC):
 *
 *   plain          BEGIN; INSERT; COMMIT
 *   + SELECT 1     one more statement in the transaction: what its round trip costs alone
 *   + NOTIFY       SELECT pg_notify(channel, payload) in the transaction, nobody listening
 *   + NOTIFY, 1 listener   the same on a channel another connection LISTENs to (it reads
 *                  each notification between saves, untimed)
 *
 * The payload is 64 bytes (a store's identifier and a counter, as a store would send). Prints
 * a Markdown table: the median, 10th and 90th percentiles, and the median's difference from a
 * plain save. Works in a schema of its own (strata_bench_notify_<pid>), dropped at the end.
 */
#define _DEFAULT_SOURCE
#include <endian.h>
#include <libpq-fe.h>
#include <poll.h>

#include "common.h"

static const char *const PROG = "bench_notify_pg";

enum { KINDS = 4, WARMUP = 200 };
static const char *const KIND_NAMES[KINDS] = {"plain (BEGIN; INSERT; COMMIT)", "+ `SELECT 1`",
                                              "+ `NOTIFY`, nobody listening", "+ `NOTIFY`, 1 listener"};

static PGconn *connect_to(const char *uri) {
    PGconn *c = PQconnectdb(uri);
    if (c == NULL || PQstatus(c) != CONNECTION_OK)
        bench_die(PROG, "connecting to the server failed: %s", c ? PQerrorMessage(c) : "out of memory");
    return c;
}

static void ok(PGconn *c, PGresult *r, const char *what) {
    ExecStatusType s = PQresultStatus(r);
    if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK) bench_die(PROG, "%s failed: %s", what, PQerrorMessage(c));
    PQclear(r);
}

static void exec(PGconn *c, const char *sql) { ok(c, PQexec(c, sql), sql); }

static char *setting(PGconn *c, const char *name) {
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT current_setting('%s')", name);
    PGresult *r = PQexec(c, sql);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) bench_die(PROG, "%s failed: %s", sql, PQerrorMessage(c));
    char *v = strdup(PQgetvalue(r, 0, 0));
    PQclear(r);
    return v;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Waits for one notification on the listener (untimed). */
static void drain(PGconn *listener) {
    for (;;) {
        if (PQconsumeInput(listener) != 1) bench_die(PROG, "the listener: %s", PQerrorMessage(listener));
        PGnotify *n = PQnotifies(listener);
        if (n) {
            PQfreemem(n);
            while ((n = PQnotifies(listener)) != NULL) PQfreemem(n);
            return;
        }
        struct pollfd p = {PQsocket(listener), POLLIN, 0};
        if (poll(&p, 1, 5000) == 0) bench_die(PROG, "the listener heard nothing for 5 s");
    }
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s URI [SAVES]\n", PROG);
        return 2;
    }
    long saves = argc > 2 ? atol(argv[2]) : 5000;
    if (saves < 1) bench_die(PROG, "SAVES must be at least 1");
    PGconn *c = connect_to(argv[1]), *listener = connect_to(argv[1]);
    char schema[64], sql[512];
    snprintf(schema, sizeof schema, "strata_bench_notify_%ld", (long)getpid());
    exec(c, "SET client_min_messages = warning");
    snprintf(sql, sizeof sql, "DROP SCHEMA IF EXISTS \"%s\" CASCADE; CREATE SCHEMA \"%s\"; SET search_path = \"%s\"",
             schema, schema, schema);
    exec(c, sql);
    exec(c, "CREATE TABLE \"Item\" (_pk bigint PRIMARY KEY, _entity text COLLATE \"C\" NOT NULL,"
            " \"title\" text COLLATE \"C\", \"trip\" bigint)");
    static const Oid insert_types[] = {20, 25}, notify_types[] = {25, 25};
    ok(c, PQprepare(c, "insert", "INSERT INTO \"Item\" (_pk, _entity, \"title\") VALUES ($1, 'Item', $2)", 2, insert_types),
       "PQprepare");
    ok(c, PQprepare(c, "one", "SELECT 1", 0, NULL), "PQprepare");
    ok(c, PQprepare(c, "notify", "SELECT pg_notify($1, $2)", 2, notify_types), "PQprepare");
    exec(listener, "LISTEN strata_bench_heard");
    char *sync = setting(c, "synchronous_commit"), *fsync = setting(c, "fsync"), *version = setting(c, "server_version");

    double *t[KINDS];
    for (int k = 0; k < KINDS; k++) {
        t[k] = calloc((size_t)saves, sizeof(double));
        if (t[k] == NULL) bench_die(PROG, "out of memory");
    }
    long long key = 0;
    for (long i = -WARMUP; i < saves; i++) {
        for (int j = 0; j < KINDS; j++) {
            int kind = (int)((i + WARMUP + j) % KINDS);
            char pk[8], payload[96];
            uint64_t be = htobe64((uint64_t)++key);
            memcpy(pk, &be, 8);
            snprintf(payload, sizeof payload, "{\"store\":\"5f0c7a4e-2b1d-4c3e-9a8f-1e2d3c4b5a69\",\"n\":%012lld}", key);
            const char *insert_params[] = {pk, "See the museum"};
            static const int insert_lengths[] = {8, 0}, insert_formats[] = {1, 0};
            const char *notify_params[] = {kind == 3 ? "strata_bench_heard" : "strata_bench_unheard", payload};
            double t0 = bench_now();
            exec(c, "BEGIN");
            ok(c, PQexecPrepared(c, "insert", 2, insert_params, insert_lengths, insert_formats, 1), "INSERT");
            if (kind == 1) ok(c, PQexecPrepared(c, "one", 0, NULL, NULL, NULL, 1), "SELECT 1");
            if (kind >= 2) ok(c, PQexecPrepared(c, "notify", 2, notify_params, NULL, NULL, 1), "pg_notify");
            exec(c, "COMMIT");
            double t1 = bench_now();
            if (kind == 3) drain(listener);
            if (i >= 0) t[kind][i] = t1 - t0;
        }
    }
    printf("One save of one row, %ld of each kind interleaved, PostgreSQL %s (synchronous_commit %s, fsync %s)\n\n"
           "| save | median | 10th percentile | 90th percentile | median − plain |\n|---|---:|---:|---:|---:|\n",
           saves, version, sync, fsync);
    double plain = 0;
    for (int k = 0; k < KINDS; k++) {
        qsort(t[k], (size_t)saves, sizeof(double), cmp_double);
        double med = saves % 2 ? t[k][saves / 2] : (t[k][saves / 2 - 1] + t[k][saves / 2]) / 2;
        if (k == 0) plain = med;
        printf("| %s | %.1f µs | %.1f µs | %.1f µs | %+.1f µs (%+.0f%%) |\n", KIND_NAMES[k], med * 1e6,
               t[k][saves / 10] * 1e6, t[k][saves * 9 / 10] * 1e6, (med - plain) * 1e6,
               plain > 0 ? (med - plain) / plain * 100 : 0);
        free(t[k]);
    }
    snprintf(sql, sizeof sql, "DROP SCHEMA \"%s\" CASCADE", schema);
    exec(c, sql);
    free(sync);
    free(fsync);
    free(version);
    PQfinish(listener);
    PQfinish(c);
    return 0;
}
