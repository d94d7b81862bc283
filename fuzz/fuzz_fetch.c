/*
 * fuzz_fetch.c — fetch descriptors: strata_fetch(), strata_fetch_count(),
 * strata_fetch_identifiers() and strata_explain().
 *
 * Input: a fetch descriptor (JSON). The four calls must agree (see
 * fuzz_descriptor in fuzz_common.h); a failure changes nothing.
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = fuzz_text(data, size);
    if (text == NULL) return -1;
    strata_context *ctx = fuzz_world_begin();
    fuzz_descriptor(ctx, text);
    free(text);
    return 0;
}
