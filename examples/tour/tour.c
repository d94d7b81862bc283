/*
 * tour — the README's "five-minute tour of the C API", as a program.
 *
 * Every C snippet of the tour is a paragraph of this file, line for line
 * (scripts/check-readme-tour.sh checks that, runs the program and checks its
 * output), so the tour compiles and runs as written.
 *
 *   usage: tour     (creates trips.store in the current directory, afresh)
 */
#include <stdio.h>
#include <stdlib.h>
#include <strata.h>

#include "tour_schema.h"   /* TOUR_SCHEMA_JSON: examples/tour/schema.json, compiled in by CMake */

/* Every call returns a status; on failure strata_last_error() says why. */
#define CHECK(call) do { if ((call) != STRATA_OK) { \
        fprintf(stderr, "%s\n", strata_last_error()); exit(1); } } while (0)

/* Called after each save that changed a Trip (on the saving thread), and by
   strata_poll_changes() for saves of other processes. */
static void on_trips_changed(const char *changes_json, void *userdata) {
    (void)userdata;
    printf("changed: %s\n", changes_json);   /* {"token":"5@…","inserted":{"Trip":["Trip/2"]},"updated":{},"deleted":{}} */
}

int main(void) {
    const char *config_json = "{\"schema\": " TOUR_SCHEMA_JSON "}";
    remove("trips.store");   /* the tour starts from an empty store */
    remove("trips.store-wal");
    remove("trips.store-shm");

    strata_config *cfg = NULL;
    if (strata_config_new(config_json /* {"schema": {...}} */, &cfg) != STRATA_OK) {
        fprintf(stderr, "%s\n", strata_last_error());   /* names the JSON path of the problem */
        return 1;
    }
    strata_container *db = NULL;
    strata_status st = strata_open("trips.store", cfg, &db);
    strata_config_free(cfg);
    if (st != STRATA_OK) {
        fprintf(stderr, "%s: %s\n", strata_errstr(st), strata_last_error());
        return 1;
    }
    strata_context *ctx = NULL;
    CHECK(strata_context_new(db, &ctx));     /* one context per thread */

    char *id = NULL;
    CHECK(strata_insert(ctx, "Trip",
        "{\"_entity\": \"PersonalTrip\", \"name\": \"Family Visit\", \"destination\": \"Zürich\","
        " \"startDate\": \"2026-12-20\", \"endDate\": \"2026-12-28\", \"reason\": \"family\","
        " \"bucketList\": [{\"title\": \"Christmas market\"}]}", &id));   /* id: "PersonalTrip/1" */
    CHECK(strata_save(ctx));                                              /* one transaction */
    printf("inserted %s\n", id);

    char *same = NULL;
    CHECK(strata_insert(ctx, "Trip",                         /* same name and dates: an upsert */
        "{\"_entity\": \"PersonalTrip\", \"name\": \"Family Visit\", \"destination\": \"Zürich\","
        " \"startDate\": \"2026-12-20\", \"endDate\": \"2026-12-28\", \"reason\": \"family\","
        " \"bucketList\": [{\"title\": \"Ski day\"}]}", &same));   /* same: "PersonalTrip/1" again */
    CHECK(strata_save(ctx));
    printf("upserted %s\n", same);
    strata_free(same);

    char *json = NULL;
    CHECK(strata_fetch(ctx, "{\"entity\": \"BucketListItem\"}", &json));
    puts(json);    /* [{…"title":"Christmas market","trip":null},{…"title":"Ski day","trip":"PersonalTrip/1"}] */
    strata_free(json);

    CHECK(strata_get(ctx, id, &json));     /* {"_id":"PersonalTrip/1","_entity":"PersonalTrip","name":...,
                                              "bucketList":["BucketListItem/2"]} */
    puts(json);
    strata_free(json);
    CHECK(strata_update(ctx, id, "{\"reason\": \"reunion\"}"));
    CHECK(strata_save(ctx));               /* or strata_rollback(ctx): forget the pending changes */

    CHECK(strata_fetch(ctx,
        "{\"entity\": \"Trip\","
        " \"predicate\": \"searchText.isEmpty ? true : $0.name.localizedStandardContains(searchText)"
        " || $0.destination.localizedStandardContains(searchText)\","
        " \"bindings\": {\"searchText\": \"zur\"},"          /* matches Zürich */
        " \"sortBy\": [{\"key\": \"startDate\"}], \"fetchLimit\": 20,"
        " \"relationshipKeyPathsForPrefetching\": [\"bucketList\"]}", &json));
    puts(json);    /* the trip, its bucket list as objects instead of identifiers */
    strata_free(json);
    CHECK(strata_fetch_identifiers(ctx, "{\"entity\": \"Trip\", \"predicate\": {\"is\": \"PersonalTrip\"}}", &json));
    puts(json);    /* ["PersonalTrip/1"] */
    strata_free(json);
    CHECK(strata_explain(ctx, "{\"entity\": \"Trip\", \"sortBy\": [{\"key\": \"startDate\"}]}", &json));
    puts(json);    /* {"sql":"SELECT …","parameterCount":0,"queryPlan":[…]} */
    strata_free(json);

    CHECK(strata_delete(ctx, id));         /* cascades to its bucket list ("Ski day") when saved */
    CHECK(strata_delete_where(ctx, "BucketListItem",                /* "Christmas market" */
        "{\"predicate\": \"$0.trip == nil\"}"));
    CHECK(strata_save(ctx));               /* both deletions, one transaction */
    strata_free(id);
    int64_t count = -1;
    CHECK(strata_fetch_count(ctx, "{\"entity\": \"BucketListItem\"}", &count));
    printf("%lld bucket list items left\n", (long long)count);   /* 0 */

    if (strata_insert(ctx, "Trip", "{\"name\": 42}", NULL) != STRATA_OK)
        puts(strata_last_error());
    /* {"code":"validation","status":6,"message":"'Trip.name' (string): expected a string, found a number",
        "entity":"Trip","attribute":"name","path":"/name"} */
    printf("pending changes: %d\n", strata_has_changes(ctx));   /* 0: the failed insert left none */

    strata_observer *observer = NULL;
    CHECK(strata_observe(db, "{\"entityNames\": [\"Trip\"]}", on_trips_changed, NULL, NULL, &observer));

    CHECK(strata_fetch_history(ctx,                      /* the latest transaction: keep its token */
        "{\"sortBy\": [{\"key\": \"transactionIdentifier\", \"order\": \"reverse\"}], \"fetchLimit\": 1}", &json));
    puts(json);    /* [{"token":"4@…","timestamp":"…","changes":[{"kind":"delete","id":"PersonalTrip/1",…},…]}] */
    char token[64] = "";
    sscanf(json, "[{\"token\":\"%63[^\"]", token);       /* (or read it with a JSON parser) */
    strata_free(json);

    CHECK(strata_insert(ctx, "Trip", "{\"name\": \"Weekend in Lyon\", \"destination\": \"Lyon\","
        " \"startDate\": \"2027-03-05\", \"endDate\": \"2027-03-07\"}", NULL));
    CHECK(strata_save(ctx));               /* prints: changed: {"token":"5@…","inserted":{"Trip":["Trip/2"]},…} */

    char descriptor[512];
    snprintf(descriptor, sizeof descriptor, "{\"predicate\": \"$0.token > lastToken && $0.changes.contains {"
        " entityNames.contains($0.changedPersistentIdentifier.entityName) }\","
        " \"bindings\": {\"lastToken\": \"%s\", \"entityNames\": [\"Trip\"]}}", token);
    CHECK(strata_fetch_history(ctx, descriptor, &json));
    puts(json);    /* [{"token":"5@…",…,"changes":[{"kind":"insert","id":"Trip/2","entity":"Trip"}]}] */
    strata_free(json);
    strata_observer_remove(observer);

    strata_context_free(ctx);
    strata_close(db);
    return 0;
}
