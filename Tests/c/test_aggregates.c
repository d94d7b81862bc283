/*
 * test_aggregates.c — aggregations through strata.h: strata_fetch with "groupBy",
 * "aggregates", "having" and "distinct" on the SampleTrips schema
 * (examples/trips/schema.json): trips per destination with their bucket-list counts,
 * per diem sums of business trips (inheritance), pending changes, paging and sorting,
 * strata_fetch_count and strata_explain of an aggregation, and the refusals (status and
 * JSON path). Runs on SQLite and, as postgres_test_aggregates, on PostgreSQL.
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

/* strata_fetch(descriptor) must give exactly `expected` (compared as parsed JSON). */
static void expect_fetch(strata_context *ctx, const char *descriptor, const char *expected, int line) {
    char *out = NULL;
    int rc = strata_fetch(ctx, descriptor, &out);
    if (rc != STRATA_OK) {
        fprintf(stderr, "%s:%d: strata_fetch failed (%d): %s\n  %s\n", __FILE__, line, rc, strata_last_error(), descriptor);
        exit(1);
    }
    struct json_object *got = parse_json_or_die(out), *want = parse_json_or_die(expected);
    if (!same_value(got, want)) {
        fprintf(stderr, "%s:%d: unexpected result\n  descriptor: %s\n  got:      %s\n  expected: %s\n", __FILE__, line, descriptor, out, expected);
        exit(1);
    }
    json_object_put(got);
    json_object_put(want);
    strata_free(out);
}
#define EXPECT_FETCH(ctx, d, e) expect_fetch((ctx), (d), (e), __LINE__)

/* A refusal: STRATA_ERR_INVALID naming `path`. */
static void expect_refused(strata_context *ctx, const char *descriptor, const char *path, int line) {
    char *out = NULL;
    int rc = strata_fetch(ctx, descriptor, &out);
    if (rc != STRATA_ERR_INVALID || out != NULL) {
        fprintf(stderr, "%s:%d: expected STRATA_ERR_INVALID, got %d\n  %s\n", __FILE__, line, rc, descriptor);
        exit(1);
    }
    struct json_object *e = parse_json_or_die(strata_last_error());
    const char *p = check_str_member(e, "path");
    if (!p || strcmp(p, path) != 0) {
        fprintf(stderr, "%s:%d: error path %s, expected %s: %s\n", __FILE__, line, p ? p : "(none)", path, strata_last_error());
        exit(1);
    }
    json_object_put(e);
}
#define EXPECT_REFUSED(ctx, d, p) expect_refused((ctx), (d), (p), __LINE__)

static void insert(strata_context *ctx, const char *entity, const char *json) {
    char *id = NULL;
    CHECK_STATUS(strata_insert(ctx, entity, json, &id));
    strata_free(id);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    char *path = test_store_path("aggregates_trips.store");
    strata_container *db = check_open_schema(TRIPS_SCHEMA, path);
    strata_context *ctx = check_context(db);

    insert(ctx, "Trip", "{\"name\": \"Louvre days\", \"destination\": \"Paris\", \"startDate\": \"2026-05-01T00:00:00Z\","
                        " \"endDate\": \"2026-05-04T00:00:00Z\", \"bucketList\": [{\"title\": \"Louvre\"}, {\"title\": \"Seine\", \"isInPlan\": true}]}");
    insert(ctx, "BusinessTrip", "{\"name\": \"Expo\", \"destination\": \"Paris\", \"startDate\": \"2026-06-01T00:00:00Z\","
                                " \"endDate\": \"2026-06-03T00:00:00Z\", \"perdiem\": 120.5, \"bucketList\": [{\"title\": \"Booth\"}]}");
    insert(ctx, "BusinessTrip", "{\"name\": \"Summit\", \"destination\": \"Rome\", \"startDate\": \"2026-07-01T00:00:00Z\","
                                " \"endDate\": \"2026-07-02T00:00:00Z\", \"perdiem\": 80}");
    insert(ctx, "PersonalTrip", "{\"name\": \"Family\", \"destination\": \"Rome\", \"startDate\": \"2026-08-01T00:00:00Z\","
                                " \"endDate\": \"2026-08-09T00:00:00Z\", \"reason\": \"family\", \"bucketList\": [{\"title\": \"Colosseum\"}]}");

    const char *per_destination =
        "{\"entity\": \"Trip\", \"groupBy\": [\"destination\"],"
        " \"aggregates\": [{\"name\": \"trips\", \"function\": \"count\"},"
        "                 {\"name\": \"items\", \"function\": \"count\", \"keyPath\": \"bucketList\"},"
        "                 {\"name\": \"planned\", \"function\": \"count\", \"keyPath\": \"bucketList.isInPlan\"},"
        "                 {\"name\": \"first\", \"function\": \"min\", \"keyPath\": \"startDate\"}]}";
    const char *expected =
        "[{\"destination\": \"Paris\", \"trips\": 2, \"items\": 3, \"planned\": 3, \"first\": \"2026-05-01T00:00:00Z\"},"
        " {\"destination\": \"Rome\", \"trips\": 2, \"items\": 1, \"planned\": 1, \"first\": \"2026-07-01T00:00:00Z\"}]";
    /* Pending, then saved: the same answer. */
    EXPECT_FETCH(ctx, per_destination, expected);
    CHECK_STATUS(strata_save(ctx));
    EXPECT_FETCH(ctx, per_destination, expected);
    printf("ok   trips per destination, with their bucket-list counts\n");

    /* Inheritance: business trips only, then Trip without subentities. */
    EXPECT_FETCH(ctx, "{\"entity\": \"BusinessTrip\", \"aggregates\": [{\"name\": \"perdiem\", \"function\": \"sum\", \"keyPath\": \"perdiem\"},"
                      " {\"name\": \"mean\", \"function\": \"avg\", \"keyPath\": \"perdiem\"}]}",
                 "[{\"perdiem\": 200.5, \"mean\": 100.25}]");
    EXPECT_FETCH(ctx, "{\"entity\": \"Trip\", \"includeSubentities\": false, \"aggregates\": [{\"name\": \"n\", \"function\": \"count\"}]}",
                 "[{\"n\": 1}]");
    printf("ok   inheritance\n");

    /* having, sort by an aggregate, paging; a pending delete is seen, then rolled back. */
    const char *busiest = "{\"entity\": \"Trip\", \"groupBy\": [\"destination\"],"
                          " \"aggregates\": [{\"name\": \"items\", \"function\": \"count\", \"keyPath\": \"bucketList\"}],"
                          " \"having\": \"$0.items >= minimum\", \"bindings\": {\"minimum\": 1},"
                          " \"sortBy\": [{\"key\": \"items\", \"order\": \"reverse\"}], \"fetchLimit\": 1}";
    EXPECT_FETCH(ctx, busiest, "[{\"destination\": \"Paris\", \"items\": 3}]");
    CHECK_STATUS(strata_delete_where(ctx, "Trip", "\"$0.destination == \\\"Paris\\\"\""));
    EXPECT_FETCH(ctx, busiest, "[{\"destination\": \"Rome\", \"items\": 1}]");
    int64_t n = -1;
    CHECK_STATUS(strata_fetch_count(ctx, "{\"entity\": \"Trip\", \"groupBy\": [\"destination\"]}", &n));
    CHECK(n == 1);
    strata_rollback(ctx);
    CHECK_STATUS(strata_fetch_count(ctx, "{\"entity\": \"Trip\", \"groupBy\": [\"destination\"]}", &n));
    CHECK(n == 2);
    EXPECT_FETCH(ctx, "{\"entity\": \"BucketListItem\", \"propertiesToFetch\": [\"isInPlan\"], \"distinct\": true}",
                 "[{\"isInPlan\": false}, {\"isInPlan\": true}]");
    printf("ok   having, sortBy, fetchLimit, distinct, pending changes\n");

    char *plan = NULL;
    CHECK_STATUS(strata_explain(ctx, per_destination, &plan));
    CHECK(strstr(plan, "GROUP BY") != NULL);
    strata_free(plan);

    EXPECT_REFUSED(ctx, "{\"entity\": \"Trip\", \"groupBy\": [\"bucketList\"]}", "/groupBy/0");
    EXPECT_REFUSED(ctx, "{\"entity\": \"Trip\", \"aggregates\": [{\"name\": \"x\", \"function\": \"sum\", \"keyPath\": \"name\"}]}", "/aggregates/0/keyPath");
    EXPECT_REFUSED(ctx, "{\"entity\": \"Trip\", \"aggregates\": [{\"name\": \"1x\", \"function\": \"count\"}]}", "/aggregates/0/name");
    EXPECT_REFUSED(ctx, "{\"entity\": \"Trip\", \"groupBy\": [\"destination\"], \"sortBy\": [{\"key\": \"name\"}]}", "/sortBy/0/key");
    char *ids = NULL;
    CHECK_ERROR_CODE(strata_fetch_identifiers(ctx, per_destination, &ids), STRATA_ERR_INVALID);
    CHECK(ids == NULL);
    strata_prepared *prepared = NULL;
    CHECK_ERROR_CODE(strata_prepare(ctx, per_destination, &prepared), STRATA_ERR_INVALID);
    CHECK(prepared == NULL);
    printf("ok   explain and refusals\n");

    strata_context_free(ctx);
    strata_close(db);
    free(path);
    printf("test_aggregates: ok\n");
    return 0;
}
