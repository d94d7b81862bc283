/*
 * fuzz_config.c — strata_config_new() and strata_open() (in memory).
 *
 * Input: a configuration JSON ({"schema": ...} or {"migrationPlan": ...} and
 * options). A configuration that is accepted is opened with a NULL path (an
 * in-memory store when it says "inMemory": true); an open store must give
 * its schema (strata_container_schema), count every entity and take an
 * insert of "{}" and a save without STRATA_ERR_INTERNAL; the reported
 * schema, configured again, must be accepted and open too.
 */
#include "fuzz_common.h"

/*
 * Every entity of an open store can be fetched and counted; inserting an
 * object with default values (which may fail validation) and saving never
 * give STRATA_ERR_INTERNAL.
 */
static void use_every_entity(strata_context *ctx, const char *schema) {
    struct json_object *root = json_tokener_parse(schema), *entities = NULL;
    if (root == NULL || !json_object_object_get_ex(root, "entities", &entities) ||
        !json_object_is_type(entities, json_type_array))
        FUZZ_FAIL("strata_container_schema gave no \"entities\" array: %s", schema);
    for (size_t i = 0; i < json_object_array_length(entities) && i < 16; i++) {
        struct json_object *entity = json_object_array_get_idx(entities, i), *name = NULL;
        if (!json_object_object_get_ex(entity, "name", &name) || !json_object_is_type(name, json_type_string))
            FUZZ_FAIL("entity %zu of the reported schema has no name: %s", i, schema);
        char *quoted = fuzz_json_quote(json_object_get_string(name));
        char *descriptor = fuzz_concat3("{\"entity\": ", quoted, "}");
        int64_t count = -1;
        strata_status st = fuzz_check_status(strata_fetch_count(ctx, descriptor, &count), "strata_fetch_count");
        if (st != STRATA_OK || count != 0)
            FUZZ_FAIL("a new store cannot count its entity %s (status %d, count %lld): %s",
                      quoted, (int)st, (long long)count, strata_last_error());
        char *id = NULL;
        if (fuzz_check_status(strata_insert(ctx, json_object_get_string(name), "{}", &id), "strata_insert") == STRATA_OK)
            fuzz_check_status(strata_save(ctx), "strata_save");
        strata_free(id);
        FUZZ_REQUIRE(strata_rollback(ctx));
        free(descriptor);
        free(quoted);
    }
    json_object_put(root);
}

static void open_and_reopen(const char *config_json) {
    strata_config *cfg = NULL;
    strata_status st = fuzz_check_status(strata_config_new(config_json, &cfg), "strata_config_new");
    if (st != STRATA_OK) {
        if (cfg != NULL) FUZZ_FAIL("strata_config_new failed but set its out-parameter");
        return;
    }
    if (cfg == NULL) FUZZ_FAIL("strata_config_new succeeded without a config");

    strata_container *db = NULL;
    st = fuzz_check_status(strata_open(NULL, cfg, &db), "strata_open");
    strata_config_free(cfg);
    if (st != STRATA_OK) {
        if (db != NULL) FUZZ_FAIL("strata_open failed but set its out-parameter");
        return;
    }
    if (db == NULL) FUZZ_FAIL("strata_open succeeded without a container");

    char *schema = NULL;
    FUZZ_REQUIRE(strata_container_schema(db, &schema));
    strata_context *ctx = NULL;
    FUZZ_REQUIRE(strata_context_new(db, &ctx));
    use_every_entity(ctx, schema);
    strata_context_free(ctx);
    strata_close(db);

    /* The schema a store reports is a valid schema. */
    char *again = fuzz_concat3("{\"inMemory\": true, \"schema\": ", schema, "}");
    strata_status st2 = fuzz_check_status(strata_config_new(again, &cfg), "strata_config_new (reported schema)");
    if (st2 != STRATA_OK)
        FUZZ_FAIL("the schema strata_container_schema reported is refused: %s\n  schema: %s",
                  strata_last_error(), schema);
    st2 = fuzz_check_status(strata_open(NULL, cfg, &db), "strata_open (reported schema)");
    if (st2 != STRATA_OK)
        FUZZ_FAIL("the schema strata_container_schema reported does not open: %s\n  schema: %s",
                  strata_last_error(), schema);
    strata_config_free(cfg);
    strata_close(db);
    free(again);
    strata_free(schema);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = fuzz_text(data, size);
    if (text == NULL) return -1;
    open_and_reopen(text);
    free(text);
    return 0;
}
