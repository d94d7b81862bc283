/*
 * test_migration_api.c — the C face of migrations, with bad input: the
 * argument checks of strata_config_set_stage_hooks, strata_config_set_progress,
 * strata_infer_migration and strata_check_store, and who frees a callback's
 * userdata, and when.
 *
 * Userdata is a malloc'd token whose free function counts and frees it, so a
 * userdata never freed is a leak and one freed twice an invalid free under
 * valgrind (memcheck_test_migration_api), and the counts say exactly when.
 * Migrations that really run (hooks called, their statuses, progress events)
 * are tested with the executor.
 *
 * Runs on store files and, with STRATA_TEST_STORE=postgres (postgres_test_migration_api),
 * on PostgreSQL: strata_check_store of a missing schema is then "compatible" (opening
 * creates the store), where a missing file is STRATA_ERR_IO.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include <strata.h>
#include "check.h"

/* ---- userdata tokens ---------------------------------------------------- */

typedef struct { int *freed; } token;

static void *new_token(int *freed) {
    token *t = malloc(sizeof *t);
    CHECK(t != NULL);
    t->freed = freed;
    return t;
}

static void free_token(void *userdata) {
    token *t = userdata;
    (*t->freed)++;
    free(t);
}

static strata_status hook_ok(strata_context *ctx, void *userdata) {
    (void)ctx;
    (void)userdata;
    return STRATA_OK;
}

static void progress_nothing(const char *event_json, void *userdata) {
    (void)event_json;
    (void)userdata;
}

static void trace_nothing(const char *sql, void *userdata) {
    (void)sql;
    (void)userdata;
}

/* ---- configurations ----------------------------------------------------- */

#define V1 "{\"version\": \"1.0.0\", \"entities\": [{\"name\": \"Trip\", \"attributes\": [{\"name\": \"name\", \"type\": \"string\"}]}]}"
#define V2 "{\"version\": \"2.0.0\", \"entities\": [{\"name\": \"Trip\", \"attributes\": [{\"name\": \"name\", \"type\": \"string\"}," \
           " {\"name\": \"note\", \"type\": \"string\", \"optional\": true}]}]}"
#define V3 "{\"version\": \"3.0.0\", \"entities\": [{\"name\": \"Trip\", \"attributes\": [{\"name\": \"name\", \"type\": \"string\", \"unique\": true}," \
           " {\"name\": \"note\", \"type\": \"string\", \"optional\": true}]}]}"

/* A plan of three versions: a lightweight stage, then a custom one. */
static const char *plan_json =
    "{\"inMemory\": true, \"migrationPlan\": {\"schemas\": [" V1 ", " V2 ", " V3 "], \"stages\": ["
    "{\"name\": \"addNote\", \"kind\": \"lightweight\", \"from\": \"1.0.0\", \"to\": \"2.0.0\"},"
    "{\"name\": \"uniqueName\", \"kind\": \"custom\", \"from\": \"2.0.0\", \"to\": \"3.0.0\","
    " \"willMigrate\": [{\"op\": \"deduplicate\", \"entity\": \"Trip\", \"by\": [\"name\"], \"keep\": \"first\"}]}]}}";

static strata_config *new_config(const char *json) {
    strata_config *cfg = NULL;
    CHECK_STATUS(strata_config_new(json, &cfg));
    CHECK(cfg != NULL);
    return cfg;
}

/* The last error's message contains `text`. */
static void check_message_has(const char *text) {
    json_object *e = parse_json_or_die(strata_last_error());
    const char *message = check_str_member(e, "message");
    if (message == NULL || strstr(message, text) == NULL) {
        fprintf(stderr, "expected the message to contain \"%s\"; last error: %s\n", text, strata_last_error());
        exit(1);
    }
    json_object_put(e);
}

/* The last error's "path" is `path` (NULL: no path). */
static void check_error_path(const char *path) {
    json_object *e = parse_json_or_die(strata_last_error());
    CHECK_STR_EQ(check_str_member(e, "path"), path);
    json_object_put(e);
}

/* ---- strata_config_set_stage_hooks -------------------------------------- */

static void test_stage_hooks_bad_arguments(void) {
    strata_config *cfg = new_config(plan_json);
    int freed = 0;

    /* Every failure frees the userdata at once: it is Strata's from the call on. */
    CHECK_ERROR_CODE(strata_config_set_stage_hooks(NULL, "uniqueName", hook_ok, hook_ok, new_token(&freed), free_token),
                     STRATA_ERR_MISUSE);
    CHECK(freed == 1);
    check_message_has("config");

    CHECK_ERROR_CODE(strata_config_set_stage_hooks(cfg, NULL, hook_ok, hook_ok, new_token(&freed), free_token), STRATA_ERR_MISUSE);
    CHECK(freed == 2);
    check_message_has("stage_name");

    CHECK_ERROR_CODE(strata_config_set_stage_hooks(cfg, "noSuchStage", hook_ok, NULL, new_token(&freed), free_token),
                     STRATA_ERR_INVALID);
    CHECK(freed == 3);
    check_message_has("'noSuchStage'");
    check_message_has("'addNote', 'uniqueName'");   /* the stages there are */

    CHECK_ERROR_CODE(strata_config_set_stage_hooks(cfg, "addNote", NULL, hook_ok, new_token(&freed), free_token),
                     STRATA_ERR_INVALID);
    CHECK(freed == 4);
    check_message_has("lightweight");

    /* Removing the hooks of an unknown stage is refused as well. */
    CHECK_ERROR_CODE(strata_config_set_stage_hooks(cfg, "noSuchStage", NULL, NULL, new_token(&freed), free_token),
                     STRATA_ERR_INVALID);
    CHECK(freed == 5);

    /* Stage names are exact. */
    CHECK_ERROR_CODE(strata_config_set_stage_hooks(cfg, "uniquename", hook_ok, NULL, NULL, NULL), STRATA_ERR_INVALID);
    CHECK_ERROR_CODE(strata_config_set_stage_hooks(cfg, "", hook_ok, NULL, NULL, NULL), STRATA_ERR_INVALID);

    /* A configuration without a plan has no stages. */
    strata_config *plain = new_config("{\"inMemory\": true, \"schema\": " V1 "}");
    CHECK_ERROR_CODE(strata_config_set_stage_hooks(plain, "uniqueName", hook_ok, hook_ok, new_token(&freed), free_token),
                     STRATA_ERR_INVALID);
    CHECK(freed == 6);
    check_message_has("no migration plan");

    /* A plan without stages. */
    strata_config *stageless = new_config("{\"inMemory\": true, \"migrationPlan\": {\"schemas\": [" V1 "]}}");
    CHECK_ERROR_CODE(strata_config_set_stage_hooks(stageless, "uniqueName", hook_ok, NULL, new_token(&freed), free_token),
                     STRATA_ERR_INVALID);
    CHECK(freed == 7);
    check_message_has("none");

    /* A freed configuration is a stale handle. */
    strata_config_free(plain);
    CHECK_ERROR_CODE(strata_config_set_stage_hooks(plain, "uniqueName", hook_ok, NULL, new_token(&freed), free_token),
                     STRATA_ERR_MISUSE);
    CHECK(freed == 8);

    /* NULL free_userdata: nothing to free, nothing crashes. */
    int local = 0;
    CHECK_ERROR_CODE(strata_config_set_stage_hooks(NULL, "uniqueName", hook_ok, NULL, &local, NULL), STRATA_ERR_MISUSE);
    CHECK(local == 0);

    strata_config_free(stageless);
    strata_config_free(cfg);
    CHECK(freed == 8);
}

static void test_stage_hooks_ownership(void) {
    strata_config *cfg = new_config(plan_json);
    int a = 0, b = 0, c = 0, d = 0;

    CHECK_STATUS(strata_config_set_stage_hooks(cfg, "uniqueName", hook_ok, hook_ok, new_token(&a), free_token));
    CHECK(a == 0);
    /* A failing call leaves the stage's hooks (and their userdata) as they were. */
    CHECK_ERROR_CODE(strata_config_set_stage_hooks(cfg, "addNote", hook_ok, NULL, new_token(&b), free_token), STRATA_ERR_INVALID);
    CHECK(a == 0 && b == 1);

    /* Replacing frees the previous userdata, once. */
    b = 0;
    CHECK_STATUS(strata_config_set_stage_hooks(cfg, "uniqueName", NULL, hook_ok, new_token(&b), free_token));
    CHECK(a == 1 && b == 0);

    /* Removing (both hooks NULL) frees the hooks' userdata, and the one passed at once. */
    CHECK_STATUS(strata_config_set_stage_hooks(cfg, "uniqueName", NULL, NULL, new_token(&c), free_token));
    CHECK(a == 1 && b == 1 && c == 1);
    /* Removing hooks that are not there succeeds. */
    CHECK_STATUS(strata_config_set_stage_hooks(cfg, "uniqueName", NULL, NULL, NULL, NULL));

    /* Freeing the configuration frees the userdata of its hooks. */
    CHECK_STATUS(strata_config_set_stage_hooks(cfg, "uniqueName", hook_ok, NULL, new_token(&d), free_token));
    CHECK(d == 0);
    strata_config_free(cfg);
    CHECK(a == 1 && b == 1 && c == 1 && d == 1);
}

static void test_stage_hooks_live_with_containers(void) {
    strata_config *cfg = new_config(plan_json);
    int a = 0, b = 0;

    /* A container keeps the hooks it was opened with: freeing the
       configuration does not free their userdata while it is open. */
    CHECK_STATUS(strata_config_set_stage_hooks(cfg, "uniqueName", hook_ok, hook_ok, new_token(&a), free_token));
    strata_container *db1 = NULL;
    CHECK_STATUS(strata_open(NULL, cfg, &db1));

    /* Replacing the configuration's hooks leaves the container's. */
    CHECK_STATUS(strata_config_set_stage_hooks(cfg, "uniqueName", hook_ok, NULL, new_token(&b), free_token));
    CHECK(a == 0 && b == 0);
    strata_container *db2 = NULL;
    CHECK_STATUS(strata_open(NULL, cfg, &db2));

    strata_config_free(cfg);
    CHECK(a == 0 && b == 0);
    strata_close(db2);
    CHECK(a == 0 && b == 1);
    /* A context keeps its container's hooks until it is freed. */
    strata_context *ctx = check_context(db1);
    strata_close(db1);
    CHECK(a == 0);
    strata_context_free(ctx);
    CHECK(a == 1 && b == 1);
}

/* ---- strata_config_set_progress ----------------------------------------- */

static void test_progress(void) {
    int a = 0, b = 0, c = 0, d = 0, e = 0;

    CHECK_ERROR_CODE(strata_config_set_progress(NULL, progress_nothing, new_token(&a), free_token), STRATA_ERR_MISUSE);
    CHECK(a == 1);
    check_message_has("config");
    CHECK_ERROR_CODE(strata_config_set_progress(NULL, NULL, new_token(&a), free_token), STRATA_ERR_MISUSE);
    CHECK(a == 2);
    CHECK_ERROR_CODE(strata_config_set_progress(NULL, NULL, NULL, NULL), STRATA_ERR_MISUSE);

    /* Progress needs no plan: a store without one can migrate lightweight. */
    strata_config *cfg = new_config("{\"inMemory\": true, \"schema\": " V1 "}");
    CHECK_STATUS(strata_config_set_progress(cfg, progress_nothing, new_token(&b), free_token));
    CHECK(b == 0);
    CHECK_STATUS(strata_config_set_progress(cfg, progress_nothing, new_token(&c), free_token));   /* replaces */
    CHECK(b == 1 && c == 0);
    CHECK_STATUS(strata_config_set_progress(cfg, NULL, new_token(&d), free_token));                /* removes */
    CHECK(c == 1 && d == 1);
    CHECK_STATUS(strata_config_set_progress(cfg, NULL, NULL, NULL));
    CHECK_STATUS(strata_config_set_progress(cfg, progress_nothing, NULL, NULL));

    /* A container keeps its callback after the configuration is freed. */
    CHECK_STATUS(strata_config_set_progress(cfg, progress_nothing, new_token(&e), free_token));
    strata_container *db = NULL;
    CHECK_STATUS(strata_open(NULL, cfg, &db));
    strata_config_free(cfg);
    CHECK(e == 0);
    strata_close(db);
    CHECK(a == 2 && b == 1 && c == 1 && d == 1 && e == 1);

    /* Freed configuration: stale. */
    cfg = new_config("{\"inMemory\": true, \"schema\": " V1 "}");
    strata_config_free(cfg);
    CHECK_ERROR_CODE(strata_config_set_progress(cfg, progress_nothing, new_token(&a), free_token), STRATA_ERR_MISUSE);
    CHECK(a == 3);
}

/* strata_set_trace takes its userdata by the same rule: a failed call frees it. */
static void test_trace_failure_frees_userdata(void) {
    int a = 0;
    CHECK_ERROR_CODE(strata_set_trace(NULL, trace_nothing, new_token(&a), free_token), STRATA_ERR_MISUSE);
    CHECK(a == 1);
    CHECK_ERROR_CODE(strata_set_trace(NULL, NULL, new_token(&a), free_token), STRATA_ERR_MISUSE);
    CHECK(a == 2);
}

/* ---- strata_infer_migration --------------------------------------------- */

static void test_infer_migration_bad_input(void) {
    char *out = (char *)&out;   /* not NULL: a failing call must clear it */

    CHECK_ERROR_CODE(strata_infer_migration(NULL, V2, &out), STRATA_ERR_MISUSE);
    CHECK(out == NULL);
    check_message_has("from_schema_json");
    out = (char *)&out;
    CHECK_ERROR_CODE(strata_infer_migration(V1, NULL, &out), STRATA_ERR_MISUSE);
    CHECK(out == NULL);
    check_message_has("to_schema_json");
    CHECK_ERROR_CODE(strata_infer_migration(V1, V2, NULL), STRATA_ERR_MISUSE);
    check_message_has("out_json");

    /* Invalid UTF-8 is refused, naming which schema. */
    out = (char *)&out;
    CHECK_ERROR_CODE(strata_infer_migration("{\"version\": \"1\xff\", \"entities\": []}", V2, &out), STRATA_ERR_INVALID);
    CHECK(out == NULL);
    check_error_path("/from");
    CHECK_ERROR_CODE(strata_infer_migration(V1, "{\"version\": \"\xc3\x28\", \"entities\": []}", &out), STRATA_ERR_INVALID);
    check_error_path("/to");

    /* Malformed JSON: invalid, the path says which schema. */
    out = (char *)&out;
    CHECK_ERROR_CODE(strata_infer_migration("{\"version\": \"1\", \"entities\": [", V2, &out), STRATA_ERR_INVALID);
    CHECK(out == NULL);
    {
        json_object *e = parse_json_or_die(strata_last_error());
        const char *path = check_str_member(e, "path");
        CHECK(path != NULL && strncmp(path, "/from", 5) == 0);
        json_object_put(e);
        CHECK_ERROR_CODE(strata_infer_migration(V1, "[1, 2", &out), STRATA_ERR_INVALID);
        e = parse_json_or_die(strata_last_error());
        path = check_str_member(e, "path");
        CHECK(path != NULL && strncmp(path, "/to", 3) == 0);
        json_object_put(e);
        /* An unknown key in a schema. */
        CHECK_ERROR_CODE(strata_infer_migration(V1, "{\"version\": \"2\", \"entities\": [], \"colour\": 1}", &out),
                         STRATA_ERR_SCHEMA);
        e = parse_json_or_die(strata_last_error());
        path = check_str_member(e, "path");
        CHECK(path != NULL && strncmp(path, "/to", 3) == 0);
        json_object_put(e);
    }
}

/* ---- strata_check_store ------------------------------------------------- */

static int file_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

static void test_check_store_bad_input(void) {
    char *missing = test_store_path("migration_api_missing.store");
    strata_config *cfg = new_config("{\"schema\": " V1 "}");
    strata_config *memory = new_config("{\"inMemory\": true, \"schema\": " V1 "}");
    char *out = (char *)&out;

    CHECK_ERROR_CODE(strata_check_store(NULL, cfg, &out), STRATA_ERR_MISUSE);
    CHECK(out == NULL);
    check_message_has("path");
    out = (char *)&out;
    CHECK_ERROR_CODE(strata_check_store(missing, NULL, &out), STRATA_ERR_MISUSE);
    CHECK(out == NULL);
    check_message_has("config");
    CHECK_ERROR_CODE(strata_check_store(missing, cfg, NULL), STRATA_ERR_MISUSE);
    check_message_has("out_json");

    /* A stale configuration. */
    strata_config *stale = new_config("{\"schema\": " V1 "}");
    strata_config_free(stale);
    CHECK_ERROR_CODE(strata_check_store(missing, stale, &out), STRATA_ERR_MISUSE);

    /* Invalid UTF-8 in the path is refused, never repaired into another name. */
    out = (char *)&out;
    CHECK_ERROR_CODE(strata_check_store("store\xff.db", cfg, &out), STRATA_ERR_INVALID);
    CHECK(out == NULL);
    check_message_has("UTF-8");

    /* An in-memory configuration has no store file to check. */
    CHECK_ERROR_CODE(strata_check_store(missing, memory, &out), STRATA_ERR_INVALID);
    check_error_path("/inMemory");

    /* ":memory:" is not a store path. */
    CHECK_ERROR_CODE(strata_check_store(":memory:", cfg, &out), STRATA_ERR_INVALID);
    CHECK(out == NULL);
    check_message_has(":memory:");

    if (check_postgres()) {
        /* A missing schema is no error on PostgreSQL (strata.h): "compatible", no stored
           version, opening would create the store; and the check creates nothing. */
        out = (char *)&out;
        CHECK_STATUS(strata_check_store(missing, cfg, &out));
        CHECK(out != NULL && out != (char *)&out);
        json_object *o = parse_json_or_die(out);
        strata_free(out);
        CHECK_STR_EQ(check_str_member(o, "status"), "compatible");
        json_object *stored = (json_object *)&stored;
        CHECK(json_object_object_get_ex(o, "storedVersion", &stored) && stored == NULL);   /* null */
        CHECK_STR_EQ(check_str_member(o, "currentVersion"), "1.0.0");
        json_object *stages = check_member(o, "stages");
        CHECK(stages != NULL && json_object_is_type(stages, json_type_array) && json_object_array_length(stages) == 0);
        const char *reason = check_str_member(o, "reason");
        CHECK(reason != NULL && strstr(reason, "creates the store") != NULL);
        json_object_put(o);
        /* The schema is still missing: a read-only open finds none (a file's !file_exists). */
        strata_config *read_only = new_config("{\"readOnly\": true, \"schema\": " V1 "}");
        strata_container *db = (strata_container *)&db;
        CHECK_ERROR_CODE(strata_open(missing, read_only, &db), STRATA_ERR_IO);
        CHECK(db == NULL);
        check_message_has("no schema");
        strata_config_free(read_only);
    } else {
        /* A missing file is an error, and the check creates nothing. */
        out = (char *)&out;
        strata_status st = strata_check_store(missing, cfg, &out);
        CHECK(st != STRATA_OK);
        CHECK(out == NULL);
        CHECK(!file_exists(missing));
        CHECK_ERROR_CODE(st, STRATA_ERR_IO);
    }

    strata_config_free(cfg);
    strata_config_free(memory);
    free(missing);
}

int main(void) {
    test_stage_hooks_bad_arguments();
    test_stage_hooks_ownership();
    test_stage_hooks_live_with_containers();
    test_progress();
    test_trace_failure_frees_userdata();
    test_infer_migration_bad_input();
    test_check_store_bad_input();
    printf("test_migration_api: ok\n");
    return 0;
}
