/*
 * fuzz_common.h — shared code of Strata's libFuzzer harnesses (fuzz/fuzz_*.c).
 *
 * Every harness feeds its input to one JSON entry point of strata.h and
 * checks more than "no crash":
 *
 *   - no call returns STRATA_ERR_INTERNAL (input inside documented limits
 *     never reaches a bug path) or a status outside the enum;
 *   - a failed call sets its out-parameter to NULL (or 0) and leaves a last
 *     error that is a JSON object with a "code" string;
 *   - a failed call leaves the store and the context's pending changes
 *     exactly as they were: strata_has_changes() and a full fetch of every
 *     root entity, with and without pending changes, are compared with the
 *     state before the call;
 *   - after a successful change, strata_save() either succeeds or fails
 *     leaving store and pending changes as they were.
 *
 * A broken rule prints what differs and calls abort(), which libFuzzer
 * reports as a crash (with the input saved as an artifact).
 *
 * The data harnesses run on one in-memory store whose schema is the trips
 * fixture plus the entities of the rules fixture (every value type, deny
 * rules, minimum/maximum counts), pre-populated with saved objects, and one
 * context with pending changes (an insert, updates, a delete). The store is
 * reopened after a save changed it, and the context is recreated after a
 * call changed it, so every input starts from the same state.
 *
 * Input format of the harnesses that take a name and a JSON text:
 * "<name>\n<json>" (the first line is the entity or identifier).
 */
#ifndef STRATA_FUZZ_COMMON_H
#define STRATA_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json.h>
#include <strata.h>

#if defined(__has_include)
#if __has_include(<sanitizer/lsan_interface.h>)
#include <sanitizer/lsan_interface.h>
#define FUZZ_HAVE_LSAN 1
#endif
#endif
#ifndef FUZZ_HAVE_LSAN
static void __lsan_disable(void) {}
static void __lsan_enable(void) {}
#endif

#ifndef FUZZ_SOURCE_DIR
#define FUZZ_SOURCE_DIR "."
#endif
#define FUZZ_FIXTURES FUZZ_SOURCE_DIR "/Tests/c/fixtures/"

/* Each harness uses part of this header. */
#define FUZZ_API static __attribute__((unused))

/* ---- failing loudly ----------------------------------------------------- */

#define FUZZ_FAIL(...)                                                         \
    do {                                                                       \
        fprintf(stderr, "\n*** strata fuzz oracle (%s:%d): ", __FILE__, __LINE__); \
        fprintf(stderr, __VA_ARGS__);                                          \
        fputc('\n', stderr);                                                   \
        abort();                                                               \
    } while (0)

/* Setup steps that must work (not the calls under test). */
#define FUZZ_REQUIRE(expr)                                                     \
    do {                                                                       \
        strata_status fuzz_st_ = (expr);                                       \
        if (fuzz_st_ != STRATA_OK)                                             \
            FUZZ_FAIL("setup call failed: %s -> %d (%s): %s", #expr, (int)fuzz_st_, \
                      strata_errstr((int)fuzz_st_), strata_last_error());      \
    } while (0)

/*
 * Checks the status of a call under test: never STRATA_ERR_INTERNAL, never
 * outside the enum; on failure the last error is a JSON object with a
 * non-empty "code" and the matching "status". Returns the status.
 */
FUZZ_API strata_status fuzz_check_status(strata_status st, const char *call) {
    if ((int)st < (int)STRATA_OK || (int)st > (int)STRATA_ERR_INTERNAL)
        FUZZ_FAIL("%s returned %d, not a strata_status", call, (int)st);
    const char *error = strata_last_error();
    if (st == STRATA_ERR_INTERNAL)
        FUZZ_FAIL("%s returned STRATA_ERR_INTERNAL: %s", call, error ? error : "(null)");
    if (st == STRATA_OK) return st;
    if (error == NULL) FUZZ_FAIL("%s failed (%d) with a NULL last error", call, (int)st);
    struct json_object *obj = json_tokener_parse(error);
    struct json_object *code = NULL, *status = NULL;
    if (obj == NULL || !json_object_is_type(obj, json_type_object) ||
        !json_object_object_get_ex(obj, "code", &code) || !json_object_is_type(code, json_type_string) ||
        json_object_get_string_len(code) == 0)
        FUZZ_FAIL("%s failed (%d); the last error is not an object with a \"code\": %s", call, (int)st, error);
    if (json_object_object_get_ex(obj, "status", &status) &&
        (!json_object_is_type(status, json_type_int) || json_object_get_int(status) != (int)st))
        FUZZ_FAIL("%s returned %d but the last error says otherwise: %s", call, (int)st, error);
    json_object_put(obj);
    return st;
}

/* ---- input ---------------------------------------------------------------- */

/* The input as a NUL-terminated string, or NULL if it holds a NUL byte (C strings cannot). */
/* The object `id` can be read back with strata_get() (`what`: "inserted", "updated"). */
FUZZ_API void fuzz_expect_readable(strata_context *ctx, const char *id, const char *what) {
    char *object = NULL;
    char call[64];
    snprintf(call, sizeof call, "strata_get (%s object)", what);
    if (fuzz_check_status(strata_get(ctx, id, &object), call) != STRATA_OK)
        FUZZ_FAIL("the %s object %s cannot be read: %s", what, id, strata_last_error());
    strata_free(object);
}

FUZZ_API char *fuzz_text(const uint8_t *data, size_t size) {
    if (memchr(data, 0, size) != NULL) return NULL;
    char *text = (char *)malloc(size + 1);
    if (text == NULL) abort();
    memcpy(text, data, size);
    text[size] = '\0';
    return text;
}

/* Splits "<name>\n<rest>" in place; without a newline the name is `fallback` and the rest is all. */
FUZZ_API void fuzz_split(char *text, const char *fallback, const char **name, const char **rest) {
    char *nl = strchr(text, '\n');
    if (nl == NULL) {
        *name = fallback;
        *rest = text;
    } else {
        *nl = '\0';
        *name = text;
        *rest = nl + 1;
    }
}

/* `text` as a JSON string literal (malloc'd). */
FUZZ_API char *fuzz_json_quote(const char *text) {
    struct json_object *s = json_object_new_string(text);
    const char *q = json_object_to_json_string_ext(s, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    char *out = strdup(q ? q : "\"\"");
    json_object_put(s);
    if (out == NULL) abort();
    return out;
}

/* A new malloc'd string: a, b and c concatenated (NULL pieces are empty). */
FUZZ_API char *fuzz_concat3(const char *a, const char *b, const char *c) {
    size_t na = a ? strlen(a) : 0, nb = b ? strlen(b) : 0, nc = c ? strlen(c) : 0;
    char *s = (char *)malloc(na + nb + nc + 1);
    if (s == NULL) abort();
    if (na) memcpy(s, a, na);
    if (nb) memcpy(s + na, b, nb);
    if (nc) memcpy(s + na + nb, c, nc);
    s[na + nb + nc] = '\0';
    return s;
}

FUZZ_API char *fuzz_read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) FUZZ_FAIL("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = (char *)malloc((size_t)n + 1);
    if (text == NULL || fread(text, 1, (size_t)n, f) != (size_t)n) FUZZ_FAIL("cannot read %s", path);
    text[n] = '\0';
    fclose(f);
    return text;
}

/* ---- the world of the data harnesses --------------------------------------- */

/* Root entities of the fuzz schema: a fetch of each (with subentities) reads every object. */
static const char *const fuzz_roots[] = {
    "Trip", "BucketListItem", "LivingAccommodation", "Sample", "Owner", "Pet", "Team", "Member",
};
#define FUZZ_N_ROOTS (sizeof fuzz_roots / sizeof fuzz_roots[0])

typedef struct {
    char *config;              /* {"schema": trips + rules entities, "inMemory": true} */
    strata_container *db;
    strata_context *ctx;       /* the context calls under test use; has pending changes */
    strata_context *reader;    /* never has pending changes: reads the store */
    char *ctx_state;           /* what ctx reads (pending changes applied) + has_changes */
    char *store_state;         /* what the store holds */
    int ctx_dirty;             /* a call changed ctx: recreate it before the next input */
    int store_dirty;           /* a save changed the store: reopen it before the next input */
} fuzz_world;

FUZZ_API fuzz_world fw;

/* The schema: trips.json with the entities of rules.json appended to its "entities" array. */
FUZZ_API char *fuzz_schema_config(void) {
    char *trips = fuzz_read_file(FUZZ_FIXTURES "trips.json");
    char *rules = fuzz_read_file(FUZZ_FIXTURES "rules.json");
    char *trips_end = strrchr(trips, ']');            /* the end of trips' entities array */
    char *rules_entities = strstr(rules, "\"entities\"");
    char *rules_open = rules_entities ? strchr(rules_entities, '[') : NULL;
    char *rules_close = strrchr(rules, ']');
    if (trips_end == NULL || rules_open == NULL || rules_close == NULL || rules_close < rules_open)
        FUZZ_FAIL("cannot merge the entities of trips.json and rules.json");
    *trips_end = '\0';
    *rules_close = '\0';
    char *head = fuzz_concat3("{\"inMemory\": true, \"schema\": ", trips, ",");
    char *merged = fuzz_concat3(head, rules_open + 1, "]}}");
    free(head);
    free(trips);
    free(rules);
    return merged;
}

/* Every object `ctx` reads (all root entities, in insertion order) and whether it has changes. */
FUZZ_API char *fuzz_state(strata_context *ctx) {
    char *state = fuzz_concat3(strata_has_changes(ctx) ? "changes\n" : "no changes\n", NULL, NULL);
    for (size_t i = 0; i < FUZZ_N_ROOTS; i++) {
        char *descriptor = fuzz_concat3("{\"entity\": \"", fuzz_roots[i], "\"}");
        char *json = NULL;
        FUZZ_REQUIRE(strata_fetch(ctx, descriptor, &json));
        char *next = fuzz_concat3(state, json, "\n");
        strata_free(json);
        free(descriptor);
        free(state);
        state = next;
    }
    return state;
}

FUZZ_API char *fuzz_insert_or_die(strata_context *ctx, const char *entity, const char *json) {
    char *id = NULL;
    FUZZ_REQUIRE(strata_insert(ctx, entity, json, &id));
    if (id == NULL) FUZZ_FAIL("strata_insert gave no identifier");
    return id;
}

/*
 * Saved objects (identifiers are deterministic: the seed corpora use them):
 *   PersonalTrip/1 "Family Visit" with LivingAccommodation/1 and BucketListItem/1, /2
 *   BusinessTrip/2 "WWDC" with BucketListItem/3
 *   Trip/3 "Road Trip"
 *   Sample/1 "S1" (every value type), Sample/2 "S2"
 *   Owner/1 with Pet/1 (deny rule), Team/1 with Member/1 (1...2 members)
 */
FUZZ_API void fuzz_populate(strata_context *ctx) {
    strata_free(fuzz_insert_or_die(ctx, "Trip",
        "{\"_entity\": \"PersonalTrip\", \"name\": \"Family Visit\", \"destination\": \"Zurich\","
        " \"startDate\": \"2026-12-20T00:00:00Z\", \"endDate\": \"2026-12-28T00:00:00Z\", \"reason\": \"family\","
        " \"livingAccommodation\": {\"placeName\": \"Grandma's\", \"address\": \"Seefeldstrasse 12\"},"
        " \"bucketList\": [{\"title\": \"Christmas market\", \"isInPlan\": true},"
        " {\"title\": \"Fondue\", \"details\": \"with cheese\", \"hasReservation\": true}]}"));
    strata_free(fuzz_insert_or_die(ctx, "BusinessTrip",
        "{\"name\": \"WWDC\", \"destination\": \"Cupertino\", \"startDate\": \"2026-06-08\","
        " \"endDate\": \"2026-06-12\", \"perdiem\": 120.5, \"bucketList\": [{\"title\": \"Keynote\"}]}"));
    strata_free(fuzz_insert_or_die(ctx, "Trip",
        "{\"name\": \"Road Trip\", \"destination\": \"Big Sur\", \"startDate\": 0, \"endDate\": 86400}"));
    strata_free(fuzz_insert_or_die(ctx, "Sample",
        "{\"code\": \"S1\", \"count\": 3, \"note\": \"first\", \"when\": \"2026-01-01T00:00:00Z\","
        " \"blob\": \"AAEC\", \"uid\": \"123e4567-e89b-12d3-a456-426614174000\", \"link\": \"https://example.com\","
        " \"amount\": \"12.50\", \"extra\": {\"k\": [1, 2]}, \"color\": \"green\"}"));
    strata_free(fuzz_insert_or_die(ctx, "Sample", "{\"code\": \"S2\", \"note\": \"second\", \"ratio\": -1.25}"));
    strata_free(fuzz_insert_or_die(ctx, "Owner", "{\"name\": \"Ann\", \"pets\": [{\"name\": \"Rex\"}]}"));
    strata_free(fuzz_insert_or_die(ctx, "Team", "{\"name\": \"Blue\", \"members\": [{\"name\": \"Bo\"}]}"));
    FUZZ_REQUIRE(strata_save(ctx));
}

/* The pending changes every input starts from (identifiers as listed above). */
FUZZ_API void fuzz_add_pending(strata_context *ctx) {
    strata_free(fuzz_insert_or_die(ctx, "Trip",
        "{\"name\": \"Pending\", \"destination\": \"Paris\", \"startDate\": 0, \"endDate\": 0,"
        " \"bucketList\": [{\"title\": \"Louvre\"}]}"));
    FUZZ_REQUIRE(strata_update(ctx, "BucketListItem/1", "{\"details\": \"pending detail\"}"));
    FUZZ_REQUIRE(strata_update(ctx, "Sample/2", "{\"count\": 7}"));
    FUZZ_REQUIRE(strata_delete(ctx, "BucketListItem/3"));
    strata_free(fuzz_insert_or_die(ctx, "Sample", "{\"code\": \"P\", \"note\": \"pending\"}"));
}

FUZZ_API void fuzz_world_new_context(void) {
    strata_context_free(fw.ctx);
    fw.ctx = NULL;
    FUZZ_REQUIRE(strata_context_new(fw.db, &fw.ctx));
    fuzz_add_pending(fw.ctx);
    free(fw.ctx_state);
    free(fw.store_state);
    fw.ctx_state = fuzz_state(fw.ctx);
    fw.store_state = fuzz_state(fw.reader);
    fw.ctx_dirty = 0;
}

FUZZ_API void fuzz_world_open_unchecked(void) {
    if (fw.config == NULL) fw.config = fuzz_schema_config();
    strata_config *cfg = NULL;
    FUZZ_REQUIRE(strata_config_new(fw.config, &cfg));
    FUZZ_REQUIRE(strata_open(NULL, cfg, &fw.db));
    strata_config_free(cfg);
    strata_context *setup = NULL;
    FUZZ_REQUIRE(strata_context_new(fw.db, &setup));
    fuzz_populate(setup);
    strata_context_free(setup);
    FUZZ_REQUIRE(strata_context_new(fw.db, &fw.reader));
    fuzz_world_new_context();
    fw.store_dirty = 0;
}

/*
 * Opens the world, which outlives the input that opened it by design (it is reopened only
 * when a save changed it). LeakSanitizer ignores what opening allocates: libFuzzer checks
 * each input for leaks with the world alive, and took parts of the schema the container
 * holds (reached through the contexts' cached fetch plans) for leaks although closing the
 * world frees them. What the calls under test allocate is still checked per input; leaks
 * of opening and closing are the memcheck tests' to find (valgrind, the same stores).
 */
FUZZ_API void fuzz_world_open(void) {
    __lsan_disable();
    fuzz_world_open_unchecked();
    __lsan_enable();
}

FUZZ_API void fuzz_world_close(void) {
    strata_context_free(fw.ctx);
    strata_context_free(fw.reader);
    strata_close(fw.db);
    fw.ctx = fw.reader = NULL;
    fw.db = NULL;
}

/* Frees the world (at exit, so that LeakSanitizer's check at exit sees only real leaks). */
FUZZ_API void fuzz_world_free(void) {
    if (fw.db != NULL) fuzz_world_close();
    free(fw.ctx_state);
    free(fw.store_state);
    free(fw.config);
    memset(&fw, 0, sizeof fw);
}

/* Call at the start of every input: the same state as for the first input. */
FUZZ_API strata_context *fuzz_world_begin(void) {
    if (fw.db == NULL) {
        fuzz_world_open();
        atexit(fuzz_world_free);
    } else if (fw.store_dirty) {
        fuzz_world_close();
        fuzz_world_open();
    } else if (fw.ctx_dirty) {
        fuzz_world_new_context();
    }
    return fw.ctx;
}

FUZZ_API void fuzz_expect_same(const char *what, const char *call, const char *before, const char *after) {
    if (strcmp(before, after) == 0) return;
    size_t i = 0;
    while (before[i] && before[i] == after[i]) i++;
    size_t from = i > 80 ? i - 80 : 0;
    FUZZ_FAIL("%s changed %s\n  before: ...%.240s\n  after:  ...%.240s", call, what, before + from, after + from);
}

/* After a call that failed: store and pending changes are as before the input. */
FUZZ_API void fuzz_world_after_failure(const char *call) {
    char *ctx_now = fuzz_state(fw.ctx);
    fuzz_expect_same("the context's pending changes (a failed call must change nothing)", call, fw.ctx_state, ctx_now);
    free(ctx_now);
    char *store_now = fuzz_state(fw.reader);
    fuzz_expect_same("the store (a failed call must change nothing)", call, fw.store_state, store_now);
    free(store_now);
}

/*
 * After a call that succeeded (and may have changed the context): strata_save()
 * must not fail with STRATA_ERR_INTERNAL; if it fails, it changed nothing.
 */
FUZZ_API void fuzz_world_after_success(const char *call) {
    fw.ctx_dirty = 1;
    char *ctx_before = fuzz_state(fw.ctx);
    char *store_before = fuzz_state(fw.reader);
    strata_status st = fuzz_check_status(strata_save(fw.ctx), "strata_save");
    if (st == STRATA_OK) {
        fw.store_dirty = 1;
        if (strata_has_changes(fw.ctx)) FUZZ_FAIL("the context still has changes after %s and a successful save", call);
    } else {
        char *ctx_after = fuzz_state(fw.ctx);
        fuzz_expect_same("the pending changes (a failed save must keep them)", "strata_save", ctx_before, ctx_after);
        free(ctx_after);
        char *store_after = fuzz_state(fw.reader);
        fuzz_expect_same("the store (a failed save must write nothing)", "strata_save", store_before, store_after);
        free(store_after);
    }
    free(ctx_before);
    free(store_before);
}

/* ---- fetch descriptors ------------------------------------------------------ */

/* A JSON array's length, or -1 when `json` is not an array (then *out is NULL). */
FUZZ_API long fuzz_array(const char *json, struct json_object **out) {
    *out = json ? json_tokener_parse(json) : NULL;
    if (*out == NULL || !json_object_is_type(*out, json_type_array)) {
        json_object_put(*out);
        *out = NULL;
        return -1;
    }
    return (long)json_object_array_length(*out);
}

/*
 * The objects of a sectioned result ([{"section": key, "objects": [...]}]) as one
 * array in *out, each section checked: exactly those two keys, a string or number key
 * unlike the one before, at least one object. Returns how many objects, -1 when the
 * text is not such a result.
 */
FUZZ_API long fuzz_sections(const char *json, struct json_object **out) {
    struct json_object *sections = NULL;
    *out = NULL;
    long n = fuzz_array(json, &sections);
    if (n < 0) return -1;
    struct json_object *objects = json_object_new_array();
    const char *previous = NULL;
    for (long i = 0; i < n; i++) {
        struct json_object *s = json_object_array_get_idx(sections, (size_t)i), *key = NULL, *list = NULL;
        if (!json_object_is_type(s, json_type_object) || json_object_object_length(s) != 2 ||
            !json_object_object_get_ex(s, "section", &key) || !json_object_object_get_ex(s, "objects", &list) ||
            !(json_object_is_type(key, json_type_string) || json_object_is_type(key, json_type_int)) ||
            !json_object_is_type(list, json_type_array) || json_object_array_length(list) == 0 ||
            (previous != NULL && strcmp(previous, json_object_to_json_string(key)) == 0)) {
            json_object_put(objects);
            json_object_put(sections);
            return -1;
        }
        previous = json_object_to_json_string(key);
        for (size_t k = 0; k < json_object_array_length(list); k++)
            json_object_array_add(objects, json_object_get(json_object_array_get_idx(list, k)));
    }
    json_object_put(sections);
    *out = objects;
    return (long)json_object_array_length(objects);
}

/*
 * Runs a descriptor through strata_fetch, strata_fetch_count,
 * strata_fetch_identifiers and strata_explain. They must agree: the same
 * status; on success as many objects as identifiers as the count, the
 * objects' "_id"s in the identifiers' order, and an explanation. A failure
 * changes nothing. Returns the status. A descriptor with "sectionBy" gives
 * sections, whose objects the count counts, and identifiers refuse it.
 */
/* Whether a descriptor names a key of an aggregation (its results are dictionaries, which
   strata_fetch_identifiers refuses). */
static int fuzz_is_aggregation(const char *descriptor) {
    struct json_object *d = json_tokener_parse(descriptor);
    int found = 0;
    if (d && json_object_is_type(d, json_type_object)) {
        static const char *const keys[] = {"groupBy", "aggregates", "having", "distinct"};
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) found |= json_object_object_get_ex(d, keys[i], NULL);
    }
    json_object_put(d);
    return found;
}

FUZZ_API strata_status fuzz_descriptor(strata_context *ctx, const char *descriptor) {
    char *objects = NULL, *ids = NULL, *plan = NULL;
    int64_t count = -1;
    strata_status sf = fuzz_check_status(strata_fetch(ctx, descriptor, &objects), "strata_fetch");
    strata_status sc = fuzz_check_status(strata_fetch_count(ctx, descriptor, &count), "strata_fetch_count");
    strata_status si = fuzz_check_status(strata_fetch_identifiers(ctx, descriptor, &ids), "strata_fetch_identifiers");
    int sectioned = sf == STRATA_OK && si == STRATA_ERR_INVALID && strstr(strata_last_error(), "\"path\":\"/sectionBy\"") != NULL;
    strata_status se = fuzz_check_status(strata_explain(ctx, descriptor, &plan), "strata_explain");
    if (sf == STRATA_OK && sc == STRATA_OK && si == STRATA_ERR_INVALID && fuzz_is_aggregation(descriptor)) {
        /* An aggregation: dictionaries, as many as strata_fetch_count counts; identifiers refused. */
        if (ids != NULL) FUZZ_FAIL("a refused fetch_identifiers set its out-parameter (descriptor %s)", descriptor);
        if (se != STRATA_OK) FUZZ_FAIL("strata_explain refuses (%d) an aggregation strata_fetch runs\n  %s", (int)se, descriptor);
        struct json_object *rows = NULL;
        long n = fuzz_array(objects, &rows);
        if (n < 0 || (int64_t)n != count)
            FUZZ_FAIL("an aggregation gave %ld results and a count of %lld for\n  %s", n, (long long)count, descriptor);
        for (long i = 0; i < n; i++) {
            struct json_object *row = json_object_array_get_idx(rows, (size_t)i);
            if (!json_object_is_type(row, json_type_object) || json_object_object_get_ex(row, "_id", NULL))
                FUZZ_FAIL("result %ld of an aggregation is not a dictionary of results for\n  %s", i, descriptor);
        }
        json_object_put(rows);
        strata_free(objects);
        strata_free(plan);
        return STRATA_OK;
    }
    if (sf != sc || (sf != si && !sectioned))
        FUZZ_FAIL("fetch %d, fetch_count %d and fetch_identifiers %d disagree on the descriptor\n  %s",
                  (int)sf, (int)sc, (int)si, descriptor);
    if (sf != STRATA_OK) {
        if (objects != NULL || ids != NULL || count != 0)
            FUZZ_FAIL("a failed fetch set its out-parameter (descriptor %s)", descriptor);
        if (se == STRATA_OK)
            FUZZ_FAIL("strata_explain accepts a descriptor strata_fetch refuses (%d)\n  %s", (int)sf, descriptor);
        fuzz_world_after_failure("strata_fetch");
        return sf;
    }
    if (se != STRATA_OK)
        FUZZ_FAIL("strata_explain refuses (%d) a descriptor strata_fetch accepts\n  %s", (int)se, descriptor);
    struct json_object *objs = NULL, *idv = NULL;
    long n_objects = sectioned ? fuzz_sections(objects, &objs) : fuzz_array(objects, &objs);
    long n_ids = sectioned ? n_objects : fuzz_array(ids, &idv);
    if (n_objects < 0 || n_ids < 0)
        FUZZ_FAIL("strata_fetch / strata_fetch_identifiers did not give JSON arrays:\n  %s\n  %s", objects, ids);
    if (n_objects != n_ids || (int64_t)n_ids != count)
        FUZZ_FAIL("fetch gave %ld objects, fetch_identifiers %ld, fetch_count %lld for\n  %s",
                  n_objects, n_ids, (long long)count, descriptor);
    for (long i = 0; i < n_ids && !sectioned; i++) {
        struct json_object *obj = json_object_array_get_idx(objs, (size_t)i), *oid = NULL;
        const char *want = json_object_get_string(json_object_array_get_idx(idv, (size_t)i));
        if (!json_object_object_get_ex(obj, "_id", &oid) || want == NULL ||
            strcmp(json_object_get_string(oid), want) != 0)
            FUZZ_FAIL("object %ld of strata_fetch is not identifier %ld of strata_fetch_identifiers (%s) for\n  %s",
                      i, i, want ? want : "(null)", descriptor);
    }
    json_object_put(objs);
    json_object_put(idv);
    strata_free(objects);
    strata_free(ids);
    strata_free(plan);
    return STRATA_OK;
}

#endif /* STRATA_FUZZ_COMMON_H */
