/*
 * hostile_fixture.h — the store that the hostile-store test (test_hostile_store.c)
 * and the store-file fuzz harness (fuzz/fuzz_store.c) tamper with: every column
 * kind of a Strata store (text, int, double, bool, date, blob, external data,
 * uuid, url, decimal, json, enum; a to-one link held in the row, a to-many held
 * by the inverse, a many-to-many join table; a hierarchy), and history rows of
 * every kind (insert, update, delete with a tombstone).
 */
#ifndef STRATA_HOSTILE_FIXTURE_H
#define STRATA_HOSTILE_FIXTURE_H

#include <stddef.h>
#include <string.h>

#include <json.h>
#include <strata.h>

/* The includer defines HOSTILE_FAIL(...): report (printf-style) and stop. */
#ifndef HOSTILE_FAIL
#error "define HOSTILE_FAIL before including hostile_fixture.h"
#endif

/* The model: every value type, every kind of relationship storage, a hierarchy. */
#define SCHEMA_ENTITIES(extra_item_attributes, extra_entities)                                             \
    "\"entities\": ["                                                                                      \
    "{\"name\": \"Trip\", \"attributes\": ["                                                               \
    "  {\"name\": \"name\", \"type\": \"string\", \"unique\": true},"                                      \
    "  {\"name\": \"count\", \"type\": \"int\", \"default\": 0},"                                          \
    "  {\"name\": \"score\", \"type\": \"double\", \"default\": 0},"                                       \
    "  {\"name\": \"done\", \"type\": \"bool\", \"default\": false},"                                      \
    "  {\"name\": \"startDate\", \"type\": \"date\"},"                                                     \
    "  {\"name\": \"photo\", \"type\": \"data\", \"optional\": true},"                                     \
    "  {\"name\": \"album\", \"type\": \"data\", \"optional\": true, \"externalStorage\": true},"          \
    "  {\"name\": \"uid\", \"type\": \"uuid\", \"optional\": true},"                                       \
    "  {\"name\": \"site\", \"type\": \"url\", \"optional\": true},"                                       \
    "  {\"name\": \"price\", \"type\": \"decimal\", \"optional\": true},"                                  \
    "  {\"name\": \"meta\", \"type\": \"json\", \"optional\": true},"                                      \
    "  {\"name\": \"kind\", \"type\": \"string\", \"enum\": [\"work\", \"play\"], \"default\": \"play\"}],"  \
    " \"relationships\": ["                                                                                \
    "  {\"name\": \"items\", \"destination\": \"Item\", \"toMany\": true, \"deleteRule\": \"cascade\", \"inverse\": \"trip\"}," \
    "  {\"name\": \"stay\", \"destination\": \"Stay\", \"optional\": true, \"deleteRule\": \"cascade\"},"   \
    "  {\"name\": \"tags\", \"destination\": \"Tag\", \"toMany\": true, \"inverse\": \"trips\"}]},"         \
    "{\"name\": \"BusinessTrip\", \"superentity\": \"Trip\","                                              \
    " \"attributes\": [{\"name\": \"perdiem\", \"type\": \"double\", \"default\": 0}]},"                   \
    "{\"name\": \"Item\", \"attributes\": [{\"name\": \"title\", \"type\": \"string\"}" extra_item_attributes "]," \
    " \"relationships\": [{\"name\": \"trip\", \"destination\": \"Trip\", \"optional\": true}]},"          \
    "{\"name\": \"Stay\", \"attributes\": [{\"name\": \"place\", \"type\": \"string\"}]},"                 \
    "{\"name\": \"Tag\", \"attributes\": [{\"name\": \"label\", \"type\": \"string\"}],"                   \
    " \"relationships\": [{\"name\": \"trips\", \"destination\": \"Trip\", \"toMany\": true, \"inverse\": \"tags\"}]}" \
    extra_entities "]"

static const char *const hostile_config_v1 =
    "{\"schema\": {\"version\": \"1.0.0\", " SCHEMA_ENTITIES("", "") "}, \"externalStorageThreshold\": 16}";
/* Version 2: a lightweight migration (an attribute and an entity added). */
static const char *const hostile_config_v2 =
    "{\"schema\": {\"version\": \"2.0.0\", "
    SCHEMA_ENTITIES(", {\"name\": \"note\", \"type\": \"string\", \"optional\": true}",
                    ", {\"name\": \"Note\", \"attributes\": [{\"name\": \"text\", \"type\": \"string\"}]}")
    "}, \"externalStorageThreshold\": 16}";

static const char *const hostile_entities[] = {"Trip", "BusinessTrip", "Item", "Stay", "Tag", "Note"};
#define HOSTILE_N_ENTITIES (sizeof hostile_entities / sizeof hostile_entities[0])

/* How the store is made: Trip keys are BusinessTrip/1 and Trip/2, items 1-3, stay 1, tags 1-2. */
enum hostile_step_kind { HOSTILE_INSERT, HOSTILE_UPDATE, HOSTILE_DELETE, HOSTILE_SAVE };
struct hostile_step {
    enum hostile_step_kind kind;
    const char *target;   /* the entity (insert) or the identifier */
    const char *json;
};
static const struct hostile_step hostile_steps[] = {
    {HOSTILE_INSERT, "BusinessTrip",
     "{\"name\": \"A\", \"count\": 3, \"score\": 1.5, \"done\": true, \"startDate\": \"2026-01-02T00:00:00Z\","
     " \"photo\": \"AAEC\", \"album\": \"AAECAwQFBgcICQoLDA0ODxAREhM=\", \"uid\": \"0A1B2C3D-0000-4000-8000-000000000000\","
     " \"site\": \"https://example.org/a\", \"price\": \"12.50\", \"meta\": {\"a\": [1, 2]}, \"kind\": \"work\", \"perdiem\": 9.5,"
     " \"items\": [{\"title\": \"i1\"}, {\"title\": \"i2\"}], \"stay\": {\"place\": \"P\"}, \"tags\": [{\"label\": \"t1\"}]}"},
    {HOSTILE_INSERT, "Trip",
     "{\"name\": \"B\", \"startDate\": 0, \"items\": [{\"title\": \"i3\"}], \"tags\": [{\"label\": \"t2\"}]}"},
    {HOSTILE_SAVE, NULL, NULL},
    {HOSTILE_UPDATE, "Trip/2", "{\"score\": 2.5}"},
    {HOSTILE_DELETE, "Item/2", NULL},
    {HOSTILE_SAVE, NULL, NULL},
};
#define HOSTILE_N_STEPS (sizeof hostile_steps / sizeof hostile_steps[0])

/* Makes the fixture's objects and history through ctx; the first failure's status, else STRATA_OK. */
static strata_status hostile_fill(strata_context *ctx) {
    for (size_t i = 0; i < HOSTILE_N_STEPS; i++) {
        const struct hostile_step *step = &hostile_steps[i];
        strata_status st = STRATA_OK;
        switch (step->kind) {
        case HOSTILE_INSERT: st = strata_insert(ctx, step->target, step->json, NULL); break;
        case HOSTILE_UPDATE: st = strata_update(ctx, step->target, step->json); break;
        case HOSTILE_DELETE: st = strata_delete(ctx, step->target); break;
        case HOSTILE_SAVE: st = strata_save(ctx); break;
        }
        if (st != STRATA_OK) return st;
    }
    return STRATA_OK;
}

/* obj's string member key, or NULL. */
static const char *hostile_str_member(json_object *obj, const char *key) {
    json_object *v = NULL;
    if (!json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, json_type_string)) return NULL;
    return json_object_get_string(v);
}

/* The keys an object of each entity may carry (besides _id and _entity). */
static const char *const trip_keys[] = {"name", "count", "score", "done", "startDate", "photo", "album", "uid", "site",
                                        "price", "meta", "kind", "items", "stay", "tags", "perdiem", NULL};
static const char *const item_keys[] = {"title", "trip", "note", NULL};
static const char *const stay_keys[] = {"place", NULL};
static const char *const tag_keys[] = {"label", "trips", NULL};
static const char *const note_keys[] = {"text", NULL};

static const char *const *keys_of(const char *entity) {
    if (!strcmp(entity, "Trip") || !strcmp(entity, "BusinessTrip")) return trip_keys;
    if (!strcmp(entity, "Item")) return item_keys;
    if (!strcmp(entity, "Stay")) return stay_keys;
    if (!strcmp(entity, "Tag")) return tag_keys;
    if (!strcmp(entity, "Note")) return note_keys;
    return NULL;
}

/* Parses a whole JSON text (nothing after the value), or fails. */
static json_object *parse_all(const char *text, const char *what) {
    if (!text) HOSTILE_FAIL("%s: OK without output", what);
    struct json_tokener *tok = json_tokener_new();
    size_t n = strlen(text);
    json_object *v = json_tokener_parse_ex(tok, text, (int)n);
    enum json_tokener_error err = json_tokener_get_error(tok);
    size_t used = (size_t)json_tokener_get_parse_end(tok);
    json_tokener_free(tok);
    if (err != json_tokener_success || used != n) HOSTILE_FAIL("%s: not one JSON value (%zu of %zu bytes read): %.300s", what, used, n, text);
    return v;
}

static int known_entity(const char *name, size_t len) {
    for (size_t i = 0; i < HOSTILE_N_ENTITIES; i++)
        if (strlen(hostile_entities[i]) == len && !strncmp(hostile_entities[i], name, len)) return 1;
    return 0;
}

/* An identifier "Entity/123" whose entity is of the schema. */
static void check_identifier(const char *id, const char *what) {
    const char *slash = id ? strchr(id, '/') : NULL;
    if (!slash || !known_entity(id, (size_t)(slash - id))) HOSTILE_FAIL("%s: '%s' is not an identifier of the schema", what, id ? id : "(null)");
    const char *p = slash + 1;
    if (*p == '-') p++;
    if (!*p) HOSTILE_FAIL("%s: '%s' has no key", what, id);
    for (; *p; p++) if (*p < '0' || *p > '9') HOSTILE_FAIL("%s: '%s' has no integer key", what, id);
}

static void check_object(json_object *o, const char *what);

static void check_relationship_value(json_object *v, const char *what) {
    if (!v || json_object_is_type(v, json_type_null)) return;
    if (json_object_is_type(v, json_type_string)) { check_identifier(json_object_get_string(v), what); return; }
    if (json_object_is_type(v, json_type_object)) { check_object(v, what); return; }
    if (json_object_is_type(v, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(v); i++) check_relationship_value(json_object_array_get_idx(v, i), what);
        return;
    }
    HOSTILE_FAIL("%s: a relationship value that is neither an identifier, an object nor an array", what);
}

/* An object as docs/JSON.md describes it: _id and _entity agree, every key is the entity's own. */
static void check_object(json_object *o, const char *what) {
    if (!json_object_is_type(o, json_type_object)) HOSTILE_FAIL("%s: an element that is not an object", what);
    const char *id = hostile_str_member(o, "_id");
    const char *entity = hostile_str_member(o, "_entity");
    if (!id || !entity) HOSTILE_FAIL("%s: an object without _id or _entity", what);
    check_identifier(id, what);
    if (strncmp(id, entity, strlen(entity)) || id[strlen(entity)] != '/') HOSTILE_FAIL("%s: _id '%s' and _entity '%s' disagree", what, id, entity);
    const char *const *keys = keys_of(entity);
    if (!keys) HOSTILE_FAIL("%s: unknown _entity '%s'", what, entity);
    json_object_object_foreach(o, key, value) {
        if (!strcmp(key, "_id") || !strcmp(key, "_entity")) continue;
        int found = 0;
        for (const char *const *k = keys; *k; k++) if (!strcmp(*k, key)) found = 1;
        if (!found) HOSTILE_FAIL("%s: %s has a key '%s' the entity does not have", what, id, key);
        if (!strcmp(key, "items") || !strcmp(key, "stay") || !strcmp(key, "tags") || !strcmp(key, "trip") || !strcmp(key, "trips"))
            check_relationship_value(value, what);
    }
}

#endif
