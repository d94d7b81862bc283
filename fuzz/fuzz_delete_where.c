/*
 * fuzz_delete_where.c — strata_delete_where() and, for inputs of odd length,
 * strata_delete_where_count() (a failure reports a count of 0).
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

    int64_t count = -1;
    strata_status st = size % 2 ? fuzz_check_status(strata_delete_where_count(ctx, entity, json, &count), "strata_delete_where_count")
                                : fuzz_check_status(strata_delete_where(ctx, entity, json), "strata_delete_where");
    if (size % 2 && (st == STRATA_OK ? count < 0 : count != 0))
        FUZZ_FAIL("strata_delete_where_count returned %d with a count of %lld", (int)st, (long long)count);
    if (st != STRATA_OK) fuzz_world_after_failure("strata_delete_where");
    else fuzz_world_after_success("strata_delete_where");
    free(text);
    return 0;
}
