/*
 * fuzz_update.c — strata_update().
 *
 * Input: "<identifier>\n<patch JSON>" (without a newline: "PersonalTrip/1").
 * A failed update changes nothing; an updated object can still be read with
 * strata_get(); then strata_save() (see fuzz_common.h).
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = fuzz_text(data, size);
    if (text == NULL) return -1;
    const char *id, *json;
    fuzz_split(text, "PersonalTrip/1", &id, &json);
    strata_context *ctx = fuzz_world_begin();

    strata_status st = fuzz_check_status(strata_update(ctx, id, json), "strata_update");
    if (st != STRATA_OK) {
        fuzz_world_after_failure("strata_update");
    } else {
        fuzz_expect_readable(ctx, id, "updated");
        fuzz_world_after_success("strata_update");
    }
    free(text);
    return 0;
}
