/*
 * fuzz_update_where.c — strata_update_where().
 *
 * Input: "<entity>\n<request JSON>" (without a newline: entity "Trip"); the request
 * is {"predicate": ..., "bindings": {...}, "includeSubentities": ..., "set": {...}}.
 * A failure changes nothing and reports a count of 0; after a success the count is
 * not negative, then strata_save() (see fuzz_common.h).
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = fuzz_text(data, size);
    if (text == NULL) return -1;
    const char *entity, *json;
    fuzz_split(text, "Trip", &entity, &json);
    strata_context *ctx = fuzz_world_begin();

    int64_t count = -1;
    strata_status st = fuzz_check_status(strata_update_where(ctx, entity, json, &count), "strata_update_where");
    if (st != STRATA_OK) {
        if (count != 0) FUZZ_FAIL("strata_update_where failed but reported %lld objects", (long long)count);
        fuzz_world_after_failure("strata_update_where");
    } else {
        if (count < 0) FUZZ_FAIL("strata_update_where reported %lld objects", (long long)count);
        fuzz_world_after_success("strata_update_where");
    }
    free(text);
    return 0;
}
