/*
 * fuzz_predicate.c — #Predicate text.
 *
 * Input: "<entity>\n<#Predicate text>" (without a newline: entity "Trip").
 * The text goes, as a JSON string, into a fetch descriptor with fixed
 * bindings (below), run through the four fetch calls (fuzz_descriptor), and
 * into strata_delete_where() with the same bindings, which must accept
 * exactly the predicates the fetch accepts. After a successful delete_where
 * the predicate matches nothing among the context's objects; then
 * strata_save() (see fuzz_common.h).
 */
#include "fuzz_common.h"

#define BINDINGS                                                                   \
    "{\"now\": \"2026-11-22T00:00:00Z\", \"currentDate\": \"2026-11-22T00:00:00Z\","  \
    " \"searchText\": \"zur\", \"q\": \"a\", \"s\": \"Trip\", \"flag\": true, \"n\": 3," \
    " \"x\": 2.5, \"none\": null, \"names\": [\"Zurich\", \"Paris\"],"                \
    " \"lo\": \"2026-01-01T00:00:00Z\", \"hi\": {\"date\": \"2027-01-01T00:00:00Z\"},"  \
    " \"place\": \"LivingAccommodation/1\", \"amount\": {\"decimal\": \"12.5\"},"       \
    " \"uid\": {\"uuid\": \"123e4567-e89b-12d3-a456-426614174000\"},"                  \
    " \"blob\": {\"data\": \"AAEC\"}, \"link\": {\"url\": \"https://example.com\"}}"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = fuzz_text(data, size);
    if (text == NULL) return -1;
    const char *entity, *predicate;
    fuzz_split(text, "Trip", &entity, &predicate);
    strata_context *ctx = fuzz_world_begin();

    char *quoted_entity = fuzz_json_quote(entity);
    char *quoted = fuzz_json_quote(predicate);
    char *head = fuzz_concat3("{\"entity\": ", quoted_entity, ", \"predicate\": ");
    char *descriptor = fuzz_concat3(head, quoted, ", \"bindings\": " BINDINGS "}");
    char *where = fuzz_concat3("{\"predicate\": ", quoted, ", \"bindings\": " BINDINGS "}");

    strata_status sf = fuzz_descriptor(ctx, descriptor);
    strata_status sd = fuzz_check_status(strata_delete_where(ctx, entity, where), "strata_delete_where");
    if ((sf == STRATA_OK) != (sd == STRATA_OK))
        FUZZ_FAIL("strata_fetch (%d) and strata_delete_where (%d) disagree on the predicate (last error %s)\n  %s",
                  (int)sf, (int)sd, strata_last_error(), descriptor);
    if (sd != STRATA_OK) {
        fuzz_world_after_failure("strata_delete_where");
    } else {
        int64_t left = -1;
        strata_status sc = fuzz_check_status(strata_fetch_count(ctx, descriptor, &left), "strata_fetch_count");
        if (sc != STRATA_OK || left != 0)
            FUZZ_FAIL("after strata_delete_where the predicate still matches %lld objects (status %d)\n  %s",
                      (long long)left, (int)sc, descriptor);
        fuzz_world_after_success("strata_delete_where");
    }
    free(where);
    free(descriptor);
    free(head);
    free(quoted);
    free(quoted_entity);
    free(text);
    return 0;
}
