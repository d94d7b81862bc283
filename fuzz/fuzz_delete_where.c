/*
 * fuzz_delete_where.c — strata_delete_where().
 *
 * Input: "<entity>\n<predicate JSON>" (without a newline: entity "Trip"); the
 * predicate is a JSON tree, #Predicate text as a JSON string, or
 * {"predicate": ..., "bindings": {...}, "includeSubentities": ...}.
 * A failure changes nothing; after a success, strata_save() (see fuzz_common.h).
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = fuzz_text(data, size);
    if (text == NULL) return -1;
    const char *entity, *json;
    fuzz_split(text, "Trip", &entity, &json);
    strata_context *ctx = fuzz_world_begin();

    strata_status st = fuzz_check_status(strata_delete_where(ctx, entity, json), "strata_delete_where");
    if (st != STRATA_OK) fuzz_world_after_failure("strata_delete_where");
    else fuzz_world_after_success("strata_delete_where");
    free(text);
    return 0;
}
