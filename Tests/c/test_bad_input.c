/*
 * test_bad_input.c — bad input across strata.h, table-driven.
 *
 * Each case runs one call that must fail and asserts:
 *   - the exact status;
 *   - strata_last_error() is a JSON object with the status's "code" string,
 *     a non-empty "message", and (where the case names them) the "entity",
 *     "attribute" and "path" of the problem; it never contains the bad value;
 *   - nothing changed: every entity fetched in a fresh context compares
 *     equal (parsed JSON) before and after, the failing context reads the
 *     same (pending changes included), and its strata_has_changes() is the same.
 *
 * The contexts hold a valid pending change during every case, so "the
 * pending changes stay exactly as they were" is tested, not vacuous.
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
#define FIXTURES STRATA_SOURCE_DIR "/Tests/c/fixtures/"

/* ---- helpers ------------------------------------------------------------ */

static char *config_json(const char *schema_file, const char *options) {
    size_t pn = strlen(FIXTURES) + strlen(schema_file) + 1;
    char *path = malloc(pn);
    if (!path) exit(1);
    snprintf(path, pn, "%s%s", FIXTURES, schema_file);
    char *schema = check_read_file(path);
    size_t n = strlen(schema) + strlen(options) + 32;
    char *json = malloc(n);
    if (!json) exit(1);
    snprintf(json, n, "{\"schema\": %s%s}", schema, options);
    free(schema);
    free(path);
    return json;
}

static strata_config *make_config(const char *schema_file) {
    char *json = config_json(schema_file, "");
    strata_config *cfg = NULL;
    CHECK_STATUS(strata_config_new(json, &cfg));
    free(json);
    return cfg;
}

static strata_container *open_store(const char *path, const char *schema_file) {
    strata_config *cfg = make_config(schema_file);
    strata_container *db = NULL;
    CHECK_STATUS(strata_open(path, cfg, &db));
    strata_config_free(cfg);
    return db;
}

static char *insert_or_die(strata_context *ctx, const char *entity, const char *json) {
    char *id = NULL;
    CHECK_STATUS(strata_insert(ctx, entity, json, &id));
    CHECK(id != NULL);
    return id;
}

/* ---- the world every case runs in -------------------------------------- */

static const char *const trip_entities[] = {"Trip", "BusinessTrip", "PersonalTrip", "BucketListItem", "LivingAccommodation"};
static const char *const rule_entities[] = {"Sample", "Owner", "Pet", "Team", "Member"};
#define N_ENTITIES 5

typedef struct {
    char *trips_path, *rules_path, *text_path;
    strata_container *trips, *rules;
    strata_context *tctx, *rctx;   /* the contexts cases call */
    char *trip, *item, *place;     /* saved Trip objects */
    char *owner, *pet, *team;      /* saved rules objects */
    char *sample2;                 /* a saved Sample, code "S2" */
} world;

static world w;

static const char *family_json =
    "{\"_entity\": \"PersonalTrip\", \"name\": \"Family Visit\", \"destination\": \"Zurich\","
    " \"startDate\": \"2026-12-20T00:00:00Z\", \"endDate\": \"2026-12-28T00:00:00Z\", \"reason\": \"family\","
    " \"livingAccommodation\": {\"placeName\": \"Grandma's\", \"address\": \"Seefeldstrasse 12\"},"
    " \"bucketList\": [{\"title\": \"Christmas market\", \"isInPlan\": true}]}";

/* Valid pending changes each case starts from (rolled back after each case). */
static void add_pending_changes(void) {
    CHECK_STATUS(strata_rollback(w.tctx));
    CHECK_STATUS(strata_rollback(w.rctx));
    CHECK_STATUS(strata_insert(w.tctx, "Trip", "{\"name\": \"Pending\", \"destination\": \"p\", \"startDate\": 0, \"endDate\": 0}", NULL));
    CHECK_STATUS(strata_update(w.tctx, w.item, "{\"details\": \"pending detail\"}"));
    CHECK_STATUS(strata_insert(w.rctx, "Sample", "{\"code\": \"P\", \"note\": \"pending\"}", NULL));
}

static void world_open(void) {
    w.trips_path = test_store_path("bad_input_trips.store");
    w.rules_path = test_store_path("bad_input_rules.store");
    w.text_path = test_store_path("bad_input_text.store");
    if (!check_postgres()) {   /* a file: the case c_open_text_file is SQLite's alone */
        FILE *f = fopen(w.text_path, "w");
        CHECK(f != NULL);
        fputs("a text file, not a store\n", f);
        fclose(f);
    }

    w.trips = open_store(w.trips_path, "trips.json");
    w.rules = open_store(w.rules_path, "rules.json");
    CHECK_STATUS(strata_context_new(w.trips, &w.tctx));
    CHECK_STATUS(strata_context_new(w.rules, &w.rctx));

    /* Saved data. */
    w.trip = insert_or_die(w.tctx, "Trip", family_json);
    char *text = NULL;
    CHECK_STATUS(strata_get(w.tctx, w.trip, &text));
    json_object *trip = parse_json_or_die(text);
    strata_free(text);
    w.place = strdup(check_str_member(trip, "livingAccommodation"));
    json_object *list = NULL;
    CHECK(json_object_object_get_ex(trip, "bucketList", &list) && json_object_array_length(list) == 1);
    w.item = strdup(json_object_get_string(json_object_array_get_idx(list, 0)));
    json_object_put(trip);
    strata_free(insert_or_die(w.tctx, "Trip", "{\"_entity\": \"BusinessTrip\", \"name\": \"WWDC\", \"destination\": \"Cupertino\","
                                              " \"startDate\": \"2026-06-08\", \"endDate\": \"2026-06-12\", \"perdiem\": 120.5}"));
    CHECK_STATUS(strata_save(w.tctx));

    strata_free(insert_or_die(w.rctx, "Sample", "{\"code\": \"S1\", \"count\": 3, \"note\": \"first\","
                                                " \"when\": \"2026-01-01T00:00:00Z\", \"blob\": \"AAEC\","
                                                " \"uid\": \"123e4567-e89b-12d3-a456-426614174000\", \"link\": \"https://example.com\","
                                                " \"amount\": \"12.50\", \"extra\": {\"k\": [1, 2]}, \"color\": \"green\"}"));
    w.sample2 = insert_or_die(w.rctx, "Sample", "{\"code\": \"S2\", \"note\": \"second\"}");
    w.owner = insert_or_die(w.rctx, "Owner", "{\"name\": \"Ann\", \"pets\": [{\"name\": \"Rex\"}]}");
    CHECK_STATUS(strata_get(w.rctx, w.owner, &text));
    json_object *owner = parse_json_or_die(text);
    strata_free(text);
    CHECK(json_object_object_get_ex(owner, "pets", &list) && json_object_array_length(list) == 1);
    w.pet = strdup(json_object_get_string(json_object_array_get_idx(list, 0)));
    json_object_put(owner);
    w.team = insert_or_die(w.rctx, "Team", "{\"name\": \"Blue\", \"members\": [{\"name\": \"Bo\"}]}");
    CHECK_STATUS(strata_save(w.rctx));
}

static void world_close(void) {
    strata_context_free(w.tctx);
    strata_context_free(w.rctx);
    strata_close(w.trips);
    strata_close(w.rules);
    strata_free(w.trip);
    free(w.item);
    free(w.place);
    strata_free(w.owner);
    free(w.pet);
    strata_free(w.team);
    strata_free(w.sample2);
    free(w.trips_path);
    free(w.rules_path);
    free(w.text_path);
}

/* What the stores hold (fresh contexts) and what the case contexts read. */
typedef struct {
    json_object *trips_store, *rules_store, *trips_ctx, *rules_ctx;
    int trips_changes, rules_changes;
} fingerprint;

static fingerprint take_fingerprint(void) {
    fingerprint f;
    strata_context *fresh = NULL;
    CHECK_STATUS(strata_context_new(w.trips, &fresh));
    f.trips_store = read_all(fresh, trip_entities, N_ENTITIES);
    strata_context_free(fresh);
    CHECK_STATUS(strata_context_new(w.rules, &fresh));
    f.rules_store = read_all(fresh, rule_entities, N_ENTITIES);
    strata_context_free(fresh);
    f.trips_ctx = read_all(w.tctx, trip_entities, N_ENTITIES);
    f.rules_ctx = read_all(w.rctx, rule_entities, N_ENTITIES);
    f.trips_changes = strata_has_changes(w.tctx);
    f.rules_changes = strata_has_changes(w.rctx);
    return f;
}

static void free_fingerprint(fingerprint *f) {
    json_object_put(f->trips_store);
    json_object_put(f->rules_store);
    json_object_put(f->trips_ctx);
    json_object_put(f->rules_ctx);
}

/* ---- the cases ---------------------------------------------------------- */

typedef strata_status (*case_fn)(void);

typedef struct {
    const char *name;
    case_fn setup;            /* extra pending changes the case needs; may be NULL */
    case_fn run;              /* the failing call */
    strata_status status;     /* expected */
    const char *entity;       /* expected "entity" of the error, or NULL (not checked) */
    const char *attribute;    /* expected "attribute", or NULL */
    const char *path;         /* expected "path", or NULL */
    const char *secret;       /* text of the bad value that the error must not contain, or NULL */
} bad_case;

static char *out_text;   /* out-parameters of the calls under test */
static int64_t out_count;

/* The out-parameters a case passes; run_case checks they are NULL / 0 after the failure. */
static int out_text_used, out_count_used;
#define OUT_TEXT (out_text_used = 1, &out_text)
#define OUT_COUNT (out_count_used = 1, &out_count)

#define TRIP_VALUES "\"destination\": \"d\", \"startDate\": 0, \"endDate\": 0"

/* Malformed JSON */
static strata_status c_truncated(void) { return strata_insert(w.tctx, "Trip", "{\"name\": \"x\", " TRIP_VALUES, OUT_TEXT); }
static strata_status c_trailing_comma(void) { return strata_insert(w.tctx, "Trip", "{\"name\": \"x\", " TRIP_VALUES ",}", OUT_TEXT); }
static strata_status c_single_quotes(void) { return strata_insert(w.tctx, "Trip", "{'name': 'x'}", OUT_TEXT); }
static strata_status c_trailing_text(void) { return strata_insert(w.tctx, "Trip", "{\"name\": \"x\", " TRIP_VALUES "} {}", OUT_TEXT); }
static strata_status c_empty_text(void) { return strata_insert(w.tctx, "Trip", "", OUT_TEXT); }
static strata_status c_not_object(void) { return strata_insert(w.tctx, "Trip", "[\"name\", \"x\"]", OUT_TEXT); }
static strata_status c_duplicate_key(void) {
    return strata_insert(w.tctx, "Trip", "{\"name\": \"x\", \"name\": \"y\", " TRIP_VALUES "}", OUT_TEXT);
}
static strata_status c_bad_escape(void) { return strata_insert(w.tctx, "Trip", "{\"name\": \"\\q\", " TRIP_VALUES "}", OUT_TEXT); }
static strata_status c_control_char(void) { return strata_insert(w.tctx, "Trip", "{\"name\": \"a\tb\", " TRIP_VALUES "}", OUT_TEXT); }
static strata_status c_bad_number(void) { return strata_insert(w.rctx, "Sample", "{\"code\": \"n\", \"note\": \"n\", \"count\": 01}", OUT_TEXT); }
static strata_status c_invalid_utf8(void) { return strata_insert(w.tctx, "Trip", "{\"name\": \"\xc3\x28\", " TRIP_VALUES "}", OUT_TEXT); }
static strata_status c_malformed_patch(void) { return strata_update(w.tctx, w.trip, "{\"name\": }"); }
static strata_status c_malformed_descriptor(void) { return strata_fetch(w.tctx, "{\"entity\": \"Trip\"", OUT_TEXT); }
static strata_status c_malformed_many_after_valid(void) {
    return strata_insert_many(w.tctx, "Trip", "[{\"name\": \"ok\", " TRIP_VALUES "}, {\"name\": ", OUT_TEXT);
}
static strata_status c_malformed_many(void) { return strata_insert_many(w.tctx, "Trip", "[{\"name\": \"x\"},", OUT_TEXT); }

/* Wrong value types */
static strata_status c_string_for_int(void) { return strata_insert(w.rctx, "Sample", "{\"code\": \"n\", \"note\": \"n\", \"count\": \"three-ish\"}", OUT_TEXT); }
static strata_status c_fraction_for_int(void) { return strata_insert(w.rctx, "Sample", "{\"code\": \"n\", \"note\": \"n\", \"count\": 3.5}", OUT_TEXT); }
static strata_status c_huge_int(void) { return strata_insert(w.rctx, "Sample", "{\"code\": \"n\", \"note\": \"n\", \"count\": 1e30}", OUT_TEXT); }
static strata_status c_number_for_string(void) { return strata_insert(w.rctx, "Sample", "{\"code\": \"n\", \"note\": 42}", OUT_TEXT); }
static strata_status c_string_for_double(void) { return strata_insert(w.rctx, "Sample", "{\"code\": \"n\", \"note\": \"n\", \"ratio\": \"half-ish\"}", OUT_TEXT); }
static strata_status c_string_for_bool(void) { return strata_insert(w.rctx, "Sample", "{\"code\": \"n\", \"note\": \"n\", \"flag\": \"yes-ish\"}", OUT_TEXT); }
static strata_status c_number_for_bool(void) { return strata_insert(w.rctx, "Sample", "{\"code\": \"n\", \"note\": \"n\", \"flag\": 1}", OUT_TEXT); }
static strata_status c_bool_for_date(void) { return strata_insert(w.rctx, "Sample", "{\"code\": \"n\", \"note\": \"n\", \"when\": true}", OUT_TEXT); }
static strata_status c_object_for_date(void) { return strata_insert(w.rctx, "Sample", "{\"code\": \"n\", \"note\": \"n\", \"when\": {\"y\": 2026}}", OUT_TEXT); }
static strata_status c_bad_date_text(void) { return strata_insert(w.rctx, "Sample", "{\"code\": \"n\", \"note\": \"n\", \"when\": \"2026-13-45T25:61:00Z\"}", OUT_TEXT); }
static strata_status c_words_for_date(void) { return strata_insert(w.tctx, "Trip", "{\"name\": \"x\", \"destination\": \"d\", \"startDate\": \"yesterday-ish\", \"endDate\": 0}", OUT_TEXT); }
static strata_status c_bad_base64(void) { return strata_insert(w.rctx, "Sample", "{\"code\": \"n\", \"note\": \"n\", \"blob\": \"not*base64!\"}", OUT_TEXT); }
static strata_status c_number_for_data(void) { return strata_insert(w.rctx, "Sample", "{\"code\": \"n\", \"note\": \"n\", \"blob\": 12}", OUT_TEXT); }
static strata_status c_bad_uuid(void) { return strata_insert(w.rctx, "Sample", "{\"code\": \"n\", \"note\": \"n\", \"uid\": \"123e4567-zzzz-12d3-a456-42661417400\"}", OUT_TEXT); }
static strata_status c_bad_url(void) { return strata_insert(w.rctx, "Sample", "{\"code\": \"n\", \"note\": \"n\", \"link\": \"has spaces-ish in it\"}", OUT_TEXT); }
static strata_status c_bad_decimal(void) { return strata_insert(w.rctx, "Sample", "{\"code\": \"n\", \"note\": \"n\", \"amount\": \"12abc\"}", OUT_TEXT); }
static strata_status c_update_wrong_type(void) {
    return strata_update(w.tctx, w.trip, "{\"endDate\": \"the-end-ish\"}");
}
static strata_status c_nested_wrong_type(void) {
    return strata_insert(w.tctx, "Trip", "{\"name\": \"x\", " TRIP_VALUES ", \"bucketList\": [{\"title\": \"a\"}, {\"title\": \"b\", \"isInPlan\": \"maybe-ish\"}]}", OUT_TEXT);
}
static strata_status c_many_wrong_type(void) {
    return strata_insert_many(w.rctx, "Sample", "[{\"code\": \"m1\", \"note\": \"n\"}, {\"code\": \"m2\", \"note\": \"n\", \"count\": \"x-ish\"}]", OUT_TEXT);
}

static strata_status c_date_number_too_late(void) { return strata_insert(w.rctx, "Sample", "{\"code\": \"n\", \"note\": \"n\", \"when\": 253402300800}", OUT_TEXT); }
static strata_status c_date_number_too_early(void) { return strata_insert(w.rctx, "Sample", "{\"code\": \"n\", \"note\": \"n\", \"when\": -62167219201}", OUT_TEXT); }
static strata_status c_date_text_too_late(void) { return strata_insert(w.rctx, "Sample", "{\"code\": \"n\", \"note\": \"n\", \"when\": \"9999-12-31T23:59:59-01:00\"}", OUT_TEXT); }
static strata_status c_update_date_too_early(void) { return strata_update(w.tctx, w.trip, "{\"endDate\": \"0000-01-01T00:00:00+00:30\"}"); }
static strata_status c_json_duplicate_key(void) {
    return strata_insert(w.rctx, "Sample", "{\"code\": \"n\", \"note\": \"n\", \"extra\": {\"meta\": {\"a\": \"dup-value-1\", \"a\": \"dup-value-2\"}}}", OUT_TEXT);
}
static strata_status c_json_too_deep(void) {
    char json[512];
    int n = snprintf(json, sizeof json, "{\"code\": \"n\", \"note\": \"n\", \"extra\": ");
    for (int i = 0; i < 101; i++) json[n++] = '[';
    json[n++] = '0';
    for (int i = 0; i < 101; i++) json[n++] = ']';
    snprintf(json + n, sizeof json - (size_t)n, "}");
    return strata_insert(w.rctx, "Sample", json, OUT_TEXT);
}

/* Unknown names */
static strata_status c_unknown_entity(void) { return strata_insert(w.tctx, "Plane", "{\"name\": \"x\"}", OUT_TEXT); }
static strata_status c_unknown_attribute(void) { return strata_insert(w.tctx, "Trip", "{\"name\": \"x\", \"colour\": \"red\", " TRIP_VALUES "}", OUT_TEXT); }
static strata_status c_unknown_nested_attribute(void) {
    return strata_insert(w.tctx, "Trip", "{\"name\": \"x\", " TRIP_VALUES ", \"bucketList\": [{\"title\": \"a\"}, {\"titel\": \"b\"}]}", OUT_TEXT);
}
static strata_status c_update_unknown_attribute(void) { return strata_update(w.tctx, w.trip, "{\"perdiem\": 3}"); } /* a BusinessTrip attribute on a PersonalTrip */
static strata_status c_entity_not_subentity(void) { return strata_insert(w.tctx, "Trip", "{\"_entity\": \"BucketListItem\", \"title\": \"x\"}", OUT_TEXT); }
static strata_status c_superentity_for_subentity(void) { return strata_insert(w.tctx, "PersonalTrip", "{\"_entity\": \"Trip\", \"name\": \"x\", " TRIP_VALUES "}", OUT_TEXT); }
static strata_status c_bad_on_conflict(void) { return strata_insert(w.tctx, "Trip", "{\"_onConflict\": \"replace\", \"name\": \"x\", " TRIP_VALUES "}", OUT_TEXT); }
static strata_status c_unknown_underscore_key(void) { return strata_insert(w.tctx, "Trip", "{\"_version\": 2, \"name\": \"x\", " TRIP_VALUES "}", OUT_TEXT); }
static strata_status c_update_other_id(void) {
    char patch[160];
    snprintf(patch, sizeof patch, "{\"_id\": \"%s\", \"title\": \"x\"}", w.item);
    return strata_update(w.tctx, w.place, patch);
}
static strata_status c_insert_many_unknown_entity(void) { return strata_insert_many(w.tctx, "Plane", "[]", OUT_TEXT); }

/* NULL arguments */
static strata_status c_insert_null_ctx(void) { return strata_insert(NULL, "Trip", "{}", OUT_TEXT); }
static strata_status c_insert_null_entity(void) { return strata_insert(w.tctx, NULL, "{}", OUT_TEXT); }
static strata_status c_insert_null_json(void) { return strata_insert(w.tctx, "Trip", NULL, OUT_TEXT); }
static strata_status c_many_null_ctx(void) { return strata_insert_many(NULL, "Trip", "[]", OUT_TEXT); }
static strata_status c_many_null_entity(void) { return strata_insert_many(w.tctx, NULL, "[]", OUT_TEXT); }
static strata_status c_many_null_json(void) { return strata_insert_many(w.tctx, "Trip", NULL, OUT_TEXT); }
static strata_status c_update_null_ctx(void) { return strata_update(NULL, w.trip, "{}"); }
static strata_status c_update_null_id(void) { return strata_update(w.tctx, NULL, "{}"); }
static strata_status c_update_null_json(void) { return strata_update(w.tctx, w.trip, NULL); }
static strata_status c_delete_null_ctx(void) { return strata_delete(NULL, w.trip); }
static strata_status c_delete_null_id(void) { return strata_delete(w.tctx, NULL); }
static strata_status c_get_null_ctx(void) { return strata_get(NULL, w.trip, OUT_TEXT); }
static strata_status c_get_null_id(void) { return strata_get(w.tctx, NULL, OUT_TEXT); }
static strata_status c_get_null_out(void) { return strata_get(w.tctx, w.trip, NULL); }
static strata_status c_fetch_null_ctx(void) { return strata_fetch(NULL, "{\"entity\": \"Trip\"}", OUT_TEXT); }
static strata_status c_fetch_null_descriptor(void) { return strata_fetch(w.tctx, NULL, OUT_TEXT); }
static strata_status c_fetch_null_out(void) { return strata_fetch(w.tctx, "{\"entity\": \"Trip\"}", NULL); }
static strata_status c_count_null_ctx(void) { return strata_fetch_count(NULL, "{\"entity\": \"Trip\"}", OUT_COUNT); }
static strata_status c_count_null_descriptor(void) { return strata_fetch_count(w.tctx, NULL, OUT_COUNT); }
static strata_status c_count_null_out(void) { return strata_fetch_count(w.tctx, "{\"entity\": \"Trip\"}", NULL); }
static strata_status c_ids_null_ctx(void) { return strata_fetch_identifiers(NULL, "{\"entity\": \"Trip\"}", OUT_TEXT); }
static strata_status c_ids_null_descriptor(void) { return strata_fetch_identifiers(w.tctx, NULL, OUT_TEXT); }
static strata_status c_ids_null_out(void) { return strata_fetch_identifiers(w.tctx, "{\"entity\": \"Trip\"}", NULL); }
static strata_status c_save_null_ctx(void) { return strata_save(NULL); }
static strata_status c_rollback_null_ctx(void) { return strata_rollback(NULL); }

/* Rules: unique, required, enum, deny, counts */
static strata_status c_unique_error(void) { return strata_insert(w.rctx, "Sample", "{\"_onConflict\": \"error\", \"code\": \"S1\", \"note\": \"again\"}", OUT_TEXT); }
static strata_status c_unique_error_pending(void) { return strata_insert(w.rctx, "Sample", "{\"_onConflict\": \"error\", \"code\": \"P\", \"note\": \"again\"}", OUT_TEXT); }
static strata_status c_compound_unique_error(void) {
    return strata_insert(w.tctx, "Trip", "{\"_onConflict\": \"error\", \"name\": \"Family Visit\", \"destination\": \"elsewhere\","
                                         " \"startDate\": \"2026-12-20T00:00:00Z\", \"endDate\": \"2026-12-28T00:00:00Z\"}", OUT_TEXT);
}
static strata_status c_required_missing(void) { return strata_insert(w.rctx, "Sample", "{\"code\": \"n\"}", OUT_TEXT); }
static strata_status c_required_missing_trip(void) { return strata_insert(w.tctx, "Trip", "{\"name\": \"x\", \"destination\": \"d\", \"startDate\": 0}", OUT_TEXT); }
static strata_status c_required_null(void) { return strata_insert(w.rctx, "Sample", "{\"code\": \"n\", \"note\": null}", OUT_TEXT); }
static strata_status c_update_required_null(void) { return strata_update(w.tctx, w.trip, "{\"name\": null}"); }
static strata_status c_enum_violation(void) { return strata_insert(w.rctx, "Sample", "{\"code\": \"n\", \"note\": \"n\", \"color\": \"purple-ish\"}", OUT_TEXT); }
static strata_status c_enum_subentity(void) {
    return strata_insert(w.tctx, "Trip", "{\"_entity\": \"PersonalTrip\", \"name\": \"x\", " TRIP_VALUES ", \"reason\": \"business-ish\"}", OUT_TEXT);
}
static strata_status c_update_enum(void) { return strata_update(w.tctx, w.trip, "{\"reason\": \"boredom-ish\"}"); }

static strata_status s_delete_owner(void) { return strata_delete(w.rctx, w.owner); }
static strata_status s_team_too_big(void) {
    return strata_insert(w.rctx, "Team", "{\"name\": \"Big\", \"members\": [{\"name\": \"a\"}, {\"name\": \"b\"}, {\"name\": \"c\"}]}", NULL);
}
static strata_status s_team_empty(void) { return strata_insert(w.rctx, "Team", "{\"name\": \"Empty\"}", NULL); }
static strata_status s_team_emptied(void) { return strata_update(w.rctx, w.team, "{\"members\": []}"); }
static strata_status s_update_to_taken_code(void) { return strata_update(w.rctx, w.sample2, "{\"code\": \"S1\"}"); }
/* Another context saves the code this context's pending insert uses. */
static strata_status s_taken_meanwhile(void) {
    static int n;
    char json[96];
    /* "error": the save must not upsert into the object saved meanwhile. */
    snprintf(json, sizeof json, "{\"code\": \"M%d\", \"note\": \"mine\", \"_onConflict\": \"error\"}", n);
    strata_status st = strata_insert(w.rctx, "Sample", json, NULL);
    if (st != STRATA_OK) return st;
    strata_context *other = NULL;
    st = strata_context_new(w.rules, &other);
    if (st != STRATA_OK) return st;
    snprintf(json, sizeof json, "{\"code\": \"M%d\", \"note\": \"theirs\"}", n++);
    st = strata_insert(other, "Sample", json, NULL);
    if (st == STRATA_OK) st = strata_save(other);
    strata_context_free(other);
    return st;
}
static strata_status c_save_rules(void) { return strata_save(w.rctx); }

/* Identifiers */
static strata_status c_get_missing(void) { return strata_get(w.tctx, "Trip/999999", OUT_TEXT); }
static strata_status c_get_missing_subentity(void) { return strata_get(w.tctx, "PersonalTrip/999999", OUT_TEXT); }
static strata_status c_update_missing(void) { return strata_update(w.tctx, "BucketListItem/999999", "{\"title\": \"x\"}"); }
static strata_status c_delete_missing(void) { return strata_delete(w.tctx, "LivingAccommodation/999999"); }
static strata_status c_link_missing(void) {
    return strata_insert(w.tctx, "Trip", "{\"name\": \"x\", " TRIP_VALUES ", \"livingAccommodation\": \"LivingAccommodation/999999\"}", OUT_TEXT);
}
static strata_status c_link_missing_many(void) {
    return strata_insert(w.tctx, "Trip", "{\"name\": \"x\", " TRIP_VALUES ", \"bucketList\": [{\"title\": \"a\"}, \"BucketListItem/999999\"]}", OUT_TEXT);
}
static strata_status c_get_no_key(void) { return strata_get(w.tctx, "Trip", OUT_TEXT); }
static strata_status c_get_text_key(void) { return strata_get(w.tctx, "Trip/seven", OUT_TEXT); }
static strata_status c_get_empty_id(void) { return strata_get(w.tctx, "", OUT_TEXT); }
static strata_status c_get_no_entity(void) { return strata_get(w.tctx, "/1", OUT_TEXT); }
static strata_status c_get_unknown_entity(void) { return strata_get(w.tctx, "Plane/1", OUT_TEXT); }
static strata_status c_delete_bad_id(void) { return strata_delete(w.tctx, "Trip/1/2"); }
static strata_status c_update_bad_id(void) { return strata_update(w.tctx, "Trip/-1x", "{}"); }
static strata_status c_link_bad_id(void) {
    return strata_insert(w.tctx, "Trip", "{\"name\": \"x\", " TRIP_VALUES ", \"livingAccommodation\": \"just text\"}", OUT_TEXT);
}

/* The key of w.trip ("PersonalTrip/N"), written other ways. */
static char id_text[96];
static const char *trip_key(void) { return strchr(w.trip, '/') + 1; }
static strata_status c_get_root_name(void) { snprintf(id_text, sizeof id_text, "Trip/%s", trip_key()); return strata_get(w.tctx, id_text, OUT_TEXT); }
static strata_status c_get_leading_zero(void) { snprintf(id_text, sizeof id_text, "PersonalTrip/0%s", trip_key()); return strata_get(w.tctx, id_text, OUT_TEXT); }
static strata_status c_get_plus_sign(void) { snprintf(id_text, sizeof id_text, "PersonalTrip/+%s", trip_key()); return strata_get(w.tctx, id_text, OUT_TEXT); }
static strata_status c_update_root_name(void) { snprintf(id_text, sizeof id_text, "Trip/%s", trip_key()); return strata_update(w.tctx, id_text, "{\"name\": \"x\"}"); }
static strata_status c_delete_leading_zero(void) { snprintf(id_text, sizeof id_text, "PersonalTrip/00%s", trip_key()); return strata_delete(w.tctx, id_text); }
static strata_status c_link_root_name(void) {
    char patch[160];
    snprintf(patch, sizeof patch, "{\"trip\": \"Trip/%s\"}", trip_key());
    return strata_update(w.tctx, w.item, patch);
}
static strata_status c_link_leading_zero(void) {
    char json[256];
    snprintf(json, sizeof json, "{\"title\": \"x\", \"trip\": \"PersonalTrip/0%s\"}", trip_key());
    return strata_insert(w.tctx, "BucketListItem", json, OUT_TEXT);
}
static strata_status c_insert_other_id(void) {
    char json[256];
    snprintf(json, sizeof json, "{\"_id\": \"%s\", \"name\": \"x\", " TRIP_VALUES "}", w.trip);
    return strata_insert(w.tctx, "PersonalTrip", json, OUT_TEXT);
}
static strata_status c_upsert_other_id(void) {
    char json[320];  /* the unique key of w.trip, with the identifier of another object */
    snprintf(json, sizeof json, "{\"_id\": \"PersonalTrip/999999\", \"name\": \"Family Visit\", \"destination\": \"x\","
             " \"startDate\": \"2026-12-20T00:00:00Z\", \"endDate\": \"2026-12-28T00:00:00Z\"}");
    return strata_insert(w.tctx, "PersonalTrip", json, OUT_TEXT);
}
static strata_status c_nested_contradicts_owner(void) {
    char json[320];
    snprintf(json, sizeof json, "{\"name\": \"x\", " TRIP_VALUES ", \"bucketList\": [{\"title\": \"a\"}, {\"title\": \"b\", \"trip\": \"%s\"}]}", w.trip);
    return strata_insert(w.tctx, "Trip", json, OUT_TEXT);
}
static strata_status c_update_nested_contradicts_owner(void) {
    return strata_update(w.tctx, w.trip, "{\"bucketList\": [{\"title\": \"b\", \"trip\": null}]}");
}

/* Fetch descriptors */
static strata_status c_fetch_unknown_key(void) { return strata_fetch(w.tctx, "{\"entity\": \"Trip\", \"sortby\": []}", OUT_TEXT); }
static strata_status c_count_unknown_key(void) { return strata_fetch_count(w.tctx, "{\"entity\": \"Trip\", \"limit\": 1}", OUT_COUNT); }
static strata_status c_ids_unknown_key(void) { return strata_fetch_identifiers(w.tctx, "{\"entity\": \"Trip\", \"x\": 1}", OUT_TEXT); }
static strata_status c_fetch_no_entity(void) { return strata_fetch(w.tctx, "{\"includeSubentities\": true}", OUT_TEXT); }
static strata_status c_fetch_unknown_entity(void) { return strata_fetch(w.tctx, "{\"entity\": \"Plane\"}", OUT_TEXT); }
static strata_status c_fetch_wrong_type(void) { return strata_fetch(w.tctx, "{\"entity\": \"Trip\", \"includeSubentities\": \"yes\"}", OUT_TEXT); }
static strata_status c_fetch_not_object(void) { return strata_fetch(w.tctx, "\"Trip\"", OUT_TEXT); }

/* Stores and schemas */
static strata_status c_open_text_file(void) {
    strata_config *cfg = make_config("trips.json");
    strata_container *db = NULL;
    strata_status st = strata_open(w.text_path, cfg, &db);
    strata_config_free(cfg);
    strata_close(db);
    return st;
}
static strata_status c_open_other_schema(void) {
    strata_config *cfg = make_config("trips_changed.json");
    strata_container *db = NULL;
    strata_status st = strata_open(w.trips_path, cfg, &db);
    strata_config_free(cfg);
    strata_close(db);
    return st;
}
static strata_status c_open_rules_as_trips(void) {
    strata_config *cfg = make_config("trips.json");
    strata_container *db = NULL;
    strata_status st = strata_open(w.rules_path, cfg, &db);
    strata_config_free(cfg);
    strata_close(db);
    return st;
}
/* A migration plan from trips.json (1.0.0) to `second` (its version replaced by 2.0.0), with a
   custom stage "toV2"; `stage_keys` are more keys of the stage ("" for none). */
static char *plan_json(const char *second, const char *stage_keys) {
    char *v1 = config_json("trips.json", "");
    char *v2 = config_json(second, "");
    /* config_json gives {"schema": S}: take S. */
    v1[strlen(v1) - 1] = 0;
    v2[strlen(v2) - 1] = 0;
    char *s1 = v1 + strlen("{\"schema\": "), *s2 = v2 + strlen("{\"schema\": ");
    char *at = strstr(s2, "\"version\": \"1.0.0\"");
    if (at) memcpy(at, "\"version\": \"2.0.0\"", strlen("\"version\": \"2.0.0\""));
    size_t n = strlen(s1) + strlen(s2) + strlen(stage_keys) + 200;
    char *json = malloc(n);
    if (!json) exit(1);
    snprintf(json, n, "{\"migrationPlan\": {\"schemas\": [%s, %s], \"stages\": [{\"name\": \"toV2\", \"kind\": \"custom\","
             " \"from\": \"1.0.0\", \"to\": \"2.0.0\"%s}]}}", s1, s2, stage_keys);
    free(v1);
    free(v2);
    return json;
}
/* A configuration from JSON text (NULL when it is refused: *st says why). */
static strata_config *config_from(const char *json, strata_status *st) {
    strata_config *cfg = NULL;
    *st = strata_config_new(json, &cfg);
    return cfg;
}
/* Opens (and closes) the trips store with `cfg`, which it frees. */
static strata_status open_trips_with(strata_config *cfg) {
    strata_container *db = NULL;
    strata_status st = strata_open(w.trips_path, cfg, &db);
    strata_config_free(cfg);
    strata_close(db);
    return st;
}
static strata_status open_json(char *json) {
    strata_status st;
    strata_config *cfg = config_from(json, &st);
    free(json);
    return st == STRATA_OK ? open_trips_with(cfg) : st;
}
static strata_status c_open_plan_not_inferable(void) { return open_json(plan_json("trips_changed.json", "")); }
static strata_status c_open_automatic_migration_off(void) {
    return open_json(config_json("trips_changed.json", ", \"automaticMigration\": false"));
}
static strata_status failing_hook(strata_context *ctx, void *userdata) {
    (void)userdata;
    /* Its changes go with the stage. */
    strata_delete(ctx, "Trip/1");
    strata_save(ctx);
    return (strata_status)9999;
}
/* Sets a failing willMigrate hook on `stage` of a plan (trips.json twice) and opens with it. */
static strata_status open_with_hook_on(const char *stage) {
    char *json = plan_json("trips.json", "");
    strata_status st;
    strata_config *cfg = config_from(json, &st);
    free(json);
    if (st != STRATA_OK) return st;
    st = strata_config_set_stage_hooks(cfg, stage, failing_hook, NULL, NULL, NULL);
    if (st != STRATA_OK) { strata_config_free(cfg); return st; }
    return open_trips_with(cfg);
}
static strata_status c_open_plan_failing_hook(void) { return open_with_hook_on("toV2"); }
static strata_status c_stage_hooks_unknown_stage(void) { return open_with_hook_on("toV3"); }
static strata_status c_infer_malformed(void) {
    return strata_infer_migration("{\"version\": ", "{\"version\": \"2\", \"entities\": []}", OUT_TEXT);
}
static strata_status c_check_store_memory_path(void) {
    strata_config *cfg = make_config("trips.json");
    strata_status st = strata_check_store(":memory:", cfg, OUT_TEXT);
    strata_config_free(cfg);
    return st;
}

static strata_status config_of(const char *json) {
    strata_config *cfg = NULL;
    strata_status st = strata_config_new(json, &cfg);
    strata_config_free(cfg);
    return st;
}
static strata_status c_schema_unknown_attribute_key(void) {
    return config_of("{\"schema\": {\"version\": \"1\", \"entities\": [{\"name\": \"A\", \"attributes\": "
                     "[{\"name\": \"x\", \"type\": \"int\", \"nullable\": true}]}]}}");
}
static strata_status c_schema_unknown_type(void) {
    return config_of("{\"schema\": {\"version\": \"1\", \"entities\": [{\"name\": \"A\", \"attributes\": "
                     "[{\"name\": \"x\", \"type\": \"varchar\"}]}]}}");
}
static strata_status c_schema_malformed(void) { return config_of("{\"schema\": {\"version\": \"1\", \"entities\": [}"); }

static const bad_case cases[] = {
    /* malformed JSON */
    {"truncated object", NULL, c_truncated, STRATA_ERR_INVALID, NULL, NULL, NULL, NULL},
    {"trailing comma", NULL, c_trailing_comma, STRATA_ERR_INVALID, NULL, NULL, NULL, NULL},
    {"single quotes", NULL, c_single_quotes, STRATA_ERR_INVALID, NULL, NULL, NULL, NULL},
    {"text after the value", NULL, c_trailing_text, STRATA_ERR_INVALID, NULL, NULL, NULL, NULL},
    {"empty text", NULL, c_empty_text, STRATA_ERR_INVALID, NULL, NULL, NULL, NULL},
    {"array for an object", NULL, c_not_object, STRATA_ERR_INVALID, NULL, NULL, "", NULL},
    {"duplicate key", NULL, c_duplicate_key, STRATA_ERR_INVALID, NULL, NULL, "/name", NULL},
    {"bad escape", NULL, c_bad_escape, STRATA_ERR_INVALID, NULL, NULL, NULL, NULL},
    {"raw control character", NULL, c_control_char, STRATA_ERR_INVALID, NULL, NULL, NULL, NULL},
    {"leading zero", NULL, c_bad_number, STRATA_ERR_INVALID, NULL, NULL, NULL, NULL},
    {"invalid UTF-8", NULL, c_invalid_utf8, STRATA_ERR_INVALID, NULL, NULL, NULL, NULL},
    {"malformed patch", NULL, c_malformed_patch, STRATA_ERR_INVALID, NULL, NULL, NULL, NULL},
    {"malformed descriptor", NULL, c_malformed_descriptor, STRATA_ERR_INVALID, NULL, NULL, NULL, NULL},
    {"malformed insert_many array", NULL, c_malformed_many, STRATA_ERR_INVALID, NULL, NULL, NULL, NULL},
    {"malformed insert_many array after a valid element", NULL, c_malformed_many_after_valid, STRATA_ERR_INVALID, NULL, NULL, NULL, NULL},
    /* wrong value types */
    {"string for int", NULL, c_string_for_int, STRATA_ERR_VALIDATION, "Sample", "count", "/count", "three-ish"},
    {"fraction for int", NULL, c_fraction_for_int, STRATA_ERR_VALIDATION, "Sample", "count", "/count", NULL},
    {"int out of range", NULL, c_huge_int, STRATA_ERR_VALIDATION, "Sample", "count", "/count", NULL},
    {"number for string", NULL, c_number_for_string, STRATA_ERR_VALIDATION, "Sample", "note", "/note", NULL},
    {"string for double", NULL, c_string_for_double, STRATA_ERR_VALIDATION, "Sample", "ratio", "/ratio", "half-ish"},
    {"string for bool", NULL, c_string_for_bool, STRATA_ERR_VALIDATION, "Sample", "flag", "/flag", "yes-ish"},
    {"number for bool", NULL, c_number_for_bool, STRATA_ERR_VALIDATION, "Sample", "flag", "/flag", NULL},
    {"bool for date", NULL, c_bool_for_date, STRATA_ERR_VALIDATION, "Sample", "when", "/when", NULL},
    {"object for date", NULL, c_object_for_date, STRATA_ERR_VALIDATION, "Sample", "when", "/when", NULL},
    {"bad date text", NULL, c_bad_date_text, STRATA_ERR_VALIDATION, "Sample", "when", "/when", "2026-13-45"},
    {"words for a date", NULL, c_words_for_date, STRATA_ERR_VALIDATION, "Trip", "startDate", "/startDate", "yesterday-ish"},
    {"bad base64", NULL, c_bad_base64, STRATA_ERR_VALIDATION, "Sample", "blob", "/blob", "not*base64!"},
    {"number for data", NULL, c_number_for_data, STRATA_ERR_VALIDATION, "Sample", "blob", "/blob", NULL},
    {"bad uuid", NULL, c_bad_uuid, STRATA_ERR_VALIDATION, "Sample", "uid", "/uid", "zzzz"},
    {"url with spaces", NULL, c_bad_url, STRATA_ERR_VALIDATION, "Sample", "link", "/link", "spaces-ish"},
    {"bad decimal", NULL, c_bad_decimal, STRATA_ERR_VALIDATION, "Sample", "amount", "/amount", "12abc"},
    {"update: wrong type", NULL, c_update_wrong_type, STRATA_ERR_VALIDATION, NULL, "endDate", "/endDate", "the-end-ish"},
    {"nested object: wrong type", NULL, c_nested_wrong_type, STRATA_ERR_VALIDATION, "BucketListItem", "isInPlan", "/bucketList/1/isInPlan", "maybe-ish"},
    {"insert_many: wrong type", NULL, c_many_wrong_type, STRATA_ERR_VALIDATION, "Sample", "count", "/1/count", "x-ish"},
    {"date seconds after 9999", NULL, c_date_number_too_late, STRATA_ERR_VALIDATION, "Sample", "when", "/when", NULL},
    {"date seconds before 0000", NULL, c_date_number_too_early, STRATA_ERR_VALIDATION, "Sample", "when", "/when", NULL},
    {"date text after 9999 by its offset", NULL, c_date_text_too_late, STRATA_ERR_VALIDATION, "Sample", "when", "/when", NULL},
    {"update: date text before 0000 by its offset", NULL, c_update_date_too_early, STRATA_ERR_VALIDATION, "PersonalTrip", "endDate", "/endDate", NULL},
    {"duplicate key inside a json value", NULL, c_json_duplicate_key, STRATA_ERR_VALIDATION, "Sample", "extra", "/extra/meta/a", "dup-value"},
    {"json value nested 101 levels", NULL, c_json_too_deep, STRATA_ERR_VALIDATION, "Sample", "extra", NULL, NULL},
    /* unknown names */
    {"unknown entity", NULL, c_unknown_entity, STRATA_ERR_INVALID, "Plane", NULL, NULL, NULL},
    {"unknown attribute", NULL, c_unknown_attribute, STRATA_ERR_INVALID, "Trip", "colour", "/colour", NULL},
    {"unknown nested attribute", NULL, c_unknown_nested_attribute, STRATA_ERR_INVALID, "BucketListItem", "titel", "/bucketList/1/titel", NULL},
    {"update: attribute of another subentity", NULL, c_update_unknown_attribute, STRATA_ERR_INVALID, "PersonalTrip", "perdiem", "/perdiem", NULL},
    {"_entity not a subentity", NULL, c_entity_not_subentity, STRATA_ERR_INVALID, NULL, NULL, "/_entity", NULL},
    {"_entity a superentity", NULL, c_superentity_for_subentity, STRATA_ERR_INVALID, NULL, NULL, "/_entity", NULL},
    {"bad _onConflict", NULL, c_bad_on_conflict, STRATA_ERR_INVALID, NULL, NULL, "/_onConflict", NULL},
    {"unknown _ key", NULL, c_unknown_underscore_key, STRATA_ERR_INVALID, NULL, NULL, "/_version", NULL},
    {"update: _id of another object", NULL, c_update_other_id, STRATA_ERR_INVALID, NULL, NULL, "/_id", NULL},
    {"insert_many: unknown entity", NULL, c_insert_many_unknown_entity, STRATA_ERR_INVALID, "Plane", NULL, NULL, NULL},
    /* NULL arguments */
    {"insert: NULL ctx", NULL, c_insert_null_ctx, STRATA_ERR_MISUSE, NULL, NULL, NULL, NULL},
    {"insert: NULL entity", NULL, c_insert_null_entity, STRATA_ERR_MISUSE, NULL, NULL, NULL, NULL},
    {"insert: NULL json", NULL, c_insert_null_json, STRATA_ERR_MISUSE, NULL, NULL, NULL, NULL},
    {"insert_many: NULL ctx", NULL, c_many_null_ctx, STRATA_ERR_MISUSE, NULL, NULL, NULL, NULL},
    {"insert_many: NULL entity", NULL, c_many_null_entity, STRATA_ERR_MISUSE, NULL, NULL, NULL, NULL},
    {"insert_many: NULL json", NULL, c_many_null_json, STRATA_ERR_MISUSE, NULL, NULL, NULL, NULL},
    {"update: NULL ctx", NULL, c_update_null_ctx, STRATA_ERR_MISUSE, NULL, NULL, NULL, NULL},
    {"update: NULL id", NULL, c_update_null_id, STRATA_ERR_MISUSE, NULL, NULL, NULL, NULL},
    {"update: NULL json", NULL, c_update_null_json, STRATA_ERR_MISUSE, NULL, NULL, NULL, NULL},
    {"delete: NULL ctx", NULL, c_delete_null_ctx, STRATA_ERR_MISUSE, NULL, NULL, NULL, NULL},
    {"delete: NULL id", NULL, c_delete_null_id, STRATA_ERR_MISUSE, NULL, NULL, NULL, NULL},
    {"get: NULL ctx", NULL, c_get_null_ctx, STRATA_ERR_MISUSE, NULL, NULL, NULL, NULL},
    {"get: NULL id", NULL, c_get_null_id, STRATA_ERR_MISUSE, NULL, NULL, NULL, NULL},
    {"get: NULL out_json", NULL, c_get_null_out, STRATA_ERR_MISUSE, NULL, NULL, NULL, NULL},
    {"fetch: NULL ctx", NULL, c_fetch_null_ctx, STRATA_ERR_MISUSE, NULL, NULL, NULL, NULL},
    {"fetch: NULL descriptor", NULL, c_fetch_null_descriptor, STRATA_ERR_MISUSE, NULL, NULL, NULL, NULL},
    {"fetch: NULL out_json", NULL, c_fetch_null_out, STRATA_ERR_MISUSE, NULL, NULL, NULL, NULL},
    {"fetch_count: NULL ctx", NULL, c_count_null_ctx, STRATA_ERR_MISUSE, NULL, NULL, NULL, NULL},
    {"fetch_count: NULL descriptor", NULL, c_count_null_descriptor, STRATA_ERR_MISUSE, NULL, NULL, NULL, NULL},
    {"fetch_count: NULL out_count", NULL, c_count_null_out, STRATA_ERR_MISUSE, NULL, NULL, NULL, NULL},
    {"fetch_identifiers: NULL ctx", NULL, c_ids_null_ctx, STRATA_ERR_MISUSE, NULL, NULL, NULL, NULL},
    {"fetch_identifiers: NULL descriptor", NULL, c_ids_null_descriptor, STRATA_ERR_MISUSE, NULL, NULL, NULL, NULL},
    {"fetch_identifiers: NULL out_json", NULL, c_ids_null_out, STRATA_ERR_MISUSE, NULL, NULL, NULL, NULL},
    {"save: NULL ctx", NULL, c_save_null_ctx, STRATA_ERR_MISUSE, NULL, NULL, NULL, NULL},
    {"rollback: NULL ctx", NULL, c_rollback_null_ctx, STRATA_ERR_MISUSE, NULL, NULL, NULL, NULL},
    /* rules */
    {"unique collision, _onConflict error", NULL, c_unique_error, STRATA_ERR_CONSTRAINT, "Sample", "code", NULL, NULL},
    {"unique collision with a pending insert", NULL, c_unique_error_pending, STRATA_ERR_CONSTRAINT, "Sample", "code", NULL, NULL},
    {"compound unique collision", NULL, c_compound_unique_error, STRATA_ERR_CONSTRAINT, "Trip", NULL, NULL, NULL},
    {"required attribute missing", NULL, c_required_missing, STRATA_ERR_VALIDATION, "Sample", "note", NULL, NULL},
    {"required date missing", NULL, c_required_missing_trip, STRATA_ERR_VALIDATION, "Trip", "endDate", NULL, NULL},
    {"null for required", NULL, c_required_null, STRATA_ERR_VALIDATION, "Sample", "note", "/note", NULL},
    {"update: null for required", NULL, c_update_required_null, STRATA_ERR_VALIDATION, NULL, "name", "/name", NULL},
    {"enum violation", NULL, c_enum_violation, STRATA_ERR_VALIDATION, "Sample", "color", "/color", "purple-ish"},
    {"enum violation in a subentity", NULL, c_enum_subentity, STRATA_ERR_VALIDATION, "PersonalTrip", "reason", "/reason", "business-ish"},
    {"update: enum violation", NULL, c_update_enum, STRATA_ERR_VALIDATION, "PersonalTrip", "reason", "/reason", "boredom-ish"},
    {"unique collision by an update, on save", s_update_to_taken_code, c_save_rules, STRATA_ERR_CONSTRAINT, "Sample", "code", NULL, NULL},
    {"unique collision with an object saved meanwhile, _onConflict error", s_taken_meanwhile, c_save_rules, STRATA_ERR_CONSTRAINT, "Sample", "code", NULL, NULL},
    {"deny rule on save", s_delete_owner, c_save_rules, STRATA_ERR_CONSTRAINT, "Owner", "pets", NULL, NULL},
    {"maximumModelCount exceeded on save", s_team_too_big, c_save_rules, STRATA_ERR_CONSTRAINT, "Team", "members", NULL, NULL},
    {"minimumModelCount on save (insert)", s_team_empty, c_save_rules, STRATA_ERR_CONSTRAINT, "Team", "members", NULL, NULL},
    {"minimumModelCount on save (update)", s_team_emptied, c_save_rules, STRATA_ERR_CONSTRAINT, "Team", "members", NULL, NULL},
    /* identifiers */
    {"get: missing object", NULL, c_get_missing, STRATA_ERR_NOT_FOUND, NULL, NULL, NULL, NULL},
    {"get: missing subentity object", NULL, c_get_missing_subentity, STRATA_ERR_NOT_FOUND, NULL, NULL, NULL, NULL},
    {"update: missing object", NULL, c_update_missing, STRATA_ERR_NOT_FOUND, NULL, NULL, NULL, NULL},
    {"delete: missing object", NULL, c_delete_missing, STRATA_ERR_NOT_FOUND, NULL, NULL, NULL, NULL},
    {"link a missing object (to-one)", NULL, c_link_missing, STRATA_ERR_NOT_FOUND, NULL, NULL, "/livingAccommodation", NULL},
    {"link a missing object (to-many)", NULL, c_link_missing_many, STRATA_ERR_NOT_FOUND, NULL, NULL, "/bucketList/1", NULL},
    {"identifier without key", NULL, c_get_no_key, STRATA_ERR_INVALID, NULL, NULL, NULL, NULL},
    {"identifier with a text key", NULL, c_get_text_key, STRATA_ERR_INVALID, NULL, NULL, NULL, NULL},
    {"empty identifier", NULL, c_get_empty_id, STRATA_ERR_INVALID, NULL, NULL, NULL, NULL},
    {"identifier without entity", NULL, c_get_no_entity, STRATA_ERR_INVALID, NULL, NULL, NULL, NULL},
    {"identifier of an unknown entity", NULL, c_get_unknown_entity, STRATA_ERR_INVALID, "Plane", NULL, NULL, NULL},
    {"delete: malformed identifier", NULL, c_delete_bad_id, STRATA_ERR_INVALID, NULL, NULL, NULL, NULL},
    {"update: malformed identifier", NULL, c_update_bad_id, STRATA_ERR_INVALID, NULL, NULL, NULL, NULL},
    {"link by a malformed identifier", NULL, c_link_bad_id, STRATA_ERR_INVALID, NULL, NULL, "/livingAccommodation", NULL},
    {"get: the root's name for a subentity object", NULL, c_get_root_name, STRATA_ERR_INVALID, NULL, NULL, NULL, NULL},
    {"get: key with a leading zero", NULL, c_get_leading_zero, STRATA_ERR_INVALID, NULL, NULL, NULL, NULL},
    {"get: key with a plus sign", NULL, c_get_plus_sign, STRATA_ERR_INVALID, NULL, NULL, NULL, NULL},
    {"update: the root's name for a subentity object", NULL, c_update_root_name, STRATA_ERR_INVALID, NULL, NULL, NULL, NULL},
    {"delete: key with leading zeros", NULL, c_delete_leading_zero, STRATA_ERR_INVALID, NULL, NULL, NULL, NULL},
    {"link by the root's name", NULL, c_link_root_name, STRATA_ERR_INVALID, "BucketListItem", "trip", "/trip", NULL},
    {"link by a key with a leading zero", NULL, c_link_leading_zero, STRATA_ERR_INVALID, "BucketListItem", "trip", "/trip", NULL},
    {"insert: _id of another object", NULL, c_insert_other_id, STRATA_ERR_INVALID, "PersonalTrip", NULL, "/_id", NULL},
    {"upsert: _id of another object than the one matched", NULL, c_upsert_other_id, STRATA_ERR_INVALID, "PersonalTrip", NULL, "/_id", NULL},
    {"nested object contradicts its owner", NULL, c_nested_contradicts_owner, STRATA_ERR_INVALID, "BucketListItem", "trip", "/bucketList/1/trip", NULL},
    {"update: nested object contradicts its owner", NULL, c_update_nested_contradicts_owner, STRATA_ERR_INVALID, "BucketListItem", "trip", "/bucketList/0/trip", NULL},
    /* fetch descriptors */
    {"fetch: unknown descriptor key", NULL, c_fetch_unknown_key, STRATA_ERR_INVALID, NULL, NULL, "/sortby", NULL},
    {"fetch_count: unknown descriptor key", NULL, c_count_unknown_key, STRATA_ERR_INVALID, NULL, NULL, "/limit", NULL},
    {"fetch_identifiers: unknown descriptor key", NULL, c_ids_unknown_key, STRATA_ERR_INVALID, NULL, NULL, "/x", NULL},
    {"fetch: no entity", NULL, c_fetch_no_entity, STRATA_ERR_INVALID, NULL, NULL, NULL, NULL},
    {"fetch: unknown entity", NULL, c_fetch_unknown_entity, STRATA_ERR_INVALID, "Plane", NULL, NULL, NULL},
    {"fetch: wrong key type", NULL, c_fetch_wrong_type, STRATA_ERR_INVALID, NULL, NULL, "/includeSubentities", NULL},
    {"fetch: descriptor not an object", NULL, c_fetch_not_object, STRATA_ERR_INVALID, NULL, NULL, NULL, NULL},
    /* stores and schemas */
    {"open: not a store (text file)", NULL, c_open_text_file, STRATA_ERR_INCOMPATIBLE_STORE, NULL, NULL, NULL, NULL},
    {"open: store of another schema (a type change)", NULL, c_open_other_schema, STRATA_ERR_MIGRATION, NULL, NULL, NULL, NULL},
    {"open: store of an unrelated schema", NULL, c_open_rules_as_trips, STRATA_ERR_INCOMPATIBLE_STORE, NULL, NULL, NULL, NULL},
    /* migrations */
    {"open: a plan stage that cannot be inferred", NULL, c_open_plan_not_inferable, STRATA_ERR_MIGRATION, "Trip", "destination", NULL, NULL},
    {"open: automaticMigration off", NULL, c_open_automatic_migration_off, STRATA_ERR_INCOMPATIBLE_STORE, NULL, NULL, NULL, NULL},
    {"open: a willMigrate hook returning garbage", NULL, c_open_plan_failing_hook, STRATA_ERR_CALLBACK, NULL, NULL, NULL, NULL},
    {"set_stage_hooks: unknown stage", NULL, c_stage_hooks_unknown_stage, STRATA_ERR_INVALID, NULL, NULL, NULL, NULL},
    {"infer_migration: malformed JSON", NULL, c_infer_malformed, STRATA_ERR_INVALID, NULL, NULL, "/from", NULL},
    {"check_store: ':memory:' is not a store path", NULL, c_check_store_memory_path, STRATA_ERR_INVALID, NULL, NULL, NULL, NULL},
    {"schema: unknown attribute key", NULL, c_schema_unknown_attribute_key, STRATA_ERR_SCHEMA, "A", NULL, "/schema/entities/0/attributes/0/nullable", NULL},
    {"schema: unknown type", NULL, c_schema_unknown_type, STRATA_ERR_SCHEMA, "A", "x", "/schema/entities/0/attributes/0/type", NULL},
    {"schema: malformed JSON", NULL, c_schema_malformed, STRATA_ERR_INVALID, NULL, NULL, NULL, NULL},
};
#define N_CASES (sizeof cases / sizeof cases[0])

static const char *const code_names[] = {"ok", "misuse", "invalid", "schema", "not_found", "constraint", "validation",
                                         "incompatible_store", "migration", "callback", "busy", "readonly", "io",
                                         "corrupt", "nomem", "internal"};

/* Prints why the case failed; returns 1 if it did. */
static int expect_field(const bad_case *c, json_object *err, const char *key, const char *want) {
    if (!want) return 0;
    const char *got = check_str_member(err, key);
    if (got && strcmp(got, want) == 0) return 0;
    fprintf(stderr, "FAIL %s: error \"%s\" is %s, expected \"%s\"\n", c->name, key, got ? got : "(missing)", want);
    return 1;
}

/* Runs one case; returns the number of failed assertions (0 = pass). */
static int run_case(const bad_case *c) {
    int failed = 0;
    add_pending_changes();
    if (c->setup) CHECK_STATUS(c->setup());
    fingerprint before = take_fingerprint();

    out_text = (char *)&out_text; /* a failed call sets its out-parameter to NULL (or 0) */
    out_count = 99;
    out_text_used = out_count_used = 0;
    strata_status st = c->run();
    char *error = strdup(strata_last_error());

    if (st != c->status) {
        fprintf(stderr, "FAIL %s: status %d (%s), expected %d (%s)\n  %s\n", c->name, (int)st, strata_errstr(st),
                (int)c->status, strata_errstr(c->status), error);
        failed++;
        if (st == STRATA_OK && out_text != (char *)&out_text) strata_free(out_text);
    } else {
        if (out_text_used && out_text != NULL) {
            fprintf(stderr, "FAIL %s: the out-parameter is not NULL after the failure\n", c->name);
            failed++;
        }
        if (out_count_used && out_count != 0) {
            fprintf(stderr, "FAIL %s: out_count is %lld after the failure, not 0\n", c->name, (long long)out_count);
            failed++;
        }
    }
    json_object *err = parse_json_or_die(error);
    const char *code = check_str_member(err, "code");
    const char *message = check_str_member(err, "message");
    if (!json_object_is_type(err, json_type_object) || !code || !*code || !message || !*message) {
        fprintf(stderr, "FAIL %s: last error lacks a code or message: %s\n", c->name, error);
        failed++;
    } else if (st == c->status && strcmp(code, code_names[c->status]) != 0) {
        fprintf(stderr, "FAIL %s: code \"%s\", expected \"%s\"\n", c->name, code, code_names[c->status]);
        failed++;
    }
    failed += expect_field(c, err, "entity", c->entity);
    failed += expect_field(c, err, "attribute", c->attribute);
    failed += expect_field(c, err, "path", c->path);
    if (c->secret && strstr(error, c->secret)) {
        fprintf(stderr, "FAIL %s: the error contains the bound value \"%s\": %s\n", c->name, c->secret, error);
        failed++;
    }
    json_object_put(err);

    fingerprint after = take_fingerprint();
    static const char *const parts[] = {"trips store", "rules store", "trips context reads", "rules context reads"};
    json_object *b[] = {before.trips_store, before.rules_store, before.trips_ctx, before.rules_ctx};
    json_object *a[] = {after.trips_store, after.rules_store, after.trips_ctx, after.rules_ctx};
    for (size_t i = 0; i < 4; i++) {
        if (!json_object_equal(a[i], b[i])) {
            fprintf(stderr, "FAIL %s: the %s changed\n  before: %s\n  after:  %s\n", c->name, parts[i],
                    json_object_to_json_string(b[i]), json_object_to_json_string(a[i]));
            failed++;
        }
    }
    if (before.trips_changes != after.trips_changes || before.rules_changes != after.rules_changes) {
        fprintf(stderr, "FAIL %s: strata_has_changes changed (%d,%d -> %d,%d)\n", c->name, before.trips_changes,
                before.rules_changes, after.trips_changes, after.rules_changes);
        failed++;
    }
    free_fingerprint(&before);
    free_fingerprint(&after);
    printf("%s %s: %s\n", failed ? "FAIL" : "ok  ", c->name, error);
    free(error);
    return failed;
}

/* strata_last_error()'s "reason" (strata.h, ERRORS) for a failure `st` of `call`. */
static void expect_reason(const char *call, strata_status st, strata_status status, const char *reason) {
    json_object *e = parse_json_or_die(strata_last_error());
    const char *got = check_str_member(e, "reason");
    if (st != status || (reason ? !got || strcmp(got, reason) != 0 : check_member(e, "reason") != NULL)) {
        fprintf(stderr, "FAIL %s: expected status %d and reason %s, got %d: %s\n", call, (int)status,
                reason ? reason : "(none)", (int)st, strata_last_error());
        exit(1);
    }
    json_object_put(e);
}

/* Malformed JSON is "invalid" with reason "malformed_json", even after a value error; a
 * wrong value alone is "validation" without one; a unique collision is "unique_violation". */
static void test_reasons(void) {
    char *id = NULL;
    expect_reason("malformed insert", strata_insert(w.rctx, "Sample", "{\"code\": \"n\", \"note\": 42,", &id),
                  STRATA_ERR_INVALID, "malformed_json");
    expect_reason("wrong value", strata_insert(w.rctx, "Sample", "{\"code\": \"n\", \"note\": 42}", &id),
                  STRATA_ERR_VALIDATION, NULL);
    expect_reason("malformed patch", strata_update(w.rctx, w.sample2, "{\"note\": \"x\\u00\"}"),
                  STRATA_ERR_INVALID, "malformed_json");
    /* S1 is saved: an update of S2 to its code fails at the latest when saved. */
    strata_status st = strata_update(w.rctx, w.sample2, "{\"code\": \"S1\"}");
    if (st == STRATA_OK) st = strata_save(w.rctx);
    expect_reason("unique collision", st, STRATA_ERR_CONSTRAINT, "unique_violation");
    CHECK_STATUS(strata_rollback(w.rctx));
    CHECK(id == NULL);
}

/* Checks that the harness itself can fail: a real change is seen. */
static void test_fingerprint_sees_changes(void) {
    add_pending_changes();
    fingerprint before = take_fingerprint();
    CHECK_STATUS(strata_update(w.rctx, w.pet, "{\"name\": \"Rex II\"}"));
    fingerprint mid = take_fingerprint();
    CHECK(json_object_equal(before.rules_store, mid.rules_store));
    CHECK(!json_object_equal(before.rules_ctx, mid.rules_ctx));
    CHECK_STATUS(strata_save(w.rctx));
    fingerprint after = take_fingerprint();
    CHECK(!json_object_equal(before.rules_store, after.rules_store));
    CHECK(after.rules_changes == 0 && before.rules_changes == 1);
    CHECK_STATUS(strata_update(w.rctx, w.pet, "{\"name\": \"Rex\"}"));
    CHECK_STATUS(strata_save(w.rctx));
    free_fingerprint(&before);
    free_fingerprint(&mid);
    free_fingerprint(&after);
}

/*
 * A pending delete that a deny rule will refuse at save must not break the
 * context's reads: strata_fetch fails only with MISUSE or INVALID, and
 * strata_get of another object is not affected. Returns the failures.
 */
static int reads_with_pending_deny_fail(void) {
    int failed = 0;
    add_pending_changes();
    CHECK_STATUS(strata_delete(w.rctx, w.owner));
    char *text = NULL;
    int64_t n = -1;
    strata_status st = strata_fetch(w.rctx, "{\"entity\": \"Pet\"}", &text);
    if (st != STRATA_OK) { fprintf(stderr, "FAIL fetch with a pending deny delete: %d %s\n", (int)st, strata_last_error()); failed++; }
    strata_free(text);
    st = strata_fetch_count(w.rctx, "{\"entity\": \"Owner\"}", &n);
    if (st != STRATA_OK || n != 0) { fprintf(stderr, "FAIL fetch_count with a pending deny delete: %d, count %lld\n", (int)st, (long long)n); failed++; }
    text = NULL;
    st = strata_get(w.rctx, w.pet, &text);
    if (st != STRATA_OK) { fprintf(stderr, "FAIL get with a pending deny delete: %d %s\n", (int)st, strata_last_error()); failed++; }
    strata_free(text);
    CHECK_STATUS(strata_rollback(w.rctx));
    return failed;
}

int main(void) {
    world_open();
    test_fingerprint_sees_changes();
    CHECK(N_CASES >= 30);
    int failed_cases = 0;
    for (size_t i = 0; i < N_CASES; i++) {
        if (cases[i].run == c_open_text_file && check_skip_part_on_postgres(cases[i].name)) continue;
        if (run_case(&cases[i])) failed_cases++;
        CHECK_STATUS(strata_rollback(w.tctx));
        CHECK_STATUS(strata_rollback(w.rctx));
    }
    printf("%zu cases, %d failed\n", N_CASES, failed_cases);
    test_reasons();

    /* After all the bad input, the stores still work. */
    add_pending_changes();
    CHECK_STATUS(strata_save(w.tctx));
    CHECK_STATUS(strata_save(w.rctx));
    int deny_read_failures = reads_with_pending_deny_fail();
    world_close();
    CHECK(failed_cases == 0);
    CHECK(deny_read_failures == 0);
    return 0;
}
