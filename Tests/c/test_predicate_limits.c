/*
 * test_predicate_limits.c — predicates at and past their limits, through
 * strata.h only (docs/predicates.md §6).
 *
 * - Every nesting construct (not, alternating and/or, contains/allSatisfy
 *   closures, conditionals, ??, and their #Predicate text forms) at every
 *   depth from 1 to the JSON nesting limit runs through strata_fetch,
 *   strata_fetch_count and strata_delete_where, or fails with
 *   STRATA_ERR_INVALID, code "invalid" and a "path" under "/predicate" —
 *   never STRATA_ERR_INTERNAL; once a depth is rejected, deeper ones are too.
 * - Long flat disjunctions and conjunctions (5,000 terms) run.
 * - externalStorage attributes: comparing, searching or sorting their values
 *   is STRATA_ERR_INVALID with the path; == nil and != nil give the same
 *   objects before and after the values move to files on save.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include <strata.h>
#include "check.h"

#ifndef STRATA_SOURCE_DIR
#define STRATA_SOURCE_DIR "."
#endif
#define TRIPS_SCHEMA STRATA_SOURCE_DIR "/examples/trips/schema.json"

/* ---- helpers ------------------------------------------------------------ */

static int failures;

/* A failed call: STRATA_ERR_INVALID, code "invalid", a path starting with `path_prefix`, a message containing `has`. */
static int expect_invalid(strata_status st, const char *what, const char *path_prefix, const char *has) {
    const char *borrowed = strata_last_error();
    json_object *err = parse_json_or_die(borrowed ? borrowed : "null");
    const char *code = check_str_member(err, "code"), *path = check_str_member(err, "path"), *message = check_str_member(err, "message");
    int ok = st == STRATA_ERR_INVALID && code && strcmp(code, "invalid") == 0 && path &&
             strncmp(path, path_prefix, strlen(path_prefix)) == 0 && message && (!has || strstr(message, has));
    if (!ok) {
        fprintf(stderr, "FAIL %s: status %d (%s), expected STRATA_ERR_INVALID with a path under \"%s\"%s%s\n  %s\n", what, (int)st,
                strata_errstr(st), path_prefix, has ? " and a message with " : "", has ? has : "", json_object_to_json_string(err));
        failures++;
    }
    json_object_put(err);
    return ok;
}

/* ---- nesting ------------------------------------------------------------ */

/* A JSON predicate: `construct` nested `depth` times. */
static char *nested(int construct, int depth) {
    check_buf b = {0};
    const char *leaf = "{\"==\": [{\"key\": \"name\"}, \"Family Visit\"]}";
    const char *item_leaf = "{\"key\": \"isInPlan\"}";
    switch (construct) {
    case 0:  /* not */
        check_buf_repeat(&b, "{\"not\": ", depth); check_buf_add(&b, leaf); check_buf_repeat(&b, "}", depth);
        break;
    case 1:  /* not (and (…)) alternating with not (or (…)) */
        for (int i = 0; i < depth; i++) { check_buf_add(&b, i % 2 ? "{\"not\": {\"or\": [" : "{\"not\": {\"and\": ["); check_buf_add(&b, leaf); check_buf_add(&b, ", "); }
        check_buf_add(&b, leaf); check_buf_repeat(&b, "]}}", depth);
        break;
    case 2:  /* and/or alternating */
        for (int i = 0; i < depth; i++) { check_buf_add(&b, i % 2 ? "{\"or\": [" : "{\"and\": ["); check_buf_add(&b, "{\"not\": "); check_buf_add(&b, leaf); check_buf_add(&b, "}, "); }
        check_buf_add(&b, leaf); check_buf_repeat(&b, "]}", depth);
        break;
    case 3:  /* any closures */
    case 4:  /* all closures */
        for (int i = 0; i < depth; i++) {
            check_buf_add(&b, construct == 3 ? "{\"any\": [{\"key\": \"" : "{\"all\": [{\"key\": \"");
            check_buf_add(&b, i == 0 ? "bucketList" : "trip.bucketList");
            check_buf_add(&b, "\"}, ");
        }
        check_buf_add(&b, item_leaf); check_buf_repeat(&b, "]}", depth);
        break;
    case 5:  /* conditionals, nested in the then branch */
        for (int i = 0; i < depth; i++) { check_buf_add(&b, "{\"cond\": [{\"isEmpty\": {\"key\": \"bucketList\"}}, "); }
        check_buf_add(&b, leaf); check_buf_repeat(&b, ", {\"isEmpty\": {\"key\": \"destination\"}}]}", depth);
        break;
    default: /* ?? */
        check_buf_add(&b, "{\"==\": ["); check_buf_repeat(&b, "{\"??\": [{\"key\": \"livingAccommodation.placeName\"}, ", depth);
        check_buf_add(&b, "{\"key\": \"name\"}"); check_buf_repeat(&b, "]}", depth); check_buf_add(&b, ", \"Family Visit\"]}");
        break;
    }
    return b.s;
}

/* #Predicate text, as a JSON string: `construct` nested `depth` times. */
static char *nested_text(int construct, int depth) {
    check_buf b = {0};
    check_buf_add(&b, "\"");
    switch (construct) {
    case 0:  /* !( … ) */
        check_buf_repeat(&b, "!(", depth); check_buf_add(&b, "$0.name == \\\"Family Visit\\\""); check_buf_repeat(&b, ")", depth);
        break;
    case 1:  /* nested || groups */
        check_buf_repeat(&b, "$0.name == \\\"WWDC\\\" || (", depth); check_buf_add(&b, "$0.name == \\\"Family Visit\\\""); check_buf_repeat(&b, ")", depth);
        break;
    case 2:  /* !( … && ( … || … )) */
        for (int i = 0; i < depth; i++) check_buf_add(&b, i % 2 ? "!($0.name == \\\"WWDC\\\" || " : "!($0.name == \\\"WWDC\\\" && ");
        check_buf_add(&b, "$0.destination.isEmpty"); check_buf_repeat(&b, ")", depth);
        break;
    default: /* contains closures */
        for (int i = 0; i < depth; i++) check_buf_add(&b, i == 0 ? "$0.bucketList.contains { " : "$0.trip?.bucketList.contains { ");
        check_buf_add(&b, "$0.isInPlan"); check_buf_repeat(&b, " }", depth);
        break;
    }
    check_buf_add(&b, "\"");
    return b.s;
}

static void sweep(strata_context *ctx, const char *name, char *(*build)(int, int), int construct, int max_depth) {
    int accepted = 0, rejected_from = 0;
    for (int depth = 1; depth <= max_depth; depth++) {
        char *p = build(construct, depth);
        check_buf d = {0};
        check_buf_add(&d, "{\"entity\": \"Trip\", \"predicate\": "); check_buf_add(&d, p); check_buf_add(&d, "}");
        /* Prefetching, a limit and a subentity wrap the predicate deepest. */
        check_buf wrapped = {0};
        check_buf_add(&wrapped, "{\"entity\": \"PersonalTrip\", \"fetchLimit\": 100, \"sortBy\": [{\"key\": \"name\"}],"
                      " \"relationshipKeyPathsForPrefetching\": [\"bucketList\", \"livingAccommodation\"], \"predicate\": ");
        check_buf_add(&wrapped, p); check_buf_add(&wrapped, "}");
        char what[96];
        snprintf(what, sizeof what, "%s at depth %d", name, depth);

        char *out = NULL;
        strata_status st = strata_fetch(ctx, d.s, &out);
        if (st == STRATA_OK) {
            strata_free(out);
            if (rejected_from) { fprintf(stderr, "FAIL %s runs, but depth %d was rejected\n", what, rejected_from); failures++; }
            accepted = depth;
            int64_t n = -1;
            st = strata_fetch_count(ctx, wrapped.s, &n);
            if (st != STRATA_OK) { fprintf(stderr, "FAIL %s: fetch_count %s: %s\n", what, strata_errstr(st), strata_last_error()); failures++; }
            st = strata_fetch(ctx, wrapped.s, &out);
            if (st != STRATA_OK) { fprintf(stderr, "FAIL %s: prefetching fetch %s: %s\n", what, strata_errstr(st), strata_last_error()); failures++; }
            else strata_free(out);
            st = strata_delete_where(ctx, "Trip", p);
            if (st != STRATA_OK) { fprintf(stderr, "FAIL %s: delete_where %s: %s\n", what, strata_errstr(st), strata_last_error()); failures++; }
            CHECK_STATUS(strata_rollback(ctx));
        } else if (st == STRATA_ERR_INVALID && strstr(strata_last_error(), "nesting deeper than")) {
            /* Past the JSON nesting limit the descriptor itself is malformed: stop there. */
            free(p); free(d.s); free(wrapped.s);
            break;
        } else {
            if (!rejected_from) rejected_from = depth;
            if (expect_invalid(st, what, "/predicate", "nested too deeply")) {
                /* strata_delete_where rejects it the same way; its paths point into its own input. */
                expect_invalid(strata_delete_where(ctx, "Trip", p), what, "", "nested too deeply");
            }
        }
        free(p); free(d.s); free(wrapped.s);
    }
    printf("  %s: runs to depth %d%s\n", name, accepted, rejected_from ? ", then STRATA_ERR_INVALID" : "");
    if (accepted < 5) { fprintf(stderr, "FAIL %s: only %d levels run\n", name, accepted); failures++; }
}

static void test_nesting(void) {
    char *schema = check_read_file(TRIPS_SCHEMA);
    check_buf c = {0};
    check_buf_add(&c, "{\"schema\": "); check_buf_add(&c, schema); check_buf_add(&c, ", \"inMemory\": true}");
    strata_container *db = check_open(c.s, NULL);
    strata_context *ctx = NULL;
    CHECK_STATUS(strata_context_new(db, &ctx));
    CHECK_STATUS(strata_insert(ctx, "Trip",
                               "{\"_entity\": \"PersonalTrip\", \"name\": \"Family Visit\", \"destination\": \"Zurich\","
                               " \"startDate\": \"2026-12-20T00:00:00Z\", \"endDate\": \"2026-12-28T00:00:00Z\", \"reason\": \"family\","
                               " \"livingAccommodation\": {\"placeName\": \"Grandma's\", \"address\": \"Seefeldstrasse 12\"},"
                               " \"bucketList\": [{\"title\": \"Christmas market\", \"isInPlan\": true}, {\"title\": \"Museum\"}]}", NULL));
    CHECK_STATUS(strata_insert(ctx, "Trip", "{\"name\": \"WWDC\", \"destination\": \"\", \"startDate\": 0, \"endDate\": 0}", NULL));
    CHECK_STATUS(strata_save(ctx));

    static const char *const json_names[] = {"not", "not-and-or", "and-or", "any", "all", "cond", "??"};
    for (int k = 0; k < 7; k++) sweep(ctx, json_names[k], nested, k, 128);
    static const char *const text_names[] = {"text !", "text || groups", "text !-&&-||", "text contains"};
    for (int k = 0; k < 4; k++) sweep(ctx, text_names[k], nested_text, k, 128);

    /* 5,000 terms, flat: equalities of one key path (one IN list) and comparisons of two. */
    for (int kind = 0; kind < 3; kind++) {
        check_buf p = {0};
        check_buf_add(&p, kind == 2 ? "{\"entity\": \"Trip\", \"predicate\": {\"and\": [" : "{\"entity\": \"Trip\", \"predicate\": {\"or\": [");
        for (int i = 0; i < 5000; i++) {
            char term[96];
            if (kind == 0) snprintf(term, sizeof term, "%s{\"==\": [{\"key\": \"name\"}, \"n%d\"]}", i ? ", " : "", i);
            else snprintf(term, sizeof term, "%s{\"%s\": [{\"key\": \"%s\"}, \"n%d\"]}", i ? ", " : "", kind == 1 ? "==" : "!=",
                          i % 2 ? "name" : "destination", i);
            check_buf_add(&p, term);
        }
        check_buf_add(&p, "]}}");
        int64_t n = -1;
        CHECK_STATUS(strata_fetch_count(ctx, p.s, &n));
        CHECK(n == (kind == 2 ? 2 : 0));
        free(p.s);
    }
    strata_context_free(ctx);
    strata_close(db);
    free(c.s);
    free(schema);
}

/* ---- external storage --------------------------------------------------- */

static void test_external_storage(void) {
    char *path = test_store_path("predicate_limits_photos.store");
    strata_container *db = check_open(
        "{\"externalStorageThreshold\": 4, \"schema\": {\"version\": \"1\", \"entities\": [{\"name\": \"Photo\", \"attributes\": ["
        "{\"name\": \"caption\", \"type\": \"string\", \"optional\": true},"
        "{\"name\": \"image\", \"type\": \"data\", \"optional\": true, \"externalStorage\": true}]}]}}", path);
    strata_context *ctx = NULL;
    CHECK_STATUS(strata_context_new(db, &ctx));
    CHECK_STATUS(strata_insert(ctx, "Photo", "{\"caption\": \"big\", \"image\": \"AAECAwQFBgcICQ==\"}", NULL));
    CHECK_STATUS(strata_insert(ctx, "Photo", "{\"caption\": \"none\"}", NULL));

    static const struct { const char *descriptor, *path; } bad[] = {
        {"{\"entity\": \"Photo\", \"predicate\": {\"==\": [{\"key\": \"image\"}, \"AAECAwQFBgcICQ==\"]}}", "/predicate/==/0/key"},
        {"{\"entity\": \"Photo\", \"predicate\": {\"!=\": [{\"key\": \"image\"}, {\"data\": \"AAECAwQFBgcICQ==\"}]}}", "/predicate/!=/0/key"},
        {"{\"entity\": \"Photo\", \"predicate\": {\"or\": [false, {\"==\": [{\"??\": [{\"key\": \"image\"}, {\"data\": \"AA==\"}]}, {\"data\": \"AA==\"}]}]}}",
         "/predicate/or/1/==/0/?" "?/0/key"},
        {"{\"entity\": \"Photo\", \"sortBy\": [{\"key\": \"image\"}]}", "/sortBy/0/key"},
    };
    for (int saved = 0; saved < 2; saved++) {
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            char *out = NULL;
            strata_status st = strata_fetch(ctx, bad[i].descriptor, &out);
            if (expect_invalid(st, bad[i].descriptor, bad[i].path, "external storage")) {
                const char *e = strata_last_error();
                json_object *err = parse_json_or_die(e);
                CHECK_STR_EQ(check_str_member(err, "path"), bad[i].path);
                json_object_put(err);
            }
            CHECK(out == NULL);
            int64_t n = 7;
            expect_invalid(strata_fetch_count(ctx, bad[i].descriptor, &n), bad[i].descriptor, bad[i].path, "external storage");
            CHECK(n == 0);
        }
        expect_invalid(strata_delete_where(ctx, "Photo", "\"$0.image == $0.image\""), "text comparison", "", "position 1");
        /* Nil tests are exact: the same objects before and after the value moves to a file. */
        char *ids = NULL;
        CHECK_STATUS(strata_fetch_identifiers(ctx, "{\"entity\": \"Photo\", \"predicate\": {\"==\": [{\"key\": \"image\"}, null]}}", &ids));
        CHECK_STR_EQ(ids, "[\"Photo/2\"]");
        strata_free(ids);
        CHECK_STATUS(strata_fetch_identifiers(ctx, "{\"entity\": \"Photo\", \"predicate\": \"$0.image != nil\"}", &ids));
        CHECK_STR_EQ(ids, "[\"Photo/1\"]");
        strata_free(ids);
        CHECK_STATUS(strata_save(ctx));
    }
    strata_context_free(ctx);
    strata_close(db);
    free(path);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    test_nesting();
    test_external_storage();
    printf("test_predicate_limits: %d failures\n", failures);
    return failures ? 1 : 0;
}
