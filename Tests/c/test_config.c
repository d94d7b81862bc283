/*
 * test_config.c — strata.h section "Configuration": strata_config_new,
 * strata_config_free, from a schema and from a migration plan, with every
 * documented "Fails with" triggered.
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

/* printf into a new malloc'd string. */
static char *format(const char *fmt, const char *a, const char *b) {
    size_t n = strlen(fmt) + strlen(a) + (b ? strlen(b) : 0) + 1;
    char *s = malloc(n);
    if (!s) exit(1);
    snprintf(s, n, fmt, a, b ? b : "");
    return s;
}

static const char *string_field(json_object *obj, const char *key) {
    json_object *v = NULL;
    if (!obj || !json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, json_type_string)) return NULL;
    return json_object_get_string(v);
}

/* The last error has `code`, a non-empty message and, when given, this path. */
static void check_last_error(const char *code, const char *path) {
    json_object *err = parse_json_or_die(strata_last_error());
    CHECK_STR_EQ(string_field(err, "code"), code);
    const char *message = string_field(err, "message");
    CHECK(message != NULL && message[0] != '\0');
    if (path) CHECK_STR_EQ(string_field(err, "path"), path);
    json_object_put(err);
}

/* Opens an in-memory container from `cfg` and returns its schema, parsed. */
static json_object *container_schema(strata_config *cfg) {
    strata_container *db = NULL;
    CHECK_STATUS(strata_open(NULL, cfg, &db));
    char *text = NULL;
    CHECK_STATUS(strata_container_schema(db, &text));
    json_object *schema = parse_json_or_die(text);
    strata_free(text);
    strata_close(db);
    return schema;
}

static const char *schema_version(json_object *schema) { return string_field(schema, "version"); }

static void test_from_schema(void) {
    char *schema = check_read_file(FIXTURES "trips.json");
    char *json = format("{\"schema\": %s, \"inMemory\": true}", schema, NULL);
    strata_config *cfg = NULL;
    CHECK_STATUS(strata_config_new(json, &cfg));
    CHECK(cfg != NULL);
    check_last_error("ok", NULL);

    /* The container reports the schema as declared. */
    json_object *declared = parse_json_or_die(schema);
    json_object *reported = container_schema(cfg);
    CHECK(json_object_equal(declared, reported));
    json_object_put(declared);
    json_object_put(reported);

    /* A configuration opens any number of containers, and may be freed first. */
    strata_container *a = NULL, *b = NULL;
    CHECK_STATUS(strata_open(NULL, cfg, &a));
    CHECK_STATUS(strata_open(NULL, cfg, &b));
    strata_config_free(cfg);
    CHECK(a != NULL && b != NULL && a != b);
    strata_context *ctx = NULL;
    CHECK_STATUS(strata_context_new(a, &ctx));
    strata_context_free(ctx);
    strata_close(a);
    strata_close(b);

    /* Every documented option, with a value of the right type. */
    char *all = format("{\"schema\": %s, \"inMemory\": false, \"readOnly\": false, \"history\": false,"
                       " \"externalStorageThreshold\": 0}", schema, NULL);
    CHECK_STATUS(strata_config_new(all, &cfg));
    CHECK(cfg != NULL);
    strata_config_free(cfg);
    free(all);
    free(json);
    free(schema);
}

static void test_from_migration_plan(void) {
    char *v1 = check_read_file(FIXTURES "trips.json");
    char *v2 = check_read_file(FIXTURES "trips_changed.json");

    /* A plan of one schema. */
    char *json = format("{\"inMemory\": true, \"migrationPlan\": {\"schemas\": [%s], \"stages\": []}}", v1, NULL);
    strata_config *cfg = NULL;
    CHECK_STATUS(strata_config_new(json, &cfg));
    CHECK(cfg != NULL);
    json_object *reported = container_schema(cfg);
    CHECK_STR_EQ(schema_version(reported), "1.0.0");
    json_object_put(reported);
    strata_config_free(cfg);
    free(json);

    /* Two schemas: the last one is current. */
    json = format("{\"inMemory\": true, \"migrationPlan\": {\"schemas\": [%s, %s],"
                  " \"stages\": [{\"name\": \"v1toV2\", \"kind\": \"custom\", \"from\": \"1.0.0\", \"to\": \"2.0.0\"}]}}",
                  v1, v2);
    CHECK_STATUS(strata_config_new(json, &cfg));
    CHECK(cfg != NULL);
    reported = container_schema(cfg);
    CHECK_STR_EQ(schema_version(reported), "2.0.0");
    json_object *declared = parse_json_or_die(v2);
    CHECK(json_object_equal(declared, reported));
    json_object_put(declared);
    json_object_put(reported);
    strata_config_free(cfg);
    free(json);

    /* A store of the plan's older version runs the plan's stages when opened with it; a stage
       that cannot be inferred (v1toV2 changes a type) fails naming the stage, and the store
       stays at version 1.0.0. */
    char *path = test_store_path("config_plan.store");
    json = format("{\"schema\": %s}", v1, NULL);
    strata_container *db = check_open(json, path);
    strata_close(db);
    free(json);
    json = format("{\"migrationPlan\": {\"schemas\": [%s, %s],"
                  " \"stages\": [{\"name\": \"v1toV2\", \"kind\": \"custom\", \"from\": \"1.0.0\", \"to\": \"2.0.0\"}]}}",
                  v1, v2);
    CHECK_STATUS(strata_config_new(json, &cfg));
    db = (strata_container *)&db;
    CHECK_ERROR_CODE(strata_open(path, cfg, &db), STRATA_ERR_MIGRATION);
    CHECK(db == NULL);
    check_last_error("migration", NULL);
    CHECK(strstr(strata_last_error(), "\"stage\":\"v1toV2\"") != NULL);
    CHECK(strstr(strata_last_error(), "changes type from string to int") != NULL);
    strata_config_free(cfg);
    free(json);
    json = format("{\"schema\": %s}", v1, NULL);
    db = check_open(json, path);
    strata_close(db);
    free(json);
    free(path);

    /* A bad schema inside a plan names its place in the plan. */
    json = format("{\"migrationPlan\": {\"schemas\": [%s, {\"version\": \"2.0.0\", \"entities\": "
                  "[{\"name\": \"T\", \"attributes\": [{\"name\": \"a\", \"type\": \"strin\"}]}]}]}}", v1, NULL);
    cfg = (strata_config *)&cfg; /* not NULL: the call must clear it */
    CHECK_ERROR_CODE(strata_config_new(json, &cfg), STRATA_ERR_SCHEMA);
    CHECK(cfg == NULL);
    check_last_error("schema", "/migrationPlan/schemas/1/entities/0/attributes/0/type");
    free(json);

    /* A plan without schemas is invalid. */
    cfg = NULL;
    CHECK_ERROR_CODE(strata_config_new("{\"migrationPlan\": {\"schemas\": []}}", &cfg), STRATA_ERR_INVALID);
    CHECK(cfg == NULL);
    check_last_error("invalid", NULL);
    free(v1);
    free(v2);
}

/* The last error's message, copied (free() it). */
/*
 * "history" (on by default) and "author": both values of "history" open a
 * writable store; "author" is 1-256 bytes of text, anything else is refused
 * at "/author".
 */
static void test_history_options(void) {
    static const char *const good[] = {
        "{\"inMemory\": true, \"history\": false, \"schema\": {\"version\": \"1\", \"entities\": []}}",
        "{\"inMemory\": true, \"history\": true, \"schema\": {\"version\": \"1\", \"entities\": []}}",
        "{\"inMemory\": true, \"author\": \"app\", \"schema\": {\"version\": \"1\", \"entities\": []}}",
        "{\"inMemory\": true, \"history\": false, \"author\": \"widget\", \"schema\": {\"version\": \"1\", \"entities\": []}}",
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        strata_config *cfg = NULL;
        CHECK_STATUS(strata_config_new(good[i], &cfg));
        CHECK(cfg != NULL);
        strata_container *db = NULL;
        CHECK_STATUS(strata_open(NULL, cfg, &db));
        strata_close(db);
        strata_config_free(cfg);
    }

    char *long_author = check_strf("{\"schema\": {\"version\": \"1\", \"entities\": []}, \"author\": \"%0300d\"}", 7);
    const char *const bad[] = {
        "{\"schema\": {\"version\": \"1\", \"entities\": []}, \"author\": \"\"}",
        "{\"schema\": {\"version\": \"1\", \"entities\": []}, \"author\": 7}",
        long_author,
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        strata_config *cfg = (strata_config *)&cfg; /* not NULL: the call must clear it */
        CHECK_ERROR_CODE(strata_config_new(bad[i], &cfg), STRATA_ERR_INVALID);
        CHECK(cfg == NULL);
        check_last_error("invalid", "/author");
    }
    free(long_author);
    strata_config *cfg = NULL;
    CHECK_ERROR_CODE(strata_config_new("{\"schema\": {\"version\": \"1\", \"entities\": []}, \"history\": \"yes\"}", &cfg),
                     STRATA_ERR_INVALID);
    check_last_error("invalid", "/history");
}

static void test_misuse(void) {
    strata_config *cfg = (strata_config *)&cfg;
    CHECK_ERROR_CODE(strata_config_new(NULL, &cfg), STRATA_ERR_MISUSE);
    CHECK(cfg == NULL);
    check_last_error("misuse", NULL);
    CHECK_ERROR_CODE(strata_config_new("{\"schema\": {\"version\": \"1\", \"entities\": []}}", NULL), STRATA_ERR_MISUSE);
    check_last_error("misuse", NULL);
    CHECK_ERROR_CODE(strata_config_new(NULL, NULL), STRATA_ERR_MISUSE);
    check_last_error("misuse", NULL);

    /* A freed configuration is a stale handle for strata_open. */
    CHECK_STATUS(strata_config_new("{\"inMemory\": true, \"schema\": {\"version\": \"1\", \"entities\": "
                                   "[{\"name\": \"A\", \"attributes\": [{\"name\": \"x\", \"type\": \"int\"}]}]}}", &cfg));
    strata_config_free(cfg);
    strata_container *db = (strata_container *)&db;
    CHECK_ERROR_CODE(strata_open(NULL, cfg, &db), STRATA_ERR_MISUSE);
    CHECK(db == NULL);
    check_last_error("misuse", NULL);
}

/* Configurations that are not valid: STRATA_ERR_INVALID with a path. */
static void test_invalid(void) {
    static const struct {
        const char *json;
        const char *path; /* NULL: not checked */
    } cases[] = {
        {"", NULL},
        {"{", NULL},
        {"[]", NULL},
        {"null", NULL},
        {"{\"schema\": {\"version\": \"1\", \"entities\": []}} trailing", NULL},
        {"{\"schema\": {\"version\": \"1\", \"entities\": [],}}", NULL},
        {"{}", NULL},
        {"{\"inMemory\": true}", NULL},
        {"{\"schema\": {\"version\": \"1\", \"entities\": []}, \"migrationPlan\": {\"schemas\": [{\"version\": \"1\", \"entities\": []}]}}", NULL},
        {"{\"schema\": {\"version\": \"1\", \"entities\": []}, \"inMemroy\": true}", "/inMemroy"},
        {"{\"schema\": {\"version\": \"1\", \"entities\": []}, \"inMemory\": \"yes\"}", "/inMemory"},
        {"{\"schema\": {\"version\": \"1\", \"entities\": []}, \"readOnly\": 1}", "/readOnly"},
        {"{\"schema\": {\"version\": \"1\", \"entities\": []}, \"author\": 7}", "/author"},
        {"{\"schema\": {\"version\": \"1\", \"entities\": []}, \"externalStorageThreshold\": -1}", "/externalStorageThreshold"},
        {"{\"schema\": {\"version\": \"1\", \"entities\": []}, \"externalStorageThreshold\": \"big\"}", "/externalStorageThreshold"},
        {"{\"schema\": {\"version\": \"1\", \"entities\": []}, \"inMemory\": true, \"inMemory\": false}", NULL},
        /* Migration plans: unique versions, unique stage names, stages from one version to the next. */
        {"{\"migrationPlan\": {\"schemas\": [{\"version\": \"1\", \"entities\": []}, {\"version\": \"1\", \"entities\": []}]}}",
         "/migrationPlan/schemas/1/version"},
        {"{\"migrationPlan\": {\"schemas\": [{\"version\": \"1\", \"entities\": []}, {\"version\": \"2\", \"entities\": []}],"
         " \"stages\": [{\"name\": \"a\", \"kind\": \"lightweight\", \"from\": \"1\", \"to\": \"3\"}]}}",
         "/migrationPlan/stages/0/to"},
        {"{\"migrationPlan\": {\"schemas\": [{\"version\": \"1\", \"entities\": []}, {\"version\": \"2\", \"entities\": []}],"
         " \"stages\": [{\"name\": \"a\", \"kind\": \"custom\", \"from\": \"1\", \"to\": \"2\", \"didMigrate\": []}]}}",
         "/migrationPlan/stages/0/didMigrate"},
        {"{\"migrationPlan\": {\"schemas\": [{\"version\": \"1\", \"entities\": []}], \"stages\": {}}}", "/migrationPlan/stages"},
    };
    int wrong = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        strata_config *cfg = (strata_config *)&cfg;
        strata_status st = strata_config_new(cases[i].json, &cfg);
        CHECK(cfg == NULL || st == STRATA_OK);
        if (st != STRATA_ERR_INVALID) {
            /* Report every wrong case, then fail once. */
            fprintf(stderr, "invalid case %zu returned %d, expected STRATA_ERR_INVALID: %s\n  %s\n", i, (int)st,
                    cases[i].json, strata_last_error());
            wrong++;
        } else {
            check_last_error("invalid", cases[i].path);
        }
        if (st == STRATA_OK) strata_config_free(cfg);
    }
    CHECK(wrong == 0);
}

/* Schemas that are not valid: STRATA_ERR_SCHEMA naming the JSON path. */
static void test_schema_errors(void) {
#define ATTR_X "{\"name\": \"x\", \"type\": \"int\"}"
    static const struct {
        const char *schema;
        const char *path; /* NULL: not checked */
    } cases[] = {
        /* unknown key (schema, entity, attribute, relationship) */
        {"{\"version\": \"1\", \"entities\": [], \"extra\": 1}", "/schema/extra"},
        {"{\"version\": \"1\", \"entities\": [{\"name\": \"A\", \"atributes\": []}]}", "/schema/entities/0/atributes"},
        {"{\"version\": \"1\", \"entities\": [{\"name\": \"A\", \"attributes\": [{\"name\": \"x\", \"type\": \"int\", \"optinal\": true}]}]}",
         "/schema/entities/0/attributes/0/optinal"},
        {"{\"version\": \"1\", \"entities\": [{\"name\": \"A\", \"attributes\": [" ATTR_X "], \"relationships\": "
         "[{\"name\": \"b\", \"destination\": \"A\", \"tomany\": true}]}]}",
         "/schema/entities/0/relationships/0/tomany"},
        /* unknown type */
        {"{\"version\": \"1\", \"entities\": [{\"name\": \"A\", \"attributes\": [{\"name\": \"x\", \"type\": \"integer\"}]}]}",
         "/schema/entities/0/attributes/0/type"},
        /* missing required keys */
        {"{\"entities\": []}", NULL},
        {"{\"version\": \"1\"}", NULL},
        {"{\"version\": \"1\", \"entities\": [{\"name\": \"A\", \"attributes\": [{\"name\": \"x\"}]}]}", NULL},
        /* wrong key types */
        {"{\"version\": 1, \"entities\": []}", "/schema/version"},
        {"{\"version\": \"1\", \"entities\": {}}", "/schema/entities"},
        {"{\"version\": \"1\", \"entities\": [{\"name\": \"A\", \"attributes\": [{\"name\": \"x\", \"type\": \"int\", \"optional\": \"no\"}]}]}",
         "/schema/entities/0/attributes/0/optional"},
        /* duplicate names */
        {"{\"version\": \"1\", \"entities\": [{\"name\": \"A\", \"attributes\": [" ATTR_X "]}, {\"name\": \"A\", \"attributes\": [" ATTR_X "]}]}",
         NULL},
        {"{\"version\": \"1\", \"entities\": [{\"name\": \"A\", \"attributes\": [" ATTR_X ", " ATTR_X "]}]}", NULL},
        /* bad identifiers */
        {"{\"version\": \"1\", \"entities\": [{\"name\": \"1A\", \"attributes\": [" ATTR_X "]}]}", "/schema/entities/0/name"},
        {"{\"version\": \"1\", \"entities\": [{\"name\": \"A-B\", \"attributes\": [" ATTR_X "]}]}", "/schema/entities/0/name"},
        {"{\"version\": \"1\", \"entities\": [{\"name\": \"sqlite_x\", \"attributes\": [" ATTR_X "]}]}", "/schema/entities/0/name"},
        {"{\"version\": \"1\", \"entities\": [{\"name\": \"strata_x\", \"attributes\": [" ATTR_X "]}]}", "/schema/entities/0/name"},
        {"{\"version\": \"1\", \"entities\": [{\"name\": \"A\", \"attributes\": [{\"name\": \"\", \"type\": \"int\"}]}]}",
         "/schema/entities/0/attributes/0/name"},
        /* unknown destination */
        {"{\"version\": \"1\", \"entities\": [{\"name\": \"A\", \"attributes\": [" ATTR_X "], \"relationships\": "
         "[{\"name\": \"b\", \"destination\": \"B\"}]}]}",
         "/schema/entities/0/relationships/0/destination"},
        /* inverse mismatch: the named inverse does not exist / does not point back */
        {"{\"version\": \"1\", \"entities\": ["
         "{\"name\": \"A\", \"attributes\": [" ATTR_X "], \"relationships\": [{\"name\": \"bs\", \"destination\": \"B\", \"toMany\": true, \"inverse\": \"nope\"}]},"
         "{\"name\": \"B\", \"attributes\": [" ATTR_X "], \"relationships\": [{\"name\": \"a\", \"destination\": \"A\"}]}]}",
         NULL},
        {"{\"version\": \"1\", \"entities\": ["
         "{\"name\": \"A\", \"attributes\": [" ATTR_X "], \"relationships\": [{\"name\": \"bs\", \"destination\": \"B\", \"toMany\": true, \"inverse\": \"c\"}]},"
         "{\"name\": \"B\", \"attributes\": [" ATTR_X "], \"relationships\": [{\"name\": \"c\", \"destination\": \"C\"}]},"
         "{\"name\": \"C\", \"attributes\": [" ATTR_X "]}]}",
         NULL},
        /* inheritance: unknown superentity, cycle */
        {"{\"version\": \"1\", \"entities\": [{\"name\": \"A\", \"superentity\": \"Z\", \"attributes\": [" ATTR_X "]}]}",
         "/schema/entities/0/superentity"},
        {"{\"version\": \"1\", \"entities\": [{\"name\": \"A\", \"superentity\": \"B\", \"attributes\": [" ATTR_X "]},"
         "{\"name\": \"B\", \"superentity\": \"A\"}]}",
         NULL},
        /* a property name repeated in a hierarchy */
        {"{\"version\": \"1\", \"entities\": [{\"name\": \"A\", \"attributes\": [" ATTR_X "]},"
         "{\"name\": \"B\", \"superentity\": \"A\", \"attributes\": [" ATTR_X "]}]}",
         NULL},
        /* transient without default */
        {"{\"version\": \"1\", \"entities\": [{\"name\": \"A\", \"attributes\": [" ATTR_X ", {\"name\": \"t\", \"type\": \"int\", \"transient\": true}]}]}",
         "/schema/entities/0/attributes/1/transient"},
        /* default outside enum, default of the wrong type */
        {"{\"version\": \"1\", \"entities\": [{\"name\": \"A\", \"attributes\": [{\"name\": \"c\", \"type\": \"string\", \"enum\": [\"a\", \"b\"], \"default\": \"z\"}]}]}",
         "/schema/entities/0/attributes/0/default"},
        {"{\"version\": \"1\", \"entities\": [{\"name\": \"A\", \"attributes\": [{\"name\": \"c\", \"type\": \"int\", \"default\": \"zero\"}]}]}",
         "/schema/entities/0/attributes/0/default"},
        /* enum on a type without enums */
        {"{\"version\": \"1\", \"entities\": [{\"name\": \"A\", \"attributes\": [{\"name\": \"c\", \"type\": \"bool\", \"enum\": [true]}]}]}",
         NULL},
        /* externalStorage on a non-data attribute */
        {"{\"version\": \"1\", \"entities\": [{\"name\": \"A\", \"attributes\": [{\"name\": \"c\", \"type\": \"string\", \"externalStorage\": true}]}]}",
         NULL},
        /* unique constraint on a to-many, and on an unknown name */
        {"{\"version\": \"1\", \"entities\": ["
         "{\"name\": \"A\", \"attributes\": [" ATTR_X "], \"relationships\": [{\"name\": \"bs\", \"destination\": \"B\", \"toMany\": true}],"
         " \"uniqueConstraints\": [[\"bs\"]]},"
         "{\"name\": \"B\", \"attributes\": [" ATTR_X "]}]}",
         NULL},
        {"{\"version\": \"1\", \"entities\": [{\"name\": \"A\", \"attributes\": [" ATTR_X "], \"uniqueConstraints\": [[\"y\"]]}]}", NULL},
        {"{\"version\": \"1\", \"entities\": [{\"name\": \"A\", \"attributes\": [" ATTR_X "], \"indexes\": [[\"y\"]]}]}", NULL},
        /* bad delete rule, negative count */
        {"{\"version\": \"1\", \"entities\": [{\"name\": \"A\", \"attributes\": [" ATTR_X "], \"relationships\": "
         "[{\"name\": \"b\", \"destination\": \"A\", \"deleteRule\": \"explode\"}]}]}",
         "/schema/entities/0/relationships/0/deleteRule"},
        {"{\"version\": \"1\", \"entities\": [{\"name\": \"A\", \"attributes\": [" ATTR_X "], \"relationships\": "
         "[{\"name\": \"bs\", \"destination\": \"A\", \"toMany\": true, \"minimumModelCount\": -1}]}]}",
         "/schema/entities/0/relationships/0/minimumModelCount"},
    };
#undef ATTR_X
    int wrong = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *json = format("{\"schema\": %s}", cases[i].schema, NULL);
        strata_config *cfg = (strata_config *)&cfg;
        strata_status st = strata_config_new(json, &cfg);
        CHECK(cfg == NULL || st == STRATA_OK);
        if (st != STRATA_ERR_SCHEMA) {
            fprintf(stderr, "schema case %zu returned %d, expected STRATA_ERR_SCHEMA: %s\n  %s\n", i, (int)st,
                    cases[i].schema, strata_last_error());
            wrong++;
        } else {
            check_last_error("schema", cases[i].path);
            /* Every schema error names a place in the input. */
            json_object *err = parse_json_or_die(strata_last_error());
            const char *path = string_field(err, "path");
            CHECK(path != NULL && strncmp(path, "/schema", 7) == 0);
            json_object_put(err);
        }
        if (st == STRATA_OK) strata_config_free(cfg);
        free(json);
    }
    CHECK(wrong == 0);
}

/*
 * Strict input the current library accepts (reported; run last so the rest
 * of the file runs first): null is not a bool or a string ("strict in",
 * docs/JSON.md: a key of the wrong type is an error), and invalid UTF-8 is
 * an error (strata.h, STRINGS).
 */
static void test_strict_input(void) {
    static const char *const cases[] = {
        "{\"schema\": {\"version\": \"1\", \"entities\": []}, \"history\": null}",
        "{\"schema\": {\"version\": \"1\", \"entities\": []}, \"inMemory\": null}",
        "{\"schema\": {\"version\": \"1\", \"entities\": []}, \"author\": null}",
        /* invalid UTF-8 is an error (strata.h, STRINGS) */
        "{\"schema\": {\"version\": \"1\", \"entities\": []}, \"author\": \"\xff\xfe\"}",
        "{\"schema\": {\"version\": \"1\", \"entities\": []}, \"author\": \"\xc3\"}",
        "{\"schema\": {\"version\": \"1\", \"entities\": []}, \"author\": \"\xed\xa0\x80\"}",
    };
    int wrong = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        strata_config *cfg = NULL;
        strata_status st = strata_config_new(cases[i], &cfg);
        if (st != STRATA_ERR_INVALID) {
            fprintf(stderr, "strict input case %zu returned %d, expected STRATA_ERR_INVALID: %s\n", i, (int)st, cases[i]);
            wrong++;
        }
        strata_config_free(cfg);
    }
    CHECK(wrong == 0);
}

int main(void) {
    test_from_schema();
    test_from_migration_plan();
    test_history_options();
    test_misuse();
    test_invalid();
    test_schema_errors();
    test_strict_input();
    return 0;
}
