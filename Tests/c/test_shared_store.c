/*
 * test_shared_store.c — two processes on one store file:
 *
 *   upsert: process A inserts a trip and, before A saves, process B (a child)
 *           saves a trip with the same unique values; A's save upserts into
 *           B's trip (one trip, A's values, A's nested item linked to it);
 *   migrated: B opens the store with version 2 (a required attribute with a
 *           default), migrating it; A, still at version 1, refuses to save
 *           with STRATA_ERR_INCOMPATIBLE_STORE naming both versions, writes
 *           nothing, and its reads answer or fail with that status, never
 *           STRATA_ERR_INTERNAL.
 *
 * The child is this program run again (fork, then exec with "--child").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <json-c/json.h>
#include <strata.h>
#include "check.h"

#define ITEM                                                                                              \
    "{\"name\": \"Item\", \"attributes\": [{\"name\": \"title\", \"type\": \"string\"}],"                 \
    " \"relationships\": [{\"name\": \"trip\", \"destination\": \"Trip\", \"optional\": true}]}"
#define TRIP_RELS                                                                                         \
    "\"relationships\": [{\"name\": \"items\", \"destination\": \"Item\", \"toMany\": true,"              \
    " \"deleteRule\": \"cascade\", \"inverse\": \"trip\"}]"
#define V1                                                                                                \
    "{\"version\": \"1.0.0\", \"entities\": [{\"name\": \"Trip\", \"attributes\": ["                      \
    " {\"name\": \"name\", \"type\": \"string\", \"unique\": true},"                                       \
    " {\"name\": \"destination\", \"type\": \"string\"}], " TRIP_RELS "}, " ITEM "]}"
#define V2                                                                                                \
    "{\"version\": \"2.0.0\", \"entities\": [{\"name\": \"Trip\", \"attributes\": ["                      \
    " {\"name\": \"name\", \"type\": \"string\", \"unique\": true},"                                       \
    " {\"name\": \"destination\", \"type\": \"string\"},"                                                  \
    " {\"name\": \"nights\", \"type\": \"int\", \"default\": 1}], " TRIP_RELS "}, " ITEM "]}"

/* ---- process B ------------------------------------------------------------ */

static int child(const char *round, const char *path) {
    int migrate = strcmp(round, "migrate") == 0;
    strata_container *db = check_open(migrate ? "{\"schema\": " V2 "}" : "{\"schema\": " V1 "}", path);
    strata_context *ctx = check_context(db);
    CHECK_STATUS(strata_insert(ctx, "Trip", migrate ? "{\"name\": \"Oslo\", \"destination\": \"B\"}"
                                                    : "{\"name\": \"Paris\", \"destination\": \"B\"}", NULL));
    CHECK_STATUS(strata_save(ctx));
    strata_context_free(ctx);
    strata_close(db);
    return 0;
}

/* ---- process A ------------------------------------------------------------ */

static json_object *fetch_all(strata_context *ctx, const char *entity) {
    char *d = check_strf("{\"entity\": \"%s\"}", entity);
    char *out = NULL;
    CHECK_STATUS(strata_fetch(ctx, d, &out));
    json_object *o = parse_json_or_die(out);
    strata_free(out);
    free(d);
    return o;
}

static void check_contains(const char *text, const char *part) {
    if (text == NULL || strstr(text, part) == NULL) {
        fprintf(stderr, "expected \"%s\" in: %s\n", part, text ? text : "(null)");
        exit(1);
    }
}

static void test_upsert(const char *self, const char *path) {
    strata_container *db = check_open("{\"schema\": " V1 "}", path);
    strata_context *ctx = check_context(db);
    char *id = NULL;
    CHECK_STATUS(strata_insert(ctx, "Trip", "{\"name\": \"Paris\", \"destination\": \"A\", \"items\": [{\"title\": \"Louvre\"}]}", &id));
    check_run_child(self, "upsert", path);   /* B saves "Paris" first */
    CHECK_STATUS(strata_save(ctx));
    strata_context *fresh = check_context(db);
    json_object *trips = fetch_all(fresh, "Trip");
    CHECK(json_object_array_length(trips) == 1);
    json_object *t = json_object_array_get_idx(trips, 0);
    CHECK_STR_EQ(check_str_member(t, "destination"), "A");
    const char *saved = check_str_member(t, "_id");
    CHECK(strcmp(saved, id) != 0);    /* B's trip, not the key A's insert reserved */
    json_object *items = fetch_all(fresh, "Item");
    CHECK(json_object_array_length(items) == 1);
    CHECK_STR_EQ(check_str_member(json_object_array_get_idx(items, 0), "trip"), saved);
    json_object_put(items);
    json_object_put(trips);
    strata_free(id);
    strata_context_free(fresh);
    strata_context_free(ctx);
    strata_close(db);
}

static void test_migrated_by_another_process(const char *self, const char *path) {
    strata_container *db = check_open("{\"schema\": " V1 "}", path);
    strata_context *ctx = check_context(db);
    CHECK_STATUS(strata_insert(ctx, "Trip", "{\"name\": \"Rome\", \"destination\": \"A\"}", NULL));
    check_run_child(self, "migrate", path);  /* B migrates to 2.0.0 */
    CHECK_ERROR_CODE(strata_save(ctx), STRATA_ERR_INCOMPATIBLE_STORE);
    check_contains(strata_last_error(), "1.0.0");
    check_contains(strata_last_error(), "2.0.0");
    CHECK(strata_has_changes(ctx) == 1);
    /* Reads answer or fail with INCOMPATIBLE_STORE, never INTERNAL. */
    char *out = NULL;
    strata_status st = strata_fetch(ctx, "{\"entity\": \"Trip\"}", &out);
    CHECK(st == STRATA_OK || st == STRATA_ERR_INCOMPATIBLE_STORE);
    strata_free(out);
    out = NULL;
    st = strata_get(ctx, "Trip/1", &out);
    CHECK(st == STRATA_OK || st == STRATA_ERR_INCOMPATIBLE_STORE || st == STRATA_ERR_NOT_FOUND);
    strata_free(out);
    strata_context_free(ctx);
    strata_close(db);

    /* Version 2 sees no row without its required value, and no "Rome". */
    strata_container *v2 = check_open("{\"schema\": " V2 "}", path);
    strata_context *c2 = check_context(v2);
    json_object *trips = fetch_all(c2, "Trip");
    for (size_t i = 0; i < json_object_array_length(trips); i++) {
        json_object *t = json_object_array_get_idx(trips, i);
        json_object *nights = check_member(t, "nights");
        CHECK(nights != NULL && json_object_is_type(nights, json_type_int));
        CHECK(strcmp(check_str_member(t, "name"), "Rome") != 0);
    }
    json_object_put(trips);
    strata_context_free(c2);
    strata_close(v2);
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "--child") == 0) return child(argv[2], argv[3]);
    char *path = test_store_path("shared.store");
    test_upsert(argv[0], path);
    test_migrated_by_another_process(argv[0], path);
    free(path);
    return 0;
}
