/*
 * test_set_writes.c — strata_update_where and strata_delete_where_count (strata.h,
 * "Fetching") on the SampleTrips schema (examples/trips/schema.json), through
 * strata.h only:
 *
 *   - the counts, with out_count NULL too; changes pending until strata_save,
 *     seen by the context's reads at once, undone by strata_rollback;
 *   - cascades at save that the count leaves out;
 *   - bad input: the status, the error's "path", out_count 0, nothing changed;
 *   - strata_delete_where as before.
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
#define N_TRIPS 20

static int64_t count_where(strata_context *ctx, const char *entity, const char *predicate) {
    char *d = predicate ? check_strf("{\"entity\": \"%s\", \"predicate\": %s}", entity, predicate)
                        : check_strf("{\"entity\": \"%s\"}", entity);
    int64_t n = -1;
    CHECK_STATUS(strata_fetch_count(ctx, d, &n));
    free(d);
    return n;
}

/* The call fails with `status`, leaves out_count 0, names `path` (NULL: not checked)
 * and leaves the context's pending changes as they were. */
static void expect_refused(strata_context *ctx, strata_status status, const char *entity, const char *request, const char *path) {
    int had = strata_has_changes(ctx);
    int64_t before = count_where(ctx, "Trip", "\"$0.destination == \\\"Oslo\\\"\"");
    int64_t n = 99;
    strata_status st = strata_update_where(ctx, entity, request, &n);
    const char *error = strata_last_error();
    if (st != status) {
        fprintf(stderr, "strata_update_where(%s, %s) returned %s, expected %s: %s\n", entity ? entity : "NULL", request ? request : "NULL",
                strata_errstr(st), strata_errstr(status), error ? error : "(none)");
        exit(1);
    }
    CHECK(n == 0);
    if (path) {
        json_object *e = parse_json_or_die(error);
        const char *got = check_str_member(e, "path");
        if (!got || strcmp(got, path) != 0) {
            fprintf(stderr, "strata_update_where(%s): path %s, expected %s: %s\n", request, got ? got : "(none)", path, error);
            exit(1);
        }
        json_object_put(e);
    }
    CHECK(strata_has_changes(ctx) == had);
    CHECK(count_where(ctx, "Trip", "\"$0.destination == \\\"Oslo\\\"\"") == before);
}

int main(void) {
    char *path = test_store_path("set_writes.sqlite");
    strata_container *db = check_open_schema(TRIPS_SCHEMA, path);
    strata_context *ctx = check_context(db);

    /* Twenty trips, even ones to Paris and odd ones to Rome, each with one item. */
    for (int i = 0; i < N_TRIPS; i++) {
        char *trip = check_strf("{\"_entity\": \"%s\", \"name\": \"t%d\", \"destination\": \"%s\", \"startDate\": %d, \"endDate\": %d,"
                                " \"bucketList\": [{\"title\": \"item %d\"}]}",
                                i % 4 == 0 ? "BusinessTrip" : "Trip", i, i % 2 ? "Rome" : "Paris", i, i + 1, i);
        CHECK_STATUS(strata_insert(ctx, "Trip", trip, NULL));
        free(trip);
    }
    CHECK_STATUS(strata_save(ctx));

    /* Updates: counted, pending, visible at once, undone by rollback. */
    int64_t n = -1;
    CHECK_STATUS(strata_update_where(ctx, "Trip", "{\"predicate\": \"$0.destination == \\\"Paris\\\"\", \"set\": {\"destination\": \"Lyon\"}}", &n));
    CHECK(n == N_TRIPS / 2);
    CHECK(strata_has_changes(ctx) == 1);
    CHECK(count_where(ctx, "Trip", "\"$0.destination == \\\"Lyon\\\"\"") == N_TRIPS / 2);
    CHECK_STATUS(strata_rollback(ctx));
    CHECK(count_where(ctx, "Trip", "\"$0.destination == \\\"Lyon\\\"\"") == 0);
    /* includeSubentities false and bindings; out_count NULL. */
    CHECK_STATUS(strata_update_where(ctx, "Trip", "{\"predicate\": \"$0.destination == d\", \"bindings\": {\"d\": \"Paris\"},"
                                                  " \"includeSubentities\": false, \"set\": {\"destination\": \"Lyon\"}}", &n));
    CHECK(n == N_TRIPS / 4);
    CHECK_STATUS(strata_update_where(ctx, "BusinessTrip", "{\"set\": {\"perdiem\": 12.5, \"destination\": \"Oslo\"}}", NULL));
    CHECK_STATUS(strata_save(ctx));
    strata_context *other = check_context(db);
    CHECK(count_where(other, "Trip", "\"$0.destination == \\\"Lyon\\\"\"") == N_TRIPS / 4);
    CHECK(count_where(other, "BusinessTrip", "\"$0.perdiem == 12.5 && $0.destination == \\\"Oslo\\\"\"") == N_TRIPS / 4);
    CHECK(count_where(other, "Trip", "\"$0.destination == \\\"Paris\\\"\"") == 0);
    strata_context_free(other);

    /* Bad input: nothing changes, out_count is 0, the error names the problem. */
    CHECK_STATUS(strata_update_where(ctx, "Trip", "{\"predicate\": \"$0.name == \\\"t1\\\"\", \"set\": {\"destination\": \"Oslo\"}}", &n));
    CHECK(n == 1);
    expect_refused(ctx, STRATA_ERR_MISUSE, NULL, "{\"set\": {\"destination\": \"x\"}}", NULL);
    expect_refused(ctx, STRATA_ERR_MISUSE, "Trip", NULL, NULL);
    expect_refused(ctx, STRATA_ERR_INVALID, "Nope", "{\"set\": {\"destination\": \"x\"}}", NULL);
    expect_refused(ctx, STRATA_ERR_INVALID, "Trip", "{\"set\": {\"destination\": \"x\"}, \"fetchLimit\": 1}", "/fetchLimit");
    expect_refused(ctx, STRATA_ERR_INVALID, "Trip", "{\"predicate\": true}", "/set");
    expect_refused(ctx, STRATA_ERR_INVALID, "Trip", "{\"set\": {}}", "/set");
    expect_refused(ctx, STRATA_ERR_INVALID, "Trip", "{\"set\": {\"nope\": 1}}", "/set/nope");
    expect_refused(ctx, STRATA_ERR_VALIDATION, "Trip", "{\"set\": {\"destination\": null}}", "/set/destination");
    expect_refused(ctx, STRATA_ERR_VALIDATION, "Trip", "{\"set\": {\"startDate\": \"soon\"}}", "/set/startDate");
    expect_refused(ctx, STRATA_ERR_INVALID, "Trip", "{\"set\": {\"bucketList\": []}}", "/set/bucketList");
    expect_refused(ctx, STRATA_ERR_INVALID, "Trip", "{\"predicate\": {\"==\": [{\"key\": \"nope\"}, 1]}, \"set\": {\"destination\": \"x\"}}",
                   "/predicate/==/0/key");
    expect_refused(ctx, STRATA_ERR_INVALID, "Trip", "{\"set\": {\"destination\": \"x\"}", NULL);
    expect_refused(ctx, STRATA_ERR_INVALID, "Trip", "[]", "");
    CHECK_ERROR_CODE(strata_update_where(NULL, "Trip", "{\"set\": {\"destination\": \"x\"}}", &n), STRATA_ERR_MISUSE);
    CHECK(n == 0);
    CHECK_STATUS(strata_save(ctx));
    CHECK(count_where(ctx, "Trip", "\"$0.destination == \\\"Oslo\\\"\"") == N_TRIPS / 4 + 1);

    /* Counted deletes: the matched trips, not the items their cascades delete. */
    CHECK_STATUS(strata_delete_where_count(ctx, "Trip", "\"$0.destination == \\\"Oslo\\\"\"", &n));
    CHECK(n == N_TRIPS / 4 + 1);
    CHECK(count_where(ctx, "BucketListItem", NULL) == N_TRIPS - n);
    CHECK_STATUS(strata_rollback(ctx));
    CHECK(count_where(ctx, "Trip", NULL) == N_TRIPS);
    CHECK_STATUS(strata_delete_where_count(ctx, "Trip", "{\"predicate\": \"$0.destination == \\\"Oslo\\\"\", \"includeSubentities\": false}", &n));
    CHECK(n == 1);
    CHECK_STATUS(strata_delete_where_count(ctx, "BusinessTrip", NULL, NULL));
    CHECK_STATUS(strata_save(ctx));
    CHECK(count_where(ctx, "Trip", NULL) == N_TRIPS - N_TRIPS / 4 - 1);
    CHECK(count_where(ctx, "BucketListItem", NULL) == N_TRIPS - N_TRIPS / 4 - 1);
    n = 99;
    CHECK_ERROR_CODE(strata_delete_where_count(ctx, "Trip", "{\"predicate\": true, \"limit\": 1}", &n), STRATA_ERR_INVALID);
    CHECK(n == 0);
    CHECK_ERROR_CODE(strata_delete_where_count(ctx, "Nope", NULL, &n), STRATA_ERR_INVALID);
    CHECK_ERROR_CODE(strata_delete_where_count(ctx, NULL, NULL, &n), STRATA_ERR_MISUSE);
    CHECK(strata_has_changes(ctx) == 0);

    /* strata_delete_where as before: no count, the same deletion. */
    CHECK_STATUS(strata_delete_where(ctx, "Trip", "\"$0.destination == \\\"Rome\\\"\""));
    CHECK(count_where(ctx, "Trip", NULL) == N_TRIPS - N_TRIPS / 4 - 1 - N_TRIPS / 2 + 1);
    CHECK_ERROR_CODE(strata_delete_where(ctx, "Trip", "{\"nope\": 1, \"predicate\": true}"), STRATA_ERR_INVALID);
    CHECK_STATUS(strata_save(ctx));
    CHECK_STATUS(strata_delete_where(ctx, "Trip", NULL));
    CHECK_STATUS(strata_save(ctx));
    CHECK(count_where(ctx, "Trip", NULL) == 0);
    CHECK(count_where(ctx, "BucketListItem", NULL) == 0);

    strata_context_free(ctx);
    strata_close(db);
    free(path);
    printf("test_set_writes: OK\n");
    return 0;
}
