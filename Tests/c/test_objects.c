/*
 * test_objects.c — strata.h sections "Objects", "Fetching" and "Saving" on
 * the SampleTrips schema: insert (nested, subentities), save, reopen, get and
 * fetch read back equal; update; delete with cascade; rollback; upsert and
 * "_onConflict"; insert_many in order and all-or-nothing.
 *
 * Results are compared as parsed JSON (json-c), never as text.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include <strata.h>
#include "check.h"

#ifndef STRATA_SOURCE_DIR
#define STRATA_SOURCE_DIR "."
#endif
#define FIXTURES STRATA_SOURCE_DIR "/Tests/c/fixtures/"

/* ---- helpers ------------------------------------------------------------ */

#define open_trips(path) check_open_schema(FIXTURES "trips.json", (path))

/* strata_get, parsed; the object's _id is `id`. */
static json_object *get_object(strata_context *ctx, const char *id) {
    char *text = NULL;
    CHECK_STATUS(strata_get(ctx, id, &text));
    json_object *obj = parse_json_or_die(text);
    strata_free(text);
    CHECK(json_object_is_type(obj, json_type_object));
    CHECK_STR_EQ(check_str_member(obj, "_id"), id);
    return obj;
}

static json_object *fetch(strata_context *ctx, const char *descriptor) {
    char *text = NULL;
    CHECK_STATUS(strata_fetch(ctx, descriptor, &text));
    json_object *arr = parse_json_or_die(text);
    strata_free(text);
    CHECK(json_object_is_type(arr, json_type_array));
    return arr;
}

static int64_t fetch_count(strata_context *ctx, const char *descriptor) {
    int64_t n = -1;
    CHECK_STATUS(strata_fetch_count(ctx, descriptor, &n));
    return n;
}

static int64_t count(strata_context *ctx, const char *entity) {
    char *d = check_strf("{\"entity\": \"%s\"}", entity);
    int64_t n = fetch_count(ctx, d);
    free(d);
    return n;
}

/* A relationship array holds exactly these identifiers, in this order. */
static void expect_ids(json_object *obj, const char *key, const char *const *ids, size_t n) {
    json_object *arr = check_member(obj, key);
    CHECK(arr != NULL && json_object_is_type(arr, json_type_array));
    if ((size_t)json_object_array_length(arr) != n)
        fprintf(stderr, "\"%s\" has %zu identifiers, expected %zu: %s\n", key, (size_t)json_object_array_length(arr), n,
                json_object_to_json_string(arr));
    CHECK((size_t)json_object_array_length(arr) == n);
    for (size_t i = 0; i < n; i++) CHECK_STR_EQ(json_object_get_string(json_object_array_get_idx(arr, i)), ids[i]);
}

static int has_prefix(const char *s, const char *prefix) {
    return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

static char *insert(strata_context *ctx, const char *entity, const char *json) {
    char *id = NULL;
    CHECK_STATUS(strata_insert(ctx, entity, json, &id));
    CHECK(id != NULL);
    return id;
}

static char *dup_member(json_object *obj, const char *key) {
    const char *s = check_str_member(obj, key);
    CHECK(s != NULL);
    return strdup(s);
}

static const char *const trip_keys[] = {"_id", "_entity", "name", "destination", "startDate", "endDate", "photo",
                                        "tripViews", "bucketList", "livingAccommodation"};
#define N_TRIP_KEYS (sizeof trip_keys / sizeof trip_keys[0])

/* ---- the round trip ----------------------------------------------------- */

static const char *family_json =
    "{\"_entity\": \"PersonalTrip\", \"name\": \"Family Visit\", \"destination\": \"Z\\u00fcrich\","
    " \"startDate\": \"2026-12-20T00:00:00Z\", \"endDate\": \"2026-12-28T00:00:00Z\", \"reason\": \"family\","
    " \"livingAccommodation\": {\"placeName\": \"Grandma's\", \"address\": \"Seefeldstrasse 12\"},"
    " \"bucketList\": [{\"title\": \"Christmas market\", \"isInPlan\": true},"
    "                  {\"title\": \"Uetliberg hike\", \"details\": \"if it snows\"}]}";
static const char *wwdc_json =
    "{\"_entity\": \"BusinessTrip\", \"name\": \"WWDC\", \"destination\": \"Cupertino\","
    " \"startDate\": \"2026-06-08T09:00:00-07:00\", \"endDate\": \"2026-06-12T00:00:00Z\", \"perdiem\": 120.5,"
    " \"photo\": \"aGVsbG8gd29ybGQ=\","
    " \"livingAccommodation\": {\"placeName\": \"Hotel\", \"address\": \"1 Infinite Loop\"},"
    " \"bucketList\": [{\"title\": \"Keynote\", \"hasReservation\": true, \"isInPlan\": true}]}";
/* Dates as seconds since 1970 and with a fraction; no relationships. */
static const char *road_json =
    "{\"name\": \"Road Trip\", \"destination\": \"Route 66\","
    " \"startDate\": 1809129600, \"endDate\": \"2027-05-20T10:30:00.250Z\"}";

typedef struct {
    char *family, *wwdc, *road;                 /* trips */
    char *market, *hike, *keynote;              /* bucket list items */
    char *grandmas, *hotel;                     /* accommodations */
} trip_ids;

static void free_ids(trip_ids *t) {
    strata_free(t->family);
    strata_free(t->wwdc);
    strata_free(t->road);
    free(t->market);
    free(t->hike);
    free(t->keynote);
    free(t->grandmas);
    free(t->hotel);
}

/* Inserts the three trips; fills `t` from the pending objects. */
static void insert_trips(strata_context *ctx, trip_ids *t) {
    t->family = insert(ctx, "Trip", family_json);
    t->wwdc = insert(ctx, "Trip", wwdc_json);
    t->road = insert(ctx, "Trip", road_json);
    CHECK(has_prefix(t->family, "PersonalTrip/"));
    CHECK(has_prefix(t->wwdc, "BusinessTrip/"));
    CHECK(has_prefix(t->road, "Trip/"));
    /* Identifiers are distinct across the hierarchy (one key space). */
    CHECK(strcmp(strchr(t->family, '/'), strchr(t->wwdc, '/')) != 0);
    CHECK(strcmp(strchr(t->family, '/'), strchr(t->road, '/')) != 0);
    CHECK(strcmp(strchr(t->wwdc, '/'), strchr(t->road, '/')) != 0);

    /* Pending inserts have their final identifiers at once: read the related ones. */
    json_object *family = get_object(ctx, t->family);
    json_object *list = check_member(family, "bucketList");
    CHECK(list && json_object_array_length(list) == 2);
    t->market = strdup(json_object_get_string(json_object_array_get_idx(list, 0)));
    t->hike = strdup(json_object_get_string(json_object_array_get_idx(list, 1)));
    t->grandmas = dup_member(family, "livingAccommodation");
    json_object_put(family);
    json_object *wwdc = get_object(ctx, t->wwdc);
    list = check_member(wwdc, "bucketList");
    CHECK(list && json_object_array_length(list) == 1);
    t->keynote = strdup(json_object_get_string(json_object_array_get_idx(list, 0)));
    t->hotel = dup_member(wwdc, "livingAccommodation");
    json_object_put(wwdc);
    CHECK(has_prefix(t->market, "BucketListItem/"));
    CHECK(has_prefix(t->hike, "BucketListItem/"));
    CHECK(has_prefix(t->keynote, "BucketListItem/"));
    CHECK(has_prefix(t->grandmas, "LivingAccommodation/"));
    CHECK(has_prefix(t->hotel, "LivingAccommodation/"));
}

/* Every value of every object as inserted, relationships in both directions. */
static void check_trips(strata_context *ctx, const trip_ids *t) {
    json_object *o = get_object(ctx, t->family);
    {
        static const char *const keys[] = {"_id", "_entity", "name", "destination", "startDate", "endDate", "photo",
                                           "tripViews", "bucketList", "livingAccommodation", "reason"};
        expect_keys(o, keys, sizeof keys / sizeof keys[0]);
    }
    expect_fields(o, "{\"_entity\": \"PersonalTrip\", \"name\": \"Family Visit\", \"destination\": \"Z\\u00fcrich\","
                     " \"startDate\": \"2026-12-20T00:00:00Z\", \"endDate\": \"2026-12-28T00:00:00Z\","
                     " \"photo\": null, \"tripViews\": 0, \"reason\": \"family\", \"livingAccommodation\": \"%s\"}",
                  t->grandmas);
    {
        const char *ids[] = {t->market, t->hike};
        expect_ids(o, "bucketList", ids, 2);
    }
    json_object_put(o);

    o = get_object(ctx, t->wwdc);
    {
        static const char *const keys[] = {"_id", "_entity", "name", "destination", "startDate", "endDate", "photo",
                                           "tripViews", "bucketList", "livingAccommodation", "perdiem"};
        expect_keys(o, keys, sizeof keys / sizeof keys[0]);
    }
    expect_fields(o, "{\"_entity\": \"BusinessTrip\", \"name\": \"WWDC\", \"destination\": \"Cupertino\","
                     " \"startDate\": \"2026-06-08T16:00:00Z\", \"endDate\": \"2026-06-12T00:00:00Z\","
                     " \"photo\": \"aGVsbG8gd29ybGQ=\", \"tripViews\": 0, \"perdiem\": 120.5,"
                     " \"livingAccommodation\": \"%s\"}",
                  t->hotel);
    CHECK(json_object_is_type(check_member(o, "perdiem"), json_type_double) || json_object_is_type(check_member(o, "perdiem"), json_type_int));
    {
        const char *ids[] = {t->keynote};
        expect_ids(o, "bucketList", ids, 1);
    }
    json_object_put(o);

    o = get_object(ctx, t->road);
    expect_keys(o, trip_keys, N_TRIP_KEYS);
    expect_fields(o, "{\"_entity\": \"Trip\", \"name\": \"Road Trip\", \"destination\": \"Route 66\","
                     " \"startDate\": \"2027-05-01T00:00:00Z\", \"endDate\": \"2027-05-20T10:30:00.250Z\","
                     " \"photo\": null, \"tripViews\": 0, \"livingAccommodation\": null, \"bucketList\": []}");
    json_object_put(o);

    /* The other direction: each item and accommodation points to its trip. */
    static const char *const item_keys[] = {"_id", "_entity", "title", "details", "hasReservation", "isInPlan", "trip"};
    o = get_object(ctx, t->market);
    expect_keys(o, item_keys, 7);
    expect_fields(o, "{\"_entity\": \"BucketListItem\", \"title\": \"Christmas market\", \"details\": \"\","
                     " \"hasReservation\": false, \"isInPlan\": true, \"trip\": \"%s\"}", t->family);
    CHECK(json_object_is_type(check_member(o, "isInPlan"), json_type_boolean));
    json_object_put(o);
    o = get_object(ctx, t->hike);
    expect_keys(o, item_keys, 7);
    expect_fields(o, "{\"title\": \"Uetliberg hike\", \"details\": \"if it snows\","
                     " \"hasReservation\": false, \"isInPlan\": false, \"trip\": \"%s\"}", t->family);
    json_object_put(o);
    o = get_object(ctx, t->keynote);
    expect_keys(o, item_keys, 7);
    expect_fields(o, "{\"title\": \"Keynote\", \"details\": \"\","
                     " \"hasReservation\": true, \"isInPlan\": true, \"trip\": \"%s\"}", t->wwdc);
    json_object_put(o);

    static const char *const place_keys[] = {"_id", "_entity", "address", "placeName", "trip"};
    o = get_object(ctx, t->grandmas);
    expect_keys(o, place_keys, 5);
    expect_fields(o, "{\"_entity\": \"LivingAccommodation\", \"placeName\": \"Grandma's\","
                     " \"address\": \"Seefeldstrasse 12\", \"trip\": \"%s\"}", t->family);
    json_object_put(o);
    o = get_object(ctx, t->hotel);
    expect_keys(o, place_keys, 5);
    expect_fields(o, "{\"placeName\": \"Hotel\", \"address\": \"1 Infinite Loop\", \"trip\": \"%s\"}", t->wwdc);
    json_object_put(o);
}

/* strata_fetch returns what strata_get returns, in insertion order. */
static void check_fetch(strata_context *ctx, const char *descriptor, const char *const *ids, size_t n) {
    json_object *arr = fetch(ctx, descriptor);
    if ((size_t)json_object_array_length(arr) != n)
        fprintf(stderr, "%s: %zu objects, expected %zu\n", descriptor, (size_t)json_object_array_length(arr), n);
    CHECK((size_t)json_object_array_length(arr) == n);
    CHECK(fetch_count(ctx, descriptor) == (int64_t)n);
    char *idtext = NULL;
    CHECK_STATUS(strata_fetch_identifiers(ctx, descriptor, &idtext));
    json_object *idarr = parse_json_or_die(idtext);
    strata_free(idtext);
    CHECK((size_t)json_object_array_length(idarr) == n);
    for (size_t i = 0; i < n; i++) {
        json_object *fetched = json_object_array_get_idx(arr, i);
        CHECK_STR_EQ(check_str_member(fetched, "_id"), ids[i]);
        CHECK_STR_EQ(json_object_get_string(json_object_array_get_idx(idarr, i)), ids[i]);
        json_object *got = get_object(ctx, ids[i]);
        CHECK(json_object_equal(fetched, got));
        json_object_put(got);
    }
    json_object_put(idarr);
    json_object_put(arr);
}

static void check_all_fetches(strata_context *ctx, const trip_ids *t) {
    const char *trips[] = {t->family, t->wwdc, t->road};
    check_fetch(ctx, "{\"entity\": \"Trip\"}", trips, 3);
    check_fetch(ctx, "{\"entity\": \"Trip\", \"includeSubentities\": true}", trips, 3);
    const char *plain[] = {t->road};
    check_fetch(ctx, "{\"entity\": \"Trip\", \"includeSubentities\": false}", plain, 1);
    const char *personal[] = {t->family};
    check_fetch(ctx, "{\"entity\": \"PersonalTrip\"}", personal, 1);
    const char *business[] = {t->wwdc};
    check_fetch(ctx, "{\"entity\": \"BusinessTrip\", \"includeSubentities\": false}", business, 1);
    const char *items[] = {t->market, t->hike, t->keynote};
    check_fetch(ctx, "{\"entity\": \"BucketListItem\"}", items, 3);
    const char *places[] = {t->grandmas, t->hotel};
    check_fetch(ctx, "{\"entity\": \"LivingAccommodation\"}", places, 2);
}

static void test_round_trip(void) {
    char *path = test_store_path("objects_round_trip.store");
    strata_container *db = open_trips(path);
    strata_context *ctx = check_context(db);
    trip_ids t;
    memset(&t, 0, sizeof t);
    insert_trips(ctx, &t);

    /* Before the save: reads include pending changes, and only of this context. */
    CHECK(strata_has_changes(ctx) == 1);
    check_trips(ctx, &t);
    check_all_fetches(ctx, &t);
    CHECK(fetch_count(ctx, "{\"entity\": \"Trip\", \"includePendingChanges\": false}") == 0);
    strata_context *other = check_context(db);
    CHECK(count(other, "Trip") == 0);
    char *text = (char *)&text;
    CHECK_ERROR_CODE(strata_get(other, t.family, &text), STRATA_ERR_NOT_FOUND);
    CHECK(text == NULL);
    strata_context_free(other);

    CHECK_STATUS(strata_save(ctx));
    CHECK(strata_has_changes(ctx) == 0);
    CHECK(fetch_count(ctx, "{\"entity\": \"Trip\", \"includePendingChanges\": false}") == 3);
    strata_context_free(ctx);
    strata_close(db);

    /* Reopen: everything reads back equal. */
    db = open_trips(path);
    ctx = check_context(db);
    CHECK(strata_has_changes(ctx) == 0);
    check_trips(ctx, &t);
    check_all_fetches(ctx, &t);
    strata_context_free(ctx);
    strata_close(db);
    free_ids(&t);
    free(path);
}

/* ---- update ------------------------------------------------------------- */

static void test_update(void) {
    char *path = test_store_path("objects_update.store");
    strata_container *db = open_trips(path);
    strata_context *ctx = check_context(db);
    trip_ids t;
    memset(&t, 0, sizeof t);
    insert_trips(ctx, &t);
    CHECK_STATUS(strata_save(ctx));

    /* Attributes, a subentity attribute, clearing an optional value. */
    CHECK_STATUS(strata_update(ctx, t.wwdc, "{\"destination\": \"San Jose\", \"perdiem\": 99.25, \"photo\": null,"
                                            " \"startDate\": \"2026-06-09\"}"));
    CHECK(strata_has_changes(ctx) == 1);
    /* A to-many array replaces the set: keep the market, add a new item, drop the hike. */
    char *patch = check_strf("{\"reason\": \"reunion\", \"bucketList\": [\"%s\", {\"title\": \"Lake swim\"}],"
                       " \"livingAccommodation\": null}", t.market);
    CHECK_STATUS(strata_update(ctx, t.family, patch));
    free(patch);
    /* Link an existing object by identifier (to-one). */
    patch = check_strf("{\"livingAccommodation\": \"%s\"}", t.grandmas);
    CHECK_STATUS(strata_update(ctx, t.road, patch));
    free(patch);
    /* Update an item from its side: move the keynote to the road trip. */
    patch = check_strf("{\"trip\": \"%s\", \"hasReservation\": false}", t.road);
    CHECK_STATUS(strata_update(ctx, t.keynote, patch));
    free(patch);

    for (int pass = 0; pass < 2; pass++) {
        /* pass 0: pending; pass 1: saved and reopened */
        json_object *o = get_object(ctx, t.wwdc);
        expect_fields(o, "{\"name\": \"WWDC\", \"destination\": \"San Jose\", \"perdiem\": 99.25, \"photo\": null,"
                         " \"startDate\": \"2026-06-09T00:00:00Z\", \"endDate\": \"2026-06-12T00:00:00Z\","
                         " \"livingAccommodation\": \"%s\", \"bucketList\": []}", t.hotel);
        json_object_put(o);

        o = get_object(ctx, t.family);
        expect_fields(o, "{\"name\": \"Family Visit\", \"reason\": \"reunion\", \"livingAccommodation\": null}");
        json_object *list = check_member(o, "bucketList");
        CHECK(list && json_object_array_length(list) == 2);
        CHECK_STR_EQ(json_object_get_string(json_object_array_get_idx(list, 0)), t.market);
        char *swim = strdup(json_object_get_string(json_object_array_get_idx(list, 1)));
        CHECK(has_prefix(swim, "BucketListItem/"));
        CHECK(strcmp(swim, t.hike) != 0);
        json_object_put(o);

        o = get_object(ctx, swim);
        expect_fields(o, "{\"title\": \"Lake swim\", \"trip\": \"%s\"}", t.family);
        json_object_put(o);
        free(swim);
        /* The dropped item still exists, unlinked (nullify). */
        o = get_object(ctx, t.hike);
        expect_fields(o, "{\"title\": \"Uetliberg hike\", \"trip\": null}");
        json_object_put(o);

        o = get_object(ctx, t.road);
        expect_fields(o, "{\"livingAccommodation\": \"%s\"}", t.grandmas);
        {
            const char *ids[] = {t.keynote};
            expect_ids(o, "bucketList", ids, 1);
        }
        json_object_put(o);
        o = get_object(ctx, t.grandmas);
        expect_fields(o, "{\"trip\": \"%s\"}", t.road);
        json_object_put(o);
        o = get_object(ctx, t.keynote);
        expect_fields(o, "{\"trip\": \"%s\", \"hasReservation\": false, \"isInPlan\": true}", t.road);
        json_object_put(o);
        CHECK(count(ctx, "BucketListItem") == 4);

        if (pass == 0) {
            CHECK_STATUS(strata_save(ctx));
            CHECK(strata_has_changes(ctx) == 0);
            strata_context_free(ctx);
            strata_close(db);
            db = open_trips(path);
            ctx = check_context(db);
        }
    }
    strata_context_free(ctx);
    strata_close(db);
    free_ids(&t);
    free(path);
}

/* ---- delete ------------------------------------------------------------- */

static void test_delete_cascade(void) {
    char *path = test_store_path("objects_delete.store");
    strata_container *db = open_trips(path);
    strata_context *ctx = check_context(db);
    trip_ids t;
    memset(&t, 0, sizeof t);
    insert_trips(ctx, &t);
    CHECK_STATUS(strata_save(ctx));

    CHECK_STATUS(strata_delete(ctx, t.family));
    CHECK(strata_has_changes(ctx) == 1);
    /* Deleted in this context: gone from its reads, still there for others. */
    char *text = (char *)&text;
    CHECK_ERROR_CODE(strata_get(ctx, t.family, &text), STRATA_ERR_NOT_FOUND);
    CHECK(text == NULL);
    CHECK(count(ctx, "Trip") == 2);
    CHECK(fetch_count(ctx, "{\"entity\": \"Trip\", \"includePendingChanges\": false}") == 3);
    CHECK_ERROR_CODE(strata_update(ctx, t.family, "{\"name\": \"x\"}"), STRATA_ERR_NOT_FOUND);
    CHECK_ERROR_CODE(strata_delete(ctx, t.family), STRATA_ERR_NOT_FOUND);
    strata_context *other = check_context(db);
    CHECK(count(other, "Trip") == 3);

    CHECK_STATUS(strata_save(ctx));
    CHECK(strata_has_changes(ctx) == 0);
    /* Cascade: the trip's bucket list and accommodation are gone too. */
    const char *gone[] = {t.family, t.market, t.hike, t.grandmas};
    for (size_t i = 0; i < 4; i++) {
        text = (char *)&text;
        CHECK_ERROR_CODE(strata_get(ctx, gone[i], &text), STRATA_ERR_NOT_FOUND);
        CHECK(text == NULL);
        CHECK_ERROR_CODE(strata_get(other, gone[i], &text), STRATA_ERR_NOT_FOUND);
    }
    CHECK(count(other, "Trip") == 2);
    CHECK(count(other, "PersonalTrip") == 0);
    CHECK(count(other, "BucketListItem") == 1);
    CHECK(count(other, "LivingAccommodation") == 1);
    strata_context_free(other);

    /* Deleting the destination side of a nullify relationship clears the trip's link. */
    CHECK_STATUS(strata_delete(ctx, t.keynote));
    CHECK_STATUS(strata_delete(ctx, t.hotel));
    CHECK_STATUS(strata_save(ctx));
    json_object *o = get_object(ctx, t.wwdc);
    expect_fields(o, "{\"livingAccommodation\": null, \"bucketList\": []}");
    json_object_put(o);

    /* Deleting a pending insert: it never reaches the store. */
    char *id = insert(ctx, "Trip", "{\"name\": \"Never\", \"destination\": \"x\", \"startDate\": 0, \"endDate\": 0,"
                                   " \"bucketList\": [{\"title\": \"nope\"}]}");
    CHECK(count(ctx, "BucketListItem") == 1);
    CHECK_STATUS(strata_delete(ctx, id));
    CHECK(count(ctx, "Trip") == 2);
    CHECK_STATUS(strata_save(ctx));
    strata_context_free(ctx);
    strata_close(db);

    db = open_trips(path);
    ctx = check_context(db);
    CHECK(count(ctx, "Trip") == 2);
    CHECK(count(ctx, "BucketListItem") == 0);
    CHECK(count(ctx, "LivingAccommodation") == 0);
    CHECK_ERROR_CODE(strata_get(ctx, id, &text), STRATA_ERR_NOT_FOUND);
    strata_free(id);
    strata_context_free(ctx);
    strata_close(db);
    free_ids(&t);
    free(path);
}

/* ---- rollback ----------------------------------------------------------- */

static void test_rollback(void) {
    strata_container *db = open_trips(NULL);
    strata_context *ctx = check_context(db);
    trip_ids t;
    memset(&t, 0, sizeof t);
    insert_trips(ctx, &t);
    CHECK_STATUS(strata_save(ctx));
    CHECK_STATUS(strata_rollback(ctx)); /* nothing to discard */
    CHECK(strata_has_changes(ctx) == 0);

    char *id = insert(ctx, "Trip", "{\"name\": \"Maybe\", \"destination\": \"x\", \"startDate\": 0, \"endDate\": 0}");
    CHECK_STATUS(strata_update(ctx, t.road, "{\"destination\": \"Changed\"}"));
    CHECK_STATUS(strata_delete(ctx, t.wwdc));
    CHECK(strata_has_changes(ctx) == 1);
    CHECK(count(ctx, "Trip") == 3); /* +Maybe −WWDC */
    json_object *arr = fetch(ctx, "{\"entity\": \"Trip\"}");
    CHECK_STR_EQ(check_str_member(json_object_array_get_idx(arr, 2), "_id"), id);
    json_object_put(arr);

    CHECK_STATUS(strata_rollback(ctx));
    CHECK(strata_has_changes(ctx) == 0);
    char *text = (char *)&text;
    CHECK_ERROR_CODE(strata_get(ctx, id, &text), STRATA_ERR_NOT_FOUND);
    CHECK(text == NULL);
    const char *trips[] = {t.family, t.wwdc, t.road};
    check_fetch(ctx, "{\"entity\": \"Trip\"}", trips, 3);
    json_object *o = get_object(ctx, t.road);
    expect_fields(o, "{\"destination\": \"Route 66\"}");
    json_object_put(o);
    check_trips(ctx, &t);

    /* Saving after a rollback writes nothing. */
    CHECK_STATUS(strata_save(ctx));
    strata_context *other = check_context(db);
    CHECK(count(other, "Trip") == 3);
    CHECK_ERROR_CODE(strata_get(other, id, &text), STRATA_ERR_NOT_FOUND);
    strata_context_free(other);

    strata_free(id);
    strata_context_free(ctx);
    strata_close(db);
    free_ids(&t);
}

/* ---- unique constraints: upsert, error, ignore ------------------------- */

static void test_upsert(void) {
    strata_container *db = open_trips(NULL);
    strata_context *ctx = check_context(db);
    char *road = insert(ctx, "Trip", road_json);
    CHECK_STATUS(strata_save(ctx));

    /* Same name and dates (the unique constraint), dates written differently: upsert. */
    char *again = insert(ctx, "Trip", "{\"name\": \"Road Trip\", \"destination\": \"Route 66, Chicago to Santa Monica\","
                                      " \"startDate\": \"2027-05-01T00:00:00Z\", \"endDate\": 1810809000.25}");
    CHECK_STR_EQ(again, road);
    CHECK(strata_has_changes(ctx) == 1);
    CHECK(count(ctx, "Trip") == 1);
    json_object *o = get_object(ctx, road);
    expect_fields(o, "{\"destination\": \"Route 66, Chicago to Santa Monica\", \"name\": \"Road Trip\"}");
    json_object_put(o);
    CHECK_STATUS(strata_save(ctx));
    strata_free(again);

    /* Explicit "upsert" is the default. */
    again = insert(ctx, "Trip", "{\"_onConflict\": \"upsert\", \"name\": \"Road Trip\", \"destination\": \"Route 66 again\","
                                " \"startDate\": 1809129600, \"endDate\": \"2027-05-20T10:30:00.250Z\"}");
    CHECK_STR_EQ(again, road);
    strata_free(again);
    CHECK_STATUS(strata_save(ctx));

    /* Against this context's pending inserts too, before any save. */
    char *first = insert(ctx, "Trip", "{\"name\": \"Twice\", \"destination\": \"one\", \"startDate\": 0, \"endDate\": 0}");
    char *second = insert(ctx, "Trip", "{\"name\": \"Twice\", \"destination\": \"two\", \"startDate\": 0, \"endDate\": 0}");
    CHECK_STR_EQ(first, second);
    o = get_object(ctx, first);
    expect_fields(o, "{\"destination\": \"two\"}");
    json_object_put(o);
    CHECK(count(ctx, "Trip") == 2);
    CHECK_STATUS(strata_save(ctx));
    strata_free(first);
    strata_free(second);

    /* "error": STRATA_ERR_CONSTRAINT, nothing recorded. */
    char *id = (char *)&id;
    CHECK_ERROR_CODE(strata_insert(ctx, "Trip", "{\"_onConflict\": \"error\", \"name\": \"Road Trip\", \"destination\": \"no\","
                                                " \"startDate\": 1809129600, \"endDate\": \"2027-05-20T10:30:00.250Z\"}", &id),
                     STRATA_ERR_CONSTRAINT);
    {
        json_object *err = parse_json_or_die(strata_last_error());
        CHECK_STR_EQ(check_str_member(err, "code"), "constraint");
        CHECK_STR_EQ(check_str_member(err, "entity"), "Trip");
        json_object_put(err);
    }
    CHECK(id == NULL);
    CHECK(strata_has_changes(ctx) == 0);
    /* "error" against a pending insert too. */
    char *pending = insert(ctx, "Trip", "{\"name\": \"Pending\", \"destination\": \"p\", \"startDate\": 5, \"endDate\": 6}");
    CHECK_ERROR_CODE(strata_insert(ctx, "Trip", "{\"_onConflict\": \"error\", \"name\": \"Pending\", \"destination\": \"q\","
                                                " \"startDate\": 5, \"endDate\": 6}", NULL),
                     STRATA_ERR_CONSTRAINT);
    o = get_object(ctx, pending);
    expect_fields(o, "{\"destination\": \"p\"}");
    json_object_put(o);
    CHECK_STATUS(strata_rollback(ctx));
    strata_free(pending);

    /* "ignore": the existing identifier, values unchanged, no change recorded. */
    id = insert(ctx, "Trip", "{\"_onConflict\": \"ignore\", \"name\": \"Road Trip\", \"destination\": \"ignored\","
                             " \"startDate\": 1809129600, \"endDate\": \"2027-05-20T10:30:00.250Z\"}");
    CHECK_STR_EQ(id, road);
    strata_free(id);
    CHECK(strata_has_changes(ctx) == 0);
    o = get_object(ctx, road);
    expect_fields(o, "{\"destination\": \"Route 66 again\"}");
    json_object_put(o);

    /* A different date is a different trip. */
    id = insert(ctx, "Trip", "{\"_onConflict\": \"error\", \"name\": \"Road Trip\", \"destination\": \"later\","
                             " \"startDate\": \"2028-05-01\", \"endDate\": \"2028-05-20\"}");
    CHECK(strcmp(id, road) != 0);
    strata_free(id);
    CHECK(count(ctx, "Trip") == 3);

    /* The hierarchy shares the constraint: a PersonalTrip upserts onto a PersonalTrip. */
    char *p1 = insert(ctx, "Trip", "{\"_entity\": \"PersonalTrip\", \"name\": \"Spa\", \"destination\": \"Baden\","
                                   " \"startDate\": 0, \"endDate\": 86400, \"reason\": \"wellness\"}");
    char *p2 = insert(ctx, "PersonalTrip", "{\"name\": \"Spa\", \"destination\": \"Baden-Baden\","
                                           " \"startDate\": 0, \"endDate\": 86400}");
    CHECK_STR_EQ(p1, p2);
    o = get_object(ctx, p1);
    expect_fields(o, "{\"_entity\": \"PersonalTrip\", \"destination\": \"Baden-Baden\", \"reason\": \"wellness\"}");
    json_object_put(o);
    CHECK_STATUS(strata_save(ctx));
    strata_free(p1);
    strata_free(p2);

    strata_free(road);
    strata_context_free(ctx);
    strata_close(db);
}

/* ---- insert_many -------------------------------------------------------- */

static void test_insert_many(void) {
    strata_container *db = open_trips(NULL);
    strata_context *ctx = check_context(db);
    char *existing = insert(ctx, "Trip", "{\"name\": \"B\", \"destination\": \"old\", \"startDate\": 0, \"endDate\": 0}");
    CHECK_STATUS(strata_save(ctx));

    char *ids = NULL;
    CHECK_STATUS(strata_insert_many(ctx, "Trip",
                                    "[{\"name\": \"A\", \"destination\": \"a\", \"startDate\": 0, \"endDate\": 0},"
                                    " {\"name\": \"B\", \"destination\": \"new\", \"startDate\": 0, \"endDate\": 0},"
                                    " {\"_entity\": \"BusinessTrip\", \"name\": \"C\", \"destination\": \"c\","
                                    "  \"startDate\": 0, \"endDate\": 0, \"bucketList\": [{\"title\": \"c1\"}]},"
                                    " {\"_entity\": \"PersonalTrip\", \"name\": \"D\", \"destination\": \"d\","
                                    "  \"startDate\": 0, \"endDate\": 0}]",
                                    &ids));
    json_object *arr = parse_json_or_die(ids);
    strata_free(ids);
    CHECK(json_object_is_type(arr, json_type_array) && json_object_array_length(arr) == 4);
    static const char *const names[] = {"A", "B", "C", "D"};
    static const char *const prefixes[] = {"Trip/", "Trip/", "BusinessTrip/", "PersonalTrip/"};
    for (size_t i = 0; i < 4; i++) {
        const char *id = json_object_get_string(json_object_array_get_idx(arr, i));
        CHECK(has_prefix(id, prefixes[i]));
        json_object *o = get_object(ctx, id);
        expect_fields(o, "{\"name\": \"%s\"}", names[i]);
        json_object_put(o);
    }
    /* The upserted element is the existing object. */
    CHECK_STR_EQ(json_object_get_string(json_object_array_get_idx(arr, 1)), existing);
    json_object *o = get_object(ctx, existing);
    expect_fields(o, "{\"destination\": \"new\"}");
    json_object_put(o);
    CHECK(count(ctx, "Trip") == 4);
    CHECK(count(ctx, "BucketListItem") == 1);
    CHECK_STATUS(strata_save(ctx));

    /* Empty array: nothing, and an empty array back. */
    CHECK_STATUS(strata_insert_many(ctx, "Trip", "[]", &ids));
    json_object *empty = parse_json_or_die(ids);
    strata_free(ids);
    CHECK(json_object_is_type(empty, json_type_array) && json_object_array_length(empty) == 0);
    json_object_put(empty);
    CHECK(strata_has_changes(ctx) == 0);
    CHECK_STATUS(strata_insert_many(ctx, "Trip", "[{\"name\": \"E\", \"destination\": \"e\", \"startDate\": 0, \"endDate\": 0}]",
                                    NULL)); /* out_ids may be NULL */
    CHECK(count(ctx, "Trip") == 5);
    CHECK_STATUS(strata_rollback(ctx));

    /* All or nothing: element 2 is bad, so neither 0 nor 1 is inserted (nor 1's upsert applied). */
    ids = (char *)&ids;
    CHECK_ERROR_CODE(strata_insert_many(ctx, "Trip",
                                        "[{\"name\": \"F\", \"destination\": \"f\", \"startDate\": 0, \"endDate\": 0},"
                                        " {\"name\": \"B\", \"destination\": \"newer\", \"startDate\": 0, \"endDate\": 0},"
                                        " {\"name\": \"G\", \"destination\": \"g\", \"startDate\": \"not a date\", \"endDate\": 0}]",
                                        &ids),
                     STRATA_ERR_VALIDATION);
    CHECK(ids == NULL);
    {
        json_object *err = parse_json_or_die(strata_last_error());
        CHECK_STR_EQ(check_str_member(err, "path"), "/2/startDate");
        json_object_put(err);
    }
    CHECK(strata_has_changes(ctx) == 0);
    CHECK(count(ctx, "Trip") == 4);
    o = get_object(ctx, existing);
    expect_fields(o, "{\"destination\": \"new\"}");
    json_object_put(o);

    /* A unique collision with "error" inside the batch, against an earlier element. */
    CHECK_ERROR_CODE(strata_insert_many(ctx, "Trip",
                                        "[{\"name\": \"H\", \"destination\": \"h\", \"startDate\": 0, \"endDate\": 0},"
                                        " {\"_onConflict\": \"error\", \"name\": \"H\", \"destination\": \"h2\", \"startDate\": 0, \"endDate\": 0}]",
                                        NULL),
                     STRATA_ERR_CONSTRAINT);
    CHECK(strata_has_changes(ctx) == 0);
    CHECK(count(ctx, "Trip") == 4);
    /* Not an array. */
    CHECK_ERROR_CODE(strata_insert_many(ctx, "Trip", "{\"name\": \"I\"}", NULL), STRATA_ERR_INVALID);
    CHECK(strata_has_changes(ctx) == 0);

    json_object_put(arr);
    strata_free(existing);
    strata_context_free(ctx);
    strata_close(db);
}

/* ---- every value type (rules fixture: Sample) --------------------------- */

static void test_value_types(void) {
    char *schema = check_read_file(FIXTURES "rules.json");
    char *json = check_strf("{\"schema\": %s}", schema);
    strata_config *cfg = NULL;
    CHECK_STATUS(strata_config_new(json, &cfg));
    char *path = test_store_path("objects_values.store");
    strata_container *db = NULL;
    CHECK_STATUS(strata_open(path, cfg, &db));
    strata_context *ctx = check_context(db);

    char *full = insert(ctx, "Sample",
                        "{\"code\": \"full\", \"count\": -9007199254740993, \"ratio\": 0.1, \"flag\": true,"
                        " \"when\": \"2026-11-22T09:30:00.5+02:00\", \"blob\": \"AAECA/7/\","
                        " \"uid\": \"e621e1f8-c36c-495a-93fc-0c247a3e6e5f\", \"link\": \"https://example.com/a?b=c\","
                        " \"amount\": \"12345678901234567890.123456789\","
                        " \"extra\": {\"list\": [1, 2.5, \"three\", null, true], \"nested\": {\"k\": \"v\"}},"
                        " \"color\": \"blue\", \"note\": \"line\\nbreak \\u00e9 \\ud83d\\ude00 \\\"quoted\\\"\","
                        " \"place\": {\"city\": \"Z\\u00fcrich\", \"zip\": 8001}}");
    /* Defaults, nulls, a date given as a day, an int given as 3.0, a decimal as a number. */
    char *sparse = insert(ctx, "Sample", "{\"code\": \"sparse\", \"note\": \"\", \"count\": 3.0, \"when\": \"2026-11-22\","
                                         " \"amount\": 0.25, \"extra\": [], \"uid\": null}");
    char *epoch = insert(ctx, "Sample", "{\"code\": \"epoch\", \"note\": \"e\", \"when\": 1.25, \"extra\": \"text\"}");
    CHECK_STATUS(strata_save(ctx));
    strata_context_free(ctx);
    strata_close(db);
    CHECK_STATUS(strata_open(path, cfg, &db));
    strata_config_free(cfg);
    ctx = check_context(db);

    static const char *const keys[] = {"_id", "_entity", "code", "count", "ratio", "flag", "when", "blob", "uid",
                                       "link", "amount", "extra", "color", "note", "place"};
    json_object *o = get_object(ctx, full);
    expect_keys(o, keys, sizeof keys / sizeof keys[0]);
    expect_fields(o, "{\"_entity\": \"Sample\", \"code\": \"full\", \"ratio\": 0.1, \"flag\": true,"
                     " \"when\": \"2026-11-22T07:30:00.500Z\", \"blob\": \"AAECA/7/\","
                     " \"uid\": \"E621E1F8-C36C-495A-93FC-0C247A3E6E5F\", \"link\": \"https://example.com/a?b=c\","
                     " \"amount\": \"12345678901234567890.123456789\","
                     " \"extra\": {\"list\": [1, 2.5, \"three\", null, true], \"nested\": {\"k\": \"v\"}},"
                     " \"color\": \"blue\", \"note\": \"line\\nbreak \\u00e9 \\ud83d\\ude00 \\\"quoted\\\"\","
                     " \"place\": {\"city\": \"Z\\u00fcrich\", \"zip\": 8001}}");
    /* 64-bit integers survive exactly (not through a double). */
    CHECK(json_object_is_type(check_member(o, "count"), json_type_int));
    CHECK(json_object_get_int64(check_member(o, "count")) == -9007199254740993LL);
    CHECK(json_object_is_type(check_member(o, "flag"), json_type_boolean));
    CHECK(json_object_is_type(check_member(o, "ratio"), json_type_double));
    json_object_put(o);

    o = get_object(ctx, sparse);
    expect_keys(o, keys, sizeof keys / sizeof keys[0]);
    expect_fields(o, "{\"code\": \"sparse\", \"note\": \"\", \"count\": 3, \"ratio\": 0.5, \"flag\": false,"
                     " \"when\": \"2026-11-22T00:00:00Z\", \"blob\": null, \"uid\": null, \"link\": null,"
                     " \"amount\": \"0.25\", \"extra\": [], \"color\": \"red\", \"place\": null}");
    CHECK(json_object_is_type(check_member(o, "count"), json_type_int));
    json_object_put(o);

    o = get_object(ctx, epoch);
    expect_fields(o, "{\"when\": \"1970-01-01T00:00:01.250Z\", \"extra\": \"text\", \"count\": 0}");
    json_object_put(o);

    /* Clearing optional values with null, in an update. */
    CHECK_STATUS(strata_update(ctx, full, "{\"when\": null, \"blob\": null, \"uid\": null, \"link\": null,"
                                          " \"amount\": null, \"extra\": null}"));
    CHECK_STATUS(strata_save(ctx));
    o = get_object(ctx, full);
    expect_fields(o, "{\"when\": null, \"blob\": null, \"uid\": null, \"link\": null, \"amount\": null,"
                     " \"extra\": null, \"color\": \"blue\"}");
    json_object_put(o);

    strata_free(full);
    strata_free(sparse);
    strata_free(epoch);
    strata_context_free(ctx);
    strata_close(db);
    free(path);
    free(json);
    free(schema);
}

int main(void) {
    test_round_trip();
    test_update();
    test_delete_cascade();
    test_rollback();
    test_upsert();
    test_insert_many();
    test_value_types();
    return 0;
}
