/*
 * test_migration_crash.c — a migration killed at any moment loses nothing.
 *
 * A V1 store of 200,000 trips (each with a living accommodation and two
 * bucket-list items; 100 trips repeat the name of an earlier one) is migrated
 * by a child process to V3 through the plan V1 -> V2 -> V3, where
 *   V2 (a custom stage) de-duplicates trips by name in willMigrate (the later
 *      trips go, with their children, by the cascade rules), makes name
 *      unique, removes Trip.notes and BucketListItem.details (both tables are
 *      rebuilt: every row copied) and adds an index on
 *      LivingAccommodation.placeName;
 *   V3 renames start_date/end_date to startDate/endDate through originalName
 *      and adds a required attribute with a default (Trip.rating).
 * An uninterrupted migration is timed first; its result is the reference.
 * Then each run restores the pristine V1 file, starts a migrating child and
 * kills it with SIGKILL after a random delay in 0 .. 1.2 x that time (every
 * third run whose first child was killed kills a second, resuming child too).
 * Right after each kill the parent checks the file with SQLite directly
 * (read-only, leaving the WAL as the kill left it): PRAGMA integrity_check
 * is ok and the store is exactly at a stage boundary — its tables, indexes
 * and every row (an order-independent digest of all rows) equal the pristine
 * V1 store's, or those of an uninterrupted V1 -> V2 migration, or of the
 * uninterrupted V1 -> V3 one, as its stored version says. Then another child
 * reopens the store with the same plan, which must succeed and complete the
 * migration; it counts the objects of every entity and reads sampled trips
 * back by identifier ("Trip/42": name, the renamed startDate/endDate, the
 * default rating, the accommodation, the bucket list; a removed duplicate's
 * identifier must not resolve). The parent checks integrity and the digest
 * against the uninterrupted migration's result again.
 *
 * Children are this program run again (fork + exec), so no child inherits a
 * used Strata library; the parent itself never calls Strata. A killed child
 * runs with STRATA_MIGRATION_DEBUG=1 and stderr in a log, which tells where
 * the kill landed: before the migration started, in a stage, or after.
 *
 * Environment: STRATA_CRASH_SEED (default: from the clock; printed),
 * STRATA_CRASH_RUNS (default 20), STRATA_CRASH_TRIPS (default 200000; for
 * quick local runs only), STRATA_TEST_DIR (where the stores go).
 */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>

#include <sqlite3.h>

#include "check.h"

#define BATCH 10000
#define BUCKET_ITEMS 2
#define DUPLICATES 100

/* ------------------------------------------------------------------------ */
/* Schemas and plan                                                          */
/* ------------------------------------------------------------------------ */

#define CHILDREN_V1                                                                          \
    "{\"name\": \"BucketListItem\", \"attributes\": ["                                        \
    "  {\"name\": \"title\", \"type\": \"string\"},"                                          \
    "  {\"name\": \"details\", \"type\": \"string\", \"default\": \"\"},"                     \
    "  {\"name\": \"hasReservation\", \"type\": \"bool\", \"default\": false}],"              \
    " \"relationships\": [{\"name\": \"trip\", \"destination\": \"Trip\", \"optional\": true}]},"  \
    "{\"name\": \"LivingAccommodation\", \"attributes\": ["                                   \
    "  {\"name\": \"address\", \"type\": \"string\"},"                                        \
    "  {\"name\": \"placeName\", \"type\": \"string\"}],"                                     \
    " \"relationships\": [{\"name\": \"trip\", \"destination\": \"Trip\", \"optional\": true}]"

/* Versions 2 and 3: BucketListItem without details, an index on placeName. */
#define CHILDREN_V2                                                                          \
    "{\"name\": \"BucketListItem\", \"attributes\": ["                                        \
    "  {\"name\": \"title\", \"type\": \"string\"},"                                          \
    "  {\"name\": \"hasReservation\", \"type\": \"bool\", \"default\": false}],"              \
    " \"relationships\": [{\"name\": \"trip\", \"destination\": \"Trip\", \"optional\": true}]},"  \
    "{\"name\": \"LivingAccommodation\", \"attributes\": ["                                   \
    "  {\"name\": \"address\", \"type\": \"string\"},"                                        \
    "  {\"name\": \"placeName\", \"type\": \"string\"}],"                                     \
    " \"relationships\": [{\"name\": \"trip\", \"destination\": \"Trip\", \"optional\": true}],"  \
    " \"indexes\": [[\"placeName\"]]"

#define TRIP_RELATIONSHIPS                                                                   \
    "\"relationships\": ["                                                                   \
    "  {\"name\": \"bucketList\", \"destination\": \"BucketListItem\", \"toMany\": true,"     \
    "   \"deleteRule\": \"cascade\", \"inverse\": \"trip\"},"                                 \
    "  {\"name\": \"livingAccommodation\", \"destination\": \"LivingAccommodation\","        \
    "   \"optional\": true, \"deleteRule\": \"cascade\"}]"

static const char *const SCHEMA_V1 =
    "{\"version\": \"1.0.0\", \"entities\": ["
    "{\"name\": \"Trip\", \"attributes\": ["
    "  {\"name\": \"name\", \"type\": \"string\"},"
    "  {\"name\": \"destination\", \"type\": \"string\"},"
    "  {\"name\": \"start_date\", \"type\": \"date\"},"
    "  {\"name\": \"end_date\", \"type\": \"date\"},"
    "  {\"name\": \"notes\", \"type\": \"string\", \"optional\": true}],"
    TRIP_RELATIONSHIPS "},"
    CHILDREN_V1 "}]}";

static const char *const SCHEMA_V2 =
    "{\"version\": \"2.0.0\", \"entities\": ["
    "{\"name\": \"Trip\", \"attributes\": ["
    "  {\"name\": \"name\", \"type\": \"string\", \"unique\": true},"
    "  {\"name\": \"destination\", \"type\": \"string\"},"
    "  {\"name\": \"start_date\", \"type\": \"date\"},"
    "  {\"name\": \"end_date\", \"type\": \"date\"}],"
    TRIP_RELATIONSHIPS "},"
    CHILDREN_V2 "}]}";

static const char *const SCHEMA_V3 =
    "{\"version\": \"3.0.0\", \"entities\": ["
    "{\"name\": \"Trip\", \"attributes\": ["
    "  {\"name\": \"name\", \"type\": \"string\", \"unique\": true},"
    "  {\"name\": \"destination\", \"type\": \"string\"},"
    "  {\"name\": \"startDate\", \"type\": \"date\", \"originalName\": \"start_date\"},"
    "  {\"name\": \"endDate\", \"type\": \"date\", \"originalName\": \"end_date\"},"
    "  {\"name\": \"rating\", \"type\": \"int\", \"default\": 3}],"
    TRIP_RELATIONSHIPS "},"
    CHILDREN_V2 "}]}";

#define STAGE_1                                                                              \
    "{\"name\": \"migrateV1toV2\", \"kind\": \"custom\", \"from\": \"1.0.0\", \"to\": \"2.0.0\","     \
    " \"willMigrate\": [{\"op\": \"deduplicate\", \"entity\": \"Trip\", \"by\": [\"name\"], \"keep\": \"first\"}]}"

/* The plan up to version 2 (only stage 1) or 3 (both stages). */
static char *plan_config(int upto) {
    if (upto == 2)
        return check_strf("{\"migrationPlan\": {\"schemas\": [%s, %s], \"stages\": [" STAGE_1 "]}}",
                          SCHEMA_V1, SCHEMA_V2);
    return check_strf(
        "{\"migrationPlan\": {\"schemas\": [%s, %s, %s], \"stages\": [" STAGE_1 ","
        "{\"name\": \"migrateV2toV3\", \"kind\": \"lightweight\", \"from\": \"2.0.0\", \"to\": \"3.0.0\"}]}}",
        SCHEMA_V1, SCHEMA_V2, SCHEMA_V3);
}

/* The name of trip i: the last DUPLICATES trips repeat the name of an earlier one (each a
 * different one, which is kept: the first of each name stays). */
static long trip_name(long i, long n) {
    long originals = n - DUPLICATES;
    return i < originals ? i : ((i - originals) * 97) % originals;
}

/* The values of trip i (0-based), as inserted and as read back. */
static void trip_date(long i, int end, char out[32]) {
    time_t t = (time_t)1577836800 /* 2020-01-01 */ + (time_t)((i % 3000) + (end ? 7 + i % 11 : 0)) * 86400;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* ------------------------------------------------------------------------ */
/* Children (this program run again)                                         */
/* ------------------------------------------------------------------------ */

/* --build PATH N SAMPLES: a V1 store of N trips; writes "i id" lines for sampled trips to SAMPLES. */
static int child_build(const char *path, long n, const char *samples_path) {
    char *config = check_strf("{\"schema\": %s}", SCHEMA_V1);
    strata_container *db = check_open(config, path);
    free(config);
    strata_context *ctx = check_context(db);
    FILE *samples = fopen(samples_path, "w");
    if (samples == NULL) { perror(samples_path); return 1; }
    for (long first = 0; first < n; first += BATCH) {
        long last = first + BATCH < n ? first + BATCH : n;
        check_buf b = {0};
        check_buf_add(&b, "[");
        for (long i = first; i < last; i++) {
            char start[32], end[32];
            trip_date(i, 0, start);
            trip_date(i, 1, end);
            char *one = check_strf(
                "%s{\"name\": \"Trip %ld\", \"destination\": \"City %ld\", \"start_date\": \"%s\","
                " \"end_date\": \"%s\", \"notes\": \"note %ld\","
                " \"livingAccommodation\": {\"address\": \"%ld Main Street\", \"placeName\": \"Hotel %ld\"},"
                " \"bucketList\": [{\"title\": \"See %ld a\", \"details\": \"x\", \"hasReservation\": true},"
                " {\"title\": \"See %ld b\"}]}",
                i > first ? "," : "", trip_name(i, n), i % 997, start, end, i, i, i % 5003, i, i);
            check_buf_add(&b, one);
            free(one);
        }
        check_buf_add(&b, "]");
        char *ids = NULL;
        CHECK_STATUS(strata_insert_many(ctx, "Trip", b.s, &ids));
        free(b.s);
        CHECK_STATUS(strata_save(ctx));
        struct json_object *arr = parse_json_or_die(ids);
        CHECK(json_object_is_type(arr, json_type_array) && (long)json_object_array_length(arr) == last - first);
        for (long i = first; i < last; i++) {
            /* Sample the first, the last, a few hundred spread over the store, and the duplicates. */
            if (i == 0 || i == n - 1 || i % 997 == 42 || i >= n - DUPLICATES) {
                const char *id = json_object_get_string(json_object_array_get_idx(arr, (size_t)(i - first)));
                fprintf(samples, "%ld %s\n", i, id);
            }
        }
        json_object_put(arr);
        strata_free(ids);
    }
    fclose(samples);
    strata_context_free(ctx);
    strata_close(db);
    return 0;
}

/* --migrate PATH UPTO: open with the plan up to version UPTO (migrating), close. */
static int child_migrate(const char *path, int upto) {
    char *config = plan_config(upto);
    strata_container *db = check_open(config, path);
    free(config);
    strata_close(db);
    return 0;
}

static int64_t count_of(strata_context *ctx, const char *entity) {
    char *d = check_strf("{\"entity\": \"%s\"}", entity);
    int64_t count = -1;
    CHECK_STATUS(strata_fetch_count(ctx, d, &count));
    free(d);
    return count;
}

/* --verify PATH N SAMPLES: reopening completes the migration; counts and sampled trips are right. */
static int child_verify(const char *path, long n, const char *samples_path) {
    char *config = plan_config(3);
    strata_config *cfg = NULL;
    CHECK_STATUS(strata_config_new(config, &cfg));
    free(config);
    strata_container *db = NULL;
    if (strata_open(path, cfg, &db) != STRATA_OK) {
        fprintf(stderr, "reopening after the kill failed: %s\n", strata_last_error());
        return 1;
    }
    strata_config_free(cfg);
    strata_context *ctx = check_context(db);

    int64_t trips = count_of(ctx, "Trip"), items = count_of(ctx, "BucketListItem"),
            places = count_of(ctx, "LivingAccommodation");
    long kept = n - DUPLICATES;
    if (trips != kept || items != kept * BUCKET_ITEMS || places != kept) {
        fprintf(stderr, "rows lost or added: %lld trips (want %ld), %lld bucket-list items (want %ld),"
                " %lld accommodations (want %ld)\n", (long long)trips, kept, (long long)items,
                kept * BUCKET_ITEMS, (long long)places, kept);
        return 1;
    }

    FILE *samples = fopen(samples_path, "r");
    if (samples == NULL) { perror(samples_path); return 1; }
    long i;
    char id[64];
    int checked = 0, gone = 0;
    while (fscanf(samples, "%ld %63s", &i, id) == 2) {
        char *json = NULL;
        if (i >= kept) { /* a duplicate: removed with its children */
            if (strata_get(ctx, id, &json) != STRATA_ERR_NOT_FOUND) {
                fprintf(stderr, "%s (trip %ld, a duplicate of trip %ld) was not removed\n", id, i, trip_name(i, n));
                return 1;
            }
            gone++;
            continue;
        }
        if (strata_get(ctx, id, &json) != STRATA_OK) {
            fprintf(stderr, "%s (trip %ld) does not resolve: %s\n", id, i, strata_last_error());
            return 1;
        }
        struct json_object *trip = parse_json_or_die(json);
        char start[32], end[32];
        trip_date(i, 0, start);
        trip_date(i, 1, end);
        expect_fields(trip, "{\"name\": \"Trip %ld\", \"destination\": \"City %ld\", \"startDate\": \"%s\","
                      " \"endDate\": \"%s\", \"rating\": 3}", trip_name(i, n), i % 997, start, end);
        CHECK(check_member(trip, "start_date") == NULL && check_member(trip, "notes") == NULL);
        struct json_object *bucket = check_member(trip, "bucketList");
        CHECK(bucket != NULL && json_object_is_type(bucket, json_type_array) &&
              json_object_array_length(bucket) == BUCKET_ITEMS);
        const char *place_id = check_str_member(trip, "livingAccommodation");
        CHECK(place_id != NULL);
        char *place_json = NULL;
        CHECK_STATUS(strata_get(ctx, place_id, &place_json));
        struct json_object *place = parse_json_or_die(place_json);
        expect_fields(place, "{\"address\": \"%ld Main Street\", \"placeName\": \"Hotel %ld\", \"trip\": \"%s\"}",
                      i, i % 5003, id);
        for (size_t k = 0; k < BUCKET_ITEMS; k++) {
            const char *item_id = json_object_get_string(json_object_array_get_idx(bucket, k));
            char *item_json = NULL;
            CHECK_STATUS(strata_get(ctx, item_id, &item_json));
            struct json_object *item = parse_json_or_die(item_json);
            const char *title = check_str_member(item, "title");
            char *a = check_strf("See %ld a", i), *b = check_strf("See %ld b", i);
            CHECK(title != NULL && (strcmp(title, a) == 0 || strcmp(title, b) == 0));
            CHECK(check_member(item, "details") == NULL);
            expect_fields(item, "{\"trip\": \"%s\", \"hasReservation\": %s}", id,
                          strcmp(title, a) == 0 ? "true" : "false");
            free(a);
            free(b);
            json_object_put(item);
            strata_free(item_json);
        }
        json_object_put(place);
        strata_free(place_json);
        json_object_put(trip);
        strata_free(json);
        checked++;
    }
    fclose(samples);
    CHECK(checked >= 3 && gone == DUPLICATES);
    strata_context_free(ctx);
    strata_close(db);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Parent                                                                    */
/* ------------------------------------------------------------------------ */

static char self_exe[4096];

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rng_state;
static uint64_t rng_next(void) { /* splitmix64 */
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double rng_unit(void) { return (double)(rng_next() >> 11) / 9007199254740992.0; }

/* Starts this program with `args` (NULL-terminated); `log` (if not NULL) gets its stderr, and
 * `debug` sets STRATA_MIGRATION_DEBUG=1. */
static pid_t spawn(const char *const *args, const char *log, int debug) {
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        if (log != NULL) {
            int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (fd < 0 || dup2(fd, 2) < 0) _exit(126);
            close(fd);
        }
        if (debug) setenv("STRATA_MIGRATION_DEBUG", "1", 1);
        else unsetenv("STRATA_MIGRATION_DEBUG");
        execv(self_exe, (char *const *)args);
        _exit(127);
    }
    return pid;
}

/* Waits for a child; exits the test unless it exited with 0. */
static void expect_success(pid_t pid, const char *what) {
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "%s: child %s (status %d)\n", what,
                WIFSIGNALED(status) ? "killed by a signal" : "failed", status);
        exit(1);
    }
}

/* Runs a child to completion; returns its wall time. */
static double run_child(const char *const *args, const char *what) {
    double t0 = now_seconds();
    expect_success(spawn(args, NULL, 0), what);
    return now_seconds() - t0;
}

static void copy_file(const char *from, const char *to) {
    FILE *in = fopen(from, "rb");
    if (in == NULL) { perror(from); exit(1); }
    FILE *out = fopen(to, "wb");
    if (out == NULL) { perror(to); exit(1); }
    static char buf[1 << 20];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, in)) > 0) CHECK(fwrite(buf, 1, got, out) == got);
    CHECK(!ferror(in));
    fclose(in);
    CHECK(fclose(out) == 0);
}

/* Restores `path` as a copy of `pristine`, without side files. */
static void restore(const char *pristine, const char *path) {
    static const char *const suffixes[] = { "-wal", "-shm", "-journal" };
    for (size_t i = 0; i < 3; i++) {
        char *side = check_strf("%s%s", path, suffixes[i]);
        if (unlink(side) != 0 && errno != ENOENT) { perror(side); exit(1); }
        free(side);
    }
    copy_file(pristine, path);
}

static sqlite3 *open_raw(const char *path, int readonly) {
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(path, &db, readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE, NULL);
    if (rc != SQLITE_OK) {
        fprintf(stderr, "sqlite3_open_v2(%s): %s\n", path, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
        exit(1);
    }
    /* Closing must leave the WAL as it is: the next Strata open sees what the kill left. */
    CHECK(sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)NULL) == SQLITE_OK);
    sqlite3_busy_timeout(db, 10000);
    return db;
}

/* The first column of the first row of `sql` as a new string ("" for no row; NULL stays NULL). */
static char *query_text(sqlite3 *db, const char *sql) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "%s: %s\n", sql, sqlite3_errmsg(db));
        exit(1);
    }
    char *out = NULL;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        const unsigned char *t = sqlite3_column_text(st, 0);
        out = strdup(t ? (const char *)t : "NULL");
    } else if (rc == SQLITE_DONE) {
        out = strdup("");
    } else {
        fprintf(stderr, "%s: %s\n", sql, sqlite3_errmsg(db));
        exit(1);
    }
    sqlite3_finalize(st);
    CHECK(out != NULL);
    return out;
}

/* The stored schema version of a store (without changing its files). */
static char *stored_version(const char *path) {
    sqlite3 *db = open_raw(path, 1);
    char *v = query_text(db, "SELECT value FROM strata_metadata WHERE key = 'version'");
    sqlite3_close(db);
    return v;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++) { h ^= s[i]; h *= 1099511628211ull; }
    return h;
}

/* What the parent checks on the file: integrity, the schema objects and every row (the
   history's too: the stages' deduplications are recorded, and a resumed stage records them
   again under the same tokens). */
typedef struct {
    char *schema;        /* the tables' and indexes' SQL, sorted */
    uint64_t digest;     /* order-independent digest of every row of every table */
    long long rows;
} store_facts;

static store_facts inspect(const char *path, int readonly) {
    sqlite3 *db = open_raw(path, readonly);
    char *ok = query_text(db, "PRAGMA integrity_check");
    if (strcmp(ok, "ok") != 0) {
        fprintf(stderr, "PRAGMA integrity_check on %s: %s\n", path, ok);
        exit(1);
    }
    free(ok);
    store_facts f = { NULL, 0, 0 };
    f.schema = query_text(db, "SELECT group_concat(type || ' ' || name || ': ' || coalesce(sql, ''), char(10))"
                              " FROM (SELECT * FROM sqlite_schema ORDER BY type, name)");
    sqlite3_stmt *tables = NULL;
    CHECK(sqlite3_prepare_v2(db, "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
                                 " ORDER BY name", -1, &tables, NULL) == SQLITE_OK);
    while (sqlite3_step(tables) == SQLITE_ROW) {
        const char *table = (const char *)sqlite3_column_text(tables, 0);
        char *sql = check_strf("SELECT * FROM \"%s\"", table);
        sqlite3_stmt *rows = NULL;
        CHECK(sqlite3_prepare_v2(db, sql, -1, &rows, NULL) == SQLITE_OK);
        uint64_t table_hash = fnv(1469598103934665603ull, table, strlen(table));
        int rc;
        while ((rc = sqlite3_step(rows)) == SQLITE_ROW) {
            uint64_t h = table_hash;
            for (int c = 0; c < sqlite3_column_count(rows); c++) {
                /* When a history transaction was recorded (the clock) and by which container
                   instance (a random origin) differ from run to run; the rest must not. */
                const char *column = sqlite3_column_name(rows, c);
                if (strcmp(table, "strata_history_transaction") == 0
                    && (strcmp(column, "timestamp") == 0 || strcmp(column, "origin") == 0)) continue;
                int type = sqlite3_column_type(rows, c);
                h = fnv(h, &type, sizeof type);
                const void *bytes = type == SQLITE_BLOB ? sqlite3_column_blob(rows, c) : sqlite3_column_text(rows, c);
                h = fnv(h, bytes ? bytes : "", (size_t)sqlite3_column_bytes(rows, c));
            }
            f.digest += h * 0x9E3779B97F4A7C15ull + (h >> 29);
            f.rows++;
        }
        CHECK(rc == SQLITE_DONE);
        sqlite3_finalize(rows);
        free(sql);
    }
    sqlite3_finalize(tables);
    CHECK(sqlite3_close(db) == SQLITE_OK);
    return f;
}

static void expect_same(const store_facts *got, const store_facts *want, const char *what) {
    if (strcmp(got->schema, want->schema) != 0) {
        fprintf(stderr, "%s: the tables and indexes differ:\n%s\n--- expected:\n%s\n", what, got->schema, want->schema);
        exit(1);
    }
    if (got->rows != want->rows || got->digest != want->digest) {
        fprintf(stderr, "%s: the rows differ: %lld rows (expected %lld), digest %016llx (expected %016llx)\n",
                what, got->rows, want->rows, (unsigned long long)got->digest, (unsigned long long)want->digest);
        exit(1);
    }
}

/* Where the kill landed, from the child's migration log and the stored version. */
enum { BEFORE, IN_STAGE1, IN_STAGE2, COMMITTED, EXITED, WHERE_COUNT };
static const char *const where_names[WHERE_COUNT] = {
    "before stage 1's storage change (opening, willMigrate)", "in stage migrateV1toV2's storage change",
    "in stage migrateV2toV3", "after the last stage committed (process still running)", "after the child exited"
};

static int classify(const char *log, const char *path) {
    FILE *f = fopen(log, "r");
    int stage = 0;
    if (f != NULL) {
        char line[4096];
        while (fgets(line, sizeof line, f) != NULL) {
            if (strstr(line, "[strata migration] migrateV1toV2:") != NULL) stage = 1;
            if (strstr(line, "[strata migration] migrateV2toV3:") != NULL) stage = 2;
        }
        fclose(f);
    }
    char *version = stored_version(path);
    int where;
    if (strcmp(version, "3.0.0") == 0) where = COMMITTED;
    else if (stage == 0) where = BEFORE;
    else where = strcmp(version, "2.0.0") == 0 ? IN_STAGE2 : IN_STAGE1;
    if (where == IN_STAGE1 && stage == 2) {
        fprintf(stderr, "stage migrateV2toV3 began but the store holds version %s\n", version);
        exit(1);
    }
    free(version);
    return where;
}

/* Starts a migrating child and kills it after `delay` seconds (unless it is done first). */
static int migrate_and_kill(const char *path, const char *log, double delay) {
    const char *args[] = { self_exe, "--migrate", path, "3", NULL };
    double t0 = now_seconds();
    pid_t pid = spawn(args, log, 1);
    for (;;) {
        int status = 0;
        pid_t got = waitpid(pid, &status, WNOHANG);
        CHECK(got >= 0);
        if (got == pid) {
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                fprintf(stderr, "an unkilled migrating child failed (status %d); its log %s:\n", status, log);
                char *text = check_read_file(log);
                fprintf(stderr, "%.4000s\n", text);
                free(text);
                exit(1);
            }
            return EXITED;
        }
        if (now_seconds() - t0 >= delay) break;
        struct timespec ts = { 0, 500000 };
        nanosleep(&ts, NULL);
    }
    CHECK(kill(pid, SIGKILL) == 0);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    if (WIFEXITED(status)) {
        CHECK(WEXITSTATUS(status) == 0); /* it finished between the last poll and the kill */
        return EXITED;
    }
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    return classify(log, path);
}

/* The three states a kill may leave (index: version), set by main. */
static store_facts *stage_states;

/* Right after a kill, read-only: the store is intact and exactly at the stage boundary its version names. */
static void check_stage_boundary(const char *path) {
    char *version = stored_version(path);
    int k = strcmp(version, "1.0.0") == 0 ? 1
          : strcmp(version, "2.0.0") == 0 ? 2
          : strcmp(version, "3.0.0") == 0 ? 3 : 0;
    if (k == 0) {
        fprintf(stderr, "\nafter the kill the store holds version '%s'\n", version);
        exit(1);
    }
    store_facts f = inspect(path, 1);
    char *what = check_strf("\nright after the kill (stored version %s)", version);
    expect_same(&f, &stage_states[k], what);
    free(what);
    free(f.schema);
    free(version);
}

static long env_long(const char *name, long fallback) {
    const char *v = getenv(name);
    if (v == NULL || *v == '\0') return fallback;
    char *end = NULL;
    long n = strtol(v, &end, 10);
    if (*end != '\0' || n <= 0) { fprintf(stderr, "%s must be a positive integer\n", name); exit(1); }
    return n;
}

int main(int argc, char **argv) {
    if (argc >= 3 && strcmp(argv[1], "--build") == 0 && argc == 5) return child_build(argv[2], atol(argv[3]), argv[4]);
    if (argc == 4 && strcmp(argv[1], "--migrate") == 0) return child_migrate(argv[2], atoi(argv[3]));
    if (argc == 5 && strcmp(argv[1], "--verify") == 0) return child_verify(argv[2], atol(argv[3]), argv[4]);
    if (argc != 1) { fprintf(stderr, "usage: %s\n", argv[0]); return 2; }

    ssize_t len = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
    CHECK(len > 0);
    self_exe[len] = '\0';

    long runs = env_long("STRATA_CRASH_RUNS", 20);
    long trips = env_long("STRATA_CRASH_TRIPS", 200000);
    uint64_t seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 16);
    const char *seed_text = getenv("STRATA_CRASH_SEED");
    if (seed_text != NULL && *seed_text != '\0') seed = strtoull(seed_text, NULL, 10);
    rng_state = seed;
    printf("test_migration_crash: seed %llu (STRATA_CRASH_SEED), %ld runs, %ld trips\n",
           (unsigned long long)seed, runs, trips);

    char *pristine = test_store_path("v1.store");
    char *path = test_store_path("crash.store");
    char *samples = test_store_path("samples.txt");
    char *log = test_store_path("migrate.log");
    char trips_text[32];
    snprintf(trips_text, sizeof trips_text, "%ld", trips);
    double t_start = now_seconds();

    /* The V1 store, closed cleanly: the file alone is the store. */
    const char *build[] = { self_exe, "--build", pristine, trips_text, samples, NULL };
    double t_build = run_child(build, "building the V1 store");
    char *wal = check_strf("%s-wal", pristine);
    struct stat st;
    CHECK(stat(wal, &st) != 0 || st.st_size == 0);
    free(wal);
    CHECK(stat(pristine, &st) == 0);
    printf("  V1 store: %ld trips, %ld objects, %.1f MB, built in %.1f s\n", trips,
           trips * (2 + BUCKET_ITEMS), (double)st.st_size / 1e6, t_build);

    /* The states a kill may leave: V1 as built, and V2 and V3 as uninterrupted migrations leave them. */
    store_facts at[4];
    at[1] = inspect(pristine, 1);
    restore(pristine, path);
    const char *migrate_v2[] = { self_exe, "--migrate", path, "2", NULL };
    run_child(migrate_v2, "migrating to V2 without interruption");
    at[2] = inspect(path, 0);
    char *v = stored_version(path);
    CHECK_STR_EQ(v, "2.0.0");
    free(v);
    /* The reference: an uninterrupted migration, timed. */
    restore(pristine, path);
    const char *migrate[] = { self_exe, "--migrate", path, "3", NULL };
    double t_migrate = run_child(migrate, "migrating without interruption");
    const char *verify[] = { self_exe, "--verify", path, trips_text, samples, NULL };
    run_child(verify, "verifying the uninterrupted migration");
    at[3] = inspect(path, 0);
    store_facts reference = at[3];
    v = stored_version(path);
    CHECK_STR_EQ(v, "3.0.0");
    free(v);
    printf("  uninterrupted migration V1 -> V3: %.2f s (child process, open to close); %lld rows at V1,"
           " %lld at V2, %lld at V3\n", t_migrate, at[1].rows, at[2].rows, reference.rows);
    CHECK(at[1].digest != at[2].digest && at[2].digest != at[3].digest);

    stage_states = at;
    int landed[WHERE_COUNT] = {0}, second_kills = 0;
    double t_runs = now_seconds();
    /* Runs go on (at most 20 more) until at least one kill landed mid-migration. */
    long run = 0;
    for (; run < runs || (landed[IN_STAGE1] + landed[IN_STAGE2] == 0 && run < runs + 20); run++) {
        restore(pristine, path);
        double delay = rng_unit() * 1.2 * t_migrate;
        int where = migrate_and_kill(path, log, delay);
        landed[where]++;
        printf("  run %2ld: kill at %.3f s: %s", run + 1, delay, where_names[where]);
        fflush(stdout);
        check_stage_boundary(path);
        /* Every third run, kill the resuming migration too. */
        if (run % 3 == 2 && where != EXITED && where != COMMITTED) {
            double again = rng_unit() * 1.2 * t_migrate;
            int where2 = migrate_and_kill(path, log, again);
            second_kills++;
            printf("; resumed, killed again at %.3f s: %s", again, where_names[where2]);
            fflush(stdout);
            check_stage_boundary(path);
        }
        printf("\n");
        run_child(verify, "reopening after the kill");
        store_facts f = inspect(path, 0);
        expect_same(&f, &reference, "after the reopen, against the uninterrupted migration");
        free(f.schema);
    }

    int mid = landed[IN_STAGE1] + landed[IN_STAGE2];
    printf("test_migration_crash: %ld runs (+%d second kills) in %.0f s (%.0f s in all): killed %d x before"
           " stage 1's storage change (opening or willMigrate), %d x mid-migration (%d in V1->V2, %d in V2->V3),"
           " %d x after its commit, %d x after exit; seed %llu\n",
           run, second_kills, now_seconds() - t_runs, now_seconds() - t_start, landed[BEFORE], mid,
           landed[IN_STAGE1], landed[IN_STAGE2], landed[COMMITTED], landed[EXITED], (unsigned long long)seed);
    CHECK(mid > 0);
    for (int k = 1; k <= 3; k++) free(at[k].schema);
    free(pristine);
    free(path);
    free(samples);
    free(log);
    return 0;
}
