/*
 * driver.c — one timed case of the history benchmark (benchmarks/history/run.sh).
 *
 *   driver insert MODE STORE N     N trips inserted with strata_insert_many into a new store,
 *                                  then one strata_save (or the same rows in one SQLite
 *                                  transaction); times insert_many + save, and save alone
 *   driver update MODE STORE N     a new store of 2N trips (not timed), then N strata_update
 *                                  of every other trip (keys 2, 4, 6, ...: not consecutive)
 *                                  and one strata_save; times the updates + save, and the save
 *   driver saves MODE STORE N      N saves of one inserted trip each (what history adds to every
 *                                  save, whatever its size; each save its own SQLite transaction
 *                                  in the sqlite mode); times them all, and the saves alone
 *
 * MODE is one of
 *   history     Strata, "history": true (the default)
 *   off         Strata, "history": false
 *   values      Strata, history on and "historyValues": true on destination (old and new
 *               values recorded with each update)
 *   sqlite      no Strata: the same table written with SQLite's C API (prepared statement,
 *               one transaction, journal_mode=WAL, synchronous=FULL, as Strata's stores)
 *
 * Prints one line: "<total ms> <save ms> <peak RSS KB>" (peak RSS from getrusage, of this
 * whole process: the untimed setup of the update case included).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <sqlite3.h>
#include <strata.h>

#define TRIP_ATTRIBUTES(DESTINATION_EXTRA)                                                   \
    "{\"name\": \"Trip\", \"attributes\": ["                                                 \
    "  {\"name\": \"name\", \"type\": \"string\"},"                                          \
    "  {\"name\": \"destination\", \"type\": \"string\"" DESTINATION_EXTRA "},"               \
    "  {\"name\": \"start_date\", \"type\": \"date\"},"                                      \
    "  {\"name\": \"end_date\", \"type\": \"date\"}],"                                       \
    " \"relationships\": ["                                                                  \
    "  {\"name\": \"livingAccommodation\", \"destination\": \"LivingAccommodation\","        \
    "   \"optional\": true, \"deleteRule\": \"cascade\"}]},"                                  \
    "{\"name\": \"LivingAccommodation\", \"attributes\": ["                                   \
    "  {\"name\": \"address\", \"type\": \"string\"},"                                        \
    "  {\"name\": \"placeName\", \"type\": \"string\"}],"                                     \
    " \"relationships\": [{\"name\": \"trip\", \"destination\": \"Trip\", \"optional\": true}]}"

static const char *const SCHEMA = "{\"version\": \"1.0.0\", \"entities\": [" TRIP_ATTRIBUTES("") "]}";
static const char *const SCHEMA_VALUES = "{\"version\": \"1.0.0\", \"entities\": [" TRIP_ATTRIBUTES(", \"historyValues\": true") "]}";

static void fail(const char *what) {
    fprintf(stderr, "driver: %s failed: %s\n", what, strata_last_error());
    exit(1);
}

static void sqlite_fail(sqlite3 *db, const char *what) {
    fprintf(stderr, "driver: %s failed: %s\n", what, sqlite3_errmsg(db));
    exit(1);
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long peak_rss_kb(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss; /* KB on Linux */
}

static long start_of(long i) { return 1577836800L + (i % 3000) * 86400L; }

/* The JSON array of trips first..last-1, as strata_insert_many takes it. */
static char *trips_json(long first, long last) {
    size_t cap = (size_t)(last - first) * 128 + 16;
    char *buf = malloc(cap);
    if (buf == NULL) exit(1);
    size_t len = 0;
    buf[len++] = '[';
    for (long i = first; i < last; i++) {
        len += (size_t)snprintf(buf + len, cap - len,
                                "%s{\"name\": \"Trip %ld\", \"destination\": \"City %ld\","
                                " \"start_date\": %ld, \"end_date\": %ld}",
                                i > first ? "," : "", i, i % 997, start_of(i), start_of(i) + 7 * 86400L);
    }
    buf[len++] = ']';
    buf[len] = '\0';
    return buf;
}

static strata_container *open_strata(const char *mode, const char *path) {
    const char *schema = strcmp(mode, "values") == 0 ? SCHEMA_VALUES : SCHEMA;
    const char *history = strcmp(mode, "off") == 0 ? "false" : "true";
    size_t need = 128 + strlen(schema);
    char *config_json = malloc(need);
    if (config_json == NULL) exit(1);
    snprintf(config_json, need, "{\"schema\": %s, \"history\": %s}", schema, history);
    strata_config *cfg = NULL;
    if (strata_config_new(config_json, &cfg) != STRATA_OK) fail("strata_config_new");
    free(config_json);
    strata_container *db = NULL;
    if (strata_open(path, cfg, &db) != STRATA_OK) fail("strata_open");
    strata_config_free(cfg);
    return db;
}

/* A store of MODE at path and a context on it. */
static strata_context *open_context(const char *mode, const char *path, strata_container **db) {
    *db = open_strata(mode, path);
    strata_context *ctx = NULL;
    if (strata_context_new(*db, &ctx) != STRATA_OK) fail("strata_context_new");
    return ctx;
}

static void close_context(strata_container *db, strata_context *ctx) {
    strata_context_free(ctx);
    strata_close(db);
}

/* The line of the case: total and save seconds (as milliseconds), and the peak RSS. */
static int report(double total, double saving) {
    printf("%.1f %.1f %ld\n", total * 1e3, saving * 1e3, peak_rss_kb());
    return 0;
}

static sqlite3 *open_sqlite(const char *path) {
    sqlite3 *db = NULL;
    if (sqlite3_open(path, &db) != SQLITE_OK) sqlite_fail(db, "sqlite3_open");
    const char *setup =
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
        "CREATE TABLE \"Trip\" (\"_pk\" INTEGER PRIMARY KEY, \"_entity\" TEXT NOT NULL, \"name\" TEXT,"
        " \"destination\" TEXT, \"start_date\" REAL, \"end_date\" REAL, \"livingAccommodation\" INTEGER);";
    if (sqlite3_exec(db, setup, NULL, NULL, NULL) != SQLITE_OK) sqlite_fail(db, "create table");
    return db;
}

static void sqlite_insert(sqlite3 *db, long first, long last) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) sqlite_fail(db, "BEGIN");
    if (sqlite3_prepare_v2(db,
                           "INSERT INTO \"Trip\" (\"_pk\", \"_entity\", \"name\", \"destination\", \"start_date\","
                           " \"end_date\") VALUES (?, 'Trip', ?, ?, ?, ?)",
                           -1, &st, NULL) != SQLITE_OK)
        sqlite_fail(db, "prepare insert");
    char name[32], destination[32];
    for (long i = first; i < last; i++) {
        snprintf(name, sizeof name, "Trip %ld", i);
        snprintf(destination, sizeof destination, "City %ld", i % 997);
        sqlite3_bind_int64(st, 1, i + 1);
        sqlite3_bind_text(st, 2, name, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 3, destination, -1, SQLITE_TRANSIENT);
        sqlite3_bind_double(st, 4, (double)start_of(i));
        sqlite3_bind_double(st, 5, (double)(start_of(i) + 7 * 86400L));
        if (sqlite3_step(st) != SQLITE_DONE) sqlite_fail(db, "insert");
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) sqlite_fail(db, "COMMIT");
}

/* The identifiers of strata_insert_many's JSON array, in order. */
static char **parse_ids(const char *json, long n) {
    char **ids = calloc((size_t)n, sizeof *ids);
    if (ids == NULL) exit(1);
    const char *p = json;
    for (long i = 0; i < n; i++) {
        const char *a = strchr(p, '"');
        const char *b = a ? strchr(a + 1, '"') : NULL;
        if (b == NULL) { fprintf(stderr, "driver: %ld identifiers expected\n", n); exit(1); }
        ids[i] = strndup(a + 1, (size_t)(b - a - 1));
        p = b + 1;
    }
    return ids;
}

static int run_insert(const char *mode, const char *path, long n) {
    double t0, t1, t2;
    if (strcmp(mode, "sqlite") == 0) {
        sqlite3 *db = open_sqlite(path);
        t0 = now();
        sqlite_insert(db, 0, n);
        t2 = now();
        sqlite3_close(db);
        return report(t2 - t0, 0);
    }
    strata_container *db;
    strata_context *ctx = open_context(mode, path, &db);
    char *json = trips_json(0, n);
    t0 = now();
    if (strata_insert_many(ctx, "Trip", json, NULL) != STRATA_OK) fail("strata_insert_many");
    t1 = now();
    if (strata_save(ctx) != STRATA_OK) fail("strata_save");
    t2 = now();
    free(json);
    close_context(db, ctx);
    return report(t2 - t0, t2 - t1);
}

static int run_update(const char *mode, const char *path, long n) {
    char destination[64];
    double t0, t1, t2;
    if (strcmp(mode, "sqlite") == 0) {
        sqlite3 *db = open_sqlite(path);
        sqlite_insert(db, 0, 2 * n);
        sqlite3_stmt *st = NULL;
        t0 = now();
        if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) sqlite_fail(db, "BEGIN");
        if (sqlite3_prepare_v2(db, "UPDATE \"Trip\" SET \"destination\" = ? WHERE \"_pk\" = ?", -1, &st, NULL) !=
            SQLITE_OK)
            sqlite_fail(db, "prepare update");
        for (long k = 0; k < n; k++) {
            snprintf(destination, sizeof destination, "Elsewhere %ld", k);
            sqlite3_bind_text(st, 1, destination, -1, SQLITE_TRANSIENT);
            sqlite3_bind_int64(st, 2, 2 * k + 2); /* keys 2, 4, 6, ... */
            if (sqlite3_step(st) != SQLITE_DONE || sqlite3_changes(db) != 1) sqlite_fail(db, "update");
            sqlite3_reset(st);
        }
        sqlite3_finalize(st);
        if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) sqlite_fail(db, "COMMIT");
        t2 = now();
        sqlite3_close(db);
        return report(t2 - t0, 0);
    }
    strata_container *db;
    strata_context *ctx = open_context(mode, path, &db);
    char *json = trips_json(0, 2 * n);
    char *out_ids = NULL;
    if (strata_insert_many(ctx, "Trip", json, &out_ids) != STRATA_OK) fail("strata_insert_many");
    if (strata_save(ctx) != STRATA_OK) fail("strata_save");
    free(json);
    char **ids = parse_ids(out_ids, 2 * n);
    strata_free(out_ids);
    /* A new context: the updated objects are read from the store, as in an app's later session. */
    strata_context_free(ctx);
    if (strata_context_new(db, &ctx) != STRATA_OK) fail("strata_context_new");
    t0 = now();
    for (long k = 0; k < n; k++) {
        snprintf(destination, sizeof destination, "{\"destination\": \"Elsewhere %ld\"}", k);
        if (strata_update(ctx, ids[2 * k + 1], destination) != STRATA_OK) fail("strata_update");
    }
    t1 = now();
    if (strata_save(ctx) != STRATA_OK) fail("strata_save");
    t2 = now();
    for (long i = 0; i < 2 * n; i++) free(ids[i]);
    free(ids);
    close_context(db, ctx);
    return report(t2 - t0, t2 - t1);
}

static int run_saves(const char *mode, const char *path, long n) {
    double t0, t2, saving = 0;
    if (strcmp(mode, "sqlite") == 0) {
        sqlite3 *db = open_sqlite(path);
        t0 = now();
        for (long i = 0; i < n; i++) sqlite_insert(db, i, i + 1);
        t2 = now();
        sqlite3_close(db);
        return report(t2 - t0, 0);
    }
    strata_container *db;
    strata_context *ctx = open_context(mode, path, &db);
    t0 = now();
    for (long i = 0; i < n; i++) {
        char *json = trips_json(i, i + 1);
        if (strata_insert_many(ctx, "Trip", json, NULL) != STRATA_OK) fail("strata_insert_many");
        free(json);
        double t1 = now();
        if (strata_save(ctx) != STRATA_OK) fail("strata_save");
        saving += now() - t1;
    }
    t2 = now();
    close_context(db, ctx);
    return report(t2 - t0, saving);
}

int main(int argc, char **argv) {
    if (argc == 5) {
        const char *mode = argv[2];
        long n = atol(argv[4]);
        int known = strcmp(mode, "history") == 0 || strcmp(mode, "off") == 0 || strcmp(mode, "values") == 0 ||
                    strcmp(mode, "sqlite") == 0;
        if (known && n > 0 && strcmp(argv[1], "insert") == 0) return run_insert(mode, argv[3], n);
        if (known && n > 0 && strcmp(argv[1], "update") == 0) return run_update(mode, argv[3], n);
        if (known && n > 0 && strcmp(argv[1], "saves") == 0) return run_saves(mode, argv[3], n);
    }
    fprintf(stderr, "usage: %s insert|update|saves history|off|values|sqlite STORE N\n", argv[0]);
    return 2;
}
