/*
 * trips — the SampleTrips app of Apple's SwiftData sessions, in C.
 *
 * Creates a store, inserts personal and business trips with their bucket
 * lists and accommodations, saves, reopens the store and prints what it holds.
 *
 *   usage: trips STORE_PATH
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strata.h>

#include "trips_schema.h"   /* TRIPS_SCHEMA_JSON: examples/trips/schema.json, compiled in by CMake */

/* Every call is checked; on failure print the library's JSON error and stop. */
#define TRY(call)                                                              \
    do {                                                                       \
        strata_status st_ = (call);                                            \
        if (st_ != STRATA_OK) {                                                \
            fprintf(stderr, "%s failed: %s\n  %s\n", #call, strata_errstr(st_),\
                    strata_last_error());                                      \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

/* Prints a JSON array of objects one object per line (a real program would
   parse it with its JSON library of choice). */
static void print_rows(const char *json) {
    int depth = 0, in_string = 0;
    fputs("  ", stdout);
    for (const char *p = json; *p; p++) {
        char c = *p;
        if (in_string) {
            putchar(c);
            if (c == '\\' && p[1]) putchar(*++p);
            else if (c == '"') in_string = 0;
            continue;
        }
        if (c == '"') in_string = 1;
        if ((c == '[' || c == '{') && depth++ == 0) continue;
        if ((c == ']' || c == '}') && --depth == 0) continue;
        if (c == ',' && depth == 1) { fputs("\n  ", stdout); continue; }
        putchar(c);
    }
    putchar('\n');
}

static strata_container *open_store(const char *path) {
    strata_config *config = NULL;
    TRY(strata_config_new("{\"schema\": " TRIPS_SCHEMA_JSON "}", &config));
    strata_container *db = NULL;
    TRY(strata_open(path, config, &db));
    strata_config_free(config);
    return db;
}

static const char *trips[] = {
    "{\"_entity\": \"PersonalTrip\", \"name\": \"Family Visit\", \"destination\": \"Zürich\","
    " \"startDate\": \"2026-12-20T00:00:00Z\", \"endDate\": \"2026-12-28T00:00:00Z\", \"reason\": \"family\","
    " \"livingAccommodation\": {\"placeName\": \"Grandma's\", \"address\": \"Seefeldstrasse 12\"},"
    " \"bucketList\": [{\"title\": \"Christmas market\", \"isInPlan\": true},"
    "                  {\"title\": \"Uetliberg hike\", \"details\": \"if it snows\"}]}",
    "{\"_entity\": \"BusinessTrip\", \"name\": \"WWDC\", \"destination\": \"Cupertino\","
    " \"startDate\": \"2026-06-08T00:00:00Z\", \"endDate\": \"2026-06-12T00:00:00Z\", \"perdiem\": 120.5,"
    " \"livingAccommodation\": {\"placeName\": \"Hotel\", \"address\": \"1 Infinite Loop\"},"
    " \"bucketList\": [{\"title\": \"Keynote\", \"hasReservation\": true, \"isInPlan\": true}]}",
    "{\"name\": \"Road Trip\", \"destination\": \"Route 66\","
    " \"startDate\": \"2027-05-01T00:00:00Z\", \"endDate\": \"2027-05-20T00:00:00Z\"}",
};

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: %s STORE_PATH\n", argv[0]); return 2; }
    printf("Strata %s — SampleTrips\n\n", strata_version());

    strata_container *db = open_store(argv[1]);
    strata_context *ctx = NULL;
    TRY(strata_context_new(db, &ctx));
    char *family_trip = NULL;
    for (size_t i = 0; i < sizeof trips / sizeof trips[0]; i++) {
        char *id = NULL;
        TRY(strata_insert(ctx, "Trip", trips[i], &id));
        printf("inserted %s\n", id);
        if (i == 0) family_trip = id; else strata_free(id);
    }
    /* Inserting the same trip again (same name and dates) updates it: upsert. */
    char *again = NULL;
    TRY(strata_insert(ctx, "Trip", "{\"name\": \"Road Trip\", \"destination\": \"Route 66, Chicago to Santa Monica\","
                                   " \"startDate\": \"2027-05-01T00:00:00Z\", \"endDate\": \"2027-05-20T00:00:00Z\"}", &again));
    printf("upserted %s (same name and dates: the existing trip gets the new destination)\n", again);
    strata_free(again);
    TRY(strata_save(ctx));
    strata_context_free(ctx);
    strata_close(db);
    printf("saved and closed the store; reopening it\n");

    /* Reopen and read everything back. */
    db = open_store(argv[1]);
    TRY(strata_context_new(db, &ctx));
    int64_t count = 0;
    TRY(strata_fetch_count(ctx, "{\"entity\": \"Trip\"}", &count));
    printf("\nthe store holds %lld trips:\n", (long long)count);
    char *json = NULL;
    TRY(strata_fetch(ctx, "{\"entity\": \"Trip\"}", &json));
    print_rows(json);
    strata_free(json);
    printf("  (tripViews is a transient attribute: never stored, it always reads as its default, 0;\n"
           "   photo is optional data kept in a file beside the store when large, none here)\n");

    TRY(strata_fetch(ctx, "{\"entity\": \"Trip\", \"includeSubentities\": false}", &json));
    printf("\nplain trips only (includeSubentities false):\n");
    print_rows(json);
    strata_free(json);

    TRY(strata_fetch(ctx, "{\"entity\": \"BucketListItem\"}", &json));
    printf("\nbucket list items:\n");
    print_rows(json);
    strata_free(json);

    /* The app's queries. The segmented control: personal trips only, searched
       and sorted, with #Predicate text and bindings. */
    TRY(strata_fetch(ctx,
        "{\"entity\": \"Trip\","
        " \"predicate\": \"$0 is PersonalTrip && (searchText.isEmpty ? true :"
        " $0.name.localizedStandardContains(searchText) || $0.destination.localizedStandardContains(searchText))\","
        " \"bindings\": {\"searchText\": \"zur\"},"
        " \"sortBy\": [{\"key\": \"startDate\"}], \"propertiesToFetch\": [\"name\", \"destination\"]}", &json));
    printf("\npersonal trips matching \"zur\" (#Predicate text, sorted by startDate,\n"
           "only name and destination read: propertiesToFetch):\n");
    print_rows(json);
    strata_free(json);

    /* The widget: the next trip that has not ended, served by the endDate index.
       "now" is a binding; the demo fixes it so that its output never changes
       (a real app binds the current time). */
    const char *widget = "{\"entity\": \"Trip\","
        " \"predicate\": {\">=\": [{\"key\": \"endDate\"}, {\"var\": \"now\"}]},"
        " \"bindings\": {\"now\": \"2026-11-22T00:00:00Z\"},"
        " \"sortBy\": [{\"key\": \"startDate\"}], \"fetchLimit\": 1,"
        " \"relationshipKeyPathsForPrefetching\": [\"livingAccommodation\"]}";
    TRY(strata_fetch(ctx, widget, &json));
    printf("\nnext trip (the widget: endDate >= now, fetchLimit 1, accommodation prefetched;\n"
           "now is fixed at 2026-11-22 so the output is the same every run: WWDC has ended by then):\n");
    print_rows(json);
    strata_free(json);

    /* Trips with something planned in their bucket list. */
    TRY(strata_fetch_identifiers(ctx, "{\"entity\": \"Trip\", \"predicate\": \"$0.bucketList.contains { $0.isInPlan }\"}", &json));
    printf("\ntrips with a planned bucket-list item: %s\n", json);
    strata_free(json);

    /* Deleting a trip cascades to its bucket list and accommodation. */
    char *ids = NULL;
    TRY(strata_fetch_identifiers(ctx, "{\"entity\": \"PersonalTrip\"}", &ids));
    printf("\npersonal trips: %s\n", ids);
    strata_free(ids);
    TRY(strata_delete(ctx, family_trip));
    TRY(strata_save(ctx));
    int64_t places = 0;
    TRY(strata_fetch_count(ctx, "{\"entity\": \"BucketListItem\"}", &count));
    TRY(strata_fetch_count(ctx, "{\"entity\": \"LivingAccommodation\"}", &places));
    printf("deleted %s; its bucket list and accommodation went with it (delete rule cascade):\n"
           "  %lld bucket list item(s) and %lld accommodation(s) left, WWDC's\n",
           family_trip, (long long)count, (long long)places);
    strata_free(family_trip);

    /* Bad input gets a clear error and changes nothing. */
    strata_status st = strata_insert(ctx, "Trip", "{\"name\": \"Oops\", \"startDate\": \"yesterday\"}", NULL);
    printf("\ninserting a trip with a bad date: %s\n  %s\n", strata_errstr(st), strata_last_error());
    TRY(strata_fetch_count(ctx, "{\"entity\": \"Trip\"}", &count));
    printf("  nothing changed: the store and the pending changes are as before (%lld trips, %s)\n",
           (long long)count, strata_has_changes(ctx) ? "changes pending" : "no changes pending");

    strata_context_free(ctx);
    strata_close(db);
    return 0;
}
