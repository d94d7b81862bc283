/*
 * fuzz_config.c — strata_config_new() and strata_open() (in memory).
 *
 * Input: a configuration JSON ({"schema": ...} or {"migrationPlan": ...} and
 * options). A configuration that is accepted is opened with a NULL path (an
 * in-memory store when it says "inMemory": true); an open store must give
 * its schema (strata_container_schema), and that schema, configured again,
 * must be accepted and open too.
 */
#include "fuzz_common.h"

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
    FUZZ_REQUIRE(strata_save(ctx));
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
