/*
 * test_query_errors.c — bad fetch descriptors and predicates, table-driven,
 * through strata.h only.
 *
 * A descriptor case runs through each of strata_fetch, strata_fetch_count,
 * strata_fetch_identifiers and strata_explain; a deletion case through
 * strata_delete_where; a call case (NULL arguments, stale handles) once.
 * Every run asserts:
 *   - the exact status (STRATA_ERR_INVALID or STRATA_ERR_MISUSE);
 *   - strata_last_error() is a JSON object with the status's "code" string,
 *     "status" and a non-empty "message";
 *   - for JSON predicates and descriptor fields, the exact "path" (a JSON
 *     pointer into the input: "/predicate/and/1/==/0/key"); for #Predicate
 *     text, "path" is "/predicate" and the message names the position;
 *   - the error does not contain the bound value ("secret");
 *   - the out-parameter is NULL (or 0);
 *   - nothing changed: the stores read from fresh contexts, the failing
 *     contexts' reads (pending changes included) and strata_has_changes()
 *     are the same before and after. The contexts hold pending changes
 *     during every case, so this is not vacuous.
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
#define VALUES_SCHEMA STRATA_SOURCE_DIR "/Tests/c/fixtures/queries_values.json"

/* ---- helpers ------------------------------------------------------------ */

#define open_store(schema_path, path) check_open_schema((schema_path), (path))

/* ---- the world every case runs in -------------------------------------- */

typedef struct {
    char *trips_path;
    strata_container *trips, *values;
    strata_context *tctx, *vctx;      /* the contexts cases call */
    strata_context *stale_ctx;        /* freed */
    strata_container *stale_db;       /* closed */
    char *family;                     /* a saved PersonalTrip */
    char *record;                     /* a saved Record */
} world;

static world w;

static const char *const trip_entities[] = {"Trip", "BusinessTrip", "PersonalTrip", "BucketListItem", "LivingAccommodation"};
static const char *const value_entities[] = {"Record", "Tag"};

static void add_pending_changes(void) {
    CHECK_STATUS(strata_rollback(w.tctx));
    CHECK_STATUS(strata_rollback(w.vctx));
    CHECK_STATUS(strata_insert(w.tctx, "Trip", "{\"name\": \"Pending\", \"destination\": \"Nowhere\","
                                              " \"startDate\": 0, \"endDate\": 0, \"bucketList\": [{\"title\": \"p\"}]}", NULL));
    CHECK_STATUS(strata_update(w.tctx, w.family, "{\"destination\": \"Basel\"}"));
    CHECK_STATUS(strata_insert(w.vctx, "Record", "{\"code\": \"pending\", \"amount\": \"2.5\", \"tags\": [{\"name\": \"t\"}]}", NULL));
    CHECK_STATUS(strata_update(w.vctx, w.record, "{\"note\": \"pending note\"}"));
}

static void world_open(void) {
    w.trips_path = test_store_path("query_errors_trips.store");
    w.trips = open_store(TRIPS_SCHEMA, w.trips_path);
    w.values = open_store(VALUES_SCHEMA, NULL);
    CHECK_STATUS(strata_context_new(w.trips, &w.tctx));
    CHECK_STATUS(strata_context_new(w.values, &w.vctx));

    CHECK_STATUS(strata_insert(w.tctx, "Trip",
                               "{\"_entity\": \"PersonalTrip\", \"name\": \"Family Visit\", \"destination\": \"Z\\u00fcrich\","
                               " \"startDate\": \"2026-12-20T00:00:00Z\", \"endDate\": \"2026-12-28T00:00:00Z\", \"reason\": \"family\","
                               " \"livingAccommodation\": {\"placeName\": \"Grandma's\", \"address\": \"Seefeldstrasse 12\"},"
                               " \"bucketList\": [{\"title\": \"Christmas market\", \"isInPlan\": true}]}", &w.family));
    CHECK_STATUS(strata_insert(w.tctx, "Trip", "{\"_entity\": \"BusinessTrip\", \"name\": \"WWDC\", \"destination\": \"Cupertino\","
                                              " \"startDate\": \"2026-06-08\", \"endDate\": \"2026-06-12\", \"perdiem\": 120.5}", NULL));
    CHECK_STATUS(strata_insert(w.tctx, "Trip", "{\"name\": \"Road Trip\", \"destination\": \"Route 66\","
                                              " \"startDate\": \"2027-05-01\", \"endDate\": \"2027-05-20\"}", NULL));
    CHECK_STATUS(strata_save(w.tctx));
    CHECK_STATUS(strata_insert(w.vctx, "Record", "{\"code\": \"r1\", \"count\": 3, \"uid\": \"123e4567-e89b-12d3-a456-426614174000\","
                                                " \"amount\": \"1.50\", \"extra\": {\"k\": 1}, \"blob\": \"AAEC\"}", &w.record));
    CHECK_STATUS(strata_save(w.vctx));

    /* A freed context and a closed container (on stores of their own). */
    CHECK_STATUS(strata_context_new(w.trips, &w.stale_ctx));
    strata_context_free(w.stale_ctx);
    w.stale_db = open_store(TRIPS_SCHEMA, NULL);
    strata_close(w.stale_db);
}

static void world_close(void) {
    strata_context_free(w.tctx);
    strata_context_free(w.vctx);
    strata_close(w.trips);
    strata_close(w.values);
    strata_free(w.family);
    strata_free(w.record);
    free(w.trips_path);
}

typedef struct {
    json_object *parts[4];   /* trips store, values store, trips context, values context */
    int changes[2];
} fingerprint;

static fingerprint take_fingerprint(void) {
    fingerprint f;
    strata_context *fresh = NULL;
    CHECK_STATUS(strata_context_new(w.trips, &fresh));
    f.parts[0] = read_all(fresh, trip_entities, 5);
    strata_context_free(fresh);
    CHECK_STATUS(strata_context_new(w.values, &fresh));
    f.parts[1] = read_all(fresh, value_entities, 2);
    strata_context_free(fresh);
    f.parts[2] = read_all(w.tctx, trip_entities, 5);
    f.parts[3] = read_all(w.vctx, value_entities, 2);
    f.changes[0] = strata_has_changes(w.tctx);
    f.changes[1] = strata_has_changes(w.vctx);
    return f;
}

static void free_fingerprint(fingerprint *f) {
    for (int i = 0; i < 4; i++) json_object_put(f->parts[i]);
}

/* ---- the cases ---------------------------------------------------------- */

typedef enum { DESCRIPTOR, DELETION, CALL } case_kind;
typedef enum { TRIPS, VALUES } store_kind;

static char *out_text;      /* out-parameters of the calls under test */
static int64_t out_count;
static int out_text_used, out_count_used;
#define OUT_TEXT (out_text_used = 1, &out_text)
#define OUT_COUNT (out_count_used = 1, &out_count)

static const char *const descriptor_for_calls = "{\"entity\": \"Trip\"}";

/* NULL arguments */
static strata_status c_fetch_null_ctx(void) { return strata_fetch(NULL, descriptor_for_calls, OUT_TEXT); }
static strata_status c_fetch_null_descriptor(void) { return strata_fetch(w.tctx, NULL, OUT_TEXT); }
static strata_status c_fetch_null_out(void) { return strata_fetch(w.tctx, descriptor_for_calls, NULL); }
static strata_status c_count_null_ctx(void) { return strata_fetch_count(NULL, descriptor_for_calls, OUT_COUNT); }
static strata_status c_count_null_descriptor(void) { return strata_fetch_count(w.tctx, NULL, OUT_COUNT); }
static strata_status c_count_null_out(void) { return strata_fetch_count(w.tctx, descriptor_for_calls, NULL); }
static strata_status c_ids_null_ctx(void) { return strata_fetch_identifiers(NULL, descriptor_for_calls, OUT_TEXT); }
static strata_status c_ids_null_descriptor(void) { return strata_fetch_identifiers(w.tctx, NULL, OUT_TEXT); }
static strata_status c_ids_null_out(void) { return strata_fetch_identifiers(w.tctx, descriptor_for_calls, NULL); }
static strata_status c_explain_null_ctx(void) { return strata_explain(NULL, descriptor_for_calls, OUT_TEXT); }
static strata_status c_explain_null_descriptor(void) { return strata_explain(w.tctx, NULL, OUT_TEXT); }
static strata_status c_explain_null_out(void) { return strata_explain(w.tctx, descriptor_for_calls, NULL); }
static strata_status c_delete_null_ctx(void) { return strata_delete_where(NULL, "Trip", "true"); }
static strata_status c_delete_null_ctx_all(void) { return strata_delete_where(NULL, "Trip", NULL); }
static strata_status c_delete_null_entity(void) { return strata_delete_where(w.tctx, NULL, "true"); }
static strata_status c_delete_null_entity_all(void) { return strata_delete_where(w.tctx, NULL, NULL); }
static void trace_nothing(const char *sql, void *userdata) { (void)sql; (void)userdata; }
static strata_status c_trace_null_container(void) { return strata_set_trace(NULL, trace_nothing, NULL, NULL); }
static strata_status c_trace_null_container_remove(void) { return strata_set_trace(NULL, NULL, NULL, NULL); }
/* Stale handles */
static strata_status c_fetch_stale(void) { return strata_fetch(w.stale_ctx, descriptor_for_calls, OUT_TEXT); }
static strata_status c_count_stale(void) { return strata_fetch_count(w.stale_ctx, descriptor_for_calls, OUT_COUNT); }
static strata_status c_ids_stale(void) { return strata_fetch_identifiers(w.stale_ctx, descriptor_for_calls, OUT_TEXT); }
static strata_status c_explain_stale(void) { return strata_explain(w.stale_ctx, descriptor_for_calls, OUT_TEXT); }
static strata_status c_delete_stale(void) { return strata_delete_where(w.stale_ctx, "Trip", NULL); }
static strata_status c_trace_stale(void) { return strata_set_trace(w.stale_db, trace_nothing, NULL, NULL); }
/* A stale context with a bad descriptor: the handle is checked (MISUSE), not the JSON. */
static strata_status c_fetch_stale_bad_json(void) { return strata_fetch(w.stale_ctx, "{\"entity\": ", OUT_TEXT); }

typedef struct {
    const char *name;
    case_kind kind;
    store_kind store;
    const char *entity;        /* DELETION: the entity */
    const char *input;         /* DESCRIPTOR: the descriptor; DELETION: the predicate */
    strata_status (*call)(void);  /* CALL */
    strata_status status;
    const char *path;          /* expected "path"; NULL: not checked */
    const char *position;      /* #Predicate text: "position N" must be in the message */
    const char *secret;        /* must not appear in the error */
    const char *message_has;   /* must appear in the message */
} query_case;

#define D(name, input, path) {name, DESCRIPTOR, TRIPS, NULL, input, NULL, STRATA_ERR_INVALID, path, NULL, NULL, NULL}
#define DV(name, input, path) {name, DESCRIPTOR, VALUES, NULL, input, NULL, STRATA_ERR_INVALID, path, NULL, NULL, NULL}
#define DS(name, input, path, secret) {name, DESCRIPTOR, TRIPS, NULL, input, NULL, STRATA_ERR_INVALID, path, NULL, secret, NULL}
#define DM(name, input, path, has) {name, DESCRIPTOR, TRIPS, NULL, input, NULL, STRATA_ERR_INVALID, path, NULL, NULL, has}
#define T(name, text, position) \
    {name, DESCRIPTOR, TRIPS, NULL, "{\"entity\": \"Trip\", \"predicate\": \"" text "\"}", NULL, STRATA_ERR_INVALID, \
     "/predicate", "position " position, NULL, NULL}
#define TB(name, text, bindings, position, secret) \
    {name, DESCRIPTOR, TRIPS, NULL, "{\"entity\": \"Trip\", \"predicate\": \"" text "\", \"bindings\": " bindings "}", NULL, \
     STRATA_ERR_INVALID, "/predicate", "position " position, secret, NULL}
#define W(name, entity, input, path) {name, DELETION, TRIPS, entity, input, NULL, STRATA_ERR_INVALID, path, NULL, NULL, NULL}
#define WT(name, entity, input, path, position) {name, DELETION, TRIPS, entity, input, NULL, STRATA_ERR_INVALID, path, "position " position, NULL, NULL}
#define C(name, fn) {name, CALL, TRIPS, NULL, NULL, fn, STRATA_ERR_MISUSE, NULL, NULL, NULL, NULL}

#define PRED(p) "{\"entity\": \"Trip\", \"predicate\": " p "}"

static const query_case cases[] = {
    /* malformed JSON */
    D("truncated descriptor", "{\"entity\": \"Trip\", \"predicate\": ", NULL),
    D("truncated predicate", "{\"entity\": \"Trip\", \"predicate\": {\"==\": [{\"key\": \"name\"}, \"x\"]}", NULL),
    D("trailing comma", "{\"entity\": \"Trip\",}", NULL),
    D("bad \\u escape", PRED("{\"==\": [{\"key\": \"name\"}, \"\\u00\"]}"), NULL),
    D("invalid UTF-8", PRED("{\"==\": [{\"key\": \"name\"}, \"\xc3\x28\"]}"), NULL),
    D("empty text", "", NULL),
    D("descriptor not an object", "[\"Trip\"]", NULL),
    D("duplicate descriptor key", "{\"entity\": \"Trip\", \"entity\": \"Trip\"}", "/entity"),
    D("duplicate key in a predicate", PRED("{\"==\": [{\"key\": \"name\", \"key\": \"destination\"}, \"x\"]}"), "/predicate/==/0/key"),
    /* descriptor keys */
    D("unknown descriptor key", "{\"entity\": \"Trip\", \"fetchlimit\": 1}", "/fetchlimit"),
    D("missing entity", "{\"predicate\": true}", "/entity"),
    D("unknown entity", "{\"entity\": \"Plane\"}", "/entity"),
    D("entity not a string", "{\"entity\": 5}", "/entity"),
    D("bindings not an object", "{\"entity\": \"Trip\", \"bindings\": [1]}", "/bindings"),
    D("includeSubentities not a bool", "{\"entity\": \"Trip\", \"includeSubentities\": \"yes\"}", "/includeSubentities"),
    D("includePendingChanges not a bool", "{\"entity\": \"Trip\", \"includePendingChanges\": 1}", "/includePendingChanges"),
    /* key paths */
    D("unknown key path", PRED("{\"==\": [{\"key\": \"title\"}, \"x\"]}"), "/predicate/==/0/key"),
    D("unknown key path, nested", PRED("{\"and\": [true, {\"or\": [false, {\"==\": [{\"key\": \"nmae\"}, \"x\"]}]}]}"),
      "/predicate/and/1/or/1/==/0/key"),
    D("unknown key path through a to-one", PRED("{\"==\": [{\"key\": \"livingAccommodation.nope\"}, \"x\"]}"), "/predicate/==/0/key"),
    /* A subentity's attribute on the superentity is nil for the others (not an error); a cast
       must reach an entity of the hierarchy. */
    D("a cast outside the hierarchy", PRED("{\"==\": [{\"key\": \"as:BucketListItem.title\"}, \"x\"]}"), "/predicate/==/0/key"),
    D("arithmetic on strings", PRED("{\"==\": [{\"+\": [{\"key\": \"name\"}, \"x\"]}, \"y\"]}"), "/predicate/==/0"),
    /* sums and averages take ints and doubles */
    DM("@sum of strings", PRED("{\">\": [{\"@sum\": [{\"key\": \"bucketList\"}, {\"key\": \"title\"}]}, 1]}"),
       "/predicate/>/0/@sum/1/key", "'@sum' (text: reduce(0, +)) of string values is not supported"),
    DM("@sum of dates", PRED("{\">\": [{\"@sum\": [{\"key\": \"bucketList\"}, {\"key\": \"trip.startDate\"}]}, 1]}"),
       "/predicate/>/0/@sum/1/key", "'@sum' (text: reduce(0, +)) of date values is not supported"),
    DM("@avg of bools", PRED("{\"==\": [{\"@avg\": [{\"filter\": [{\"key\": \"bucketList\"}, true]}, {\"key\": \"isInPlan\"}]}, 1]}"),
       "/predicate/==/0/@avg/1/key", "'@avg' (text: average()) of bool values is not supported"),
    D("@sum over a to-one", PRED("{\"==\": [{\"@sum\": [{\"key\": \"livingAccommodation\"}, {\"key\": \"placeName\"}]}, 1]}"),
      "/predicate/==/0/@sum/0/key"),
    T("text: a sum of strings", "$0.bucketList.map { $0.title }.reduce(0, +) > 1", "21"),
    T("text: reduce with another operator", "$0.bucketList.map { $0.title }.reduce(0, *) > 1", "42"),
    D("key path through a to-many", PRED("{\"==\": [{\"key\": \"bucketList.title\"}, \"x\"]}"), "/predicate/==/0/key"),
    D("empty key path", PRED("{\"==\": [{\"key\": \"\"}, \"x\"]}"), "/predicate/==/0/key"),
    D("unknown key path inside any", PRED("{\"any\": [{\"key\": \"bucketList\"}, {\"==\": [{\"key\": \"name\"}, \"x\"]}]}"),
      "/predicate/any/1/==/0/key"),
    D("scope outside any closure", PRED("{\"==\": [{\"key\": \"name\", \"scope\": 1}, \"x\"]}"), "/predicate/==/0/key"),
    D("transient attribute", PRED("{\">\": [{\"key\": \"tripViews\"}, 0]}"), "/predicate/>/0/key"),
    DV("transient attribute (values)", "{\"entity\": \"Record\", \"predicate\": {\"==\": [{\"key\": \"views\"}, 0]}}", "/predicate/==/0/key"),
    /* types */
    D("type mismatch: string == number", PRED("{\"==\": [{\"key\": \"name\"}, 5]}"), "/predicate/==/1"),
    DS("type mismatch: date > words", PRED("{\">\": [{\"key\": \"startDate\"}, \"tomorrow-secret\"]}"), "/predicate/>/1", "tomorrow-secret"),
    DS("type mismatch: a bound value", PRED("{\"==\": [{\"key\": \"startDate\"}, {\"var\": \"d\"}]}, \"bindings\": {\"d\": \"not-a-date-secret\"}"),
       "/predicate/==/1/var", "not-a-date-secret"),
    D("type mismatch: typed literal", PRED("{\"and\": [true, {\">\": [{\"key\": \"name\"}, {\"date\": \"2026-01-01\"}]}]}"), "/predicate/and/1/>/1"),
    D("type mismatch in a list", PRED("{\"in\": [{\"key\": \"name\"}, [\"a\", 2]]}"), "/predicate/in/1"),
    /* enum attributes: a value outside the enum is a misspelling */
    DM("enum: not a member", "{\"entity\": \"PersonalTrip\", \"predicate\": {\"==\": [{\"key\": \"reason\"}, \"famly\"]}}",
       "/predicate/==/1", "allowed: \"family\", \"reunion\", \"wellness\", \"unknown\""),
    DM("enum: not a member, !=", "{\"entity\": \"PersonalTrip\", \"predicate\": {\"!=\": [\"Family\", {\"key\": \"reason\"}]}}",
       "/predicate/!=/0", "enum attribute 'PersonalTrip.reason'"),
    DM("enum: not a member in a list", "{\"entity\": \"PersonalTrip\", \"predicate\": {\"in\": [{\"key\": \"reason\"}, [\"family\", \"x\"]]}}",
       "/predicate/in/1", "the value compared is not a value of enum attribute"),
    /* nesting SQLite cannot parse is found while checking */
    DM("too deeply nested closures",
       PRED("{\"any\": [{\"key\": \"bucketList\"}, {\"any\": [{\"key\": \"trip.bucketList\"}"
            ", {\"any\": [{\"key\": \"trip.bucketList\"}, {\"any\": [{\"key\": \"trip.bucketList\"}"
            ", {\"any\": [{\"key\": \"trip.bucketList\"}, {\"any\": [{\"key\": \"trip.bucketList\"}"
            ", {\"any\": [{\"key\": \"trip.bucketList\"}, {\"any\": [{\"key\": \"trip.bucketList\"}"
            ", {\"any\": [{\"key\": \"trip.bucketList\"}, {\"key\": \"isInPlan\"}]}]}]}]}]}]}]}]}]}"),
       "/predicate", "nested too deeply"),
    T("too deeply nested closures (text)",
      "$0.bucketList.contains { $0.trip?.bucketList.contains { $0.trip?.bucketList.contains { "
      "$0.trip?.bucketList.contains { $0.trip?.bucketList.contains { $0.trip?.bucketList.contains { "
      "$0.trip?.bucketList.contains { $0.trip?.bucketList.contains { $0.trip?.bucketList.contains { "
      "$0.isInPlan } } } } } } } } }", "15"),
    D("in with a non-array variable", PRED("{\"in\": [{\"key\": \"name\"}, {\"var\": \"n\"}]}, \"bindings\": {\"n\": \"x\"}"), "/predicate/in/1/var"),
    D("to-one compared with another entity's identifier", PRED("{\"==\": [{\"key\": \"livingAccommodation\"}, \"Trip/1\"]}"), "/predicate/==/1"),
    D("to-many compared with a literal", PRED("{\"==\": [{\"key\": \"bucketList\"}, \"x\"]}"), "/predicate/==/1"),
    /* operators not valid for a type */
    {"< on bool", DESCRIPTOR, TRIPS, NULL, "{\"entity\": \"BucketListItem\", \"predicate\": {\"<\": [{\"key\": \"isInPlan\"}, true]}}", NULL,
     STRATA_ERR_INVALID, "/predicate", NULL, NULL, NULL},
    {"contains on a double", DESCRIPTOR, TRIPS, NULL, "{\"entity\": \"BusinessTrip\", \"predicate\": {\"contains\": [{\"key\": \"perdiem\"}, \"1\"]}}", NULL,
     STRATA_ERR_INVALID, "/predicate/contains/0/key", NULL, NULL, NULL},
    {"isEmpty on a double", DESCRIPTOR, TRIPS, NULL, "{\"entity\": \"BusinessTrip\", \"predicate\": {\"isEmpty\": {\"key\": \"perdiem\"}}}", NULL,
     STRATA_ERR_INVALID, "/predicate", NULL, NULL, NULL},
    DV("< on data", "{\"entity\": \"Record\", \"predicate\": {\"<\": [{\"key\": \"blob\"}, {\"data\": \"AAEC\"}]}}", "/predicate"),
    /* Trip.photo uses external storage: its column holds a file name once saved, so its value is never read */
    DM("== on external storage", PRED("{\"==\": [{\"key\": \"photo\"}, {\"data\": \"AAEC\"}]}"), "/predicate/==/0/key",
       "'photo' uses external storage"),
    DM("< on external storage", PRED("{\"<\": [{\"key\": \"photo\"}, {\"data\": \"AAEC\"}]}"), "/predicate/</0/key",
       "cannot be compared"),
    DM("!= on external storage, reversed", PRED("{\"and\": [true, {\"!=\": [{\"data\": \"AAEC\"}, {\"key\": \"photo\"}]}]}"),
       "/predicate/and/1/!=/1/key", "external storage"),
    DM("sort by external storage", "{\"entity\": \"Trip\", \"sortBy\": [{\"key\": \"photo\"}]}", "/sortBy/0/key",
       "cannot sort by 'photo': it uses external storage"),
    D("count of a date", PRED("{\">\": [{\"count\": {\"key\": \"startDate\"}}, 1]}"), "/predicate/>/0"),
    D("any over a to-one", PRED("{\"any\": [{\"key\": \"livingAccommodation\"}, true]}"), "/predicate/any/0/key"),
    DV("< on uuid", "{\"entity\": \"Record\", \"predicate\": {\"<\": [{\"key\": \"uid\"}, {\"uuid\": \"123e4567-e89b-12d3-a456-426614174000\"}]}}", "/predicate"),
    DV("== on json", "{\"entity\": \"Record\", \"predicate\": {\"==\": [{\"key\": \"extra\"}, 1]}}", "/predicate"),
    DV("isEmpty on an int", "{\"entity\": \"Record\", \"predicate\": {\"isEmpty\": {\"key\": \"count\"}}}", "/predicate"),
    DV("in on data", "{\"entity\": \"Record\", \"predicate\": {\"in\": [{\"key\": \"blob\"}, [{\"data\": \"AAEC\"}]]}}", "/predicate"),
    /* variables */
    DM("unknown variable", PRED("{\"==\": [{\"key\": \"name\"}, {\"var\": \"q\"}]}, \"bindings\": {\"known\": \"y\"}"),
       "/predicate/==/1/var", "known"),
    D("unknown variable, no bindings", PRED("{\"cond\": [{\"isEmpty\": {\"var\": \"searchText\"}}, true, false]}"), "/predicate/cond/0/isEmpty/var"),
    /* is */
    D("is: unrelated entity", PRED("{\"is\": \"BucketListItem\"}"), "/predicate"),
    D("is: unknown entity", PRED("{\"and\": [true, {\"is\": \"Plane\"}]}"), "/predicate/and/1"),
    {"is: a sibling entity", DESCRIPTOR, TRIPS, NULL, "{\"entity\": \"PersonalTrip\", \"predicate\": {\"is\": \"BusinessTrip\"}}", NULL,
     STRATA_ERR_INVALID, "/predicate", NULL, NULL, NULL},
    D("is: not a name", PRED("{\"is\": 5}"), "/predicate/is"),
    /* malformed trees */
    D("unknown operator", PRED("{\"like\": [{\"key\": \"name\"}, \"x\"]}"), "/predicate/like"),
    D("unknown expression", PRED("{\"==\": [{\"keys\": \"name\"}, \"x\"]}"), "/predicate/==/0/keys"),
    D("two operator keys", PRED("{\"==\": [{\"key\": \"name\"}, \"x\"], \"!=\": [1, 2]}"), "/predicate/!="),
    D("empty operator object", PRED("{}"), "/predicate"),
    D("a number for a predicate", PRED("5"), "/predicate"),
    D("not of an array", PRED("{\"not\": [true]}"), "/predicate/not"),
    D("wrong operand count: ==", PRED("{\"==\": [{\"key\": \"name\"}]}"), "/predicate/=="),
    D("wrong operand count: between", PRED("{\"between\": [{\"key\": \"startDate\"}, \"2026-01-01\"]}"), "/predicate/between"),
    D("wrong operand count: cond", PRED("{\"cond\": [true, false]}"), "/predicate/cond"),
    D("wrong operand count: any", PRED("{\"any\": [{\"key\": \"bucketList\"}]}"), "/predicate/any"),
    D("and of an object", PRED("{\"and\": {\"x\": true}}"), "/predicate/and"),
    /* options */
    D("bad options letters", PRED("{\"==\": [{\"key\": \"name\"}, \"x\"], \"options\": \"ci\"}"), "/predicate/options"),
    D("options not a string", PRED("{\"==\": [{\"key\": \"name\"}, \"x\"], \"options\": 5}"), "/predicate/options"),
    D("options on and", PRED("{\"and\": [true], \"options\": \"c\"}"), "/predicate/options"),
    /* #Predicate text */
    T("text: unexpected end", "$0.name == ", "12"),
    T("text: operator without operand", "$0.name == \\\"x\\\" && && true", "19"),
    T("text: unknown method", "$0.name.foo(\\\"x\\\")", "9"),
    T("text: unterminated string", "$0.name == \\\"abc", "12"),
    T("text: unbalanced parenthesis", "($0.name == \\\"x\\\"", "16"),
    T("text: extra parenthesis", "$0.name == \\\"x\\\")", "15"),
    T("text: $1", "$1.name == \\\"x\\\"", "1"),
    T("text: unknown key path", "$0.nmae == \\\"abc\\\"", "1"),
    T("text: key path through a to-many", "$0.name == \\\"x\\\" || $0.bucketList.title == \\\"x\\\"", "19"),
    T("text: transient attribute", "$0.tripViews > 0", "1"),
    TB("text: type mismatch", "$0.startDate > \\\"tomorrow-secret\\\"", "{}", "16", "tomorrow-secret"),
    TB("text: unknown variable", "$0.name == q", "{\"x\": 1}", "12", NULL),
    TB("text: bound value of the wrong type", "$0.endDate >= now", "{\"now\": \"next-week-secret\"}", "15", "next-week-secret"),
    T("text: is unrelated", "$0 is BucketListItem", "4"),
    /* fetchLimit, fetchOffset */
    D("negative fetchLimit", "{\"entity\": \"Trip\", \"fetchLimit\": -1}", "/fetchLimit"),
    D("negative fetchOffset", "{\"entity\": \"Trip\", \"fetchOffset\": -3}", "/fetchOffset"),
    D("fractional fetchLimit", "{\"entity\": \"Trip\", \"fetchLimit\": 1.5}", "/fetchLimit"),
    D("fetchLimit as text", "{\"entity\": \"Trip\", \"fetchLimit\": \"10\"}", "/fetchLimit"),
    /* sortBy */
    D("bad sortBy order", "{\"entity\": \"Trip\", \"sortBy\": [{\"key\": \"startDate\", \"order\": \"descending\"}]}", "/sortBy/0/order"),
    D("bad sortBy comparator", "{\"entity\": \"Trip\", \"sortBy\": [{\"key\": \"name\", \"comparator\": \"numeric\"}]}", "/sortBy/0/comparator"),
    D("unknown sortBy key path", "{\"entity\": \"Trip\", \"sortBy\": [{\"key\": \"startDate\"}, {\"key\": \"nmae\"}]}", "/sortBy/1/key"),
    D("sortBy a to-many", "{\"entity\": \"Trip\", \"sortBy\": [{\"key\": \"bucketList\"}]}", "/sortBy/0/key"),
    D("sortBy not an array", "{\"entity\": \"Trip\", \"sortBy\": {\"key\": \"name\"}}", "/sortBy"),
    D("unknown sort descriptor key", "{\"entity\": \"Trip\", \"sortBy\": [{\"key\": \"name\", \"ascending\": true}]}", "/sortBy/0/ascending"),
    D("sort descriptor without key", "{\"entity\": \"Trip\", \"sortBy\": [{\"order\": \"reverse\"}]}", "/sortBy/0/key"),
    DV("sortBy a json attribute", "{\"entity\": \"Record\", \"sortBy\": [{\"key\": \"extra\"}]}", "/sortBy/0/key"),
    /* propertiesToFetch, prefetching */
    D("unknown propertiesToFetch name", "{\"entity\": \"Trip\", \"propertiesToFetch\": [\"name\", \"nmae\"]}", "/propertiesToFetch/1"),
    D("propertiesToFetch not a name", "{\"entity\": \"Trip\", \"propertiesToFetch\": [5]}", "/propertiesToFetch/0"),
    D("propertiesToFetch of a shallow fetch's subentity", "{\"entity\": \"Trip\", \"includeSubentities\": false, \"propertiesToFetch\": [\"reason\"]}",
      "/propertiesToFetch/0"),
    D("prefetch of an attribute", "{\"entity\": \"Trip\", \"relationshipKeyPathsForPrefetching\": [\"name\"]}", "/relationshipKeyPathsForPrefetching/0"),
    D("prefetch of an unknown name", "{\"entity\": \"Trip\", \"relationshipKeyPathsForPrefetching\": [\"bucketList\", \"items\"]}",
      "/relationshipKeyPathsForPrefetching/1"),
    D("prefetch of a nested attribute", "{\"entity\": \"Trip\", \"relationshipKeyPathsForPrefetching\": [\"bucketList.trip.name\"]}",
      "/relationshipKeyPathsForPrefetching/0"),
    D("prefetch not an array", "{\"entity\": \"Trip\", \"relationshipKeyPathsForPrefetching\": \"bucketList\"}",
      "/relationshipKeyPathsForPrefetching"),
    /* strata_delete_where */
    W("delete_where: unknown entity", "Plane", "true", NULL),
    W("delete_where: malformed JSON", "Trip", "{\"==\": [", NULL),
    W("delete_where: unknown key path (request form)", "Trip", "{\"predicate\": {\"==\": [{\"key\": \"nmae\"}, \"x\"]}}", "/predicate/==/0/key"),
    W("delete_where: unknown variable (request form)", "Trip", "{\"predicate\": {\"==\": [{\"key\": \"name\"}, {\"var\": \"q\"}]}, \"bindings\": {}}",
      "/predicate/==/1/var"),
    W("delete_where: unknown request key", "Trip", "{\"predicate\": true, \"fetchLimit\": 1}", "/fetchLimit"),
    W("delete_where: bindings not an object", "Trip", "{\"predicate\": true, \"bindings\": 5}", "/bindings"),
    W("delete_where: includeSubentities not a bool", "Trip", "{\"predicate\": true, \"includeSubentities\": \"no\"}", "/includeSubentities"),
    W("delete_where: transient attribute (request form)", "Trip", "{\"predicate\": {\">\": [{\"key\": \"tripViews\"}, 0]}}", "/predicate/>/0/key"),
    /* the bare forms: the path points into the input itself */
    W("delete_where: unknown key path (bare tree)", "Trip", "{\"==\": [{\"key\": \"nmae\"}, \"x\"]}", "/==/0/key"),
    W("delete_where: type mismatch (bare tree)", "Trip", "{\"and\": [true, {\"==\": [{\"key\": \"name\"}, 5]}]}", "/and/1/==/1"),
    WT("delete_where: malformed text (bare text)", "Trip", "\"$0.name ==\"", "", "11"),
    WT("delete_where: malformed text (request form)", "Trip", "{\"predicate\": \"$0.name ==\"}", "/predicate", "11"),
    /* NULL arguments */
    C("fetch: NULL ctx", c_fetch_null_ctx),
    C("fetch: NULL descriptor", c_fetch_null_descriptor),
    C("fetch: NULL out_json", c_fetch_null_out),
    C("fetch_count: NULL ctx", c_count_null_ctx),
    C("fetch_count: NULL descriptor", c_count_null_descriptor),
    C("fetch_count: NULL out_count", c_count_null_out),
    C("fetch_identifiers: NULL ctx", c_ids_null_ctx),
    C("fetch_identifiers: NULL descriptor", c_ids_null_descriptor),
    C("fetch_identifiers: NULL out_json", c_ids_null_out),
    C("explain: NULL ctx", c_explain_null_ctx),
    C("explain: NULL descriptor", c_explain_null_descriptor),
    C("explain: NULL out_json", c_explain_null_out),
    C("delete_where: NULL ctx", c_delete_null_ctx),
    C("delete_where: NULL ctx, NULL predicate", c_delete_null_ctx_all),
    C("delete_where: NULL entity", c_delete_null_entity),
    C("delete_where: NULL entity, NULL predicate", c_delete_null_entity_all),
    C("set_trace: NULL container", c_trace_null_container),
    C("set_trace: NULL container, removing", c_trace_null_container_remove),
    /* stale handles */
    C("fetch: stale context", c_fetch_stale),
    C("fetch_count: stale context", c_count_stale),
    C("fetch_identifiers: stale context", c_ids_stale),
    C("explain: stale context", c_explain_stale),
    C("delete_where: stale context", c_delete_stale),
    C("set_trace: closed container", c_trace_stale),
    C("fetch: stale context and malformed JSON", c_fetch_stale_bad_json),
};
#define N_CASES (sizeof cases / sizeof cases[0])

static const char *const code_names[] = {"ok", "misuse", "invalid", "schema", "not_found", "constraint", "validation",
                                         "incompatible_store", "migration", "callback", "busy", "readonly", "io",
                                         "corrupt", "nomem", "internal"};

static const char *const call_names[] = {"strata_fetch", "strata_fetch_count", "strata_fetch_identifiers", "strata_explain"};

/* Runs one call of a case; returns its status. */
static strata_status run_call(const query_case *c, int which) {
    strata_context *ctx = c->store == VALUES ? w.vctx : w.tctx;
    switch (c->kind) {
    case DESCRIPTOR:
        switch (which) {
        case 0: return strata_fetch(ctx, c->input, OUT_TEXT);
        case 1: return strata_fetch_count(ctx, c->input, OUT_COUNT);
        case 2: return strata_fetch_identifiers(ctx, c->input, OUT_TEXT);
        default: return strata_explain(ctx, c->input, OUT_TEXT);
        }
    case DELETION: return strata_delete_where(ctx, c->entity, c->input);
    case CALL: break;
    }
    return c->call();
}

static int runs;

/* Runs one call of one case; returns the number of failed assertions (0 = pass). */
static int run_case(const query_case *c, int which) {
    int failed = 0;
    char label[160];
    if (c->kind == DESCRIPTOR) snprintf(label, sizeof label, "%s [%s]", c->name, call_names[which]);
    else snprintf(label, sizeof label, "%s", c->name);
    add_pending_changes();
    fingerprint before = take_fingerprint();

    out_text = (char *)&out_text;   /* a failed call sets its out-parameter to NULL (or 0) */
    out_count = 99;
    out_text_used = out_count_used = 0;
    strata_status st = run_call(c, which);
    char *error = strdup(strata_last_error());
    if (!error) exit(1);
    runs++;

    if (st != c->status) {
        fprintf(stderr, "FAIL %s: status %d (%s), expected %d (%s)\n  %s\n", label, (int)st, strata_errstr(st),
                (int)c->status, strata_errstr(c->status), error);
        failed++;
        if (st == STRATA_OK && out_text_used && out_text != (char *)&out_text) strata_free(out_text);
    } else {
        if (out_text_used && out_text != NULL) {
            fprintf(stderr, "FAIL %s: the out-parameter is not NULL after the failure\n", label);
            failed++;
        }
        if (out_count_used && out_count != 0) {
            fprintf(stderr, "FAIL %s: out_count is %lld after the failure, not 0\n", label, (long long)out_count);
            failed++;
        }
    }

    json_object *err = parse_json_or_die(error);
    const char *code = check_str_member(err, "code");
    const char *message = check_str_member(err, "message");
    json_object *status = NULL;
    if (!json_object_is_type(err, json_type_object) || !code || !*code || !message || !*message) {
        fprintf(stderr, "FAIL %s: last error lacks a code or message: %s\n", label, error);
        failed++;
    } else if (st == c->status) {
        if (strcmp(code, code_names[c->status]) != 0) {
            fprintf(stderr, "FAIL %s: code \"%s\", expected \"%s\"\n", label, code, code_names[c->status]);
            failed++;
        }
        if (!json_object_object_get_ex(err, "status", &status) || !json_object_is_type(status, json_type_int) ||
                json_object_get_int(status) != (int)c->status) {
            fprintf(stderr, "FAIL %s: \"status\" is not %d: %s\n", label, (int)c->status, error);
            failed++;
        }
    }
    if (c->path) {
        const char *path = check_str_member(err, "path");
        if (!path || strcmp(path, c->path) != 0) {
            fprintf(stderr, "FAIL %s: path %s%s%s, expected \"%s\"\n  %s\n", label, path ? "\"" : "", path ? path : "(missing)",
                    path ? "\"" : "", c->path, error);
            failed++;
        }
    }
    if (c->position && (!message || !strstr(message, c->position))) {
        fprintf(stderr, "FAIL %s: the message does not name \"%s\": %s\n", label, c->position, error);
        failed++;
    }
    if (c->message_has && (!message || !strstr(message, c->message_has))) {
        fprintf(stderr, "FAIL %s: the message does not mention \"%s\": %s\n", label, c->message_has, error);
        failed++;
    }
    if (c->secret && strstr(error, c->secret)) {
        fprintf(stderr, "FAIL %s: the error contains the bound value \"%s\": %s\n", label, c->secret, error);
        failed++;
    }
    json_object_put(err);

    fingerprint after = take_fingerprint();
    static const char *const parts[] = {"trips store", "values store", "trips context reads", "values context reads"};
    for (int i = 0; i < 4; i++) {
        if (!json_object_equal(before.parts[i], after.parts[i])) {
            fprintf(stderr, "FAIL %s: the %s changed\n  before: %s\n  after:  %s\n", label, parts[i],
                    json_object_to_json_string(before.parts[i]), json_object_to_json_string(after.parts[i]));
            failed++;
        }
    }
    if (before.changes[0] != after.changes[0] || before.changes[1] != after.changes[1] ||
            before.changes[0] != 1 || before.changes[1] != 1) {
        fprintf(stderr, "FAIL %s: strata_has_changes %d,%d -> %d,%d (expected 1,1 throughout)\n", label, before.changes[0],
                before.changes[1], after.changes[0], after.changes[1]);
        failed++;
    }
    free_fingerprint(&before);
    free_fingerprint(&after);
    printf("%s %s: %s\n", failed ? "FAIL" : "ok  ", label, error);
    free(error);
    return failed;
}

/* The harness sees a change: a successful strata_delete_where changes the context's reads. */
static void test_fingerprint_sees_changes(void) {
    add_pending_changes();
    fingerprint before = take_fingerprint();
    CHECK_STATUS(strata_delete_where(w.tctx, "BucketListItem", NULL));
    fingerprint after = take_fingerprint();
    CHECK(json_object_equal(before.parts[0], after.parts[0]));
    CHECK(!json_object_equal(before.parts[2], after.parts[2]));
    free_fingerprint(&before);
    free_fingerprint(&after);
    CHECK_STATUS(strata_rollback(w.tctx));
}

/* What is not an error: NULL hook arguments and a NULL predicate. */
static void test_valid_nulls(void) {
    CHECK_STATUS(strata_set_trace(w.trips, NULL, NULL, NULL));
    CHECK_STATUS(strata_set_trace(w.trips, trace_nothing, NULL, NULL));
    CHECK_STATUS(strata_set_trace(w.trips, NULL, NULL, NULL));
    add_pending_changes();
    CHECK_STATUS(strata_delete_where(w.tctx, "LivingAccommodation", NULL));
    int64_t n = -1;
    CHECK_STATUS(strata_fetch_count(w.tctx, "{\"entity\": \"LivingAccommodation\"}", &n));
    CHECK(n == 0);
    CHECK_STATUS(strata_rollback(w.tctx));
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);   /* keep stdout and stderr in order */
    world_open();
    test_fingerprint_sees_changes();
    test_valid_nulls();

    size_t descriptor_cases = 0, deletion_cases = 0, call_cases = 0;
    int failed_runs = 0;
    for (size_t i = 0; i < N_CASES; i++) {
        const query_case *c = &cases[i];
        int calls = c->kind == DESCRIPTOR ? 4 : 1;
        descriptor_cases += c->kind == DESCRIPTOR;
        deletion_cases += c->kind == DELETION;
        call_cases += c->kind == CALL;
        for (int k = 0; k < calls; k++) failed_runs += run_case(c, k) ? 1 : 0;
    }
    printf("test_query_errors: %zu cases (%zu descriptors x 4 calls, %zu deletions, %zu calls), %d runs, %d failed\n",
           N_CASES, descriptor_cases, deletion_cases, call_cases, runs, failed_runs);
    world_close();
    return failed_runs ? 1 : 0;
}
