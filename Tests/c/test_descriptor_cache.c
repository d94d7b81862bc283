/*
 * test_descriptor_cache.c — strata_fetch and strata_fetch_count of one descriptor text,
 * called again and again with other bindings inside the text (a widget polling): each
 * context compiles the text once and keeps the plan; this checks through strata.h that
 * such a plan never answers stale:
 *
 *   bindings: every call's own values, bindings first or last in the text;
 *   pending:  a pending insert, update and delete are read, and a rollback undone;
 *   errors:   other values (of the wrong type, out of range), a missing variable or bad
 *             bindings after the text was cached answer or fail as in a context that never
 *             saw it (same status and JSON or error JSON);
 *   migrated: after another container added an attribute, reads answer as before; after
 *             another renamed the attribute the predicate reads, STRATA_ERR_INCOMPATIBLE_STORE.
 *
 * Runs on store files and, with STRATA_TEST_STORE=postgres, on PostgreSQL.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include <strata.h>
#include "check.h"

#define NOTE_V1                                                                                  \
    "{\"version\": \"1.0.0\", \"entities\": [{\"name\": \"Note\", \"attributes\": ["             \
    " {\"name\": \"title\", \"type\": \"string\"}, {\"name\": \"day\", \"type\": \"int\"}]}]}"
#define NOTE_ADDED                                                                               \
    "{\"version\": \"2.0.0\", \"entities\": [{\"name\": \"Note\", \"attributes\": ["             \
    " {\"name\": \"title\", \"type\": \"string\"}, {\"name\": \"day\", \"type\": \"int\"},"      \
    " {\"name\": \"rank\", \"type\": \"int\", \"default\": 7}]}]}"
#define NOTE_RENAMED                                                                             \
    "{\"version\": \"2.0.0\", \"entities\": [{\"name\": \"Note\", \"attributes\": ["             \
    " {\"name\": \"heading\", \"type\": \"string\", \"originalName\": \"title\"},"               \
    " {\"name\": \"day\", \"type\": \"int\"}]}]}"

/* The notes from day `from` on, by day, two at most; `from` is JSON text. */
static char *from_day(const char *from, int bindings_first) {
    if (bindings_first)
        return check_strf("{\"bindings\": {\"from\": %s}, \"entity\": \"Note\", \"predicate\": \"$0.day >= from\","
                          " \"sortBy\": [{\"key\": \"day\"}], \"fetchLimit\": 2}", from);
    return check_strf("{\"entity\": \"Note\", \"predicate\": {\">=\": [{\"key\": \"day\"}, {\"var\": \"from\"}]},"
                      " \"sortBy\": [{\"key\": \"day\"}], \"fetchLimit\": 2, \"bindings\": {\"from\": %s}}", from);
}

static strata_container *notes(const char *path, int n) {
    strata_container *db = check_open("{\"schema\": " NOTE_V1 "}", path);
    strata_context *ctx = check_context(db);
    for (int i = 0; i < n; i++) {
        char *o = check_strf("{\"title\": \"n%d\", \"day\": %d}", i, i);
        CHECK_STATUS(strata_insert(ctx, "Note", o, NULL));
        free(o);
    }
    CHECK_STATUS(strata_save(ctx));
    strata_context_free(ctx);
    return db;
}

/* The days of a fetch's objects, comma-separated ("" for none). */
static char *days(strata_context *ctx, const char *descriptor) {
    char *out = NULL;
    CHECK_STATUS(strata_fetch(ctx, descriptor, &out));
    json_object *a = parse_json_or_die(out);
    CHECK(json_object_is_type(a, json_type_array));
    check_buf b = {0};
    check_buf_add(&b, "");
    for (size_t i = 0; i < json_object_array_length(a); i++) {
        char *one = check_strf("%s%d", i ? "," : "", json_object_get_int(check_member(json_object_array_get_idx(a, i), "day")));
        check_buf_add(&b, one);
        free(one);
    }
    json_object_put(a);
    strata_free(out);
    return b.s;
}

static int64_t count(strata_context *ctx, const char *descriptor) {
    int64_t n = -1;
    CHECK_STATUS(strata_fetch_count(ctx, descriptor, &n));
    return n;
}

static void expect_days(strata_context *ctx, const char *from, int bindings_first, const char *want, int64_t want_count) {
    char *d = from_day(from, bindings_first);
    char *got = days(ctx, d);
    CHECK_STR_EQ(got, want);
    CHECK(count(ctx, d) == want_count);
    free(got);
    free(d);
}

static void test_bindings(const char *path) {
    strata_container *db = notes(path, 20);
    strata_context *ctx = check_context(db);
    for (int round = 0; round < 3; round++) {
        for (int first = 0; first < 2; first++) {
            expect_days(ctx, "0", first, "0,1", 2);
            expect_days(ctx, "7", first, "7,8", 2);
            expect_days(ctx, "19", first, "19", 1);
            expect_days(ctx, "25", first, "", 0);
            expect_days(ctx, "-3", first, "0,1", 2);
        }
    }
    strata_context_free(ctx);
    strata_close(db);
}

static void test_pending(const char *path) {
    strata_container *db = notes(path, 20);
    strata_context *ctx = check_context(db);
    expect_days(ctx, "10", 0, "10,11", 2);
    CHECK_STATUS(strata_insert(ctx, "Note", "{\"title\": \"new\", \"day\": 10}", NULL));
    expect_days(ctx, "10", 0, "10,10", 2);
    CHECK_STATUS(strata_update(ctx, "Note/12", "{\"day\": 3}"));
    CHECK_STATUS(strata_delete(ctx, "Note/13"));
    expect_days(ctx, "11", 0, "13,14", 2);
    expect_days(ctx, "3", 0, "3,3", 2);
    CHECK_STATUS(strata_rollback(ctx));
    expect_days(ctx, "10", 0, "10,11", 2);
    expect_days(ctx, "11", 0, "11,12", 2);
    strata_context_free(ctx);
    strata_close(db);
}

/* What a fetch (or count) gives: its status, then its JSON or count, or the error JSON. */
static char *outcome(strata_context *ctx, const char *descriptor, int fetch) {
    char *out = NULL;
    int64_t n = 0;
    int status = fetch ? strata_fetch(ctx, descriptor, &out) : strata_fetch_count(ctx, descriptor, &n);
    char *r;
    if (status != STRATA_OK) {
        CHECK(out == NULL && n == 0);
        r = check_strf("%d %s", status, strata_last_error());
    } else {
        r = fetch ? check_strf("0 %s", out) : check_strf("0 %lld", (long long)n);
    }
    strata_free(out);
    return r;
}

static void test_errors(const char *path) {
    strata_container *db = notes(path, 5);
    strata_context *warm = check_context(db);
    expect_days(warm, "1", 0, "1,2", 2);
    const char *bad[] = {"\"soon\"", "1.5", "{\"a\": 1}", "9223372036854775808"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *d = from_day(bad[i], 0);
        for (int fetch = 0; fetch < 2; fetch++) {
            strata_context *cold = check_context(db);
            char *want = outcome(cold, d, fetch);
            char *got = outcome(warm, d, fetch);
            CHECK_STR_EQ(got, want);
            if (i == 0) CHECK(strstr(got, "/predicate") != NULL);
            free(want);
            free(got);
            strata_context_free(cold);
        }
        free(d);
    }
    const char *texts[] = {
        "{\"entity\": \"Note\", \"predicate\": {\">=\": [{\"key\": \"day\"}, {\"var\": \"from\"}]},"
        " \"sortBy\": [{\"key\": \"day\"}], \"fetchLimit\": 2, \"bindings\": {}}",
        "{\"entity\": \"Note\", \"predicate\": {\">=\": [{\"key\": \"day\"}, {\"var\": \"from\"}]},"
        " \"sortBy\": [{\"key\": \"day\"}], \"fetchLimit\": 2, \"bindings\": 5}",
        "{\"entity\": \"Note\", \"predicate\": {\">=\": [{\"key\": \"day\"}, {\"var\": \"from\"}]},"
        " \"sortBy\": [{\"key\": \"day\"}], \"fetchLimit\": 2, \"bindings\": {\"from\": 1}",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        strata_context *cold = check_context(db);
        char *want = outcome(cold, texts[i], 1);
        char *got = outcome(warm, texts[i], 1);
        CHECK_STR_EQ(got, want);
        CHECK(got[0] != '0');
        free(want);
        free(got);
        strata_context_free(cold);
    }
    expect_days(warm, "3", 0, "3,4", 2);
    strata_context_free(warm);
    strata_close(db);
}

static void test_migrated(const char *added_path, const char *renamed_path) {
    /* Another container adds an attribute: the cached plan answers as before. */
    strata_container *db = notes(added_path, 10);
    strata_context *ctx = check_context(db);
    expect_days(ctx, "4", 0, "4,5", 2);
    strata_container *added = check_open("{\"schema\": " NOTE_ADDED "}", added_path);
    expect_days(ctx, "4", 0, "4,5", 2);
    expect_days(ctx, "8", 0, "8,9", 2);
    strata_context *n = check_context(added);
    CHECK(count(n, "{\"entity\": \"Note\", \"predicate\": \"$0.rank == r && $0.day >= from\", \"bindings\": {\"r\": 7, \"from\": 4}}") == 6);
    strata_context_free(n);
    strata_close(added);
    strata_context_free(ctx);
    strata_close(db);

    /* Another container renames the attribute the predicate reads: the migration is reported. */
    db = notes(renamed_path, 10);
    ctx = check_context(db);
    const char *by_title = "{\"entity\": \"Note\", \"predicate\": \"$0.title == t\", \"bindings\": {\"t\": \"%s\"}}";
    char *t3 = check_strf(by_title, "n3");
    char *t4 = check_strf(by_title, "n4");
    char *got = days(ctx, t3);
    CHECK_STR_EQ(got, "3");
    free(got);
    strata_container *renamed = check_open("{\"schema\": " NOTE_RENAMED "}", renamed_path);
    char *out = NULL;
    CHECK_ERROR_CODE(strata_fetch(ctx, t4, &out), STRATA_ERR_INCOMPATIBLE_STORE);
    CHECK(strstr(strata_last_error(), "1.0.0") != NULL && strstr(strata_last_error(), "2.0.0") != NULL);
    CHECK_ERROR_CODE(strata_fetch(ctx, t3, &out), STRATA_ERR_INCOMPATIBLE_STORE);
    n = check_context(renamed);
    char *h4 = check_strf("{\"entity\": \"Note\", \"predicate\": \"$0.heading == t\", \"bindings\": {\"t\": \"%s\"}}", "n4");
    got = days(n, h4);
    CHECK_STR_EQ(got, "4");
    free(got);
    free(h4);
    free(t3);
    free(t4);
    strata_context_free(n);
    strata_close(renamed);
    strata_context_free(ctx);
    strata_close(db);
}

int main(void) {
    char *p = test_store_path("cache-bindings.sqlite");
    test_bindings(p);
    free(p);
    p = test_store_path("cache-pending.sqlite");
    test_pending(p);
    free(p);
    p = test_store_path("cache-errors.sqlite");
    test_errors(p);
    free(p);
    char *a = test_store_path("cache-added.sqlite");
    char *r = test_store_path("cache-renamed.sqlite");
    test_migrated(a, r);
    free(a);
    free(r);
    printf("test_descriptor_cache: OK\n");
    return 0;
}
