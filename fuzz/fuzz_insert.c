/*
 * fuzz_insert.c — strata_insert().
 *
 * Input: "<entity>\n<object JSON>" (without a newline: entity "Trip").
 * A failed insert changes nothing and sets no identifier; an inserted object
 * can be read back with strata_get(); then strata_save() (see fuzz_common.h).
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = fuzz_text(data, size);
    if (text == NULL) return -1;
    const char *entity, *json;
    fuzz_split(text, "Trip", &entity, &json);
    strata_context *ctx = fuzz_world_begin();

    char *id = NULL;
    strata_status st = fuzz_check_status(strata_insert(ctx, entity, json, &id), "strata_insert");
    if (st != STRATA_OK) {
        if (id != NULL) FUZZ_FAIL("strata_insert failed but set out_id to %s", id);
        fuzz_world_after_failure("strata_insert");
    } else {
        if (id == NULL) FUZZ_FAIL("strata_insert succeeded without an identifier");
        fuzz_expect_readable(ctx, id, "inserted");
        strata_free(id);
        fuzz_world_after_success("strata_insert");
    }
    free(text);
    return 0;
}
