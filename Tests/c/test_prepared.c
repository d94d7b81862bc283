/*
 * test_prepared.c — prepared fetches (strata_prepare, strata_prepared_fetch,
 * _count, _identifiers, strata_prepared_free) and cursors (strata_fetch_cursor,
 * strata_cursor_next, strata_cursor_free) through the C API: the same answers
 * as strata_fetch() with bindings, errors that name the variable, batches in
 * order on one snapshot while the context saves; a prepared fetch that
 * outlives its context no longer sees the changes strata_context_free()
 * discarded.
 */
#include "check.h"

#define FIXTURES STRATA_SOURCE_DIR "/Tests/c/fixtures/"
#define TRIPS 250

static void insert_trips(strata_context *ctx, int from, int n) {
    check_buf b = {0};
    check_buf_add(&b, "[");
    for (int i = from; i < from + n; i++) {
        char *t = check_strf(
            "%s{\"name\": \"%s %d\", \"destination\": \"D%d\", \"startDate\": %lld, \"endDate\": %lld,"
            " \"livingAccommodation\": {\"address\": \"A%d\", \"placeName\": \"P%d\"},"
            " \"bucketList\": [{\"title\": \"x%d\"}, {\"title\": \"y%d\"}]}",
            i > from ? "," : "", i % 3 ? "Paris" : "Zürich", i, i % 7, 1700000000LL + i * 86400LL,
            1700000000LL + i * 86400LL + 3600, i, i, i, i);
        check_buf_add(&b, t);
        free(t);
    }
    check_buf_add(&b, "]");
    char *ids = NULL;
    CHECK_STATUS(strata_insert_many(ctx, "Trip", b.s, &ids));
    strata_free(ids);
    free(b.s);
}

/* strata_fetch of `descriptor` with `bindings` spliced in as its "bindings". */
static char *fetch_bound(strata_context *ctx, const char *descriptor_head, const char *bindings) {
    char *d = check_strf("{%s, \"bindings\": %s}", descriptor_head, bindings);
    char *out = NULL;
    CHECK_STATUS(strata_fetch(ctx, d, &out));
    free(d);
    return out;
}

static void test_prepared(strata_context *ctx) {
    const char *head = "\"entity\": \"Trip\", \"predicate\": \"$0.startDate >= now\","
                       " \"sortBy\": [{\"key\": \"startDate\"}], \"fetchLimit\": 1";
    char *descriptor = check_strf("{%s}", head);
    strata_prepared *p = NULL;
    CHECK_STATUS(strata_prepare(ctx, descriptor, &p));
    CHECK(p != NULL);
    for (int day = 0; day <= TRIPS + 1; day += 17) {
        char *bindings = check_strf("{\"now\": %d}", 1700000000 + day * 86400 - 60);
        char *expected = fetch_bound(ctx, head, bindings);
        char *got = NULL;
        CHECK_STATUS(strata_prepared_fetch(p, bindings, &got));
        CHECK_STR_EQ(got, expected);
        strata_free(got);
        strata_free(expected);
        free(bindings);
    }
    /* The widget query, many times: the same objects as strata_fetch. */
    for (int i = 0; i < 2000; i++) {
        char bindings[64];
        snprintf(bindings, sizeof bindings, "{\"now\": %d}", 1700000000 + (i % TRIPS) * 86400);
        char *got = NULL;
        CHECK_STATUS(strata_prepared_fetch(p, bindings, &got));
        char want[64];
        snprintf(want, sizeof want, "\"name\":\"%s %d\"", (i % TRIPS) % 3 ? "Paris" : "Zürich", i % TRIPS);
        CHECK(strstr(got, want) != NULL);
        strata_free(got);
    }

    /* Errors name the variable; the prepared fetch stays usable. */
    char *out = (char *)"x";
    CHECK_ERROR_CODE(strata_prepared_fetch(p, NULL, &out), STRATA_ERR_INVALID);
    CHECK(out == NULL);
    CHECK(strstr(strata_last_error(), "now") != NULL);
    CHECK_ERROR_CODE(strata_prepared_fetch(p, "{\"now\": \"someday\"}", &out), STRATA_ERR_INVALID);
    CHECK(strstr(strata_last_error(), "\"/now\"") != NULL);
    CHECK_ERROR_CODE(strata_prepared_fetch(p, "[1]", &out), STRATA_ERR_INVALID);
    CHECK_ERROR_CODE(strata_prepared_fetch(p, "{\"now\": 1", &out), STRATA_ERR_INVALID);
    CHECK_ERROR_CODE(strata_prepared_fetch(p, "{\"now\": 1}", NULL), STRATA_ERR_MISUSE);
    CHECK_ERROR_CODE(strata_prepared_fetch(NULL, "{\"now\": 1}", &out), STRATA_ERR_MISUSE);
    CHECK_ERROR_CODE(strata_prepared_fetch((strata_prepared *)ctx, "{\"now\": 1}", &out), STRATA_ERR_MISUSE);
    CHECK_STATUS(strata_prepared_fetch(p, "{\"now\": 0}", &out));
    CHECK(strstr(out, "\"name\":\"Zürich 0\"") != NULL);
    strata_free(out);
    strata_prepared_free(p);
    strata_prepared_free(NULL);
    free(descriptor);

    /* Count and identifiers, with string options and the descriptor's own binding. */
    CHECK_STATUS(strata_prepare(ctx, "{\"entity\": \"Trip\", \"predicate\": "
                                     "\"$0.name.contains(q, options: [.caseInsensitive, .diacriticInsensitive]) && $0.destination == d\","
                                     " \"bindings\": {\"d\": \"D3\"}}", &p));
    int64_t n = -1, m = -1;
    CHECK_STATUS(strata_prepared_fetch_count(p, "{\"q\": \"ZURICH\"}", &n));
    CHECK_STATUS(strata_fetch_count(ctx, "{\"entity\": \"Trip\", \"predicate\": "
                                         "\"$0.name.contains(\\\"zurich\\\", options: [.caseInsensitive, .diacriticInsensitive]) && $0.destination == \\\"D3\\\"\"}", &m));
    CHECK(n == m && n > 0);
    CHECK_STATUS(strata_prepared_fetch_count(p, "{\"q\": \"paris\", \"d\": \"D1\"}", &n));
    CHECK_STATUS(strata_fetch_count(ctx, "{\"entity\": \"Trip\", \"predicate\": "
                                         "\"$0.name.contains(\\\"Paris\\\") && $0.destination == \\\"D1\\\"\"}", &m));
    CHECK(n == m && n > 0);
    char *ids = NULL, *want = NULL;
    CHECK_STATUS(strata_prepared_fetch_identifiers(p, "{\"q\": \"paris\", \"d\": \"D1\"}", &ids));
    CHECK_STATUS(strata_fetch_identifiers(ctx, "{\"entity\": \"Trip\", \"predicate\": "
                                               "\"$0.name.contains(\\\"Paris\\\") && $0.destination == \\\"D1\\\"\"}", &want));
    CHECK_STR_EQ(ids, want);
    strata_free(ids);
    strata_free(want);
    CHECK_ERROR_CODE(strata_prepared_fetch_count(p, "{\"q\": 5}", &n), STRATA_ERR_INVALID);
    CHECK(n == 0);
    CHECK_ERROR_CODE(strata_prepared_fetch_count(p, "{\"q\": \"a\"}", NULL), STRATA_ERR_MISUSE);
    strata_prepared_free(p);

    /* Malformed descriptors are refused when prepared. */
    strata_prepared *bad = (strata_prepared *)ctx;
    CHECK_ERROR_CODE(strata_prepare(ctx, "{\"entity\": \"Nope\"}", &bad), STRATA_ERR_INVALID);
    CHECK(bad == NULL);
    CHECK_ERROR_CODE(strata_prepare(ctx, "{\"entity\": \"Trip\", \"predicate\": \"$0.nope == x\"}", &bad), STRATA_ERR_INVALID);
    CHECK_ERROR_CODE(strata_prepare(ctx, "{\"entity\": \"Trip\", \"sortBy\": 3}", &bad), STRATA_ERR_INVALID);
    CHECK_ERROR_CODE(strata_prepare(ctx, NULL, &bad), STRATA_ERR_MISUSE);
    CHECK_ERROR_CODE(strata_prepare(NULL, "{\"entity\": \"Trip\"}", &bad), STRATA_ERR_MISUSE);
    CHECK_ERROR_CODE(strata_prepare(ctx, "{\"entity\": \"Trip\"}", NULL), STRATA_ERR_MISUSE);
}

/* Reads a cursor to the end in batches of `batch`; returns the objects' array as one string. */
static char *drain(strata_cursor *cursor, int64_t batch, int *batches) {
    check_buf all = {0};
    check_buf_add(&all, "[");
    *batches = 0;
    for (;;) {
        char *out = NULL;
        CHECK_STATUS(strata_cursor_next(cursor, batch, &out));
        struct json_object *a = parse_json_or_die(out);
        CHECK(json_object_is_type(a, json_type_array));
        size_t len = json_object_array_length(a);
        CHECK(len <= (size_t)batch);
        json_object_put(a);
        if (len == 0) {
            CHECK_STR_EQ(out, "[]");
            strata_free(out);
            break;
        }
        (*batches)++;
        /* Splice the batch's elements into one array. */
        out[strlen(out) - 1] = 0;
        if (all.s[1] != 0) check_buf_add(&all, ",");
        check_buf_add(&all, out + 1);
        strata_free(out);
    }
    check_buf_add(&all, "]");
    char *again = NULL;
    CHECK_STATUS(strata_cursor_next(cursor, batch, &again));
    CHECK_STR_EQ(again, "[]");
    strata_free(again);
    return all.s;
}

static void test_cursor(strata_container *db, strata_context *ctx) {
    const char *descriptors[] = {
        "{\"entity\": \"Trip\", \"sortBy\": [{\"key\": \"name\"}]}",
        "{\"entity\": \"Trip\", \"relationshipKeyPathsForPrefetching\": [\"bucketList\", \"livingAccommodation\"]}",
        "{\"entity\": \"Trip\", \"propertiesToFetch\": [\"name\"], \"fetchLimit\": 33, \"fetchOffset\": 5}",
        "{\"entity\": \"BucketListItem\", \"predicate\": \"$0.title.hasPrefix(\\\"x\\\")\"}",
    };
    const int64_t batches[] = {1, 7, 100, TRIPS * 2 + 1};
    for (size_t d = 0; d < sizeof descriptors / sizeof *descriptors; d++) {
        char *expected = NULL;
        CHECK_STATUS(strata_fetch(ctx, descriptors[d], &expected));
        struct json_object *e = parse_json_or_die(expected);
        int count = (int)json_object_array_length(e);
        json_object_put(e);
        for (size_t b = 0; b < sizeof batches / sizeof *batches; b++) {
            strata_cursor *cursor = NULL;
            CHECK_STATUS(strata_fetch_cursor(ctx, descriptors[d], &cursor));
            int nb = 0;
            char *all = drain(cursor, batches[b], &nb);
            CHECK_STR_EQ(all, expected);
            CHECK(nb == (int)((count + batches[b] - 1) / batches[b]));
            free(all);
            strata_cursor_free(cursor);
        }
        strata_free(expected);
    }

    /* One snapshot: saves of the context and of another one while the cursor is open are not seen. */
    int64_t before = 0, after = 0;
    CHECK_STATUS(strata_fetch_count(ctx, "{\"entity\": \"Trip\"}", &before));
    strata_cursor *cursor = NULL;
    CHECK_STATUS(strata_fetch_cursor(ctx, "{\"entity\": \"Trip\"}", &cursor));
    char *first = NULL;
    CHECK_STATUS(strata_cursor_next(cursor, 10, &first));
    strata_free(first);
    insert_trips(ctx, 10000, 5);
    CHECK_STATUS(strata_save(ctx));
    strata_context *other = check_context(db);
    insert_trips(other, 20000, 5);
    CHECK_STATUS(strata_save(other));
    strata_context_free(other);
    int nb = 0;
    char *rest = drain(cursor, 50, &nb);
    struct json_object *r = parse_json_or_die(rest);
    CHECK((int64_t)json_object_array_length(r) + 10 == before);
    json_object_put(r);
    free(rest);
    strata_cursor_free(cursor);
    CHECK_STATUS(strata_fetch_count(ctx, "{\"entity\": \"Trip\"}", &after));
    CHECK(after == before + 10);

    /* Misuse and bad input. */
    char *out = (char *)"x";
    CHECK_STATUS(strata_fetch_cursor(ctx, "{\"entity\": \"Trip\"}", &cursor));
    CHECK_ERROR_CODE(strata_cursor_next(cursor, 0, &out), STRATA_ERR_INVALID);
    CHECK(out == NULL);
    CHECK_ERROR_CODE(strata_cursor_next(cursor, -5, &out), STRATA_ERR_INVALID);
    CHECK_ERROR_CODE(strata_cursor_next(cursor, 5, NULL), STRATA_ERR_MISUSE);
    CHECK_STATUS(strata_cursor_next(cursor, 5, &out));
    CHECK(strncmp(out, "[{", 2) == 0);
    strata_free(out);
    strata_cursor_free(cursor); /* before its end */
    CHECK_ERROR_CODE(strata_cursor_next(NULL, 5, &out), STRATA_ERR_MISUSE);
    CHECK_ERROR_CODE(strata_cursor_next((strata_cursor *)ctx, 5, &out), STRATA_ERR_MISUSE);
    strata_cursor *bad = (strata_cursor *)ctx;
    CHECK_ERROR_CODE(strata_fetch_cursor(ctx, "{\"entity\": \"Trip\", \"fetchLimit\": -1}", &bad), STRATA_ERR_INVALID);
    CHECK(bad == NULL);
    CHECK_ERROR_CODE(strata_fetch_cursor(ctx, "{\"entity\": \"Trip\"}", NULL), STRATA_ERR_MISUSE);
    strata_cursor_free(NULL);
}

int main(void) {
    char *path = test_store_path("prepared.store");
    strata_container *db = check_open_schema(FIXTURES "trips.json", path);
    strata_context *ctx = check_context(db);
    insert_trips(ctx, 0, TRIPS);
    CHECK_STATUS(strata_save(ctx));
    test_prepared(ctx);
    test_cursor(db, ctx);
    /* A cursor and a prepared fetch outlive their context and container handles. */
    strata_prepared *p = NULL;
    strata_cursor *cursor = NULL;
    CHECK_STATUS(strata_prepare(ctx, "{\"entity\": \"Trip\", \"predicate\": \"$0.name == n\"}", &p));
    CHECK_STATUS(strata_fetch_cursor(ctx, "{\"entity\": \"Trip\"}", &cursor));
    /* A change left unsaved: the prepared fetch sees it while the context lives, not after its free. */
    CHECK_STATUS(strata_insert(ctx, "Trip", "{\"name\": \"Unsaved\", \"destination\": \"x\", \"startDate\": 0, \"endDate\": 1}", NULL));
    int64_t n = 0;
    CHECK_STATUS(strata_prepared_fetch_count(p, "{\"n\": \"Unsaved\"}", &n));
    CHECK(n == 1);
    strata_context_free(ctx);
    strata_close(db);
    CHECK_STATUS(strata_prepared_fetch_count(p, "{\"n\": \"Unsaved\"}", &n));
    CHECK(n == 0);
    CHECK_STATUS(strata_prepared_fetch_count(p, "{\"n\": \"Paris 1\"}", &n));
    CHECK(n == 1);
    char *out = NULL;
    CHECK_STATUS(strata_cursor_next(cursor, 3, &out));
    CHECK(strncmp(out, "[{", 2) == 0);
    strata_free(out);
    strata_cursor_free(cursor);
    strata_prepared_free(p);

    /* In memory: the cursor hands out what it read when it opened. */
    strata_container *mem = check_open_schema(FIXTURES "trips.json", NULL);
    strata_context *mctx = check_context(mem);
    insert_trips(mctx, 0, 40);
    CHECK_STATUS(strata_save(mctx));
    CHECK_STATUS(strata_fetch_cursor(mctx, "{\"entity\": \"Trip\", \"sortBy\": [{\"key\": \"startDate\", \"order\": \"reverse\"}]}", &cursor));
    insert_trips(mctx, 500, 3);
    CHECK_STATUS(strata_save(mctx));
    int nb = 0;
    char *all = drain(cursor, 6, &nb);
    struct json_object *a = parse_json_or_die(all);
    CHECK(json_object_array_length(a) == 40 && nb == 7);
    CHECK_STR_EQ(check_str_member(json_object_array_get_idx(a, 0), "name"), "Zürich 39");
    json_object_put(a);
    free(all);
    strata_cursor_free(cursor);
    strata_context_free(mctx);
    strata_close(mem);
    free(path);
    puts("test_prepared: ok");
    return 0;
}
