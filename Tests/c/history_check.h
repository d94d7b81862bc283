/*
 * history_check.h — helpers of the history tests (test_history.c,
 * test_history_processes.c): fetching history, tokens, JSON comparison.
 */
#ifndef HISTORY_CHECK_H
#define HISTORY_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include <strata.h>
#include "check.h"

/* The transactions a descriptor fetches (json_object_put it). */
static inline json_object *history(strata_context *ctx, const char *descriptor) {
    char *text = NULL;
    CHECK_STATUS(strata_fetch_history(ctx, descriptor, &text));
    json_object *a = parse_json_or_die(text);
    strata_free(text);
    CHECK(json_object_is_type(a, json_type_array));
    return a;
}

static inline const char *plain(json_object *o) {
    return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
}

/* `got` equals the JSON text `expected` exactly (same keys, same order in arrays). */
#define CHECK_JSON(got, expected) check_json_((got), (expected), __FILE__, __LINE__)
static inline void check_json_(json_object *got, const char *expected, const char *file, int line) {
    json_object *want = parse_json_or_die(expected);
    if (!json_object_equal(got, want)) {
        fprintf(stderr, "%s:%d: JSON differs\n  got:      %s\n", file, line, got ? plain(got) : "(missing)");
        fprintf(stderr, "  expected: %s\n", plain(want));
        exit(1);
    }
    json_object_put(want);
}

static inline void check_text_json_(const char *got, const char *expected, const char *file, int line) {
    json_object *o = parse_json_or_die(got);
    check_json_(o, expected, file, line);
    json_object_put(o);
}
#define CHECK_TEXT_JSON(got, expected) check_text_json_((got), (expected), __FILE__, __LINE__)

/* The sequence of a token "42@tag". */
static inline int token_sequence(const char *token) {
    CHECK(token != NULL);
    return atoi(token);
}

/* The latest token, as the session fetches it. */
#define LATEST "{\"sortBy\": [{\"key\": \"transactionIdentifier\", \"order\": \"reverse\"}], \"fetchLimit\": 1}"

static inline char *latest_token(strata_context *ctx) {
    json_object *h = history(ctx, LATEST);
    CHECK(json_object_array_length(h) == 1);
    char *t = strdup(check_str_member(json_object_array_get_idx(h, 0), "token"));
    json_object_put(h);
    return t;
}

#endif
