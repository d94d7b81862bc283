/*
 * trips — the SampleTrips app of Apple's SwiftData sessions, in C: one store
 * carried through the four versions of its schema (schema-v1.json …
 * schema-v4.json) by the migration plan of plan.json.
 *
 *   1. creates a store at version 1 holding trips, some of them entered twice
 *      (version 1 has no unique constraint); --from 2 or --from 3 creates it
 *      at that version instead, holding the same trips without the duplicates;
 *   2. reopens it with the migration plan: the custom stages migrateV1toV2
 *      and migrateV2toV3 run C hooks (willMigrate) that remove duplicate trips
 *      before the unique constraints are adopted, moving their bucket-list
 *      items and accommodation to the trip that is kept; migrateV3toV4 is
 *      lightweight. A progress callback prints each step;
 *   3. shows that no trip was lost but the duplicates;
 *   4. adds business and personal trips (version 4's subentities);
 *   5. runs the app's queries: the segments All / Personal / Business with a
 *      search text, and the widget's next trip (also prepared once and run
 *      as time passes);
 *   6. lists the persistent history as the session does: the latest token
 *      (listing 1), then, after three later saves seen by an observer of Trip
 *      and LivingAccommodation, the changes since that token to those
 *      entities (listing 2).
 *
 * Every answer of Strata is JSON; the program reads it with json-c, as a C
 * program using Strata would. From "== Version 4 data" to "== History", the
 * output is the same whatever the starting version (ctest compares it:
 * demo_from_versions); the history shows tokens, times and identifiers that
 * differ from store to store.
 *
 * --json-ops runs the same de-duplication without C: the plan's custom stages
 * get declarative "deduplicate" operations instead of hooks.
 *
 *   usage: trips [--from 1|2|3] [--json-ops] STORE_PATH   (STORE_PATH must not exist)
 */
#define _POSIX_C_SOURCE 200809L   /* strdup */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include <strata.h>

/* The schemas and the plan, compiled in by CMake from examples/trips/ (one
   string macro each), so the program reads no file and runs from anywhere. */
#include "trips_schema_v1.h"   /* TRIPS_SCHEMA_V1_JSON */
#include "trips_schema_v2.h"   /* TRIPS_SCHEMA_V2_JSON */
#include "trips_schema_v3.h"   /* TRIPS_SCHEMA_V3_JSON */
#include "trips_plan.h"        /* TRIPS_PLAN_JSON: the four schemas and the three stages */

/* ------------------------------------------------------------------------ */
/* Errors: every call is checked; a failure prints Strata's JSON error.      */
/* ------------------------------------------------------------------------ */

static void check(strata_status status, const char *call) {
    if (status == STRATA_OK) return;
    fprintf(stderr, "trips: %s failed: %s\n%s\n", call, strata_errstr(status), strata_last_error());
    exit(1);
}
#define CHECK(call) check((call), #call)

/* In a stage hook a failure is returned, not fatal: Strata then aborts the
   open with STRATA_ERR_CALLBACK and leaves the store as it was. */
#define HOOK_CHECK(call)                                                       \
    do {                                                                       \
        status = (call);                                                       \
        if (status != STRATA_OK) {                                             \
            fprintf(stderr, "trips: %s failed in a stage hook: %s\n%s\n",      \
                    #call, strata_errstr(status), strata_last_error());        \
            goto done;                                                         \
        }                                                                      \
    } while (0)

/* ------------------------------------------------------------------------ */
/* Reading Strata's JSON with json-c                                         */
/* ------------------------------------------------------------------------ */

/* Parses a string Strata returned, and frees it. */
static json_object *parse(char *json) {
    json_object *value = json_tokener_parse(json);
    if (value == NULL) { fprintf(stderr, "trips: Strata returned JSON json-c cannot read: %s\n", json); exit(1); }
    strata_free(json);
    return value;
}

/* A string member, or "" when it is missing or null. */
static const char *text(json_object *object, const char *key) {
    json_object *v = NULL;
    if (!json_object_object_get_ex(object, key, &v) || v == NULL) return "";
    return json_object_get_string(v);
}

/* The identifier a relationship holds: an identifier string, or a prefetched
   object's "_id"; NULL for no object. *known is false when the key is absent. */
static const char *link_of(json_object *object, const char *key, bool *known) {
    json_object *v = NULL;
    *known = json_object_object_get_ex(object, key, &v);
    if (!*known || v == NULL) return NULL;
    if (json_object_is_type(v, json_type_string)) return json_object_get_string(v);
    return text(v, "_id");
}

/* The day of an ISO-8601 date ("2026-04-10T00:00:00Z" → "2026-04-10"). */
static void print_day(const char *iso) { printf("%.10s", iso); }

/* Prints s padded to `width` characters (UTF-8: counts characters, not bytes). */
static void put_padded(const char *s, int width) {
    int n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p & 0xC0) != 0x80) n++;
    fputs(s, stdout);
    for (; n < width; n++) putchar(' ');
}

static int by_title(const void *a, const void *b) {
    return strcmp(text(*(json_object *const *)a, "title"), text(*(json_object *const *)b, "title"));
}

/* ------------------------------------------------------------------------ */
/* Tables of trips                                                           */
/* ------------------------------------------------------------------------ */

/* The names of the date attributes: start_date/end_date until version 2,
   startDate/endDate (originalName: start_date/end_date) from version 3. */
struct dates { const char *start, *end; };
static const struct dates OLD_DATES = {"start_date", "end_date"};
static const struct dates NEW_DATES = {"startDate", "endDate"};

/* Fetches with `descriptor` (the bucket list and accommodation prefetched)
   and prints one line per trip; `details`: its bucket list on a second line. */
static void print_trips(strata_context *ctx, json_object *descriptor, const struct dates *dates, bool with_ids,
                        bool details) {
    json_object *prefetch = json_object_new_array();
    json_object_array_add(prefetch, json_object_new_string("livingAccommodation"));
    json_object_array_add(prefetch, json_object_new_string("bucketList"));
    json_object_object_add(descriptor, "relationshipKeyPathsForPrefetching", prefetch);
    char *json = NULL;
    CHECK(strata_fetch(ctx, json_object_to_json_string(descriptor), &json));
    json_object *trips = parse(json);
    size_t count = json_object_array_length(trips);
    if (count == 0) printf("    (none)\n");
    for (size_t i = 0; i < count; i++) {
        json_object *trip = json_object_array_get_idx(trips, i);
        fputs("    ", stdout);
        if (with_ids) put_padded(text(trip, "_id"), 8);
        put_padded(text(trip, "name"), 21);
        put_padded(text(trip, "destination"), 11);
        print_day(text(trip, dates->start));
        fputs(" → ", stdout);
        print_day(text(trip, dates->end));
        fputs("  ", stdout);
        const char *entity = text(trip, "_entity");
        char kind[64];
        if (strcmp(entity, "BusinessTrip") == 0) {
            json_object *perdiem = NULL;
            json_object_object_get_ex(trip, "perdiem", &perdiem);
            snprintf(kind, sizeof kind, "business, %.2f/day", json_object_get_double(perdiem));
        } else if (strcmp(entity, "PersonalTrip") == 0) {
            snprintf(kind, sizeof kind, "personal, %s", text(trip, "reason"));
        } else {
            snprintf(kind, sizeof kind, "trip");
        }
        put_padded(kind, 22);
        json_object *stay = NULL;
        json_object_object_get_ex(trip, "livingAccommodation", &stay);
        printf("stay: %s\n", stay != NULL ? text(stay, "placeName") : "-");
        json_object *items = NULL;
        if (details && json_object_object_get_ex(trip, "bucketList", &items) && json_object_array_length(items) > 0) {
            json_object_array_sort(items, by_title);
            fputs("    ", stdout);
            if (with_ids) put_padded("", 8);
            fputs("  bucket list: ", stdout);
            for (size_t k = 0; k < json_object_array_length(items); k++) {
                json_object *item = json_object_array_get_idx(items, k);
                json_object *reserved = NULL, *planned = NULL;
                json_object_object_get_ex(item, "hasReservation", &reserved);
                json_object_object_get_ex(item, "isInPlan", &planned);
                bool r = json_object_get_boolean(reserved), p = json_object_get_boolean(planned);
                printf("%s%s%s%s%s%s", k > 0 ? "; " : "", text(item, "title"), r || p ? " (" : "",
                       r ? "reserved" : "", r && p ? ", " : "", p ? "planned)" : r ? ")" : "");
            }
            putchar('\n');
        }
    }
    json_object_put(trips);
    json_object_put(descriptor);
}

/* {"entity": "Trip", "sortBy": [{"key": <start>}, {"key": "name"}]} */
static json_object *all_trips(const struct dates *dates) {
    json_object *d = json_object_new_object();
    json_object_object_add(d, "entity", json_object_new_string("Trip"));
    json_object *sort = json_object_new_array();
    json_object *by_start = json_object_new_object(), *by_name = json_object_new_object();
    json_object_object_add(by_start, "key", json_object_new_string(dates->start));
    json_object_object_add(by_name, "key", json_object_new_string("name"));
    json_object_array_add(sort, by_start);
    json_object_array_add(sort, by_name);
    json_object_object_add(d, "sortBy", sort);
    return d;
}

struct counts { int64_t trips, items, stays; };

static struct counts count_all(strata_context *ctx) {
    struct counts c;
    CHECK(strata_fetch_count(ctx, "{\"entity\": \"Trip\"}", &c.trips));
    CHECK(strata_fetch_count(ctx, "{\"entity\": \"BucketListItem\"}", &c.items));
    CHECK(strata_fetch_count(ctx, "{\"entity\": \"LivingAccommodation\"}", &c.stays));
    return c;
}

/* ------------------------------------------------------------------------ */
/* The starting store                                                        */
/* ------------------------------------------------------------------------ */

struct item { const char *title, *details; bool reserved, planned; };
struct trip {
    const char *name, *destination, *start, *end;
    const char *place, *address;   /* the living accommodation, or NULL */
    struct item items[3];          /* the bucket list (title NULL ends it) */
};

/* Version 1 holds each of these trips; "Paris Getaway" and "Tokyo Spring"
   were entered twice (same name and dates), each copy holding part of the
   trip's bucket list, one of them its accommodation. */
static const struct trip V1_TRIPS[] = {
    {"Paris Getaway", "Paris", "2026-04-10", "2026-04-17", "Hôtel du Louvre", "Place André Malraux",
     {{"Eiffel Tower at night", "", false, true}, {"Musée d'Orsay", "", true, false}}},
    {"Tokyo Spring", "Tokyo", "2026-03-28", "2026-04-06", NULL, NULL,
     {{"Cherry blossoms in Ueno", "", false, true}}},
    {"Iceland Ring Road", "Reykjavík", "2026-08-01", "2026-08-14", "Camper van", "Route 1",
     {{"Jökulsárlón", "glacier lagoon", false, true}, {"Blue Lagoon", "", true, true}}},
    {"Paris Getaway", "Paris", "2026-04-10", "2026-04-17", NULL, NULL,
     {{"Seine cruise", "at sunset", false, false}}},
    {"Tokyo Spring", "Tokyo", "2026-03-28", "2026-04-06", "Ryokan Sawanoya", "Yanaka 2-3-11",
     {{"Tsukiji breakfast", "", false, true}}},
    {"Lisbon Long Weekend", "Lisbon", "2026-10-09", "2026-10-12", NULL, NULL, {{NULL, NULL, false, false}}},
};

/* Versions 2 and 3 make trips unique (by name, then by name and dates): a
   store of those versions holds the same trips once each, as the
   de-duplication of migrateV1toV2 leaves them. */
static const struct trip UNIQUE_TRIPS[] = {
    {"Paris Getaway", "Paris", "2026-04-10", "2026-04-17", "Hôtel du Louvre", "Place André Malraux",
     {{"Eiffel Tower at night", "", false, true}, {"Musée d'Orsay", "", true, false},
      {"Seine cruise", "at sunset", false, false}}},
    {"Tokyo Spring", "Tokyo", "2026-03-28", "2026-04-06", "Ryokan Sawanoya", "Yanaka 2-3-11",
     {{"Cherry blossoms in Ueno", "", false, true}, {"Tsukiji breakfast", "", false, true}}},
    {"Iceland Ring Road", "Reykjavík", "2026-08-01", "2026-08-14", "Camper van", "Route 1",
     {{"Jökulsárlón", "glacier lagoon", false, true}, {"Blue Lagoon", "", true, true}}},
    {"Lisbon Long Weekend", "Lisbon", "2026-10-09", "2026-10-12", NULL, NULL, {{NULL, NULL, false, false}}},
};

/* The object strata_insert takes, built with json-c: the bucket list and the
   accommodation are nested objects, inserted with the trip. */
static json_object *trip_object(const struct trip *t, const struct dates *dates) {
    char day[32];
    json_object *o = json_object_new_object();
    json_object_object_add(o, "name", json_object_new_string(t->name));
    json_object_object_add(o, "destination", json_object_new_string(t->destination));
    snprintf(day, sizeof day, "%sT00:00:00Z", t->start);
    json_object_object_add(o, dates->start, json_object_new_string(day));
    snprintf(day, sizeof day, "%sT00:00:00Z", t->end);
    json_object_object_add(o, dates->end, json_object_new_string(day));
    if (t->place != NULL) {
        json_object *stay = json_object_new_object();
        json_object_object_add(stay, "placeName", json_object_new_string(t->place));
        json_object_object_add(stay, "address", json_object_new_string(t->address));
        json_object_object_add(o, "livingAccommodation", stay);
    }
    json_object *items = json_object_new_array();
    for (size_t i = 0; i < 3 && t->items[i].title != NULL; i++) {
        json_object *item = json_object_new_object();
        json_object_object_add(item, "title", json_object_new_string(t->items[i].title));
        json_object_object_add(item, "details", json_object_new_string(t->items[i].details));
        json_object_object_add(item, "hasReservation", json_object_new_boolean(t->items[i].reserved));
        json_object_object_add(item, "isInPlan", json_object_new_boolean(t->items[i].planned));
        json_object_array_add(items, item);
    }
    json_object_object_add(o, "bucketList", items);
    return o;
}

static struct counts create_store(const char *path, int version) {
    static const char *const configs[] = {
        "{\"schema\": " TRIPS_SCHEMA_V1_JSON "}",
        "{\"schema\": " TRIPS_SCHEMA_V2_JSON "}",
        "{\"schema\": " TRIPS_SCHEMA_V3_JSON "}",
    };
    const struct trip *trips = version == 1 ? V1_TRIPS : UNIQUE_TRIPS;
    size_t count = version == 1 ? sizeof V1_TRIPS / sizeof V1_TRIPS[0] : sizeof UNIQUE_TRIPS / sizeof UNIQUE_TRIPS[0];
    const struct dates *dates = version < 3 ? &OLD_DATES : &NEW_DATES;

    strata_config *config = NULL;
    CHECK(strata_config_new(configs[version - 1], &config));
    strata_container *db = NULL;
    CHECK(strata_open(path, config, &db));
    strata_config_free(config);
    strata_context *ctx = NULL;
    CHECK(strata_context_new(db, &ctx));
    for (size_t i = 0; i < count; i++) {
        json_object *trip = trip_object(&trips[i], dates);
        CHECK(strata_insert(ctx, "Trip", json_object_to_json_string(trip), NULL));
        json_object_put(trip);
    }
    CHECK(strata_save(ctx));

    printf("1. A store at schema version %d (%s) holds:\n", version,
           version == 1 ? "Trip with start_date/end_date, no unique constraint"
           : version == 2 ? "Trip.name unique"
           : "#Unique name+startDate+endDate, four #Index, startDate/endDate renamed");
    print_trips(ctx, all_trips(dates), dates, true, true);
    struct counts c = count_all(ctx);
    printf("   %lld trips, %lld bucket-list items, %lld accommodations%s\n\n", (long long)c.trips,
           (long long)c.items, (long long)c.stays,
           version == 1 ? " (Paris Getaway and Tokyo Spring were entered twice)" : "");
    strata_context_free(ctx);
    strata_close(db);
    return c;
}

/* ------------------------------------------------------------------------ */
/* The custom stages' hooks                                                  */
/* ------------------------------------------------------------------------ */

/* One stage's de-duplication: the fetch (only the properties that say
   whether two trips are the same, and the accommodation prefetched), and
   what it removed. */
struct dedupe {
    const char *descriptor;
    const char *keys[3];      /* the properties two duplicates share */
    const char *none_because; /* printed when there are none */
    int removed;
    char removed_names[512];  /* "Paris Getaway (Trip/4), …" */
};

static bool same_trip(json_object *a, json_object *b, const struct dedupe *d) {
    for (size_t k = 0; k < 3 && d->keys[k] != NULL; k++)
        if (strcmp(text(a, d->keys[k]), text(b, d->keys[k])) != 0) return false;
    return true;
}

/* willMigrate of migrateV1toV2 and migrateV2toV3 (ctx is bound to the
   stage's old schema). For each trip that repeats an earlier one (the first
   one entered is kept), moves its bucket-list items and, when the kept trip
   has none, its accommodation to the kept trip, then deletes it. */
static strata_status dedupe_trips(strata_context *ctx, void *userdata) {
    struct dedupe *d = userdata;
    strata_status status = STRATA_OK;
    json_object *trips = NULL, *duplicate = NULL;
    char *json = NULL;
    HOOK_CHECK(strata_fetch(ctx, d->descriptor, &json));
    trips = parse(json);
    size_t count = json_object_array_length(trips);
    printf("    willMigrate: %zu trips fetched (only their %s%s%s%s%s, accommodation prefetched)\n", count,
           d->keys[0], d->keys[1] ? ", " : "", d->keys[1] ? d->keys[1] : "",
           d->keys[2] ? ", " : "", d->keys[2] ? d->keys[2] : "");
    for (size_t i = 0; i < count; i++) {
        json_object *trip = json_object_array_get_idx(trips, i);
        json_object *kept = NULL;
        for (size_t j = 0; j < i && kept == NULL; j++) {
            json_object *other = json_object_array_get_idx(trips, j);
            if (!json_object_object_get_ex(other, "_deleted", NULL) && same_trip(other, trip, d)) kept = other;
        }
        if (kept == NULL) continue;
        const char *id = text(trip, "_id"), *kept_id = text(kept, "_id");

        /* The duplicate's links, read in full: its bucket list and accommodation. */
        HOOK_CHECK(strata_get(ctx, id, &json));
        duplicate = parse(json);
        bool known = false, kept_known = false;
        const char *stay = link_of(duplicate, "livingAccommodation", &known);
        const char *kept_stay = link_of(kept, "livingAccommodation", &kept_known);
        if (!kept_known) {
            fprintf(stderr, "trips: the fetch did not prefetch livingAccommodation\n");
            status = STRATA_ERR_CALLBACK;
            goto done;
        }
        json_object *items = NULL;
        json_object_object_get_ex(duplicate, "bucketList", &items);
        size_t moved = json_object_array_length(items);
        char patch[256];
        snprintf(patch, sizeof patch, "{\"trip\": \"%s\"}", kept_id);
        for (size_t k = 0; k < moved; k++)
            HOOK_CHECK(strata_update(ctx, json_object_get_string(json_object_array_get_idx(items, k)), patch));
        bool stay_moved = false;
        if (stay != NULL && kept_stay == NULL) {
            HOOK_CHECK(strata_update(ctx, id, "{\"livingAccommodation\": null}"));
            snprintf(patch, sizeof patch, "{\"livingAccommodation\": \"%s\"}", stay);
            HOOK_CHECK(strata_update(ctx, kept_id, patch));
            json_object_object_add(kept, "livingAccommodation", json_object_new_string(stay));
            stay_moved = true;
        }
        HOOK_CHECK(strata_delete(ctx, id));
        json_object_object_add(trip, "_deleted", json_object_new_boolean(1));
        printf("    duplicate %-14s %s: %zu bucket-list item%s%s moved to %s, then deleted%s\n",
               text(trip, "name"), id, moved, moved == 1 ? "" : "s", stay_moved ? " and its accommodation" : "",
               kept_id, stay != NULL && !stay_moved ? " (with its accommodation: the kept trip has one)" : "");
        size_t used = strlen(d->removed_names);
        snprintf(d->removed_names + used, sizeof d->removed_names - used, "%s%s (%s)",
                 d->removed > 0 ? ", " : "", text(trip, "name"), id);
        d->removed++;
        json_object_put(duplicate);
        duplicate = NULL;
    }
    if (d->removed == 0) printf("    no duplicates%s\n", d->none_because);
    HOOK_CHECK(strata_save(ctx));
done:
    json_object_put(duplicate);
    json_object_put(trips);
    return status;
}

/* Version 2 makes the name unique: two trips are the same when their names are. */
static struct dedupe v1_to_v2 = {
    "{\"entity\": \"Trip\", \"propertiesToFetch\": [\"name\"],"
    " \"relationshipKeyPathsForPrefetching\": [\"livingAccommodation\"]}",
    {"name", NULL, NULL}, "", 0, ""};

/* Version 3 makes name+startDate+endDate unique instead (#Unique): the
   session's migrateV2toV3 de-duplicates by those. Version 2's names are
   unique already, so here it finds nothing; it runs to show the stage. */
static struct dedupe v2_to_v3 = {
    "{\"entity\": \"Trip\", \"propertiesToFetch\": [\"name\", \"start_date\", \"end_date\"],"
    " \"relationshipKeyPathsForPrefetching\": [\"livingAccommodation\"]}",
    {"name", "start_date", "end_date"}, ": names are unique since version 2, so name and dates are too", 0, ""};

/* The same de-duplication as data (--json-ops): the plan with a "deduplicate"
   operation in the willMigrate of each custom stage, built with json-c.
   Returns the configuration JSON; free it with free(). */
static char *plan_with_operations(void) {
    json_object *config = json_tokener_parse("{\"migrationPlan\": " TRIPS_PLAN_JSON "}");
    json_object *plan = NULL, *stages = NULL;
    if (config == NULL || !json_object_object_get_ex(config, "migrationPlan", &plan)
        || !json_object_object_get_ex(plan, "stages", &stages)) {
        fprintf(stderr, "trips: the compiled-in plan is not a migration plan\n");
        exit(1);
    }
    const struct dedupe *by[] = {&v1_to_v2, &v2_to_v3};
    for (size_t i = 0; i < 2; i++) {
        json_object *op = json_object_new_object(), *keys = json_object_new_array(), *ops = json_object_new_array();
        json_object_object_add(op, "op", json_object_new_string("deduplicate"));
        json_object_object_add(op, "entity", json_object_new_string("Trip"));
        for (size_t k = 0; k < 3 && by[i]->keys[k] != NULL; k++)
            json_object_array_add(keys, json_object_new_string(by[i]->keys[k]));
        json_object_object_add(op, "by", keys);
        json_object_object_add(op, "keep", json_object_new_string("first"));
        json_object_object_add(op, "mergeRelationships", json_object_new_boolean(1));
        json_object_array_add(ops, op);
        json_object_object_add(json_object_array_get_idx(stages, i), "willMigrate", ops);
    }
    size_t length = 0;
    const char *text = json_object_to_json_string_length(config, JSON_C_TO_STRING_PLAIN, &length);
    char *copy = malloc(length + 1);
    if (copy == NULL) { fprintf(stderr, "trips: out of memory\n"); exit(1); }
    memcpy(copy, text, length + 1);
    json_object_put(config);
    return copy;
}

/* ------------------------------------------------------------------------ */
/* Progress                                                                  */
/* ------------------------------------------------------------------------ */

/* The progress callback's state: the stages seen, and the current stage's
   storage steps, printed on one line when the stage commits. */
struct progress {
    char stages_run[256];
    char stage[64];
    struct { char name[40]; int times; long long rows; } steps[24];
    int nsteps;
};

/* Prints a stage's first event, the storage steps in one line per stage
   ("renameAttribute ×2, addIndex ×3, …"), and its commit. Of the copy's
   progress events only the last (done == total) counts. */
static void on_progress(const char *event_json, void *userdata) {
    struct progress *p = userdata;
    json_object *e = json_tokener_parse(event_json);
    if (e == NULL) return;
    const char *stage = text(e, "stage"), *step = text(e, "step");
    json_object *done = NULL, *total = NULL;
    bool counted = json_object_object_get_ex(e, "done", &done) && json_object_object_get_ex(e, "total", &total);
    if (strcmp(stage, p->stage) != 0) {   /* a stage's first event */
        size_t used = strlen(p->stages_run);
        snprintf(p->stages_run + used, sizeof p->stages_run - used, "%s%s", used ? ", " : "", stage);
        snprintf(p->stage, sizeof p->stage, "%s", stage);
        p->nsteps = 0;
        printf("  %s\n", stage);
    }
    if (strcmp(step, "commit") == 0) {
        if (p->nsteps > 0) {
            fputs("    storage: ", stdout);
            for (int i = 0; i < p->nsteps; i++) {
                printf("%s%s", i ? ", " : "", p->steps[i].name);
                if (p->steps[i].times > 1) printf(" ×%d", p->steps[i].times);
                if (p->steps[i].rows > 0) printf(" (%lld rows)", p->steps[i].rows);
            }
            putchar('\n');
        }
        printf("    committed\n");
    } else if (strcmp(step, "begin") != 0 && strcmp(step, "storage") != 0 && strcmp(step, "willMigrate") != 0
               && strcmp(step, "didMigrate") != 0   /* the hooks print their own lines */
               && !(counted && json_object_get_int64(done) < json_object_get_int64(total))) {
        int i = 0;
        while (i < p->nsteps && strcmp(p->steps[i].name, step) != 0) i++;
        if (i == p->nsteps && p->nsteps < (int)(sizeof p->steps / sizeof p->steps[0])) {
            snprintf(p->steps[i].name, sizeof p->steps[i].name, "%s", step);
            p->steps[i].times = 0;
            p->steps[i].rows = 0;
            p->nsteps++;
        }
        if (i < p->nsteps) {
            p->steps[i].times++;
            if (counted) p->steps[i].rows += json_object_get_int64(done);
        }
    }
    json_object_put(e);
}

/* ------------------------------------------------------------------------ */
/* Version 4: business and personal trips, and the app's queries             */
/* ------------------------------------------------------------------------ */

static const char *const V4_TRIPS[] = {
    "{\"_entity\": \"BusinessTrip\", \"name\": \"WWDC26\", \"destination\": \"Cupertino\","
    " \"startDate\": \"2026-06-08T00:00:00Z\", \"endDate\": \"2026-06-12T00:00:00Z\", \"perdiem\": 120.5,"
    " \"livingAccommodation\": {\"placeName\": \"Hotel Nia\", \"address\": \"200 Independence Dr\"},"
    " \"bucketList\": [{\"title\": \"Keynote\", \"hasReservation\": true, \"isInPlan\": true}]}",
    "{\"_entity\": \"BusinessTrip\", \"name\": \"Client Workshop\", \"destination\": \"Berlin\","
    " \"startDate\": \"2026-11-30T00:00:00Z\", \"endDate\": \"2026-12-02T00:00:00Z\", \"perdiem\": 95}",
    "{\"_entity\": \"PersonalTrip\", \"name\": \"Family Visit\", \"destination\": \"Zürich\","
    " \"startDate\": \"2026-12-20T00:00:00Z\", \"endDate\": \"2026-12-28T00:00:00Z\", \"reason\": \"family\","
    " \"livingAccommodation\": {\"placeName\": \"Grandma's\", \"address\": \"Seefeldstrasse 12\"},"
    " \"bucketList\": [{\"title\": \"Christmas market\", \"isInPlan\": true}]}",
    "{\"_entity\": \"PersonalTrip\", \"name\": \"Yoga Retreat\", \"destination\": \"Ubud\","
    " \"startDate\": \"2027-01-10T00:00:00Z\", \"endDate\": \"2027-01-20T00:00:00Z\", \"reason\": \"wellness\"}",
};

/* The app's list: a segment (All, Personal, Business) and the search field,
   with the session's #Predicate as text and the search text as a binding. */
static void segment_query(strata_context *ctx, const char *segment, const char *search) {
    char predicate[512];
    const char *matches = "(searchText.isEmpty ? true : $0.name.localizedStandardContains(searchText)"
                          " || $0.destination.localizedStandardContains(searchText))";
    if (strcmp(segment, "All") == 0) snprintf(predicate, sizeof predicate, "%s", matches);
    else snprintf(predicate, sizeof predicate, "$0 is %sTrip && %s", segment, matches);
    json_object *d = all_trips(&NEW_DATES);
    json_object_object_add(d, "predicate", json_object_new_string(predicate));
    json_object *bindings = json_object_new_object();
    json_object_object_add(bindings, "searchText", json_object_new_string(search));
    json_object_object_add(d, "bindings", bindings);
    printf("  %s, search \"%s\":\n", segment, search);
    print_trips(ctx, d, &NEW_DATES, false, false);
}

/* ------------------------------------------------------------------------ */
/* History: every save is recorded; reading it back, observing saves         */
/* ------------------------------------------------------------------------ */

/* The entities the app's list shows: Trip (with its subentities BusinessTrip
   and PersonalTrip) and LivingAccommodation. */
/* Trips per destination, with their bucket-list counts: one aggregate fetch (groupBy,
   count of the trips and of their related items), sorted by the number of items. */
static void print_destinations(strata_context *ctx) {
    const char *descriptor =
        "{\"entity\": \"Trip\", \"groupBy\": [\"destination\"],"
        " \"aggregates\": [{\"name\": \"trips\", \"function\": \"count\"},"
        "                {\"name\": \"items\", \"function\": \"count\", \"keyPath\": \"bucketList\"},"
        "                {\"name\": \"firstDay\", \"function\": \"min\", \"keyPath\": \"startDate\"}],"
        " \"sortBy\": [{\"key\": \"items\", \"order\": \"reverse\"}, {\"key\": \"destination\"}]}";
    char *json = NULL;
    CHECK(strata_fetch(ctx, descriptor, &json));
    json_object *groups = parse(json);   /* frees json */
    printf("\n  trips per destination, with their bucket-list counts (one aggregate fetch:\n"
           "  groupBy destination; count of trips, count of bucketList, min of startDate):\n");
    printf("    %-22s %5s %6s  %s\n", "destination", "trips", "items", "first trip");
    for (size_t i = 0; i < json_object_array_length(groups); i++) {
        json_object *g = json_object_array_get_idx(groups, i);
        json_object *trips = NULL, *items = NULL;
        json_object_object_get_ex(g, "trips", &trips);
        json_object_object_get_ex(g, "items", &items);
        printf("    ");
        put_padded(text(g, "destination"), 22);
        printf(" %5d %6d  ", json_object_get_int(trips), json_object_get_int(items));
        print_day(text(g, "firstDay"));
        printf("\n");
    }
    json_object_put(groups);
}

/* The bucket lists' search field: BucketListItem.title is searchable (version 4), so
   $0.title.matches(q) reads its full-text index; case and accents fold as in
   localizedStandardContains, a word ending in * is a prefix, the most relevant first. */
static void print_search(strata_context *ctx) {
    printf("\n  searching the bucket lists (full-text: $0.title.matches(q), sorted by $relevance):\n");
    const char *const searches[] = {"musee", "JOKUL*", "blue lagoon", "b*", "cherry blossom*", "nothing here"};
    for (size_t i = 0; i < sizeof searches / sizeof searches[0]; i++) {
        char descriptor[512];
        snprintf(descriptor, sizeof descriptor,
                 "{\"entity\": \"BucketListItem\", \"predicate\": \"$0.title.matches(q)\", \"bindings\": {\"q\": \"%s\"},"
                 " \"sortBy\": [{\"key\": \"$relevance\"}, {\"key\": \"title\"}], \"relationshipKeyPathsForPrefetching\": [\"trip\"]}",
                 searches[i]);
        char *json = NULL;
        CHECK(strata_fetch(ctx, descriptor, &json));
        json_object *items = parse(json);   /* frees json */
        printf("    %-17s", searches[i]);
        size_t n = json_object_array_length(items);
        if (n == 0) printf(" (nothing)");
        for (size_t k = 0; k < n; k++) {
            json_object *item = json_object_array_get_idx(items, k), *trip = NULL;
            json_object_object_get_ex(item, "trip", &trip);
            printf("%s%s (%s)", k ? "; " : " ", text(item, "title"), trip ? text(trip, "name") : "no trip");
        }
        printf("\n");
        json_object_put(items);
    }
}

static const char *const WATCHED = "[\"Trip\", \"LivingAccommodation\"]";
static bool watched(const char *entity) {
    size_t n = strlen(entity);
    return strcmp(entity, "LivingAccommodation") == 0 || (n >= 4 && strcmp(entity + n - 4, "Trip") == 0);
}

/* "HH:MM:SS" of an ISO-8601 timestamp ("2026-11-24T09:30:05.123456Z"). */
static void print_time(const char *iso) { printf("%.8s", strlen(iso) > 11 ? iso + 11 : iso); }

/* One line per (kind, entity) of a transaction's changes: "insert BusinessTrip x2". */
static void print_change_summary(json_object *changes) {
    char seen[16][64];
    int counts[16], nseen = 0;
    size_t n = json_object_array_length(changes);
    for (size_t i = 0; i < n; i++) {
        json_object *c = json_object_array_get_idx(changes, i);
        char key[64];
        snprintf(key, sizeof key, "%s %s", text(c, "kind"), text(c, "entity"));
        int k = 0;
        while (k < nseen && strcmp(seen[k], key) != 0) k++;
        if (k == nseen && nseen < 16) { snprintf(seen[nseen], sizeof seen[nseen], "%s", key); counts[nseen++] = 0; }
        if (k < nseen) counts[k]++;
    }
    for (int k = 0; k < nseen; k++) printf("%s%s x%d", k ? ", " : "", seen[k], counts[k]);
}

/* The observer: one line per save that changed a Trip or a LivingAccommodation.
   changes_json: {"token": …, "inserted": {"Trip": ["Trip/9"]}, "updated": {"Trip":
   [{"id": …, "attributes": [...]}]}, "deleted": {"Trip": [{"id": …}]}}. */
static void on_change(const char *changes_json, void *userdata) {
    (void)userdata;
    json_object *c = json_tokener_parse(changes_json);
    if (c == NULL) return;
    printf("     [observer] saved %s:", text(c, "token"));
    const char *kinds[] = {"inserted", "updated", "deleted"};
    int shown = 0;
    for (int k = 0; k < 3; k++) {
        json_object *by_entity = NULL;
        if (!json_object_object_get_ex(c, kinds[k], &by_entity) || by_entity == NULL) continue;
        json_object_object_foreach(by_entity, entity, items) {
            (void)entity;
            for (size_t i = 0; i < json_object_array_length(items); i++) {
                json_object *item = json_object_array_get_idx(items, i);
                bool is_id = json_object_is_type(item, json_type_string);
                printf("%s %s %s", shown++ ? "," : "", kinds[k], is_id ? json_object_get_string(item) : text(item, "id"));
                json_object *attributes = NULL;
                if (!is_id && json_object_object_get_ex(item, "attributes", &attributes) && attributes != NULL) {
                    printf(" (");
                    for (size_t a = 0; a < json_object_array_length(attributes); a++)
                        printf("%s%s", a ? ", " : "", json_object_get_string(json_object_array_get_idx(attributes, a)));
                    printf(")");
                }
            }
        }
    }
    putchar('\n');
    json_object_put(c);
}

/* The identifier of the trip named `name` (a new string). */
static char *trip_named(strata_context *ctx, const char *name) {
    json_object *d = json_tokener_parse("{\"entity\": \"Trip\", \"predicate\": \"$0.name == n\"}");
    json_object *bindings = json_object_new_object();
    json_object_object_add(bindings, "n", json_object_new_string(name));
    json_object_object_add(d, "bindings", bindings);
    char *out = NULL;
    CHECK(strata_fetch_identifiers(ctx, json_object_to_json_string(d), &out));
    json_object_put(d);
    json_object *ids = parse(out);
    char *id = strdup(json_object_get_string(json_object_array_get_idx(ids, 0)));
    json_object_put(ids);
    return id;
}

static void show_history(strata_container *db, strata_context *ctx) {
    printf("\n== History: every save above was recorded in the store, in its own transaction\n");

    /* The session's listing 1: the latest transaction, whose token the app keeps. */
    const char *latest = "{\"sortBy\": [{\"key\": \"transactionIdentifier\", \"order\": \"reverse\"}], \"fetchLimit\": 1}";
    char *out = NULL;
    CHECK(strata_fetch_history(ctx, latest, &out));
    json_object *transactions = parse(out);
    json_object *last = json_object_array_get_idx(transactions, 0);
    char token[64];
    snprintf(token, sizeof token, "%s", text(last, "token"));
    json_object *changes = NULL;
    json_object_object_get_ex(last, "changes", &changes);
    printf("\n6. Listing 1, the latest transaction (sortBy transactionIdentifier reverse, fetchLimit 1):\n");
    printf("     token %s, saved at ", token);
    print_time(text(last, "timestamp"));
    printf(" UTC, %zu changes (step 4's save): ", json_object_array_length(changes));
    print_change_summary(changes);
    putchar('\n');
    json_object_put(transactions);
    CHECK(strata_explain_history(ctx, latest, &out));
    json_object *plan = parse(out), *steps = NULL;
    json_object_object_get_ex(plan, "queryPlan", &steps);
    printf("     (served by the key, no scan: query plan \"%s\")\n",
           steps && json_object_array_length(steps) ? text(json_object_array_get_idx(steps, 0), "detail") : "");
    json_object_put(plan);
    printf("   the app keeps that token to ask later what changed since.\n");

    /* An observer of the entities the app's list shows: called after each save of
       this container (on the saving thread) that changed one of them. Saves of
       other processes reach it through strata_poll_changes(). */
    strata_observer *observer = NULL;
    char filter[128];
    snprintf(filter, sizeof filter, "{\"entityNames\": %s}", WATCHED);
    CHECK(strata_observe(db, filter, on_change, NULL, NULL, &observer));

    printf("\n7. Three later saves, by author \"trips-demo\" in context \"editor\"; an observer of Trip and\n"
           "   LivingAccommodation prints a line per save that changed one of them:\n");
    CHECK(strata_context_set_author(ctx, "trips-demo"));
    CHECK(strata_context_set_name(ctx, "editor"));
    char *workshop = trip_named(ctx, "Client Workshop"), *wwdc = trip_named(ctx, "WWDC26");
    printf("   a. Client Workshop moves to Munich\n");
    CHECK(strata_update(ctx, workshop, "{\"destination\": \"Munich\"}"));
    CHECK(strata_save(ctx));
    printf("   b. WWDC26's \"Keynote\" is renamed (a BucketListItem only: the observer is not called)\n");
    CHECK(strata_fetch_identifiers(ctx, "{\"entity\": \"BucketListItem\", \"predicate\": \"$0.title == \\\"Keynote\\\"\"}", &out));
    json_object *items = parse(out);
    CHECK(strata_update(ctx, json_object_get_string(json_object_array_get_idx(items, 0)),
                        "{\"title\": \"Keynote and State of the Union\"}"));
    json_object_put(items);
    CHECK(strata_save(ctx));
    printf("   c. WWDC26 is cancelled: deleted, with its accommodation and bucket list (cascade)\n");
    CHECK(strata_delete(ctx, wwdc));
    CHECK(strata_save(ctx));
    strata_observer_remove(observer);

    /* The session's listing 2: the transactions after the kept token that changed a
       Trip or a LivingAccommodation (an entity name covers its subentities). */
    char descriptor[512];
    snprintf(descriptor, sizeof descriptor,
             "{\"predicate\": \"$0.token > lastToken && $0.changes.contains {"
             " entityNames.contains($0.changedPersistentIdentifier.entityName) }\","
             " \"bindings\": {\"lastToken\": \"%s\", \"entityNames\": %s}}", token, WATCHED);
    CHECK(strata_fetch_history(ctx, descriptor, &out));
    transactions = parse(out);
    printf("\n8. Listing 2, the changes since token %s to Trip and LivingAccommodation\n"
           "   ($0.token > lastToken && $0.changes.contains { entityNames.contains(...entityName) }):\n", token);
    for (size_t t = 0; t < json_object_array_length(transactions); t++) {
        json_object *tx = json_object_array_get_idx(transactions, t);
        printf("     %s at ", text(tx, "token"));
        print_time(text(tx, "timestamp"));
        printf(", author %s, context %s\n", text(tx, "author"), text(tx, "contextName"));
        json_object_object_get_ex(tx, "changes", &changes);
        int others = 0;
        for (size_t i = 0; i < json_object_array_length(changes); i++) {
            json_object *c = json_object_array_get_idx(changes, i), *attributes = NULL, *tombstone = NULL;
            if (!watched(text(c, "entity"))) { others++; continue; }
            printf("       %-6s ", text(c, "kind"));
            put_padded(text(c, "id"), 24);
            if (json_object_object_get_ex(c, "attributes", &attributes) && attributes != NULL)
                printf(" changed: %s", json_object_to_json_string_ext(attributes, JSON_C_TO_STRING_PLAIN));
            if (json_object_object_get_ex(c, "tombstone", &tombstone) && tombstone != NULL)
                printf(" tombstone: %s", json_object_to_json_string_ext(tombstone, JSON_C_TO_STRING_PLAIN));
            putchar('\n');
        }
        if (others > 0) printf("       (and %d change%s to other entities)\n", others, others == 1 ? "" : "s");
    }
    printf("   step b's save changed neither entity, so listing 2 leaves it out.\n");
    json_object_put(transactions);
    free(workshop);
    free(wwdc);
}

int main(int argc, char **argv) {
    int from = 1;
    bool json_ops = false;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json-ops") == 0) {
            json_ops = true;
        } else if (strcmp(argv[i], "--from") == 0 && i + 1 < argc) {
            const char *v = argv[++i];
            if (strlen(v) != 1 || v[0] < '1' || v[0] > '3') { fprintf(stderr, "trips: --from takes 1, 2 or 3\n"); return 2; }
            from = v[0] - '0';
        } else if (path == NULL && argv[i][0] != '-') {
            path = argv[i];
        } else {
            path = NULL;
            break;
        }
    }
    if (path == NULL) { fprintf(stderr, "usage: %s [--from 1|2|3] [--json-ops] STORE_PATH\n", argv[0]); return 2; }
    FILE *existing = fopen(path, "rb");
    if (existing != NULL) {
        fclose(existing);
        fprintf(stderr, "trips: %s exists: the demo creates its store afresh (remove it or name another file)\n", path);
        return 2;
    }
    printf("Strata %s — SampleTrips, from schema version %d to version 4\n\n", strata_version(), from);

    /* 1. The starting store. */
    struct counts before = create_store(path, from);

    /* 2. The app's new version opens it with the migration plan: versions 1
       to 4 and the stages between them; C hooks for the custom stages (or,
       with --json-ops, their operations in the plan). */
    printf("2. Reopening it with the migration plan (versions 1.0.0 to 4.0.0%s):\n",
           json_ops ? "; the custom stages de-duplicate with \"deduplicate\" operations, no C hooks" : "");
    strata_config *config = NULL;
    if (json_ops) {
        char *with_operations = plan_with_operations();
        CHECK(strata_config_new(with_operations, &config));
        free(with_operations);
    } else {
        CHECK(strata_config_new("{\"migrationPlan\": " TRIPS_PLAN_JSON "}", &config));
        CHECK(strata_config_set_stage_hooks(config, "migrateV1toV2", dedupe_trips, NULL, &v1_to_v2, NULL));
        CHECK(strata_config_set_stage_hooks(config, "migrateV2toV3", dedupe_trips, NULL, &v2_to_v3, NULL));
    }
    struct progress progress;
    memset(&progress, 0, sizeof progress);
    CHECK(strata_config_set_progress(config, on_progress, &progress, NULL));
    strata_container *db = NULL;
    CHECK(strata_open(path, config, &db));
    strata_config_free(config);
    strata_context *ctx = NULL;
    CHECK(strata_context_new(db, &ctx));

    /* 3. Nothing lost but the duplicates. */
    struct counts after = count_all(ctx);
    /* The hooks name what they removed; the operations only show in the counts. */
    int removed = json_ops ? (int)(before.trips - after.trips) : v1_to_v2.removed + v2_to_v3.removed;
    printf("\n3. The store is at version 4.0.0; stages run: %s\n", progress.stages_run[0] ? progress.stages_run : "none");
    print_trips(ctx, all_trips(&NEW_DATES), &NEW_DATES, true, true);
    printf("   trips: %lld before, %lld after: %d duplicate%s removed", (long long)before.trips,
           (long long)after.trips, removed, removed == 1 ? "" : "s");
    if (v1_to_v2.removed + v2_to_v3.removed > 0)
        printf(" (%s%s%s)", v1_to_v2.removed_names, v1_to_v2.removed && v2_to_v3.removed ? ", " : "",
               v2_to_v3.removed_names);
    putchar('\n');
    printf("   bucket-list items: %lld before, %lld after; accommodations: %lld before, %lld after\n",
           (long long)before.items, (long long)after.items, (long long)before.stays, (long long)after.stays);
    if (after.trips != before.trips - removed || after.items != before.items || after.stays != before.stays) {
        fprintf(stderr, "trips: the migration lost data\n");
        return 1;
    }
    printf("   no trip was lost but the duplicates; every bucket-list item and accommodation is still there\n\n");

    /* 4. Version 4's subentities. */
    printf("4. Adding business and personal trips (version 4: BusinessTrip.perdiem, PersonalTrip.reason)\n\n");
    for (size_t i = 0; i < sizeof V4_TRIPS / sizeof V4_TRIPS[0]; i++)
        CHECK(strata_insert(ctx, "Trip", V4_TRIPS[i], NULL));
    CHECK(strata_save(ctx));

    /* 5. From here on the output is the same whatever the starting version. */
    int64_t total = 0;
    CHECK(strata_fetch_count(ctx, "{\"entity\": \"Trip\"}", &total));
    printf("== Version 4 data: the store holds %lld trips (before the history steps change it)\n", (long long)total);
    print_trips(ctx, all_trips(&NEW_DATES), &NEW_DATES, false, true);

    printf("\n5. The app's queries (#Predicate text, search text bound, sorted by startDate):\n");
    segment_query(ctx, "All", "");
    segment_query(ctx, "Personal", "");
    segment_query(ctx, "Business", "");
    segment_query(ctx, "All", "zur");
    segment_query(ctx, "Business", "CUP");

    /* The widget: the next trip that has not ended, served by the endDate
       index. "now" is a binding; the demo fixes it so that its output never
       changes (a real app binds the current time). */
    json_object *widget = json_tokener_parse(
        "{\"entity\": \"Trip\", \"predicate\": \"$0.endDate >= now\","
        " \"bindings\": {\"now\": \"2026-11-22T00:00:00Z\"},"
        " \"sortBy\": [{\"key\": \"startDate\"}], \"fetchLimit\": 1}");
    printf("\n  the widget's next trip (endDate >= now, sorted by startDate, fetchLimit 1;\n"
           "  now is fixed at 2026-11-22 so the output is the same every run):\n");
    print_trips(ctx, widget, &NEW_DATES, false, false);

    /* The same query prepared once, as a widget refreshing all day would: each
       run only binds "now" (strata_prepare / strata_prepared_fetch). */
    strata_prepared *next_trip = NULL;
    CHECK(strata_prepare(ctx,
        "{\"entity\": \"Trip\", \"predicate\": \"$0.endDate >= now\","
        " \"sortBy\": [{\"key\": \"startDate\"}], \"fetchLimit\": 1,"
        " \"includeRelationshipIdentifiers\": false}", &next_trip));
    printf("  the same query prepared once, run as time passes (only \"now\" is bound):\n");
    const char *const nows[] = {"2026-11-22T00:00:00Z", "2026-12-05T00:00:00Z", "2027-01-15T00:00:00Z",
                                "2027-02-01T00:00:00Z"};
    for (size_t i = 0; i < sizeof nows / sizeof nows[0]; i++) {
        char bindings[64];
        snprintf(bindings, sizeof bindings, "{\"now\": \"%s\"}", nows[i]);
        char *json = NULL;
        CHECK(strata_prepared_fetch(next_trip, bindings, &json));
        json_object *next = parse(json);   /* frees json */
        printf("    on %.10s: %s\n", nows[i],
               json_object_array_length(next) > 0 ? text(json_object_array_get_idx(next, 0), "name") : "(no trip ahead)");
        json_object_put(next);
    }
    strata_prepared_free(next_trip);

    print_destinations(ctx);
    print_search(ctx);

    /* 6-8. History, listed and observed. */
    show_history(db, ctx);

    strata_context_free(ctx);
    strata_close(db);
    return 0;
}
