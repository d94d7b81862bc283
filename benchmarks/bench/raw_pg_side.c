/*
 * raw_pg_side.c — bench_raw_pg: each workload written by hand against PostgreSQL with libpq,
 * on the tables Strata's PostgreSQL store made (benchmarks/bench/README.md), writing JSON text
 * straight from the rows into one growing buffer, in the shape Strata returns (docs/JSON.md),
 * as bench_raw does on SQLite. What a competent libpq programmer writes: statements prepared
 * once (PQprepare, PQexecPrepared) with binary parameters, binary results, one statement per
 * read where SQL can say it (the relationship identifiers as correlated subqueries), related
 * objects merged from one query per relationship, a server-side cursor for batches, and the
 * insert in one transaction (INSERTs, or COPY). It sorts as Strata's PostgreSQL store does
 * (ascending attributes NULLS FIRST, then _pk) on tables with Strata's indexes (NULLS FIRST).
 * It does not link libstrata. What it shares with bench_raw (the JSON text, the trips JSON
 * read for insert, the command line and the output): raw_common.h.
 *
 *   bench_raw_pg WORKLOAD URI N JSON [OUT]   as bench_raw; URI's search_path names the schema
 *                                            (options=-csearch_path%3D<schema>). WORKLOAD
 *                                            insert-copy is the insert through COPY.
 *   bench_raw_pg reset URI SCHEMA            drop SCHEMA (cascade) if it exists, create it empty
 *   bench_raw_pg drop URI SCHEMA             drop SCHEMA (cascade) if it exists
 *   bench_raw_pg vacuum URI                  VACUUM (ANALYZE) the three tables of URI's schema
 *   bench_raw_pg dump URI OUT                every row of the three tables as text, in _pk order
 *                                            (the driver's check of insert)
 *   bench_raw_pg version URI OUT             the server's and libpq's versions
 */
#define _DEFAULT_SOURCE
#include <endian.h>
#include <libpq-fe.h>

static const char *const PROG = "bench_raw_pg";
#include "raw_common.h"

static PGconn *conn;

enum { INT8_OID = 20, TEXT_OID = 25, FLOAT8_OID = 701 };

static void pg_fail(const char *what) { bench_die(PROG, "%s failed: %s", what, PQerrorMessage(conn)); }

static void connect_to(const char *uri) {
    conn = PQconnectdb(uri);
    if (conn == NULL || PQstatus(conn) != CONNECTION_OK) pg_fail("connecting to the server");
}

static PGresult *checked(PGresult *r, ExecStatusType want, const char *what) {
    if (PQresultStatus(r) != want) {
        fprintf(stderr, "%s: %s: %s", PROG, what, PQresultErrorMessage(r));
        PQclear(r);
        bench_die(PROG, "%s failed", what);
    }
    return r;
}

static void exec(const char *sql) { PQclear(checked(PQexec(conn, sql), PGRES_COMMAND_OK, sql)); }

static void prepare(const char *name, const char *sql, int nparams, const Oid *types) {
    PQclear(checked(PQprepare(conn, name, sql, nparams, types), PGRES_COMMAND_OK, sql));
}

/* One statement without parameters, its rows in binary. */
static PGresult *query(const char *sql) {
    return checked(PQexecParams(conn, sql, 0, NULL, NULL, NULL, NULL, 1), PGRES_TUPLES_OK, sql);
}

/* Binary values: integers and doubles in network order. */
static inline int64_t get_i64(const PGresult *r, int row, int col) {
    uint64_t v;
    memcpy(&v, PQgetvalue(r, row, col), 8);
    return (int64_t)be64toh(v);
}
static inline double get_f64(const PGresult *r, int row, int col) {
    uint64_t v;
    memcpy(&v, PQgetvalue(r, row, col), 8);
    v = be64toh(v);
    double d;
    memcpy(&d, &v, 8);
    return d;
}
static inline uint32_t get_u32(const char *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return be32toh(v);
}
static inline void set_i64(char *slot, int64_t v) {
    uint64_t be = htobe64((uint64_t)v);
    memcpy(slot, &be, 8);
}
static inline void set_f64(char *slot, double d) {
    uint64_t v;
    memcpy(&v, &d, 8);
    set_i64(slot, (int64_t)v);
}

/* ---- a row's values ------------------------------------------------------------ */

static raw_text text_col(const PGresult *r, int row, int col) {
    raw_text t = {NULL, 0};
    if (PQgetisnull(r, row, col)) return t;
    t.p = PQgetvalue(r, row, col);
    t.n = (size_t)PQgetlength(r, row, col);
    return t;
}

static raw_real real_col(const PGresult *r, int row, int col) {
    raw_real d = {0, PQgetisnull(r, row, col)};
    if (!d.null) d.v = get_f64(r, row, col);
    return d;
}

static int flag_col(const PGresult *r, int row, int col) {
    return PQgetisnull(r, row, col) ? RAW_NULL : get_i64(r, row, col) != 0;
}

/* Columns 0 (_pk) and 1 (_entity). */
static raw_identity identity_col(const PGresult *r, int row) {
    raw_identity o = {(long long)get_i64(r, row, 0), PQgetvalue(r, row, 1), (size_t)PQgetlength(r, row, 1)};
    return o;
}

/* A trip's columns; with TRIP_IDS also its bucket list's keys (an int8 array, column 9) and
 * its accommodation's key (column 10), as Strata reads them: correlated subqueries. */
#define TRIP_COLUMNS "t._pk, t._entity, t.\"name\", t.\"destination\", t.\"startDate\", t.\"endDate\", " \
                     "t.\"photo\", t.\"perdiem\", t.\"reason\""
#define TRIP_IDS ", ARRAY(SELECT b._pk FROM \"BucketListItem\" b WHERE b.\"trip\" = t._pk ORDER BY b._pk)," \
                 " (SELECT l._pk FROM \"LivingAccommodation\" l WHERE l.\"trip\" = t._pk ORDER BY l._pk LIMIT 1)"

/* A row of TRIP_COLUMNS. */
static raw_trip trip_row(const PGresult *r, int row) {
    raw_trip t;
    t.id = identity_col(r, row);
    t.name = text_col(r, row, 2);
    t.destination = text_col(r, row, 3);
    t.start = real_col(r, row, 4);
    t.end = real_col(r, row, 5);
    t.photo_null = PQgetisnull(r, row, 6);
    t.perdiem = real_col(r, row, 7);
    t.reason = text_col(r, row, 8);
    return t;
}

typedef enum { REL_IDS, REL_OBJECTS, REL_NONE } rel_mode;

/* Related objects for REL_OBJECTS: every row of a relationship's table, ordered by owner then
 * _pk, walked in step with the trips (ordered by _pk). */
typedef struct {
    PGresult *r;
    int row, n, owner_col;
} children_t;

static children_t living_rows, bucket_rows;

/* Moves c to the first row of owner pk (skipping rows of owners before it); whether there is one. */
static int children_of(children_t *c, int64_t pk) {
    while (c->row < c->n && get_i64(c->r, c->row, c->owner_col) < pk) c->row++;
    return c->row < c->n && get_i64(c->r, c->row, c->owner_col) == pk;
}

/* The keys of a binary int8[] (one dimension, or empty) as identifiers of entity prefix. */
static void put_key_array(buf_t *b, const PGresult *r, int row, int col, const char *prefix) {
    buf_putc(b, '[');
    const char *p = PQgetvalue(r, row, col);
    if (PQgetlength(r, row, col) >= 12 && get_u32(p) == 1) {
        uint32_t count = get_u32(p + 12);
        p += 20;
        for (uint32_t i = 0; i < count; i++) {
            if (get_u32(p) != 8) bench_die(PROG, "an identifier array holds a NULL");
            uint64_t v;
            memcpy(&v, p + 4, 8);
            if (i) buf_putc(b, ',');
            raw_put_ref(b, prefix, (long long)be64toh(v));
            p += 12;
        }
    }
    buf_putc(b, ']');
}

/* One trip object from a row of TRIP_COLUMNS (TRIP_IDS for REL_IDS), its relationships as mode says. */
static void put_trip(buf_t *b, const PGresult *r, int row, rel_mode mode) {
    char id[96];
    raw_trip t = trip_row(r, row);
    raw_put_trip_attributes(b, &t, id, sizeof id);
    if (mode == REL_IDS) {
        BUF_LIT(b, ",\"bucketList\":");
        put_key_array(b, r, row, 9, "BucketListItem/");
        int found = !PQgetisnull(r, row, 10);
        raw_put_living_ref_end(b, found, found ? (long long)get_i64(r, row, 10) : 0);
    } else if (mode == REL_OBJECTS) {
        int64_t pk = t.id.pk;
        children_t *c = &living_rows;
        BUF_LIT(b, ",\"livingAccommodation\":");
        if (children_of(c, pk)) { /* a to-one: the first row; any other is skipped by the next trip */
            raw_living l = {identity_col(c->r, c->row), text_col(c->r, c->row, 2), text_col(c->r, c->row, 3)};
            raw_put_living(b, &l, id);
            c->row++;
        } else {
            BUF_LIT(b, "null");
        }
        c = &bucket_rows;
        BUF_LIT(b, ",\"bucketList\":[");
        for (int first = 1; children_of(c, pk); c->row++, first = 0) {
            if (!first) buf_putc(b, ',');
            raw_bucket x = {identity_col(c->r, c->row), text_col(c->r, c->row, 2), text_col(c->r, c->row, 3),
                            flag_col(c->r, c->row, 4), flag_col(c->r, c->row, 5)};
            raw_put_bucket(b, &x, id);
        }
        BUF_LIT(b, "]}");
    } else {
        buf_putc(b, '}');
    }
}

/* Every row of r as a JSON array of trips. */
static void put_trips(buf_t *b, const PGresult *r, rel_mode mode) {
    buf_putc(b, '[');
    int n = PQntuples(r);
    for (int row = 0; row < n; row++) {
        if (row) buf_putc(b, ',');
        put_trip(b, r, row, mode);
    }
    buf_putc(b, ']');
}

/* ---- insert ------------------------------------------------------------------ */

/* The tables, indexes and constraints Strata's PostgreSQL store creates for
 * examples/trips/schema.json (the keys here come from the program, not from sequences):
 * plain indexes NULLS FIRST, the order its reads sort in (PostgresDialect.createIndex). */
static const char *const DDL =
    "CREATE TABLE \"Trip\" (\"_pk\" bigint PRIMARY KEY, \"_entity\" text COLLATE \"C\" NOT NULL,"
    " \"name\" text COLLATE \"C\", \"destination\" text COLLATE \"C\", \"startDate\" double precision,"
    " \"endDate\" double precision, \"photo\" bytea, \"perdiem\" double precision, \"reason\" text COLLATE \"C\");"
    "CREATE INDEX \"Trip.index(_entity)\" ON \"Trip\" (\"_entity\" NULLS FIRST);"
    "ALTER TABLE \"Trip\" ADD CONSTRAINT \"Trip.unique(name,startDate,endDate)\""
    " UNIQUE (\"name\", \"startDate\", \"endDate\") DEFERRABLE INITIALLY IMMEDIATE;"
    "CREATE INDEX \"Trip.index(name)\" ON \"Trip\" (\"name\" NULLS FIRST);"
    "CREATE INDEX \"Trip.index(startDate)\" ON \"Trip\" (\"startDate\" NULLS FIRST);"
    "CREATE INDEX \"Trip.index(endDate)\" ON \"Trip\" (\"endDate\" NULLS FIRST);"
    "CREATE TABLE \"BucketListItem\" (\"_pk\" bigint PRIMARY KEY, \"_entity\" text COLLATE \"C\" NOT NULL,"
    " \"title\" text COLLATE \"C\", \"details\" text COLLATE \"C\", \"hasReservation\" bigint,"
    " \"isInPlan\" bigint, \"trip\" bigint);"
    "CREATE INDEX \"BucketListItem.fk(trip)\" ON \"BucketListItem\" (\"trip\" NULLS FIRST);"
    "CREATE TABLE \"LivingAccommodation\" (\"_pk\" bigint PRIMARY KEY, \"_entity\" text COLLATE \"C\" NOT NULL,"
    " \"address\" text COLLATE \"C\", \"placeName\" text COLLATE \"C\", \"trip\" bigint);"
    "CREATE INDEX \"LivingAccommodation.fk(trip)\" ON \"LivingAccommodation\" (\"trip\" NULLS FIRST);";

static void insert_done(PGresult *r, const char *what) { PQclear(checked(r, PGRES_COMMAND_OK, what)); }

/* Prepared INSERTs, one per row, in one transaction; the keys counted here (1, 2, ... per table,
 * in the order of the JSON, as Strata's sequences give them to a fresh store). */
static void insert_rows(json_object *root) {
    static const Oid trip_types[] = {INT8_OID, TEXT_OID, TEXT_OID, TEXT_OID, FLOAT8_OID, FLOAT8_OID, FLOAT8_OID, TEXT_OID};
    static const Oid living_types[] = {INT8_OID, TEXT_OID, TEXT_OID, INT8_OID};
    static const Oid bucket_types[] = {INT8_OID, TEXT_OID, TEXT_OID, INT8_OID, INT8_OID, INT8_OID};
    prepare("trip", "INSERT INTO \"Trip\" (_pk, _entity, \"name\", \"destination\", \"startDate\", \"endDate\","
            " \"perdiem\", \"reason\") VALUES ($1, $2, $3, $4, $5, $6, $7, $8)", 8, trip_types);
    prepare("living", "INSERT INTO \"LivingAccommodation\" (_pk, _entity, \"address\", \"placeName\", \"trip\")"
            " VALUES ($1, 'LivingAccommodation', $2, $3, $4)", 4, living_types);
    prepare("bucket", "INSERT INTO \"BucketListItem\" (_pk, _entity, \"title\", \"details\", \"hasReservation\","
            " \"isInPlan\", \"trip\") VALUES ($1, 'BucketListItem', $2, $3, $4, $5, $6)", 6, bucket_types);
    static const int trip_formats[] = {1, 0, 0, 0, 1, 1, 1, 0}, living_formats[] = {1, 0, 0, 1},
                     bucket_formats[] = {1, 0, 0, 1, 1, 1};
    static const int trip_lengths[] = {8, 0, 0, 0, 8, 8, 8, 0}, living_lengths[] = {8, 0, 0, 8},
                     bucket_lengths[] = {8, 0, 0, 8, 8, 8};
    char pk[8], start[8], end[8], perdiem[8], owner[8], has[8], plan[8], key[8];
    int64_t living_key = 0, bucket_key = 0;
    exec("BEGIN");
    size_t n = json_object_array_length(root);
    for (size_t i = 0; i < n; i++) {
        json_object *t = json_object_array_get_idx(root, i), *list = NULL;
        raw_trip_values tv = raw_trip_of(t);
        set_i64(pk, (int64_t)i + 1);
        set_f64(start, tv.start);
        set_f64(end, tv.end);
        set_f64(perdiem, tv.perdiem);
        const char *trip_params[] = {pk, tv.entity, tv.name, tv.destination, start, end, tv.has_perdiem ? perdiem : NULL,
                                     tv.reason};
        insert_done(PQexecPrepared(conn, "trip", 8, trip_params, trip_lengths, trip_formats, 0), "INSERT Trip");
        memcpy(owner, pk, 8);
        raw_living_values lv;
        if (raw_living_of(t, &lv)) {
            set_i64(key, ++living_key);
            const char *params[] = {key, lv.address, lv.place_name, owner};
            insert_done(PQexecPrepared(conn, "living", 4, params, living_lengths, living_formats, 0),
                        "INSERT LivingAccommodation");
        }
        size_t m = raw_bucket_count(t, &list);
        for (size_t k = 0; k < m; k++) {
            raw_bucket_values bv = raw_bucket_of(list, k);
            set_i64(key, ++bucket_key);
            set_i64(has, bv.has_reservation);
            set_i64(plan, bv.is_in_plan);
            const char *params[] = {key, bv.title, bv.details, has, plan, owner};
            insert_done(PQexecPrepared(conn, "bucket", 6, params, bucket_lengths, bucket_formats, 0),
                        "INSERT BucketListItem");
        }
    }
    exec("COMMIT");
}

/* ---- insert through COPY (text format) ---- */

static void copy_flush(buf_t *b) {
    if (b->n > 0 && PQputCopyData(conn, b->p, (int)b->n) != 1) pg_fail("PQputCopyData");
    b->n = 0;
}

static void copy_text(buf_t *b, const char *s) {
    if (s == NULL) { BUF_LIT(b, "\\N\t"); return; }
    size_t n = strlen(s);
    buf_reserve(b, n * 2 + 1);
    char *o = b->p + b->n;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        switch (c) {
        case '\\': *o++ = '\\'; *o++ = '\\'; break;
        case '\n': *o++ = '\\'; *o++ = 'n'; break;
        case '\r': *o++ = '\\'; *o++ = 'r'; break;
        case '\t': *o++ = '\\'; *o++ = 't'; break;
        default: *o++ = c; break;
        }
    }
    *o++ = '\t';
    b->n = (size_t)(o - b->p);
    b->p[b->n] = '\0';
}

static void copy_double(buf_t *b, double v) {
    char tmp[40];
    int n = snprintf(tmp, sizeof tmp, "%.17g\t", v);
    buf_put(b, tmp, (size_t)n);
}

static void copy_int(buf_t *b, long long v) {
    buf_i64(b, v);
    buf_putc(b, '\t');
}

/* The row's last tab becomes its newline; the buffer goes to the server every 1 MB. */
static void copy_row_end(buf_t *b) {
    b->p[b->n - 1] = '\n';
    if (b->n >= (1u << 20)) copy_flush(b);
}

static void copy_begin(const char *sql) { PQclear(checked(PQexec(conn, sql), PGRES_COPY_IN, sql)); }

static void copy_end(buf_t *b) {
    copy_flush(b);
    if (PQputCopyEnd(conn, NULL) != 1) pg_fail("PQputCopyEnd");
    PGresult *r;
    while ((r = PQgetResult(conn)) != NULL) PQclear(checked(r, PGRES_COMMAND_OK, "COPY"));
}

/* One COPY per table, in one transaction, the same keys as insert_rows. */
static void copy_rows(json_object *root) {
    buf_t b = {0};
    size_t n = json_object_array_length(root);
    exec("BEGIN");
    copy_begin("COPY \"Trip\" (_pk, _entity, \"name\", \"destination\", \"startDate\", \"endDate\", \"perdiem\","
               " \"reason\") FROM STDIN");
    for (size_t i = 0; i < n; i++) {
        raw_trip_values tv = raw_trip_of(json_object_array_get_idx(root, i));
        copy_int(&b, (long long)i + 1);
        copy_text(&b, tv.entity);
        copy_text(&b, tv.name);
        copy_text(&b, tv.destination);
        copy_double(&b, tv.start);
        copy_double(&b, tv.end);
        if (tv.has_perdiem) copy_double(&b, tv.perdiem);
        else copy_text(&b, NULL);
        copy_text(&b, tv.reason);
        copy_row_end(&b);
    }
    copy_end(&b);
    copy_begin("COPY \"LivingAccommodation\" (_pk, _entity, \"address\", \"placeName\", \"trip\") FROM STDIN");
    long long key = 0;
    for (size_t i = 0; i < n; i++) {
        raw_living_values lv;
        if (!raw_living_of(json_object_array_get_idx(root, i), &lv)) continue;
        copy_int(&b, ++key);
        BUF_LIT(&b, "LivingAccommodation\t");
        copy_text(&b, lv.address);
        copy_text(&b, lv.place_name);
        copy_int(&b, (long long)i + 1);
        copy_row_end(&b);
    }
    copy_end(&b);
    copy_begin("COPY \"BucketListItem\" (_pk, _entity, \"title\", \"details\", \"hasReservation\", \"isInPlan\","
               " \"trip\") FROM STDIN");
    key = 0;
    for (size_t i = 0; i < n; i++) {
        json_object *list = NULL;
        size_t m = raw_bucket_count(json_object_array_get_idx(root, i), &list);
        for (size_t k = 0; k < m; k++) {
            raw_bucket_values bv = raw_bucket_of(list, k);
            copy_int(&b, ++key);
            BUF_LIT(&b, "BucketListItem\t");
            copy_text(&b, bv.title);
            copy_text(&b, bv.details);
            copy_int(&b, bv.has_reservation);
            copy_int(&b, bv.is_in_plan);
            copy_int(&b, (long long)i + 1);
            copy_row_end(&b);
        }
    }
    copy_end(&b);
    exec("COMMIT");
    buf_free(&b);
}

/* ---- the driver's housekeeping ---------------------------------------------------- */

static void quote_ident(buf_t *b, const char *name) {
    buf_putc(b, '"');
    for (const char *p = name; *p; p++) {
        if (*p == '"') buf_putc(b, '"');
        buf_putc(b, *p);
    }
    buf_putc(b, '"');
}

static int housekeeping(int argc, char **argv) {
    const char *what = argv[1];
    connect_to(argv[2]);
    buf_t b = {0};
    if (strcmp(what, "reset") == 0 || strcmp(what, "drop") == 0) {
        PQclear(PQexec(conn, "SET client_min_messages = warning"));
        BUF_LIT(&b, "DROP SCHEMA IF EXISTS ");
        quote_ident(&b, argv[3]);
        BUF_LIT(&b, " CASCADE");
        exec(b.p);
        if (strcmp(what, "reset") == 0) {
            b.n = 0;
            BUF_LIT(&b, "CREATE SCHEMA ");
            quote_ident(&b, argv[3]);
            exec(b.p);
        }
    } else if (strcmp(what, "vacuum") == 0) {
        exec("VACUUM (ANALYZE) \"Trip\", \"LivingAccommodation\", \"BucketListItem\"");
    } else if (strcmp(what, "dump") == 0) {
        static const char *const queries[] = {
            "SELECT _pk, _entity, \"name\", \"destination\", \"startDate\", \"endDate\", \"photo\", \"perdiem\", \"reason\""
            " FROM \"Trip\" ORDER BY _pk",
            "SELECT _pk, _entity, \"address\", \"placeName\", \"trip\" FROM \"LivingAccommodation\" ORDER BY _pk",
            "SELECT _pk, _entity, \"title\", \"details\", \"hasReservation\", \"isInPlan\", \"trip\""
            " FROM \"BucketListItem\" ORDER BY _pk"};
        for (size_t q = 0; q < sizeof queries / sizeof queries[0]; q++) {
            PGresult *r = checked(PQexec(conn, queries[q]), PGRES_TUPLES_OK, queries[q]);
            int rows = PQntuples(r), cols = PQnfields(r);
            for (int i = 0; i < rows; i++) {
                for (int c = 0; c < cols; c++) {
                    if (PQgetisnull(r, i, c)) BUF_LIT(&b, "NULL");
                    else buf_put(&b, PQgetvalue(r, i, c), (size_t)PQgetlength(r, i, c));
                    buf_putc(&b, '|');
                }
                buf_putc(&b, '\n');
            }
            PQclear(r);
        }
        bench_write_file(PROG, argv[3], b.p ? b.p : "", b.n);
    } else if (strcmp(what, "version") == 0) {
        char line[128];
        int v = PQlibVersion();
        int n = snprintf(line, sizeof line, "PostgreSQL %s (libpq %d.%d)", PQparameterStatus(conn, "server_version"),
                         v / 10000, v % 10000);
        bench_write_file(PROG, argv[3], line, (size_t)n);
    } else {
        (void)argc;
        bench_die(PROG, "unknown command '%s'", what);
    }
    buf_free(&b);
    PQfinish(conn);
    return 0;
}

/* ---- main ---------------------------------------------------------------------- */

int main(int argc, char **argv) {
    if ((argc == 4 && (strcmp(argv[1], "reset") == 0 || strcmp(argv[1], "drop") == 0 || strcmp(argv[1], "dump") == 0 ||
                       strcmp(argv[1], "version") == 0)) ||
        (argc == 3 && strcmp(argv[1], "vacuum") == 0))
        return housekeeping(argc, argv);
    raw_args a = raw_args_of(argc, argv,
                             "WORKLOAD URI N JSON [OUT] | reset|drop URI SCHEMA | vacuum URI | dump|version URI OUT");
    const char *workload = a.workload;
    raw_output out = {a.out_path, {0}, {0}, 1};
    buf_t *b = &out.one;
    double t0, t1;

    if (strcmp(workload, "insert") == 0 || strcmp(workload, "insert-copy") == 0) {
        /* The driver gives a fresh, empty schema: the tables are made outside the clock. */
        connect_to(a.target);
        PQclear(PQexec(conn, "SET client_min_messages = warning"));
        exec(DDL);
        double seconds = raw_timed_insert(a.json_path, strcmp(workload, "insert") == 0 ? insert_rows : copy_rows);
        PQfinish(conn);
        bench_report(seconds);
        return 0;
    }

    connect_to(a.target);
    /* As on Strata's side, the clock runs from an open connection (open: the whole process). */
    t0 = bench_now();
    if (strcmp(workload, "open") == 0) {
        PGresult *r = query("SELECT " TRIP_COLUMNS TRIP_IDS " FROM \"Trip\" t ORDER BY t._pk LIMIT 1");
        put_trips(b, r, REL_IDS);
        PQclear(r);
        t1 = bench_now();
    } else if (strcmp(workload, "contains") == 0 || strcmp(workload, "all") == 0) {
        /* Names are ASCII letters and spaces: ILIKE is the case-insensitive contains, lower()
         * (code-point order, COLLATE "C") the localized standard order; NULLS FIRST as Strata sorts. */
        PGresult *r = query(strcmp(workload, "contains") == 0
                                ? "SELECT " TRIP_COLUMNS TRIP_IDS " FROM \"Trip\" t WHERE t.\"name\" ILIKE '%a%'"
                                  " ORDER BY lower(t.\"name\") ASC NULLS FIRST, t._pk ASC"
                                : "SELECT " TRIP_COLUMNS TRIP_IDS " FROM \"Trip\" t ORDER BY t._pk");
        put_trips(b, r, REL_IDS);
        PQclear(r);
        t1 = bench_now();
    } else if (strcmp(workload, "prefetch") == 0) {
        /* Three statements on one snapshot; the related rows merged in step with the trips. */
        exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
        PGresult *r = query("SELECT " TRIP_COLUMNS " FROM \"Trip\" t ORDER BY t._pk");
        living_rows.r = query("SELECT _pk, _entity, \"address\", \"placeName\", \"trip\" FROM \"LivingAccommodation\""
                              " WHERE \"trip\" IS NOT NULL ORDER BY \"trip\", _pk");
        bucket_rows.r = query("SELECT _pk, _entity, \"title\", \"details\", \"hasReservation\", \"isInPlan\", \"trip\""
                              " FROM \"BucketListItem\" WHERE \"trip\" IS NOT NULL ORDER BY \"trip\", _pk");
        exec("COMMIT");
        living_rows.n = PQntuples(living_rows.r);
        living_rows.owner_col = 4;
        bucket_rows.n = PQntuples(bucket_rows.r);
        bucket_rows.owner_col = 6;
        put_trips(b, r, REL_OBJECTS);
        PQclear(r);
        PQclear(living_rows.r);
        PQclear(bucket_rows.r);
        t1 = bench_now();
    } else if (strcmp(workload, "properties") == 0) {
        PGresult *r = query("SELECT _pk, _entity, \"name\" FROM \"Trip\" ORDER BY _pk");
        buf_putc(b, '[');
        int n = PQntuples(r);
        for (int row = 0; row < n; row++) {
            if (row) buf_putc(b, ',');
            raw_identity o = identity_col(r, row);
            raw_put_named(b, &o, text_col(r, row, 2));
        }
        buf_putc(b, ']');
        PQclear(r);
        t1 = bench_now();
    } else if (strcmp(workload, "aggregate") == 0) {
        PGresult *r = query("SELECT t.\"destination\", count(*),"
                            " CAST(sum((SELECT count(*) FROM \"BucketListItem\" b WHERE b.\"trip\" = t._pk)) AS bigint),"
                            " min(t.\"startDate\") FROM \"Trip\" t GROUP BY t.\"destination\""
                            " ORDER BY t.\"destination\"");
        buf_putc(b, '[');
        int n = PQntuples(r);
        for (int row = 0; row < n; row++) {
            buf_puts(b, row ? ",{\"destination\":" : "{\"destination\":");
            raw_put_text(b, text_col(r, row, 0));
            BUF_LIT(b, ",\"trips\":");
            buf_i64(b, (long long)get_i64(r, row, 1));
            BUF_LIT(b, ",\"items\":");
            buf_i64(b, (long long)get_i64(r, row, 2));
            BUF_LIT(b, ",\"firstDay\":");
            raw_put_date(b, real_col(r, row, 3));
            buf_putc(b, '}');
        }
        buf_putc(b, ']');
        PQclear(r);
        t1 = bench_now();
    } else if (strcmp(workload, "count-ci") == 0 || strcmp(workload, "count-cs") == 0) {
        PGresult *r = query(strcmp(workload, "count-ci") == 0
                                ? "SELECT count(*) FROM \"Trip\" WHERE \"name\" ILIKE '%a%'"
                                : "SELECT count(*) FROM \"Trip\" WHERE strpos(\"name\", 'a') > 0");
        long long count = (long long)get_i64(r, 0, 0);
        PQclear(r);
        t1 = bench_now();
        buf_i64(b, count);
    } else if (strcmp(workload, "update_where") == 0) {
        static const Oid types[] = {0, FLOAT8_OID};
        static const int lengths[] = {0, 8}, formats[] = {0, 1};
        char before[8];
        set_f64(before, (double)bench_update_before(a.trips));
        const char *params[] = {BENCH_UPDATE_DESTINATION, before};
        exec("BEGIN");
        PGresult *r = checked(PQexecParams(conn, "UPDATE \"Trip\" SET \"destination\" = $1 WHERE \"startDate\" < $2", 2, types,
                                           params, lengths, formats, 1), PGRES_COMMAND_OK, "update");
        long long count = atoll(PQcmdTuples(r));
        PQclear(r);
        exec("COMMIT");
        t1 = bench_now();
        buf_i64(b, count);
    } else if (strcmp(workload, "widget") == 0 || strcmp(workload, "widget-fetch") == 0) {
        raw_collect_begin(&out);
        static const Oid types[] = {FLOAT8_OID};
        static const int lengths[] = {8}, formats[] = {1};
        /* Strata's order: the attribute ascending NULLS FIRST (Trip.index(startDate) is made so), then the key. */
        prepare("widget", "SELECT " TRIP_COLUMNS TRIP_IDS " FROM \"Trip\" t WHERE t.\"startDate\" >= $1"
                " ORDER BY t.\"startDate\" ASC NULLS FIRST, t._pk ASC LIMIT 1", 1, types);
        char now[8];
        const char *params[] = {now};
        for (long k = 0; k < BENCH_WIDGET_CALLS; k++) {
            b->n = 0;
            set_f64(now, (double)bench_widget_now(k, a.trips));
            PGresult *r = checked(PQexecPrepared(conn, "widget", 1, params, lengths, formats, 1), PGRES_TUPLES_OK, "widget");
            put_trips(b, r, REL_IDS);
            PQclear(r);
            raw_collect(&out);
        }
        t1 = bench_now();
        raw_collect_end(&out);
    } else if (strcmp(workload, "cursor") == 0) {
        /* A server-side cursor: each FETCH brings one batch, so the client holds one batch at a time. */
        raw_collect_begin(&out);
        exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
        exec("DECLARE trips NO SCROLL CURSOR FOR SELECT " TRIP_COLUMNS TRIP_IDS " FROM \"Trip\" t ORDER BY t._pk");
        char fetch[64];
        snprintf(fetch, sizeof fetch, "FETCH %d FROM trips", BENCH_CURSOR_BATCH);
        for (;;) {
            PGresult *r = query(fetch);
            int rows = PQntuples(r);
            if (rows > 0) {
                b->n = 0;
                put_trips(b, r, REL_IDS);
                raw_collect(&out); /* the batch goes to the caller; here to the check's output */
            }
            PQclear(r);
            if (rows < BENCH_CURSOR_BATCH) break;
        }
        exec("CLOSE trips");
        exec("COMMIT");
        t1 = bench_now();
        raw_collect_end(&out);
    } else {
        bench_die(PROG, "unknown workload '%s'", workload);
    }
    PQfinish(conn);
    raw_finish(&out, t1 - t0);
    return 0;
}
