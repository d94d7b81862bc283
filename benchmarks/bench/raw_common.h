/*
 * raw_common.h — what the two hand-written sides share (benchmarks/bench/README.md):
 * bench_raw (raw_side.c, SQLite) and bench_raw_pg (raw_pg_side.c, libpq). Their command
 * line, the trips JSON read with json-c for insert, the objects' JSON text in the shape
 * Strata returns (docs/JSON.md) written from the values each side reads out of its own
 * rows, and the output checked by the driver. Each side keeps its engine's code: the
 * statements, and reading a row into the structs below.
 *
 * Header-only, as common.h: each raw program includes it once, after defining PROG (its
 * name in messages).
 */
#ifndef BENCH_RAW_COMMON_H
#define BENCH_RAW_COMMON_H

#include <json-c/json.h>

#include "common.h"

/* ---- the command line ------------------------------------------------------------ */

/* WORKLOAD TARGET N JSON [OUT]: TARGET is the store (a file, or a URI). */
typedef struct {
    const char *workload, *target, *json_path, *out_path;
    long trips;
} raw_args;

/* The arguments of a workload; else the usage (after the program's name) and exit status 2. */
static inline raw_args raw_args_of(int argc, char **argv, const char *usage) {
    if (argc < 5) {
        fprintf(stderr, "usage: %s %s\n", PROG, usage);
        exit(2);
    }
    raw_args a = {argv[1], argv[2], argv[4], argc > 5 ? argv[5] : NULL, atol(argv[3])};
    return a;
}

/* ---- a row's values ----------------------------------------------------------------- */

/* Text as read from a column: p is NULL for NULL. */
typedef struct {
    const char *p;
    size_t n;
} raw_text;

/* A double as read from a column. */
typedef struct {
    double v;
    int null;
} raw_real;

/* A flag (an integer column read as a boolean): 0, 1, or RAW_NULL. */
#define RAW_NULL (-1)

/* Columns 0 (_pk) and 1 (_entity, NUL-terminated) of every row the sides read. */
typedef struct {
    long long pk;
    const char *entity;
    size_t entity_n;
} raw_identity;

/* A trip's row: the columns of the sides' TRIP_COLUMNS. */
typedef struct {
    raw_identity id;
    raw_text name, destination, reason;
    raw_real start, end, perdiem;
    int photo_null;
} raw_trip;

typedef struct {
    raw_identity id;
    raw_text address, place_name;
} raw_living;

typedef struct {
    raw_identity id;
    raw_text title, details;
    int has_reservation, is_in_plan; /* RAW_NULL for NULL */
} raw_bucket;

/* ---- JSON text ------------------------------------------------------------------------ */

static inline void raw_put_string(buf_t *b, const char *s, size_t n) {
    buf_reserve(b, n * 6 + 2);
    char *o = b->p + b->n;
    *o++ = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') { *o++ = (char)c; continue; }
        *o++ = '\\';
        switch (c) {
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case '\n': *o++ = 'n'; break;
        case '\r': *o++ = 'r'; break;
        case '\t': *o++ = 't'; break;
        default: o += sprintf(o, "u%04x", c); break;
        }
    }
    *o++ = '"';
    b->n = (size_t)(o - b->p);
    b->p[b->n] = '\0';
}

static inline void raw_put_text(buf_t *b, raw_text t) {
    if (t.p == NULL) BUF_LIT(b, "null");
    else raw_put_string(b, t.p, t.n);
}

static inline void raw_put_date(buf_t *b, raw_real d) {
    if (d.null) { BUF_LIT(b, "null"); return; }
    buf_reserve(b, 32);
    b->p[b->n++] = '"';
    b->n += (size_t)bench_iso(b->p + b->n, d.v);
    b->p[b->n++] = '"';
    b->p[b->n] = '\0';
}

/* The shortest text that reads back as the same double; "2.0" for whole numbers. */
static inline void raw_put_double(buf_t *b, raw_real d) {
    if (d.null) { BUF_LIT(b, "null"); return; }
    char tmp[40];
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(tmp, sizeof tmp, "%.*g", digits, d.v);
        if (strtod(tmp, NULL) == d.v) break;
    }
    if (strpbrk(tmp, ".en") == NULL) strcat(tmp, ".0");
    buf_puts(b, tmp);
}

static inline void raw_put_flag(buf_t *b, int flag) {
    if (flag == RAW_NULL) BUF_LIT(b, "null");
    else if (flag) BUF_LIT(b, "true");
    else BUF_LIT(b, "false");
}

/* ,"key":value, value written by put (raw_put_text, ...); key a string literal. */
#define RAW_FIELD(b, key, put, value)   \
    do {                                \
        BUF_LIT((b), ",\"" key "\":"); \
        put((b), (value));              \
    } while (0)

/* An object's start, {"_id":"Entity/pk","_entity":"Entity"; the identifier also into id (for
 * the related objects' link back). */
static inline void raw_put_identity(buf_t *b, const raw_identity *o, char *id, size_t id_size) {
    int n = snprintf(id, id_size, "%s/%lld", o->entity, o->pk);
    BUF_LIT(b, "{\"_id\":\"");
    buf_put(b, id, (size_t)n);
    BUF_LIT(b, "\",\"_entity\":\"");
    buf_put(b, o->entity, o->entity_n);
    buf_putc(b, '"');
}

/* A related object's identifier, "<prefix><key>" (prefix "BucketListItem/", ...). */
static inline void raw_put_ref(buf_t *b, const char *prefix, long long key) {
    buf_putc(b, '"');
    buf_puts(b, prefix);
    buf_i64(b, key);
    buf_putc(b, '"');
}

/* A trip's end with its accommodation's identifier (found: key) after its bucket list's. */
static inline void raw_put_living_ref_end(buf_t *b, int found, long long key) {
    BUF_LIT(b, ",\"livingAccommodation\":");
    if (found) raw_put_ref(b, "LivingAccommodation/", key);
    else BUF_LIT(b, "null");
    buf_putc(b, '}');
}

/* A trip object up to its relationships (left open): its identity, its attributes in schema
 * order with the subentity's own before the transient tripViews. */
static inline void raw_put_trip_attributes(buf_t *b, const raw_trip *t, char *id, size_t id_size) {
    raw_put_identity(b, &t->id, id, id_size);
    RAW_FIELD(b, "name", raw_put_text, t->name);
    RAW_FIELD(b, "destination", raw_put_text, t->destination);
    RAW_FIELD(b, "startDate", raw_put_date, t->start);
    RAW_FIELD(b, "endDate", raw_put_date, t->end);
    if (!t->photo_null) bench_die(PROG, "photo values are not generated");
    BUF_LIT(b, ",\"photo\":null");
    if (strcmp(t->id.entity, "BusinessTrip") == 0) RAW_FIELD(b, "perdiem", raw_put_double, t->perdiem);
    else if (strcmp(t->id.entity, "PersonalTrip") == 0) RAW_FIELD(b, "reason", raw_put_text, t->reason);
    BUF_LIT(b, ",\"tripViews\":0");
}

static inline void raw_put_link_back(buf_t *b, const char *owner_id) {
    BUF_LIT(b, ",\"trip\":\"");
    buf_puts(b, owner_id);
    BUF_LIT(b, "\"}");
}

/* A prefetched accommodation of the trip owner_id, as a whole object. */
static inline void raw_put_living(buf_t *b, const raw_living *l, const char *owner_id) {
    char id[96];
    raw_put_identity(b, &l->id, id, sizeof id);
    RAW_FIELD(b, "address", raw_put_text, l->address);
    RAW_FIELD(b, "placeName", raw_put_text, l->place_name);
    raw_put_link_back(b, owner_id);
}

/* A prefetched bucket list item of the trip owner_id, as a whole object. */
static inline void raw_put_bucket(buf_t *b, const raw_bucket *x, const char *owner_id) {
    char id[96];
    raw_put_identity(b, &x->id, id, sizeof id);
    RAW_FIELD(b, "title", raw_put_text, x->title);
    RAW_FIELD(b, "details", raw_put_text, x->details);
    RAW_FIELD(b, "hasReservation", raw_put_flag, x->has_reservation);
    RAW_FIELD(b, "isInPlan", raw_put_flag, x->is_in_plan);
    raw_put_link_back(b, owner_id);
}

/* An object of propertiesToFetch ["name"]. */
static inline void raw_put_named(buf_t *b, const raw_identity *o, raw_text name) {
    char id[96];
    raw_put_identity(b, o, id, sizeof id);
    RAW_FIELD(b, "name", raw_put_text, name);
    buf_putc(b, '}');
}

/* ---- the trips JSON, for insert ------------------------------------------------- */

static inline const char *raw_get_string(json_object *o, const char *key, const char *fallback) {
    json_object *v = NULL;
    if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string)) return fallback;
    return json_object_get_string(v);
}

static inline double raw_get_date(json_object *o, const char *key) {
    int ok = 0;
    const char *s = raw_get_string(o, key, NULL);
    double v = s ? bench_parse_iso(s, &ok) : 0;
    if (!ok) bench_die(PROG, "bad date in '%s'", key);
    return v;
}

static inline int raw_get_bool(json_object *o, const char *key) {
    json_object *v = NULL;
    return json_object_object_get_ex(o, key, &v) && json_object_get_boolean(v);
}

/* A trip's values as the columns take them. */
typedef struct {
    const char *entity, *name, *destination, *reason;
    double start, end, perdiem;
    int has_perdiem;
} raw_trip_values;

static inline raw_trip_values raw_trip_of(json_object *t) {
    raw_trip_values v = {0};
    json_object *x = NULL;
    v.entity = raw_get_string(t, "_entity", "Trip");
    v.name = raw_get_string(t, "name", NULL);
    v.destination = raw_get_string(t, "destination", NULL);
    v.start = raw_get_date(t, "startDate");
    v.end = raw_get_date(t, "endDate");
    if (strcmp(v.entity, "BusinessTrip") == 0) {
        v.has_perdiem = 1;
        v.perdiem = json_object_object_get_ex(t, "perdiem", &x) ? json_object_get_double(x) : 0;
    }
    v.reason = strcmp(v.entity, "PersonalTrip") == 0 ? raw_get_string(t, "reason", "unknown") : NULL;
    return v;
}

typedef struct {
    const char *address, *place_name;
} raw_living_values;

/* Trip t's accommodation into *v; whether it has one. */
static inline int raw_living_of(json_object *t, raw_living_values *v) {
    json_object *o = NULL;
    if (!json_object_object_get_ex(t, "livingAccommodation", &o) || !json_object_is_type(o, json_type_object))
        return 0;
    v->address = raw_get_string(o, "address", NULL);
    v->place_name = raw_get_string(o, "placeName", NULL);
    return 1;
}

typedef struct {
    const char *title, *details;
    int has_reservation, is_in_plan;
} raw_bucket_values;

/* Trip t's bucket list (*list) and its length (0 without one). */
static inline size_t raw_bucket_count(json_object *t, json_object **list) {
    return json_object_object_get_ex(t, "bucketList", list) ? json_object_array_length(*list) : 0;
}

static inline raw_bucket_values raw_bucket_of(json_object *list, size_t k) {
    json_object *item = json_object_array_get_idx(list, k);
    raw_bucket_values v = {raw_get_string(item, "title", NULL), raw_get_string(item, "details", ""),
                           raw_get_bool(item, "hasReservation"), raw_get_bool(item, "isInPlan")};
    return v;
}

/* The insert workload: the trips JSON read (untimed), then timed: parsed, insert(root) (the
 * side's rows, in one transaction), the tree freed. The seconds. */
static inline double raw_timed_insert(const char *json_path, void (*insert)(json_object *root)) {
    char *json = bench_read_file(json_path, NULL);
    if (json == NULL) bench_die(PROG, "cannot read %s", json_path);
    double t0 = bench_now();
    json_object *root = json_tokener_parse(json);
    if (root == NULL || !json_object_is_type(root, json_type_array)) bench_die(PROG, "the trips JSON does not parse");
    insert(root);
    json_object_put(root);
    double t1 = bench_now();
    free(json);
    return t1 - t0;
}

/* ---- the output ---------------------------------------------------------------------- */

/* What a workload writes to OUT for the driver's check: its one result (one); or, for the
 * widget's calls and the cursor's batches, each result (one, reused) appended to one JSON
 * array (all). */
typedef struct {
    const char *path; /* OUT, or NULL: nothing kept */
    buf_t one, all;
    int first;
} raw_output;

static inline void raw_collect_begin(raw_output *o) {
    o->first = 1;
    if (o->path) buf_putc(&o->all, '[');
}

static inline void raw_collect(raw_output *o) {
    if (o->path == NULL) return;
    if (!o->first) buf_putc(&o->all, ',');
    o->first = 0;
    buf_put(&o->all, o->one.p, o->one.n);
}

static inline void raw_collect_end(raw_output *o) {
    if (o->path) buf_putc(&o->all, ']');
}

/* The output written (with BENCH_TAMPER, the check's own test, one digit of it changed), the
 * buffers freed, the seconds reported to the driver. */
static inline void raw_finish(raw_output *o, double seconds) {
    buf_t *t = o->all.p ? &o->all : &o->one;
    if (o->path && getenv("BENCH_TAMPER")) {
        for (size_t i = t->n; i-- > 0;)
            if (t->p[i] >= '0' && t->p[i] <= '9') {
                t->p[i] = (char)(t->p[i] == '9' ? '0' : t->p[i] + 1);
                break;
            }
    }
    if (o->path) bench_write_file(PROG, o->path, t->p ? t->p : "", t->n);
    buf_free(&o->one);
    buf_free(&o->all);
    bench_report(seconds);
}

#endif
