/*
 * test_export.c — strata.h section "Export and import" on the SampleTrips
 * schema: strata_export() into a buffer through the write callback,
 * strata_import() of it into a new store through a read callback that hands
 * out a few bytes at a time; every entity's strata_fetch() and the
 * identifiers are equal, and a later insert gets a new key. A write callback
 * that stops, a read callback that fails, another schema and a truncated
 * export fail with their statuses and leave the destination empty.
 *
 * Results are compared as parsed JSON (json-c), never as text.
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

static const char *const entities[] = {"Trip", "BusinessTrip", "PersonalTrip", "BucketListItem", "LivingAccommodation"};
#define ENTITY_COUNT (sizeof entities / sizeof entities[0])

/* A store of a fixture's schema; external storage from 16 bytes on. */
static strata_container *open_store(const char *schema_file, const char *path) {
    char *schema = check_read_file(schema_file);
    char *config = check_strf("{\"schema\": %s, \"externalStorageThreshold\": 16}", schema);
    strata_container *db = check_open(config, path);
    free(config);
    free(schema);
    return db;
}

/* strata_write_fn: appends to a check_buf; stops (returns 5) once `stop_after` calls were made. */
typedef struct { check_buf buf; int calls; int stop_after; } sink;

static int write_to_sink(const char *data, size_t length, void *userdata) {
    sink *s = userdata;
    s->calls++;
    if (s->stop_after && s->calls >= s->stop_after) return 5;
    char *piece = malloc(length + 1);
    CHECK(piece != NULL);
    memcpy(piece, data, length);
    piece[length] = '\0';
    CHECK(strlen(piece) == length); /* JSON lines hold no NUL */
    check_buf_add(&s->buf, piece);
    free(piece);
    return 0;
}

/* strata_read_fn: hands out `text` at most `step` bytes at a time; -1 once `fail_at` bytes were given. */
typedef struct { const char *text; size_t offset, step, fail_at; } source;

static long read_from_source(char *buffer, size_t capacity, void *userdata) {
    source *s = userdata;
    if (s->fail_at && s->offset >= s->fail_at) return -1;
    size_t left = strlen(s->text) - s->offset;
    size_t n = left < s->step ? left : s->step;
    if (n > capacity) n = capacity;
    memcpy(buffer, s->text + s->offset, n);
    s->offset += n;
    return (long)n;
}

static char *export_all(strata_container *db) {
    sink s = {{0}, 0, 0};
    CHECK_STATUS(strata_export(db, write_to_sink, &s));
    CHECK(s.calls >= 1 && s.buf.s != NULL);
    return s.buf.s;
}

static strata_status import_text(strata_container *db, const char *text, size_t fail_at, int64_t *count) {
    source src = {text, 0, 101, fail_at};
    return strata_import(db, read_from_source, &src, count);
}

static json_object *fetch_entity(strata_container *db, const char *entity) {
    strata_context *ctx = check_context(db);
    char *descriptor = check_strf("{\"entity\": \"%s\", \"includeSubentities\": false}", entity);
    char *text = NULL;
    CHECK_STATUS(strata_fetch(ctx, descriptor, &text));
    json_object *arr = parse_json_or_die(text);
    strata_free(text);
    free(descriptor);
    strata_context_free(ctx);
    return arr;
}

static int64_t count_all(strata_container *db) {
    int64_t total = 0;
    for (size_t i = 0; i < ENTITY_COUNT; i++) {
        json_object *arr = fetch_entity(db, entities[i]);
        total += (int64_t)json_object_array_length(arr);
        json_object_put(arr);
    }
    return total;
}

static void fill(strata_container *db) {
    strata_context *ctx = check_context(db);
    char *id = NULL;
    CHECK_STATUS(strata_insert(ctx, "BusinessTrip",
        "{\"name\": \"Paris\", \"destination\": \"Paris\", \"startDate\": \"2026-11-22T09:30:00Z\", \"endDate\": \"2026-11-25\","
        " \"perdiem\": 120.5, \"photo\": \"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\","
        " \"bucketList\": [{\"title\": \"Louvre\"}, {\"title\": \"Seine\", \"hasReservation\": true}],"
        " \"livingAccommodation\": {\"address\": \"1 rue\", \"placeName\": \"Hotel\"}}", &id));
    strata_free(id);
    CHECK_STATUS(strata_insert(ctx, "PersonalTrip",
        "{\"name\": \"Rome\", \"destination\": \"Italy\", \"startDate\": \"2027-01-01\", \"endDate\": \"2027-01-09\", \"reason\": \"family\","
        " \"bucketList\": [{\"title\": \"Colosseum\"}]}", &id));
    strata_free(id);
    CHECK_STATUS(strata_insert(ctx, "Trip", "{\"name\": \"Gone\", \"destination\": \"x\", \"startDate\": \"2027-02-01\", \"endDate\": \"2027-02-02\"}", &id));
    CHECK_STATUS(strata_save(ctx));
    CHECK_STATUS(strata_delete(ctx, id));
    CHECK_STATUS(strata_save(ctx));
    strata_free(id);
    strata_context_free(ctx);
}

int main(void) {
    char *source_path = test_store_path("export_source.sqlite");
    strata_container *db = open_store(FIXTURES "trips.json", source_path);
    fill(db);
    char *text = export_all(db);
    CHECK(strncmp(text, "{\"strata\":\"export\",\"version\":1,", 31) == 0);
    CHECK(strstr(text, "\n{\"strata\":\"links\"}\n") != NULL);

    /* Into a new store: the same objects, identifiers and links. */
    char *copy_path = test_store_path("export_copy.sqlite");
    strata_container *copy = open_store(FIXTURES "trips.json", copy_path);
    int64_t imported = -1;
    CHECK_STATUS(import_text(copy, text, 0, &imported));
    CHECK(imported == 6); /* 2 trips, 3 items, 1 accommodation (the deleted trip is gone) */
    for (size_t i = 0; i < ENTITY_COUNT; i++) {
        json_object *a = fetch_entity(db, entities[i]);
        json_object *b = fetch_entity(copy, entities[i]);
        if (!json_object_equal(a, b))
            fprintf(stderr, "%s differs:\n%s\n%s\n", entities[i], json_object_to_json_string(a), json_object_to_json_string(b));
        CHECK(json_object_equal(a, b));
        json_object_put(a);
        json_object_put(b);
    }
    /* The copy exports the same lines. */
    char *again = export_all(copy);
    CHECK_STR_EQ(again, text);
    free(again);
    /* A new object gets a key past the imported ones. */
    strata_context *ctx = check_context(copy);
    char *id = NULL;
    CHECK_STATUS(strata_insert(ctx, "BucketListItem", "{\"title\": \"New\"}", &id));
    CHECK_STATUS(strata_save(ctx));
    char *id_pattern = check_strf("\"%s\"", id);
    CHECK(strstr(text, id_pattern) == NULL);
    free(id_pattern);
    strata_free(id);
    strata_context_free(ctx);
    strata_close(copy);
    free(copy_path);

    /* Failures, each leaving the destination without objects. */
    char *empty_path = test_store_path("export_empty.sqlite");
    strata_container *empty = open_store(FIXTURES "trips.json", empty_path);
    sink stopping = {{0}, 0, 1};
    CHECK_ERROR_CODE(strata_export(db, write_to_sink, &stopping), STRATA_ERR_CALLBACK);
    free(stopping.buf.s);
    CHECK_ERROR_CODE(strata_export(db, NULL, NULL), STRATA_ERR_MISUSE);
    CHECK_ERROR_CODE(strata_export(NULL, write_to_sink, NULL), STRATA_ERR_MISUSE);
    CHECK_ERROR_CODE(strata_import(empty, NULL, NULL, NULL), STRATA_ERR_MISUSE);
    CHECK_ERROR_CODE(import_text(empty, text, 300, NULL), STRATA_ERR_CALLBACK);
    CHECK(count_all(empty) == 0);
    /* Truncated: the end line is missing. */
    char *truncated = check_strf("%s", text);
    *strstr(truncated, "{\"strata\":\"end\"") = '\0';
    CHECK_ERROR_CODE(import_text(empty, truncated, 0, NULL), STRATA_ERR_INVALID);
    CHECK(strstr(strata_last_error(), "line ") != NULL);
    CHECK(count_all(empty) == 0);
    free(truncated);
    /* Another schema. */
    char *other_path = test_store_path("export_other.sqlite");
    strata_container *other = open_store(FIXTURES "trips_changed.json", other_path);
    CHECK_ERROR_CODE(import_text(other, text, 0, NULL), STRATA_ERR_INCOMPATIBLE_STORE);
    CHECK(strstr(strata_last_error(), "line 1:") != NULL);
    strata_close(other);
    free(other_path);
    /* After all that, the whole export still goes in. */
    CHECK_STATUS(import_text(empty, text, 0, &imported));
    CHECK(imported == 6);
    strata_close(empty);
    free(empty_path);

    free(text);
    strata_close(db);
    free(source_path);
    printf("test_export: OK\n");
    return 0;
}
