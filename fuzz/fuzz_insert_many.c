/*
 * fuzz_insert_many.c — strata_insert_many().
 *
 * Input: "<entity>\n<array JSON>" (without a newline: entity "Trip").
 * All or nothing: a failure changes nothing and sets no identifiers; a
 * success gives a JSON array of identifiers, each readable with strata_get();
 * then strata_save() (see fuzz_common.h).
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = fuzz_text(data, size);
    if (text == NULL) return -1;
    const char *entity, *json;
    fuzz_split(text, "Trip", &entity, &json);
    strata_context *ctx = fuzz_world_begin();

    char *ids = NULL;
    strata_status st = fuzz_check_status(strata_insert_many(ctx, entity, json, &ids), "strata_insert_many");
    if (st != STRATA_OK) {
        if (ids != NULL) FUZZ_FAIL("strata_insert_many failed but set out_ids to %s", ids);
        fuzz_world_after_failure("strata_insert_many");
    } else {
        if (ids == NULL) FUZZ_FAIL("strata_insert_many succeeded without identifiers");
        struct json_object *arr = json_tokener_parse(ids);
        if (arr == NULL || !json_object_is_type(arr, json_type_array))
            FUZZ_FAIL("strata_insert_many gave identifiers that are not a JSON array: %s", ids);
        for (size_t i = 0; i < json_object_array_length(arr); i++) {
            struct json_object *v = json_object_array_get_idx(arr, i);
            if (!json_object_is_type(v, json_type_string))
                FUZZ_FAIL("strata_insert_many gave a non-string identifier: %s", ids);
            fuzz_expect_readable(ctx, json_object_get_string(v), "inserted");
        }
        json_object_put(arr);
        strata_free(ids);
        fuzz_world_after_success("strata_insert_many");
    }
    free(text);
    return 0;
}
