/*
 * test_container.c — strata.h sections "Container" and "Contexts":
 * strata_open, strata_close, strata_container_schema, strata_context_new,
 * strata_context_free, strata_has_changes; every documented "Fails with";
 * file, in-memory and read-only stores.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <json-c/json.h>
#include <strata.h>
#include "check.h"

#ifndef STRATA_SOURCE_DIR
#define STRATA_SOURCE_DIR "."
#endif
#define FIXTURES STRATA_SOURCE_DIR "/Tests/c/fixtures/"

/* The whole file; *len gets its size. NULL if it cannot be read. */
static char *read_bytes(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *data = malloc((size_t)n + 1);
    if (!data || fread(data, 1, (size_t)n, f) != (size_t)n) { fprintf(stderr, "cannot read %s\n", path); exit(1); }
    data[n] = '\0';
    fclose(f);
    if (len) *len = (size_t)n;
    return data;
}

static void write_bytes(const char *path, const char *data, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0) { perror(path); exit(1); }
}

static int file_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

static char *concat(const char *a, const char *b) {
    size_t n = strlen(a) + strlen(b) + 1;
    char *s = malloc(n);
    if (!s) exit(1);
    snprintf(s, n, "%s%s", a, b);
    return s;
}

/* A configuration of fixture `schema_file` with extra options ("" or ", \"k\": v"). */
static strata_config *make_config(const char *schema_file, const char *options) {
    char *path = concat(FIXTURES, schema_file);
    char *schema = check_read_file(path);
    size_t n = strlen(schema) + strlen(options) + 32;
    char *json = malloc(n);
    if (!json) exit(1);
    snprintf(json, n, "{\"schema\": %s%s}", schema, options);
    strata_config *cfg = NULL;
    CHECK_STATUS(strata_config_new(json, &cfg));
    CHECK(cfg != NULL);
    free(json);
    free(schema);
    free(path);
    return cfg;
}

static strata_container *open_store(const char *path, const char *schema_file, const char *options) {
    strata_config *cfg = make_config(schema_file, options);
    strata_container *db = NULL;
    CHECK_STATUS(strata_open(path, cfg, &db));
    CHECK(db != NULL);
    strata_config_free(cfg);
    return db;
}

static const char *string_field(json_object *obj, const char *key) {
    json_object *v = NULL;
    if (!obj || !json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, json_type_string)) return NULL;
    return json_object_get_string(v);
}

/* The last error's message (a copy to free), after checking the code. */
static char *last_error_message(const char *code) {
    json_object *err = parse_json_or_die(strata_last_error());
    CHECK_STR_EQ(string_field(err, "code"), code);
    const char *m = string_field(err, "message");
    CHECK(m != NULL && m[0] != '\0');
    char *copy = strdup(m);
    json_object_put(err);
    return copy;
}

static const char *trip_json =
    "{\"name\": \"Lisbon\", \"destination\": \"Portugal\","
    " \"startDate\": \"2026-04-01T00:00:00Z\", \"endDate\": \"2026-04-08T00:00:00Z\"}";

static int64_t count(strata_context *ctx, const char *entity) {
    char descriptor[128];
    snprintf(descriptor, sizeof descriptor, "{\"entity\": \"%s\"}", entity);
    int64_t n = -1;
    CHECK_STATUS(strata_fetch_count(ctx, descriptor, &n));
    return n;
}

/* Writes one saved trip into a new file store at `path`. */
static void make_store_with_a_trip(const char *path) {
    strata_container *db = open_store(path, "trips.json", "");
    strata_context *ctx = NULL;
    CHECK_STATUS(strata_context_new(db, &ctx));
    CHECK_STATUS(strata_insert(ctx, "Trip", trip_json, NULL));
    CHECK_STATUS(strata_save(ctx));
    strata_context_free(ctx);
    strata_close(db);
}

static void test_file_store(void) {
    char *path = test_store_path("container_file.store");
    CHECK(!file_exists(path));
    strata_container *db = open_store(path, "trips.json", "");
    CHECK(file_exists(path));

    /* The schema as declared. */
    char *text = NULL;
    CHECK_STATUS(strata_container_schema(db, &text));
    json_object *reported = parse_json_or_die(text);
    char *fixture = check_read_file(FIXTURES "trips.json");
    json_object *declared = parse_json_or_die(fixture);
    CHECK(json_object_equal(reported, declared));
    json_object_put(reported);
    json_object_put(declared);
    free(fixture);
    strata_free(text);

    /* Two contexts of one container: saved changes of one are seen by the other. */
    strata_context *a = NULL, *b = NULL;
    CHECK_STATUS(strata_context_new(db, &a));
    CHECK_STATUS(strata_context_new(db, &b));
    CHECK(a != NULL && b != NULL && a != b);
    CHECK(strata_has_changes(a) == 0);
    CHECK_STATUS(strata_insert(a, "Trip", trip_json, NULL));
    CHECK(strata_has_changes(a) == 1);
    CHECK(strata_has_changes(b) == 0);
    CHECK(count(b, "Trip") == 0);
    CHECK_STATUS(strata_save(a));
    CHECK(strata_has_changes(a) == 0);
    CHECK(count(b, "Trip") == 1);
    strata_context_free(b);

    /* Freeing a context discards its unsaved changes. */
    CHECK_STATUS(strata_insert(a, "Trip", "{\"name\": \"Unsaved\", \"destination\": \"x\","
                                          " \"startDate\": 0, \"endDate\": 0}", NULL));
    CHECK(count(a, "Trip") == 2);
    strata_context_free(a);
    strata_close(db);

    /* Reopened: the saved trip, not the unsaved one. */
    db = open_store(path, "trips.json", "");
    CHECK_STATUS(strata_context_new(db, &a));
    CHECK(count(a, "Trip") == 1);
    strata_context_free(a);
    strata_close(db);

    /* An empty file becomes a new store. */
    write_bytes(path, "", 0);
    char *wal = concat(path, "-wal");
    remove(wal);
    free(wal);
    db = open_store(path, "trips.json", "");
    CHECK_STATUS(strata_context_new(db, &a));
    CHECK(count(a, "Trip") == 0);
    strata_context_free(a);
    strata_close(db);
    free(path);
}

/* "Closing a container while contexts still exist keeps the store open until
 * the last of its contexts is freed." */
static void test_close_with_live_context(void) {
    char *path = test_store_path("container_live_context.store");
    strata_container *db = open_store(path, "trips.json", "");
    strata_context *ctx = NULL;
    CHECK_STATUS(strata_context_new(db, &ctx));
    strata_close(db);
    CHECK_STATUS(strata_insert(ctx, "Trip", trip_json, NULL));
    CHECK_STATUS(strata_save(ctx));
    CHECK(count(ctx, "Trip") == 1);

    /* The closed container is a stale handle. */
    char *text = (char *)&text;
    CHECK_ERROR_CODE(strata_container_schema(db, &text), STRATA_ERR_MISUSE);
    CHECK(text == NULL);
    strata_context *other = (strata_context *)&other;
    CHECK_ERROR_CODE(strata_context_new(db, &other), STRATA_ERR_MISUSE);
    CHECK(other == NULL);
    strata_context_free(ctx);

    db = open_store(path, "trips.json", "");
    CHECK_STATUS(strata_context_new(db, &ctx));
    CHECK(count(ctx, "Trip") == 1);
    strata_context_free(ctx);
    strata_close(db);
    free(path);
}

static void test_in_memory(void) {
    /* path NULL, or a path that is ignored (no file is created). */
    strata_container *a = open_store(NULL, "trips.json", ", \"inMemory\": true");
    char *ignored = test_store_path("container_in_memory_ignored.store");
    strata_container *b = open_store(ignored, "trips.json", ", \"inMemory\": true");
    CHECK(!file_exists(ignored));

    /* Contexts of one in-memory container share its store... */
    strata_context *a1 = NULL, *a2 = NULL, *b1 = NULL;
    CHECK_STATUS(strata_context_new(a, &a1));
    CHECK_STATUS(strata_context_new(a, &a2));
    CHECK_STATUS(strata_context_new(b, &b1));
    CHECK_STATUS(strata_insert(a1, "Trip", trip_json, NULL));
    CHECK_STATUS(strata_save(a1));
    CHECK(count(a1, "Trip") == 1);
    CHECK(count(a2, "Trip") == 1);
    /* ...and each in-memory container is private. */
    CHECK(count(b1, "Trip") == 0);
    CHECK(!file_exists(ignored));
    strata_context_free(a1);
    strata_context_free(a2);
    strata_context_free(b1);
    strata_close(a);
    strata_close(b);

    /* Nothing survives the close. */
    a = open_store(NULL, "trips.json", ", \"inMemory\": true");
    CHECK_STATUS(strata_context_new(a, &a1));
    CHECK(count(a1, "Trip") == 0);
    strata_context_free(a1);
    strata_close(a);
    CHECK(!file_exists(ignored));
    free(ignored);
}

static void test_read_only(void) {
    char *path = test_store_path("container_readonly.store");
    make_store_with_a_trip(path);
    size_t before_len = 0;
    char *before = read_bytes(path, &before_len);
    CHECK(before != NULL);

    strata_container *db = open_store(path, "trips.json", ", \"readOnly\": true");
    strata_context *ctx = NULL;
    CHECK_STATUS(strata_context_new(db, &ctx));
    CHECK(count(ctx, "Trip") == 1);
    char *ids = NULL;
    CHECK_STATUS(strata_fetch_identifiers(ctx, "{\"entity\": \"Trip\"}", &ids));
    json_object *list = parse_json_or_die(ids);
    strata_free(ids);
    CHECK(json_object_array_length(list) == 1);
    const char *id = json_object_get_string(json_object_array_get_idx(list, 0));
    char *json = NULL;
    CHECK_STATUS(strata_get(ctx, id, &json));
    strata_free(json);

    /* Every write is refused, and leaves no pending change. */
    char *new_id = (char *)&new_id;
    CHECK_ERROR_CODE(strata_insert(ctx, "Trip", "{\"name\": \"Oslo\", \"destination\": \"Norway\","
                                                " \"startDate\": 0, \"endDate\": 0}", &new_id),
                     STRATA_ERR_READONLY);
    CHECK(new_id == NULL);
    CHECK(strata_has_changes(ctx) == 0);
    char *ids_out = (char *)&ids_out;
    CHECK_ERROR_CODE(strata_insert_many(ctx, "Trip", "[]", &ids_out), STRATA_ERR_READONLY);
    CHECK(ids_out == NULL);
    CHECK_ERROR_CODE(strata_update(ctx, id, "{\"destination\": \"Spain\"}"), STRATA_ERR_READONLY);
    CHECK_ERROR_CODE(strata_delete(ctx, id), STRATA_ERR_READONLY);
    CHECK(strata_has_changes(ctx) == 0);
    CHECK(count(ctx, "Trip") == 1);
    json_object_put(list);
    strata_context_free(ctx);
    strata_close(db);

    /* The file was not written. */
    size_t after_len = 0;
    char *after = read_bytes(path, &after_len);
    CHECK(after != NULL && after_len == before_len && memcmp(before, after, before_len) == 0);
    free(before);
    free(after);

    /* A read-only open of a missing file: STRATA_ERR_IO, and no file appears. */
    char *missing = test_store_path("container_readonly_missing.store");
    strata_config *cfg = make_config("trips.json", ", \"readOnly\": true");
    db = (strata_container *)&db;
    CHECK_ERROR_CODE(strata_open(missing, cfg, &db), STRATA_ERR_IO);
    CHECK(db == NULL);
    CHECK(!file_exists(missing));
    strata_config_free(cfg);
    free(missing);
    free(path);
}

static void test_open_misuse(void) {
    strata_config *cfg = make_config("trips.json", "");
    strata_container *db = (strata_container *)&db;
    char *path = test_store_path("container_misuse.store");

    CHECK_ERROR_CODE(strata_open(path, NULL, &db), STRATA_ERR_MISUSE);
    CHECK(db == NULL);
    CHECK_ERROR_CODE(strata_open(path, cfg, NULL), STRATA_ERR_MISUSE);
    db = (strata_container *)&db;
    CHECK_ERROR_CODE(strata_open(NULL, cfg, &db), STRATA_ERR_MISUSE); /* a file store needs a path */
    CHECK(db == NULL);
    CHECK(!file_exists(path));

    /* A PostgreSQL connection URI opens a PostgreSQL store, never a file: a server that cannot
     * be reached is STRATA_ERR_IO naming PostgreSQL, for strata_open and strata_check_store, and
     * the error never repeats the location's password. */
    const char *uris[] = {"postgresql://alice:s3cret@127.0.0.1:1/trips?connect_timeout=5",
                          "POSTGRES://alice:s3cret@/trips?host=/nonexistent-strata-socket-dir",
                          "postgres:///trips?host=/nonexistent-strata-socket-dir&password=s3cret"};
    for (size_t i = 0; i < sizeof uris / sizeof uris[0]; i++) {
        db = (strata_container *)&db;
        CHECK_ERROR_CODE(strata_open(uris[i], cfg, &db), STRATA_ERR_IO);
        CHECK(db == NULL);
        CHECK(strstr(strata_last_error(), "s3cret") == NULL);
        CHECK(strstr(strata_last_error(), "PostgreSQL") != NULL);
        char *report = (char *)&report;
        CHECK_ERROR_CODE(strata_check_store(uris[i], cfg, &report), STRATA_ERR_IO);
        CHECK(report == NULL);
        CHECK(strstr(strata_last_error(), "s3cret") == NULL);
    }
    CHECK(!file_exists("postgresql:"));

    /* A freed configuration is stale. */
    strata_config_free(cfg);
    db = (strata_container *)&db;
    CHECK_ERROR_CODE(strata_open(path, cfg, &db), STRATA_ERR_MISUSE);
    CHECK(db == NULL);
    CHECK(!file_exists(path));

    /* A handle of another kind is not a configuration. */
    strata_container *mem = open_store(NULL, "trips.json", ", \"inMemory\": true");
    db = (strata_container *)&db;
    CHECK_ERROR_CODE(strata_open(path, (const strata_config *)(void *)mem, &db), STRATA_ERR_MISUSE);
    CHECK(db == NULL);
    strata_close(mem);
    free(path);
}

static void test_container_schema_misuse(void) {
    strata_container *db = open_store(NULL, "trips.json", ", \"inMemory\": true");
    char *text = (char *)&text;
    CHECK_ERROR_CODE(strata_container_schema(NULL, &text), STRATA_ERR_MISUSE);
    CHECK(text == NULL);
    CHECK_ERROR_CODE(strata_container_schema(db, NULL), STRATA_ERR_MISUSE);
    strata_close(db);
    text = (char *)&text;
    CHECK_ERROR_CODE(strata_container_schema(db, &text), STRATA_ERR_MISUSE); /* closed */
    CHECK(text == NULL);
}

static void test_context_misuse(void) {
    strata_container *db = open_store(NULL, "trips.json", ", \"inMemory\": true");
    strata_context *ctx = (strata_context *)&ctx;
    CHECK_ERROR_CODE(strata_context_new(NULL, &ctx), STRATA_ERR_MISUSE);
    CHECK(ctx == NULL);
    CHECK_ERROR_CODE(strata_context_new(db, NULL), STRATA_ERR_MISUSE);

    /* strata_has_changes(NULL) is 0 with a misuse error. */
    CHECK(strata_has_changes(NULL) == 0);
    {
        char *m = last_error_message("misuse");
        free(m);
    }

    /* A freed context is stale for every call that takes it. */
    CHECK_STATUS(strata_context_new(db, &ctx));
    CHECK_STATUS(strata_insert(ctx, "Trip", trip_json, NULL));
    CHECK(strata_has_changes(ctx) == 1);
    strata_context_free(ctx);
    CHECK(strata_has_changes(ctx) == 0);
    {
        char *m = last_error_message("misuse");
        free(m);
    }
    char *out = (char *)&out;
    int64_t n = 7;
    CHECK_ERROR_CODE(strata_insert(ctx, "Trip", trip_json, &out), STRATA_ERR_MISUSE);
    CHECK(out == NULL);
    CHECK_ERROR_CODE(strata_insert_many(ctx, "Trip", "[]", NULL), STRATA_ERR_MISUSE);
    CHECK_ERROR_CODE(strata_update(ctx, "Trip/1", "{}"), STRATA_ERR_MISUSE);
    CHECK_ERROR_CODE(strata_delete(ctx, "Trip/1"), STRATA_ERR_MISUSE);
    CHECK_ERROR_CODE(strata_get(ctx, "Trip/1", &out), STRATA_ERR_MISUSE);
    CHECK_ERROR_CODE(strata_fetch(ctx, "{\"entity\": \"Trip\"}", &out), STRATA_ERR_MISUSE);
    CHECK_ERROR_CODE(strata_fetch_identifiers(ctx, "{\"entity\": \"Trip\"}", &out), STRATA_ERR_MISUSE);
    CHECK_ERROR_CODE(strata_fetch_count(ctx, "{\"entity\": \"Trip\"}", &n), STRATA_ERR_MISUSE);
    CHECK(n == 0);
    CHECK_ERROR_CODE(strata_save(ctx), STRATA_ERR_MISUSE);
    CHECK_ERROR_CODE(strata_rollback(ctx), STRATA_ERR_MISUSE);
    CHECK_ERROR_CODE(strata_rollback(NULL), STRATA_ERR_MISUSE);
    strata_context_free(ctx); /* a second free is ignored */

    /* A freed handle stays stale while new objects take its memory: a handle is never
     * given twice, so a late call on it cannot reach someone else's context. */
    {
        strata_context *fresh[64];
        for (int i = 0; i < 64; i++) {
            CHECK_STATUS(strata_context_new(db, &fresh[i]));
            CHECK(fresh[i] != ctx);
            CHECK_ERROR_CODE(strata_fetch_count(ctx, "{\"entity\": \"Trip\"}", &n), STRATA_ERR_MISUSE);
            if (i % 2 == 0) { strata_context_free(fresh[i]); fresh[i] = NULL; }
        }
        for (int i = 0; i < 64; i++) strata_context_free(fresh[i]);
    }

    /* A container handle is not a context, and a context is not a container. */
    CHECK_ERROR_CODE(strata_save((strata_context *)(void *)db), STRATA_ERR_MISUSE);
    strata_context *real = NULL;
    CHECK_STATUS(strata_context_new(db, &real));
    char *text = NULL;
    CHECK_ERROR_CODE(strata_container_schema((strata_container *)(void *)real, &text), STRATA_ERR_MISUSE);
    CHECK(text == NULL);
    strata_context_free(real);

    /* A closed container is stale for strata_context_new. */
    strata_close(db);
    ctx = (strata_context *)&ctx;
    CHECK_ERROR_CODE(strata_context_new(db, &ctx), STRATA_ERR_MISUSE);
    CHECK(ctx == NULL);
    strata_close(db); /* a second close is ignored */
}

/* strata_context_new: STRATA_ERR_IO when a connection cannot be opened
 * (the store's folder has gone away since the container opened it). The
 * first context takes the connection the container opened the store with. */
static void test_context_io(void) {
    char *dir = test_store_path("container_io_dir");
    CHECK(mkdir(dir, 0755) == 0);
    char *path = concat(dir, "/trips.store");
    strata_container *db = open_store(path, "trips.json", "");
    strata_context *first = NULL;
    CHECK_STATUS(strata_context_new(db, &first));
    free(test_store_path("container_io_dir-moved"));
    char *moved = concat(dir, "-moved");
    CHECK(rename(dir, moved) == 0);
    strata_context *ctx = (strata_context *)&ctx;
    CHECK_ERROR_CODE(strata_context_new(db, &ctx), STRATA_ERR_IO);
    CHECK(ctx == NULL);
    CHECK(rename(moved, dir) == 0);
    CHECK_STATUS(strata_context_new(db, &ctx));
    strata_context_free(ctx);
    strata_context_free(first);
    strata_close(db);
    free(moved);
    free(path);
    free(dir);
}

/* A file that is not a Strata store is refused and left byte-for-byte as it was. */
static void check_refused_untouched(const char *path, const char *what) {
    size_t before_len = 0;
    char *before = read_bytes(path, &before_len);
    CHECK(before != NULL);
    static const char *const options[] = {"", ", \"readOnly\": true"};
    for (size_t i = 0; i < 2; i++) {
        strata_config *cfg = make_config("trips.json", options[i]);
        strata_container *db = (strata_container *)&db;
        printf("%s%s:\n", what, i ? " (read-only)" : "");
        CHECK_ERROR_CODE(strata_open(path, cfg, &db), STRATA_ERR_INCOMPATIBLE_STORE);
        CHECK(db == NULL);
        strata_config_free(cfg);
        size_t after_len = 0;
        char *after = read_bytes(path, &after_len);
        CHECK(after != NULL && after_len == before_len && memcmp(before, after, before_len) == 0);
        free(after);
        char *wal = concat(path, "-wal");
        CHECK(!file_exists(wal));
        free(wal);
    }
    free(before);
}

static void test_incompatible_files(void) {
    /* A text file. */
    char *text_path = test_store_path("container_text.store");
    const char *text = "this is not a database\nbut a text file of someone else's\n";
    write_bytes(text_path, text, strlen(text));
    check_refused_untouched(text_path, "text file");

    /* A short file that is not even a SQLite header. */
    write_bytes(text_path, "SQLite", 6);
    check_refused_untouched(text_path, "short file");
    free(text_path);

    /* A SQLite database of another application (needs the sqlite3 CLI). */
    char *db_path = test_store_path("container_other_app.sqlite");
    if (system("command -v sqlite3 >/dev/null 2>&1") == 0) {
        size_t n = strlen(db_path) + 64;
        char *cmd = malloc(n);
        snprintf(cmd, n, "sqlite3 '%s' 'create table x(a); insert into x values (1)'", db_path);
        CHECK(system(cmd) == 0);
        free(cmd);
        check_refused_untouched(db_path, "SQLite database of another app");
    } else {
        printf("SKIP: sqlite3 is not on PATH; no foreign SQLite database case\n");
    }
    free(db_path);
}

/* A store written with one schema, opened with another whose change cannot be inferred (a type
   change): STRATA_ERR_MIGRATION naming the entity, the attribute and the change; file untouched. */
static void test_other_schema(void) {
    char *path = test_store_path("container_other_schema.store");
    make_store_with_a_trip(path);
    size_t before_len = 0;
    char *before = read_bytes(path, &before_len);

    strata_config *cfg = make_config("trips_changed.json", "");
    strata_container *db = (strata_container *)&db;
    CHECK_ERROR_CODE(strata_open(path, cfg, &db), STRATA_ERR_MIGRATION);
    CHECK(db == NULL);
    char *message = last_error_message("migration");
    CHECK(strstr(message, "destination") != NULL); /* the changed attribute */
    CHECK(strstr(message, "changes type from string to int") != NULL);
    CHECK(strstr(message, "Trip") != NULL);
    free(message);
    strata_config_free(cfg);

    size_t after_len = 0;
    char *after = read_bytes(path, &after_len);
    CHECK(after != NULL && after_len == before_len && memcmp(before, after, before_len) == 0);
    free(after);
    free(before);

    /* The right schema still opens it, with its data. */
    db = open_store(path, "trips.json", "");
    strata_context *ctx = NULL;
    CHECK_STATUS(strata_context_new(db, &ctx));
    CHECK(count(ctx, "Trip") == 1);
    strata_context_free(ctx);
    strata_close(db);
    free(path);
}

/* strata_open: STRATA_ERR_IO when the file cannot be created. */
static void test_open_io(void) {
    char *dir = test_store_path("container_no_such_dir");
    char *path = concat(dir, "/sub/trips.store");
    strata_config *cfg = make_config("trips.json", "");
    strata_container *db = (strata_container *)&db;
    CHECK_ERROR_CODE(strata_open(path, cfg, &db), STRATA_ERR_IO);
    CHECK(db == NULL);
    /* A directory is not a store file: the path is refused before SQLite sees it. */
    CHECK(mkdir(dir, 0755) == 0);
    db = (strata_container *)&db;
    CHECK_ERROR_CODE(strata_open(dir, cfg, &db), STRATA_ERR_INVALID);
    CHECK(db == NULL);
    strata_config_free(cfg);
    free(path);
    free(dir);
}

/* strata_open: STRATA_ERR_CORRUPT for a store whose pages are damaged. */
static void test_open_corrupt(void) {
    char *path = test_store_path("container_corrupt.store");
    make_store_with_a_trip(path);
    size_t len = 0;
    char *data = read_bytes(path, &len);
    CHECK(data != NULL && len >= 4096 * 2);
    /* Keep the 100-byte header; damage the rest of page 1 (the schema table) and page 2. */
    for (size_t i = 100; i < len && i < 4096 * 2; i++) data[i] = (char)(i * 7 + 13);
    write_bytes(path, data, len);
    free(data);
    strata_config *cfg = make_config("trips.json", "");
    strata_container *db = (strata_container *)&db;
    CHECK_ERROR_CODE(strata_open(path, cfg, &db), STRATA_ERR_CORRUPT);
    CHECK(db == NULL);
    strata_config_free(cfg);
    free(path);
}

/*
 * strata_save: STRATA_ERR_BUSY when another process holds the write lock
 * for longer than the 10 s wait. Needs the sqlite3 CLI (else skipped).
 */
static void test_save_busy(void) {
    if (system("command -v sqlite3 >/dev/null 2>&1") != 0) {
        printf("SKIP: sqlite3 is not on PATH; no busy case\n");
        return;
    }
    char *path = test_store_path("container_busy.store");
    char *locked = test_store_path("container_busy.locked");
    char *done = test_store_path("container_busy.done");
    strata_container *db = open_store(path, "trips.json", "");
    strata_context *ctx = NULL;
    CHECK_STATUS(strata_context_new(db, &ctx));
    CHECK_STATUS(strata_insert(ctx, "Trip", trip_json, NULL));

    /* A background sqlite3 takes the write lock, says so, holds it 13 s, then ends. */
    size_t n = strlen(path) + strlen(locked) + strlen(done) + 256;
    char *cmd = malloc(n);
    if (!cmd) exit(1);
    snprintf(cmd, n,
             "( (echo 'BEGIN IMMEDIATE;'; echo '.system touch %s'; sleep 13; echo 'COMMIT;')"
             " | sqlite3 '%s' >/dev/null 2>&1; touch '%s' ) &",
             locked, path, done);
    CHECK(system(cmd) == 0);
    free(cmd);
    for (int i = 0; i < 200 && !file_exists(locked); i++) {
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    CHECK(file_exists(locked));

    /* Reads are not blocked by a writer (WAL), not even reads of a context
     * with pending changes: they return at once, long before the 10 s wait
     * a read that took the write lock would spend (and then fail). */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CHECK(count(ctx, "Trip") == 1);
    char *json = NULL;
    CHECK_STATUS(strata_fetch(ctx, "{\"entity\": \"Trip\"}", &json));
    CHECK(strstr(json, "\"Trip/") != NULL);
    strata_free(json);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    CHECK(seconds < 5.0);

    CHECK_ERROR_CODE(strata_save(ctx), STRATA_ERR_BUSY);
    CHECK(strata_has_changes(ctx) == 1); /* the pending change stays */

    /* Once the other writer is gone, the same changes save. */
    for (int i = 0; i < 400 && !file_exists(done); i++) {
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    CHECK(file_exists(done));
    CHECK_STATUS(strata_save(ctx));
    CHECK(strata_has_changes(ctx) == 0);
    strata_context_free(ctx);
    strata_close(db);
    free(done);
    free(locked);
    free(path);
}

int main(void) {
    test_file_store();
    test_close_with_live_context();
    test_in_memory();
    test_read_only();
    test_open_misuse();
    test_container_schema_misuse();
    test_context_misuse();
    test_context_io();
    test_incompatible_files();
    test_other_schema();
    test_open_io();
    test_open_corrupt();
    test_save_busy();
    return 0;
}
