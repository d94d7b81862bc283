/*
 * raw_side.c — bench_raw: each workload written by hand against SQLite's C API, on the
 * store Strata built (its tables: benchmarks/bench/README.md), writing JSON text straight
 * from the rows into one growing buffer, in the shape Strata returns (docs/JSON.md):
 * prepared statements re-bound, a prepared child statement re-bound per owner for related
 * objects. It does not link libstrata. What it shares with bench_raw_pg (the JSON text,
 * the trips JSON read for insert, the command line and the output): raw_common.h.
 *
 *   bench_raw WORKLOAD STORE N JSON [OUT]      as bench_strata
 */
#define _POSIX_C_SOURCE 200809L
#include <sqlite3.h>

static const char *const PROG = "bench_raw";
#include "raw_common.h"

static sqlite3 *db;

static void sql_fail(const char *what) { bench_die(PROG, "%s failed: %s", what, sqlite3_errmsg(db)); }

static sqlite3_stmt *prepare(const char *sql) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) sql_fail(sql);
    return st;
}

static void exec(const char *sql) {
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) sql_fail(sql);
}

/* ---- a row's values ------------------------------------------------------------ */

static raw_text text_col(sqlite3_stmt *st, int col) {
    raw_text t = {NULL, 0};
    if (sqlite3_column_type(st, col) == SQLITE_NULL) return t;
    t.p = (const char *)sqlite3_column_text(st, col);
    t.n = (size_t)sqlite3_column_bytes(st, col);
    return t;
}

static raw_real real_col(sqlite3_stmt *st, int col) {
    raw_real r = {0, sqlite3_column_type(st, col) == SQLITE_NULL};
    if (!r.null) r.v = sqlite3_column_double(st, col);
    return r;
}

static int flag_col(sqlite3_stmt *st, int col) {
    return sqlite3_column_type(st, col) == SQLITE_NULL ? RAW_NULL : sqlite3_column_int(st, col) != 0;
}

/* Columns 0 (_pk) and 1 (_entity). */
static raw_identity identity_col(sqlite3_stmt *st) {
    raw_identity o = {(long long)sqlite3_column_int64(st, 0), (const char *)sqlite3_column_text(st, 1), 0};
    o.entity_n = (size_t)sqlite3_column_bytes(st, 1);
    return o;
}

#define TRIP_COLUMNS "t._pk, t._entity, t.\"name\", t.\"destination\", t.\"startDate\", t.\"endDate\", " \
                     "t.\"photo\", t.\"perdiem\", t.\"reason\""

/* A row of TRIP_COLUMNS. */
static raw_trip trip_row(sqlite3_stmt *st) {
    raw_trip t;
    t.id = identity_col(st);
    t.name = text_col(st, 2);
    t.destination = text_col(st, 3);
    t.start = real_col(st, 4);
    t.end = real_col(st, 5);
    t.photo_null = sqlite3_column_type(st, 6) == SQLITE_NULL;
    t.perdiem = real_col(st, 7);
    t.reason = text_col(st, 8);
    return t;
}

typedef enum { REL_IDS, REL_OBJECTS, REL_NONE } rel_mode;

typedef struct {
    sqlite3_stmt *bucket_ids, *living_id, *bucket_objects, *living_object;
} children_t;

static children_t children;

static void prepare_children(void) {
    children.bucket_ids = prepare("SELECT _pk FROM \"BucketListItem\" WHERE \"trip\" = ?1 ORDER BY _pk");
    children.living_id = prepare("SELECT _pk FROM \"LivingAccommodation\" WHERE \"trip\" = ?1 ORDER BY _pk LIMIT 1");
    children.bucket_objects = prepare("SELECT _pk, _entity, \"title\", \"details\", \"hasReservation\", \"isInPlan\""
                                      " FROM \"BucketListItem\" WHERE \"trip\" = ?1 ORDER BY _pk");
    children.living_object = prepare("SELECT _pk, _entity, \"address\", \"placeName\""
                                     " FROM \"LivingAccommodation\" WHERE \"trip\" = ?1 ORDER BY _pk LIMIT 1");
}

static void finalize_children(void) {
    sqlite3_finalize(children.bucket_ids);
    sqlite3_finalize(children.living_id);
    sqlite3_finalize(children.bucket_objects);
    sqlite3_finalize(children.living_object);
}

/* One trip object from a row of TRIP_COLUMNS, with its relationships as mode says. */
static void put_trip(buf_t *b, sqlite3_stmt *st, rel_mode mode) {
    char id[96];
    raw_trip t = trip_row(st);
    raw_put_trip_attributes(b, &t, id, sizeof id);
    sqlite3_int64 pk = t.id.pk;
    if (mode == REL_IDS) {
        sqlite3_stmt *c = children.bucket_ids;
        sqlite3_bind_int64(c, 1, pk);
        BUF_LIT(b, ",\"bucketList\":[");
        for (int first = 1; sqlite3_step(c) == SQLITE_ROW; first = 0) {
            if (!first) buf_putc(b, ',');
            raw_put_ref(b, "BucketListItem/", (long long)sqlite3_column_int64(c, 0));
        }
        sqlite3_reset(c);
        buf_putc(b, ']');
        c = children.living_id;
        sqlite3_bind_int64(c, 1, pk);
        int found = sqlite3_step(c) == SQLITE_ROW;
        raw_put_living_ref_end(b, found, found ? (long long)sqlite3_column_int64(c, 0) : 0);
        sqlite3_reset(c);
    } else if (mode == REL_OBJECTS) {
        sqlite3_stmt *c = children.living_object;
        sqlite3_bind_int64(c, 1, pk);
        BUF_LIT(b, ",\"livingAccommodation\":");
        if (sqlite3_step(c) == SQLITE_ROW) {
            raw_living l = {identity_col(c), text_col(c, 2), text_col(c, 3)};
            raw_put_living(b, &l, id);
        } else {
            BUF_LIT(b, "null");
        }
        sqlite3_reset(c);
        c = children.bucket_objects;
        sqlite3_bind_int64(c, 1, pk);
        BUF_LIT(b, ",\"bucketList\":[");
        for (int first = 1; sqlite3_step(c) == SQLITE_ROW; first = 0) {
            if (!first) buf_putc(b, ',');
            raw_bucket x = {identity_col(c), text_col(c, 2), text_col(c, 3), flag_col(c, 4), flag_col(c, 5)};
            raw_put_bucket(b, &x, id);
        }
        sqlite3_reset(c);
        BUF_LIT(b, "]}");
    } else {
        buf_putc(b, '}');
    }
}

/* Every row of st as a JSON array of trips. */
static void put_trips(buf_t *b, sqlite3_stmt *st, rel_mode mode) {
    buf_putc(b, '[');
    int first = 1, rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (!first) buf_putc(b, ',');
        first = 0;
        put_trip(b, st, mode);
    }
    if (rc != SQLITE_DONE) sql_fail("step");
    sqlite3_reset(st);
    buf_putc(b, ']');
}

/* ---- insert ------------------------------------------------------------------ */

/* The tables and indexes Strata creates for examples/trips/schema.json. */
static const char *const DDL =
    "CREATE TABLE \"Trip\" (\"_pk\" INTEGER PRIMARY KEY, \"_entity\" TEXT NOT NULL, \"name\" TEXT,"
    " \"destination\" TEXT, \"startDate\" REAL, \"endDate\" REAL, \"photo\" BLOB, \"perdiem\" REAL, \"reason\" TEXT);"
    "CREATE INDEX \"Trip.index(_entity)\" ON \"Trip\" (\"_entity\");"
    "CREATE UNIQUE INDEX \"Trip.unique(name,startDate,endDate)\" ON \"Trip\" (\"name\", \"startDate\", \"endDate\");"
    "CREATE INDEX \"Trip.index(name)\" ON \"Trip\" (\"name\");"
    "CREATE INDEX \"Trip.index(startDate)\" ON \"Trip\" (\"startDate\");"
    "CREATE INDEX \"Trip.index(endDate)\" ON \"Trip\" (\"endDate\");"
    "CREATE TABLE \"BucketListItem\" (\"_pk\" INTEGER PRIMARY KEY, \"_entity\" TEXT NOT NULL, \"title\" TEXT,"
    " \"details\" TEXT, \"hasReservation\" INTEGER, \"isInPlan\" INTEGER, \"trip\" INTEGER);"
    "CREATE INDEX \"BucketListItem.fk(trip)\" ON \"BucketListItem\" (\"trip\");"
    "CREATE VIRTUAL TABLE \"BucketListItem.search(title)\" USING fts5(tokens, tokenize = 'ascii');"
    "CREATE TABLE \"LivingAccommodation\" (\"_pk\" INTEGER PRIMARY KEY, \"_entity\" TEXT NOT NULL,"
    " \"address\" TEXT, \"placeName\" TEXT, \"trip\" INTEGER);"
    "CREATE INDEX \"LivingAccommodation.fk(trip)\" ON \"LivingAccommodation\" (\"trip\");";

static void bind_text(sqlite3_stmt *st, int i, const char *s) {
    if (s) sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
    else sqlite3_bind_null(st, i);
}

static void step_done(sqlite3_stmt *st, const char *what) {
    if (sqlite3_step(st) != SQLITE_DONE) sql_fail(what);
    sqlite3_reset(st);
}

/* Prepared INSERTs in one transaction, the owners' keys from last_insert_rowid(). */
static void insert_rows(json_object *root) {
    sqlite3_stmt *trip = prepare("INSERT INTO \"Trip\" (_entity, \"name\", \"destination\", \"startDate\", \"endDate\","
                                 " \"perdiem\", \"reason\") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
    sqlite3_stmt *living = prepare("INSERT INTO \"LivingAccommodation\" (_entity, \"address\", \"placeName\", \"trip\")"
                                   " VALUES ('LivingAccommodation', ?1, ?2, ?3)");
    sqlite3_stmt *bucket = prepare("INSERT INTO \"BucketListItem\" (_entity, \"title\", \"details\", \"hasReservation\","
                                   " \"isInPlan\", \"trip\") VALUES ('BucketListItem', ?1, ?2, ?3, ?4, ?5)");
    /* The titles are ASCII words: FTS5's ascii tokenizer splits and lowercases them as Strata's tokenizer does. */
    sqlite3_stmt *search = prepare("INSERT INTO \"BucketListItem.search(title)\" (rowid, tokens) VALUES (?1, ?2)");
    exec("BEGIN");
    size_t n = json_object_array_length(root);
    for (size_t i = 0; i < n; i++) {
        json_object *t = json_object_array_get_idx(root, i), *list = NULL;
        raw_trip_values tv = raw_trip_of(t);
        bind_text(trip, 1, tv.entity);
        bind_text(trip, 2, tv.name);
        bind_text(trip, 3, tv.destination);
        sqlite3_bind_double(trip, 4, tv.start);
        sqlite3_bind_double(trip, 5, tv.end);
        if (tv.has_perdiem) sqlite3_bind_double(trip, 6, tv.perdiem);
        else sqlite3_bind_null(trip, 6);
        bind_text(trip, 7, tv.reason);
        step_done(trip, "INSERT Trip");
        sqlite3_int64 pk = sqlite3_last_insert_rowid(db);
        raw_living_values lv;
        if (raw_living_of(t, &lv)) {
            bind_text(living, 1, lv.address);
            bind_text(living, 2, lv.place_name);
            sqlite3_bind_int64(living, 3, pk);
            step_done(living, "INSERT LivingAccommodation");
        }
        size_t m = raw_bucket_count(t, &list);
        for (size_t k = 0; k < m; k++) {
            raw_bucket_values bv = raw_bucket_of(list, k);
            bind_text(bucket, 1, bv.title);
            bind_text(bucket, 2, bv.details);
            sqlite3_bind_int(bucket, 3, bv.has_reservation);
            sqlite3_bind_int(bucket, 4, bv.is_in_plan);
            sqlite3_bind_int64(bucket, 5, pk);
            step_done(bucket, "INSERT BucketListItem");
            sqlite3_bind_int64(search, 1, sqlite3_last_insert_rowid(db));
            bind_text(search, 2, bv.title);
            step_done(search, "INSERT BucketListItem.search(title)");
        }
    }
    exec("COMMIT");
    sqlite3_finalize(trip);
    sqlite3_finalize(living);
    sqlite3_finalize(bucket);
    sqlite3_finalize(search);
}

/* ---- main ---------------------------------------------------------------------- */

static void remove_store(const char *path) {
    static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
    char name[4096];
    for (size_t k = 0; k < sizeof suffixes / sizeof suffixes[0]; k++) {
        snprintf(name, sizeof name, "%s%s", path, suffixes[k]);
        remove(name);
    }
}

int main(int argc, char **argv) {
    raw_args a = raw_args_of(argc, argv, "WORKLOAD STORE N JSON [OUT]");
    const char *workload = a.workload;
    raw_output out = {a.out_path, {0}, {0}, 1};
    buf_t *b = &out.one;
    double t0, t1;

    if (strcmp(workload, "insert") == 0) {
        remove_store(a.target);
        if (sqlite3_open(a.target, &db) != SQLITE_OK) sql_fail("sqlite3_open");
        exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL");
        exec(DDL);
        double seconds = raw_timed_insert(a.json_path, insert_rows);
        sqlite3_close(db);
        bench_report(seconds);
        return 0;
    }

    t0 = bench_now();
    if (sqlite3_open(a.target, &db) != SQLITE_OK) sql_fail("sqlite3_open");
    exec("PRAGMA synchronous=FULL");
    /* As on Strata's side, the clock runs from an open store (the open workload: the whole process). */
    t0 = bench_now();
    prepare_children();
    if (strcmp(workload, "open") == 0) {
        sqlite3_stmt *st = prepare("SELECT " TRIP_COLUMNS " FROM \"Trip\" t ORDER BY t._pk LIMIT 1");
        put_trips(b, st, REL_IDS);
        sqlite3_finalize(st);
        t1 = bench_now();
    } else if (strcmp(workload, "contains") == 0 || strcmp(workload, "all") == 0 ||
               strcmp(workload, "prefetch") == 0) {
        int contains = strcmp(workload, "contains") == 0;
        sqlite3_stmt *st = prepare(contains ? "SELECT " TRIP_COLUMNS " FROM \"Trip\" t WHERE t.\"name\" LIKE ?1"
                                              " ORDER BY t.\"name\" COLLATE NOCASE, t._pk"
                                            : "SELECT " TRIP_COLUMNS " FROM \"Trip\" t ORDER BY t._pk");
        if (contains) sqlite3_bind_text(st, 1, "%a%", -1, SQLITE_STATIC);
        put_trips(b, st, strcmp(workload, "prefetch") == 0 ? REL_OBJECTS : REL_IDS);
        t1 = bench_now();
        sqlite3_finalize(st);
    } else if (strcmp(workload, "properties") == 0) {
        sqlite3_stmt *st = prepare("SELECT _pk, _entity, \"name\" FROM \"Trip\" ORDER BY _pk");
        buf_putc(b, '[');
        for (int first = 1; sqlite3_step(st) == SQLITE_ROW; first = 0) {
            if (!first) buf_putc(b, ',');
            raw_identity o = identity_col(st);
            raw_put_named(b, &o, text_col(st, 2));
        }
        buf_putc(b, ']');
        sqlite3_finalize(st);
        t1 = bench_now();
    } else if (strcmp(workload, "aggregate") == 0) {
        /* One statement: the groups, each trip's items counted through the index on their trip. */
        sqlite3_stmt *st = prepare("SELECT t.\"destination\", count(*),"
                                   " sum((SELECT count(*) FROM \"BucketListItem\" b WHERE b.\"trip\" = t._pk)),"
                                   " min(t.\"startDate\") FROM \"Trip\" t GROUP BY t.\"destination\""
                                   " ORDER BY t.\"destination\" COLLATE NOCASE, t.\"destination\"");
        buf_putc(b, '[');
        for (int first = 1; sqlite3_step(st) == SQLITE_ROW; first = 0) {
            buf_puts(b, first ? "{\"destination\":" : ",{\"destination\":");
            raw_put_text(b, text_col(st, 0));
            BUF_LIT(b, ",\"trips\":");
            buf_i64(b, sqlite3_column_int64(st, 1));
            BUF_LIT(b, ",\"items\":");
            buf_i64(b, sqlite3_column_int64(st, 2));
            BUF_LIT(b, ",\"firstDay\":");
            raw_put_date(b, real_col(st, 3));
            buf_putc(b, '}');
        }
        buf_putc(b, ']');
        sqlite3_finalize(st);
        t1 = bench_now();
    } else if (strcmp(workload, "search-fetch") == 0) {
        /* The items the FTS5 table gives, read by key, each written as Strata writes it. */
        sqlite3_stmt *st = prepare("SELECT b._pk, b._entity, b.\"title\", b.\"details\", b.\"hasReservation\", b.\"isInPlan\","
                                   " (SELECT t._entity || '/' || t._pk FROM \"Trip\" t WHERE t._pk = b.\"trip\")"
                                   " FROM \"BucketListItem\" b WHERE b._pk IN (SELECT rowid FROM \"BucketListItem.search(title)\""
                                   " WHERE \"BucketListItem.search(title)\" MATCH ?1) ORDER BY b._pk");
        sqlite3_bind_text(st, 1, BENCH_SEARCH_FTS, -1, SQLITE_STATIC);
        buf_putc(b, '[');
        for (int first = 1; sqlite3_step(st) == SQLITE_ROW; first = 0) {
            if (!first) buf_putc(b, ',');
            raw_bucket x = {identity_col(st), text_col(st, 2), text_col(st, 3), flag_col(st, 4), flag_col(st, 5)};
            raw_put_bucket(b, &x, (const char *)sqlite3_column_text(st, 6));
        }
        buf_putc(b, ']');
        sqlite3_finalize(st);
        t1 = bench_now();
    } else if (strcmp(workload, "search") == 0) {
        /* The full-text table Strata keeps for the searchable title, read with FTS5's MATCH. */
        sqlite3_stmt *st = prepare("SELECT count(*) FROM \"BucketListItem.search(title)\" WHERE \"BucketListItem.search(title)\" MATCH ?1");
        sqlite3_bind_text(st, 1, BENCH_SEARCH_FTS, -1, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_ROW) sql_fail("search");
        long long count = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        t1 = bench_now();
        buf_i64(b, count);
    } else if (strcmp(workload, "count-ci") == 0 || strcmp(workload, "count-cs") == 0) {
        int ci = strcmp(workload, "count-ci") == 0;
        sqlite3_stmt *st = prepare(ci ? "SELECT count(*) FROM \"Trip\" WHERE \"name\" LIKE ?1"
                                      : "SELECT count(*) FROM \"Trip\" WHERE instr(\"name\", ?1) > 0");
        sqlite3_bind_text(st, 1, ci ? "%a%" : "a", -1, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_ROW) sql_fail("count");
        long long count = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        t1 = bench_now();
        buf_i64(b, count);
    } else if (strcmp(workload, "update_where") == 0) {
        exec("BEGIN");
        sqlite3_stmt *st = prepare("UPDATE \"Trip\" SET \"destination\" = ?1 WHERE \"startDate\" < ?2");
        sqlite3_bind_text(st, 1, BENCH_UPDATE_DESTINATION, -1, SQLITE_STATIC);
        sqlite3_bind_double(st, 2, (double)bench_update_before(a.trips));
        if (sqlite3_step(st) != SQLITE_DONE) sql_fail("update");
        long long count = sqlite3_changes(db);
        sqlite3_finalize(st);
        exec("COMMIT");
        t1 = bench_now();
        buf_i64(b, count);
    } else if (strcmp(workload, "widget") == 0 || strcmp(workload, "widget-fetch") == 0) {
        raw_collect_begin(&out);
        sqlite3_stmt *st = prepare("SELECT " TRIP_COLUMNS " FROM \"Trip\" t WHERE t.\"startDate\" >= ?1"
                                   " ORDER BY t.\"startDate\", t._pk LIMIT 1");
        for (long k = 0; k < BENCH_WIDGET_CALLS; k++) {
            b->n = 0;
            sqlite3_bind_double(st, 1, (double)bench_widget_now(k, a.trips));
            put_trips(b, st, REL_IDS);
            raw_collect(&out);
        }
        sqlite3_finalize(st);
        t1 = bench_now();
        raw_collect_end(&out);
    } else if (strcmp(workload, "cursor") == 0) {
        raw_collect_begin(&out);
        sqlite3_stmt *st = prepare("SELECT " TRIP_COLUMNS " FROM \"Trip\" t ORDER BY t._pk");
        int rc = SQLITE_ROW;
        while (rc == SQLITE_ROW) {
            b->n = 0;
            buf_putc(b, '[');
            int rows = 0;
            while (rows < BENCH_CURSOR_BATCH && (rc = sqlite3_step(st)) == SQLITE_ROW) {
                if (rows) buf_putc(b, ',');
                put_trip(b, st, REL_IDS);
                rows++;
            }
            if (rc != SQLITE_ROW && rc != SQLITE_DONE) sql_fail("step");
            buf_putc(b, ']');
            if (rows) raw_collect(&out); /* the batch goes to the caller; here to the check's output */
        }
        sqlite3_finalize(st);
        t1 = bench_now();
        raw_collect_end(&out);
    } else {
        bench_die(PROG, "unknown workload '%s'", workload);
    }
    finalize_children();
    sqlite3_close(db);
    raw_finish(&out, t1 - t0);
    return 0;
}
