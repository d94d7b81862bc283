/*
 * test_library.c — strata.h section "Versions" and the library calls:
 * strata_version, strata_errstr, strata_last_error, strata_free.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include <strata.h>
#include "check.h"

/* Every status with the code string docs/JSON.md §6 gives it. */
static const struct {
    strata_status status;
    const char *code;
} statuses[] = {
    {STRATA_OK, "ok"},
    {STRATA_ERR_MISUSE, "misuse"},
    {STRATA_ERR_INVALID, "invalid"},
    {STRATA_ERR_SCHEMA, "schema"},
    {STRATA_ERR_NOT_FOUND, "not_found"},
    {STRATA_ERR_CONSTRAINT, "constraint"},
    {STRATA_ERR_VALIDATION, "validation"},
    {STRATA_ERR_INCOMPATIBLE_STORE, "incompatible_store"},
    {STRATA_ERR_MIGRATION, "migration"},
    {STRATA_ERR_CALLBACK, "callback"},
    {STRATA_ERR_BUSY, "busy"},
    {STRATA_ERR_READONLY, "readonly"},
    {STRATA_ERR_IO, "io"},
    {STRATA_ERR_CORRUPT, "corrupt"},
    {STRATA_ERR_NOMEM, "nomem"},
    {STRATA_ERR_INTERNAL, "internal"},
    {STRATA_ERR_HISTORY_EXPIRED, "history_token_expired"},
};
#define N_STATUSES (sizeof statuses / sizeof statuses[0])

static const char *json_string_field(json_object *obj, const char *key) {
    json_object *v = NULL;
    if (!json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, json_type_string)) return NULL;
    return json_object_get_string(v);
}

static void test_version(void) {
    const char *v = strata_version();
    CHECK(v != NULL);
    CHECK_STR_EQ(v, STRATA_VERSION);
    /* STRATA_VERSION_NUMBER agrees with the text. */
    int major = -1, minor = -1, patch = -1;
    CHECK(sscanf(STRATA_VERSION, "%d.%d.%d", &major, &minor, &patch) == 3);
    CHECK(major * 1000000 + minor * 1000 + patch == STRATA_VERSION_NUMBER);
    /* Static text: the same pointer every time. */
    CHECK(strata_version() == v);
    CHECK(STRATA_JSON_VERSION == 1);
}

static void test_errstr(void) {
    /* The status numbers never change. */
    for (size_t i = 0; i < N_STATUSES; i++) CHECK((int)statuses[i].status == (int)i);

    const char *unknown = "unknown status";
    for (size_t i = 0; i < N_STATUSES; i++) {
        const char *text = strata_errstr((int)statuses[i].status);
        CHECK(text != NULL);
        if (!text) continue;
        CHECK(strlen(text) > 0);
        CHECK(strcmp(text, unknown) != 0);
        /* Each status has its own description. */
        for (size_t j = 0; j < i; j++) CHECK(strcmp(text, strata_errstr((int)statuses[j].status)) != 0);
        /* Static text: stable across calls. */
        CHECK(strata_errstr((int)statuses[i].status) == text);
    }
    CHECK_STR_EQ(strata_errstr(STRATA_OK), "not an error");
    CHECK_STR_EQ(strata_errstr(STRATA_ERR_CONSTRAINT), "constraint violated");
    CHECK_STR_EQ(strata_errstr(-1), unknown);
    CHECK_STR_EQ(strata_errstr((int)N_STATUSES), unknown);
    CHECK_STR_EQ(strata_errstr(1000), unknown);
    CHECK_STR_EQ(strata_errstr(-2147483647 - 1), unknown);
    CHECK_STR_EQ(strata_errstr(2147483647), unknown);
}

/* The last error parses as a JSON object whose code and status are `status`'s. */
static void check_last_error_is(strata_status status, const char *code) {
    const char *text = strata_last_error();
    CHECK(text != NULL);
    json_object *err = parse_json_or_die(text);
    CHECK(json_object_is_type(err, json_type_object));
    CHECK_STR_EQ(json_string_field(err, "code"), code);
    json_object *st = NULL;
    CHECK(json_object_object_get_ex(err, "status", &st) && json_object_is_type(st, json_type_int));
    if (st) CHECK(json_object_get_int(st) == (int)status);
    const char *message = json_string_field(err, "message");
    CHECK(message != NULL && message[0] != '\0');
    json_object_put(err);
}

static void test_last_error(void) {
    /* Before any failing call on this thread. */
    check_last_error_is(STRATA_OK, "ok");

    /* A failure sets it... */
    strata_config *cfg = NULL;
    CHECK_ERROR_CODE(strata_config_new(NULL, &cfg), STRATA_ERR_MISUSE);
    CHECK(cfg == NULL);
    check_last_error_is(STRATA_ERR_MISUSE, "misuse");
    /* ...reading it twice gives the same text (borrowed, not consumed)... */
    const char *a = strata_last_error();
    const char *b = strata_last_error();
    CHECK_STR_EQ(a, b);

    CHECK_ERROR_CODE(strata_config_new("{", &cfg), STRATA_ERR_INVALID);
    check_last_error_is(STRATA_ERR_INVALID, "invalid");
    CHECK_ERROR_CODE(strata_config_new("{\"schema\": {\"version\": \"1.0.0\", \"entities\": [{\"name\": \"1bad\"}]}}", &cfg),
                     STRATA_ERR_SCHEMA);
    check_last_error_is(STRATA_ERR_SCHEMA, "schema");

    /* ...and a successful call resets it to "ok". */
    CHECK_STATUS(strata_config_new("{\"schema\": {\"version\": \"1.0.0\", \"entities\": "
                                   "[{\"name\": \"Note\", \"attributes\": [{\"name\": \"text\", \"type\": \"string\"}]}]}}",
                                   &cfg));
    CHECK(cfg != NULL);
    check_last_error_is(STRATA_OK, "ok");
    CHECK_STR_EQ(strata_last_error(), "{\"code\":\"ok\",\"status\":0,\"message\":\"not an error\"}");

    /* A successful call on a container and a context resets it too. */
    strata_container *db = NULL;
    CHECK_ERROR_CODE(strata_open(NULL, cfg, &db), STRATA_ERR_MISUSE);
    check_last_error_is(STRATA_ERR_MISUSE, "misuse");
    strata_config_free(cfg);
    CHECK_STATUS(strata_config_new("{\"inMemory\": true, \"schema\": {\"version\": \"1.0.0\", \"entities\": "
                                   "[{\"name\": \"Note\", \"attributes\": [{\"name\": \"text\", \"type\": \"string\"}]}]}}",
                                   &cfg));
    CHECK_STATUS(strata_open(NULL, cfg, &db));
    strata_config_free(cfg);
    strata_context *ctx = NULL;
    CHECK_STATUS(strata_context_new(db, &ctx));
    CHECK_ERROR_CODE(strata_insert(ctx, "Nope", "{}", NULL), STRATA_ERR_INVALID);
    check_last_error_is(STRATA_ERR_INVALID, "invalid");
    char *id = NULL;
    CHECK_STATUS(strata_insert(ctx, "Note", "{\"text\": \"hello\"}", &id));
    check_last_error_is(STRATA_OK, "ok");
    CHECK_STATUS(strata_save(ctx));
    check_last_error_is(STRATA_OK, "ok");
    strata_free(id);
    strata_context_free(ctx);
    strata_close(db);
}

static void test_free(void) {
    strata_free(NULL); /* ignored */
    strata_config_free(NULL);
    strata_close(NULL);
    strata_context_free(NULL);
    /* A string Strata returned is freed with strata_free (valgrind checks it). */
    strata_config *cfg = NULL;
    CHECK_STATUS(strata_config_new("{\"inMemory\": true, \"schema\": {\"version\": \"1.0.0\", \"entities\": "
                                   "[{\"name\": \"Note\", \"attributes\": [{\"name\": \"text\", \"type\": \"string\"}]}]}}",
                                   &cfg));
    strata_container *db = NULL;
    CHECK_STATUS(strata_open(NULL, cfg, &db));
    strata_config_free(cfg);
    char *schema = NULL;
    CHECK_STATUS(strata_container_schema(db, &schema));
    CHECK(schema != NULL);
    strata_free(schema);
    strata_close(db);
}

int main(void) {
    test_version();
    test_errstr();
    test_last_error();
    test_free();
    return 0;
}
