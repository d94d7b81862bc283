/*
 * strata_side.c — bench_strata: the Strata side of each workload, and the
 * data setup (benchmarks/bench/README.md).
 *
 *   bench_strata setup STORE JSON N        generate N trips (deterministic), write them to JSON
 *                                          as one array, and build STORE from them (untimed)
 *   bench_strata WORKLOAD STORE N JSON [OUT]
 *
 * STORE is a file, or a PostgreSQL store's postgresql:// URI (its search_path names the schema):
 * a file is removed before setup and insert; a schema is the driver's to empty beforehand.
 * WORKLOAD runs once; the seconds spent on the work alone go to fd 3 (the driver's pipe);
 * with OUT the result is written there (after the clock stopped) for the driver's check.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>

#include <strata.h>

#include "bench_schema.h"
#include "common.h"
#include "strata_config.h"

static const char *const PROG = "bench_strata";

static void fail(const char *what) { bench_die(PROG, "%s failed: %s", what, strata_last_error()); }

/* ---- the generator (fixed seed) ---------------------------------------- */

static uint64_t rng_state = 0x5EED5EED2026ULL;
static uint64_t rng(void) {
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}
#define PICK(arr) (arr[rng() % (sizeof(arr) / sizeof(arr[0]))])

/* Letters and spaces only, each word capitalized: a raw LIKE is a fair case-insensitive
 * contains, and ORDER BY name COLLATE NOCASE is the localized standard order. */
static const char *const WORDS[] = {
    "Alpine", "Safari", "Canal", "Harbor", "Sahara", "Panama", "Bavaria", "Lagoon", /* with a */
    "Rome", "Oslo", "Tokyo", "Lisbon", "Berlin", "Kyoto", "Hike", "Cruise", "Retreat", "Summit",
    "Fjord", "Museum", "Forest", "Dublin", "Quebec", "Venice", "Winter", "Spring", "Sunset"};
static const char *const CITIES[] = {"Paris", "Rome", "Oslo", "Tokyo", "Lima", "Cairo", "Quito", "Perth"};
static const char *const PLACES[] = {"Hotel Central", "Old Town Inn", "Camping Sud", "Villa Rosa", "Hostel"};
static const char *const SIGHTS[] = {"the museum", "the old bridge", "the market", "a concert", "the coast"};
static const char *const DETAILS[] = {"", "", "Book \"early\"", "Ask at the desk", "Free on Sundays"};
static const char *const REASONS[] = {"family", "reunion", "wellness", "unknown"};

/* perm(i): a permutation of 0..n-1, so start dates are unique and not in insertion order. */
static long perm(long i, long n) {
    static const long primes[] = {7919, 7927, 7933, 7937};
    long a = 1;
    for (size_t k = 0; k < sizeof primes / sizeof primes[0]; k++)
        if (n % primes[k] != 0) { a = primes[k]; break; }
    return (long)(((long long)i * a) % n);
}

static void put_date(buf_t *b, long seconds) {
    char iso[32];
    buf_putc(b, '"');
    buf_put(b, iso, (size_t)bench_iso(iso, (double)seconds));
    buf_putc(b, '"');
}

static void gen_trips(buf_t *b, long first, long last, long n) {
    char tmp[256];
    buf_putc(b, '[');
    for (long i = first; i < last; i++) {
        if (i > first) buf_putc(b, ',');
        unsigned kind = (unsigned)(rng() % 3);
        const char *entity = kind == 0 ? "Trip" : kind == 1 ? "BusinessTrip" : "PersonalTrip";
        long start = BENCH_EPOCH + perm(i, n) * 3600L;
        long end = start + (long)(1 + rng() % 14) * 86400L;
        const char *w1 = PICK(WORDS), *w2 = PICK(WORDS);
        int words = (int)(rng() % 2);
        snprintf(tmp, sizeof tmp, "{\"_entity\":\"%s\",\"name\":\"%s %s%s%s\",\"destination\":\"%s\",\"startDate\":",
                 entity, w1, w2, words ? " " : "", words ? PICK(WORDS) : "", PICK(CITIES));
        buf_puts(b, tmp);
        put_date(b, start);
        BUF_LIT(b, ",\"endDate\":");
        put_date(b, end);
        if (kind == 1) {
            snprintf(tmp, sizeof tmp, ",\"perdiem\":%d.5", 50 + (int)(rng() % 200));
            buf_puts(b, tmp);
        } else if (kind == 2) {
            snprintf(tmp, sizeof tmp, ",\"reason\":\"%s\"", PICK(REASONS));
            buf_puts(b, tmp);
        }
        snprintf(tmp, sizeof tmp, ",\"livingAccommodation\":{\"address\":\"%d Harbor Street\",\"placeName\":\"%s\"}",
                 1 + (int)(rng() % 500), PICK(PLACES));
        buf_puts(b, tmp);
        BUF_LIT(b, ",\"bucketList\":[");
        for (int k = 0; k < 3; k++) {
            const char *details = PICK(DETAILS);
            buf_puts(b, k ? ",{\"title\":\"See " : "{\"title\":\"See ");
            buf_puts(b, PICK(SIGHTS));
            BUF_LIT(b, "\",\"details\":\"");
            for (const char *p = details; *p; p++) {
                if (*p == '"') buf_putc(b, '\\');
                buf_putc(b, *p);
            }
            buf_puts(b, rng() % 2 ? "\",\"hasReservation\":true" : "\",\"hasReservation\":false");
            buf_puts(b, rng() % 3 ? ",\"isInPlan\":false}" : ",\"isInPlan\":true}");
        }
        BUF_LIT(b, "]}");
    }
    buf_putc(b, ']');
}

/* ---- Strata ------------------------------------------------------------ */

static strata_container *open_store(const char *path) {
    char *json = bench_strata_config_json();
    if (json == NULL) bench_die(PROG, "the schema has no plain title attribute to make searchable (or out of memory)");
    strata_config *cfg = NULL;
    if (strata_config_new(json, &cfg) != STRATA_OK) fail("strata_config_new");
    free(json);
    strata_container *db = NULL;
    if (strata_open(path, cfg, &db) != STRATA_OK) fail("strata_open");
    strata_config_free(cfg);
    return db;
}

static int is_server(const char *location) {
    return strncmp(location, "postgresql://", 13) == 0 || strncmp(location, "postgres://", 11) == 0;
}

static void remove_store(const char *path) {
    if (is_server(path)) return;
    static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
    char name[4096];
    for (size_t k = 0; k < sizeof suffixes / sizeof suffixes[0]; k++) {
        snprintf(name, sizeof name, "%s%s", path, suffixes[k]);
        remove(name);
    }
}

static void setup(const char *store, const char *json_path, long n) {
    buf_t all = {0};
    gen_trips(&all, 0, n, n);
    bench_write_file(PROG, json_path, all.p, all.n);
    buf_free(&all);
    /* The same trips again (same seed), into the store in batches of 10,000. */
    rng_state = 0x5EED5EED2026ULL;
    remove_store(store);
    strata_container *db = open_store(store);
    strata_context *ctx = NULL;
    if (strata_context_new(db, &ctx) != STRATA_OK) fail("strata_context_new");
    for (long first = 0; first < n; first += 10000) {
        long last = first + 10000 < n ? first + 10000 : n;
        buf_t b = {0};
        gen_trips(&b, first, last, n);
        if (strata_insert_many(ctx, "Trip", b.p, NULL) != STRATA_OK) fail("strata_insert_many");
        if (strata_save(ctx) != STRATA_OK) fail("strata_save");
        buf_free(&b);
    }
    strata_context_free(ctx);
    strata_close(db);
}

static void out_append(buf_t *out, int *first, const char *json) {
    if (out == NULL) return;
    if (!*first) buf_putc(out, ',');
    *first = 0;
    buf_puts(out, json);
}

int main(int argc, char **argv) {
    if (argc >= 5 && strcmp(argv[1], "setup") == 0) {
        setup(argv[2], argv[3], atol(argv[4]));
        return 0;
    }
    if (argc < 5) {
        fprintf(stderr, "usage: %s setup STORE JSON N | WORKLOAD STORE N JSON [OUT]\n", PROG);
        return 2;
    }
    const char *workload = argv[1], *store = argv[2], *json_path = argv[4];
    long trips = atol(argv[3]);
    const char *out_path = argc > 5 ? argv[5] : NULL;
    buf_t outb = {0};
    buf_t *out = out_path ? &outb : NULL;
    char *result = NULL;
    double t0, t1;

    if (strcmp(workload, "insert") == 0) {
        remove_store(store);
        strata_container *db = open_store(store);
        strata_context *ctx = NULL;
        if (strata_context_new(db, &ctx) != STRATA_OK) fail("strata_context_new");
        char *json = bench_read_file(json_path, NULL);
        if (json == NULL) bench_die(PROG, "cannot read %s", json_path);
        t0 = bench_now();
        if (strata_insert_many(ctx, "Trip", json, NULL) != STRATA_OK) fail("strata_insert_many");
        if (strata_save(ctx) != STRATA_OK) fail("strata_save");
        t1 = bench_now();
        free(json);
        strata_context_free(ctx);
        strata_close(db);
        bench_report(t1 - t0);
        return 0;
    }

    t0 = bench_now();
    strata_container *db = open_store(store);
    strata_context *ctx = NULL;
    if (strata_context_new(db, &ctx) != STRATA_OK) fail("strata_context_new");
    if (strcmp(workload, "open") == 0) {
        /* Timed by the driver as a whole process; this is the time inside main. */
        if (strata_fetch(ctx, BENCH_OPEN_DESCRIPTOR, &result) != STRATA_OK) fail("strata_fetch");
        t1 = bench_now();
        if (out) buf_puts(out, result);
        strata_free(result);
        result = NULL;
    } else {
        const char *descriptor = NULL;
        if (strcmp(workload, "contains") == 0) descriptor = BENCH_CONTAINS_CI;
        else if (strcmp(workload, "all") == 0) descriptor = BENCH_ALL;
        else if (strcmp(workload, "prefetch") == 0) descriptor = BENCH_PREFETCH;
        else if (strcmp(workload, "properties") == 0) descriptor = BENCH_PROPERTIES;
        else if (strcmp(workload, "aggregate") == 0) descriptor = BENCH_AGGREGATE;
        else if (strcmp(workload, "search-fetch") == 0) descriptor = BENCH_SEARCH_FETCH;
        if (descriptor) {
            t0 = bench_now();
            if (strata_fetch(ctx, descriptor, &result) != STRATA_OK) fail("strata_fetch");
            t1 = bench_now();
        } else if (strcmp(workload, "count-ci") == 0 || strcmp(workload, "count-cs") == 0 || strcmp(workload, "search") == 0) {
            int64_t count = 0;
            const char *counted = strcmp(workload, "search") == 0 ? BENCH_SEARCH
                                  : strcmp(workload, "count-ci") == 0 ? BENCH_COUNT_CI : BENCH_COUNT_CS;
            t0 = bench_now();
            if (strata_fetch_count(ctx, counted, &count) != STRATA_OK) fail("strata_fetch_count");
            t1 = bench_now();
            if (out) buf_i64(out, (long long)count);
        } else if (strcmp(workload, "update_where") == 0) {
            char request[256];
            snprintf(request, sizeof request, BENCH_UPDATE_WHERE, bench_update_before(trips));
            int64_t count = 0;
            t0 = bench_now();
            if (strata_update_where(ctx, "Trip", request, &count) != STRATA_OK) fail("strata_update_where");
            if (strata_save(ctx) != STRATA_OK) fail("strata_save");
            t1 = bench_now();
            if (out) buf_i64(out, (long long)count);
        } else if (strcmp(workload, "widget-fetch") == 0) {
            /* The same query through strata_fetch, the descriptor (with its bindings) parsed each call. */
            static const char head[] = "{\"entity\": \"Trip\", \"predicate\": {\">=\": [{\"key\": \"startDate\"}, "
                                       "{\"var\": \"now\"}]}, \"sortBy\": [{\"key\": \"startDate\"}], \"fetchLimit\": 1,"
                                       " \"bindings\": {\"now\": ";
            char descriptor_text[512];
            int first = 1;
            if (out) buf_putc(out, '[');
            t0 = bench_now();
            for (long k = 0; k < BENCH_WIDGET_CALLS; k++) {
                snprintf(descriptor_text, sizeof descriptor_text, "%s%ld}}", head, bench_widget_now(k, trips));
                char *one = NULL;
                if (strata_fetch(ctx, descriptor_text, &one) != STRATA_OK) fail("strata_fetch (widget)");
                out_append(out, &first, one);
                strata_free(one);
            }
            t1 = bench_now();
            if (out) buf_putc(out, ']');
        } else if (strcmp(workload, "widget") == 0) {
#ifdef BENCH_HAVE_PREPARED
            char bindings[64];
            int first = 1;
            if (out) buf_putc(out, '[');
            t0 = bench_now();
            strata_prepared *prepared = NULL;
            if (strata_prepare(ctx, BENCH_WIDGET, &prepared) != STRATA_OK) fail("strata_prepare");
            for (long k = 0; k < BENCH_WIDGET_CALLS; k++) {
                snprintf(bindings, sizeof bindings, "{\"now\": %ld}", bench_widget_now(k, trips));
                char *one = NULL;
                if (strata_prepared_fetch(prepared, bindings, &one) != STRATA_OK) fail("strata_prepared_fetch");
                out_append(out, &first, one);
                strata_free(one);
            }
            strata_prepared_free(prepared);
            t1 = bench_now();
            if (out) buf_putc(out, ']');
#else
            bench_die(PROG, "built without strata_prepare (include/strata.h has none)");
#endif
        } else if (strcmp(workload, "cursor") == 0) {
#ifdef BENCH_HAVE_CURSOR
            int first = 1;
            if (out) buf_putc(out, '[');
            t0 = bench_now();
            strata_cursor *cursor = NULL;
            if (strata_fetch_cursor(ctx, BENCH_ALL, &cursor) != STRATA_OK) fail("strata_fetch_cursor");
            for (;;) {
                char *batch = NULL;
                if (strata_cursor_next(cursor, BENCH_CURSOR_BATCH, &batch) != STRATA_OK) fail("strata_cursor_next");
                int done = strcmp(batch, "[]") == 0;
                if (!done) out_append(out, &first, batch);
                strata_free(batch);
                if (done) break;
            }
            strata_cursor_free(cursor);
            t1 = bench_now();
            if (out) buf_putc(out, ']');
#else
            bench_die(PROG, "built without strata_fetch_cursor (include/strata.h has none)");
#endif
        } else {
            bench_die(PROG, "unknown workload '%s'", workload);
        }
    }
    if (result) {
        if (out) buf_puts(out, result);
        strata_free(result);
    }
    strata_context_free(ctx);
    strata_close(db);
    if (out) bench_write_file(PROG, out_path, out->p, out->n);
    buf_free(&outb);
    bench_report(t1 - t0);
    return 0;
}
