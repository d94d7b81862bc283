/*
 * test_values.c — values at their limits through strata.h.
 *
 *   - JSON objects with very many keys (in a json attribute value and in a
 *     configuration) are read in linear time: with a linear duplicate-key scan
 *     per key these calls ran for minutes;
 *   - dates outside years 0000-9999 are validation errors, for numbers and
 *     ISO-8601 text; the bounds round-trip (fetched objects fed back to
 *     strata_insert / strata_update give the same value);
 *   - equal decimals ("1.5", "1.50") collide on a unique constraint and come
 *     out in canonical form;
 *   - a json value nests at most 100 levels, so whatever strata_fetch returns
 *     can be written back with strata_insert_many and strata_update.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include <strata.h>
#include "check.h"

static const char *schema =
    "{\"version\": \"1\", \"entities\": [{\"name\": \"Value\", \"attributes\": ["
    "{\"name\": \"code\", \"type\": \"string\", \"optional\": true, \"unique\": true},"
    "{\"name\": \"t\", \"type\": \"date\", \"optional\": true},"
    "{\"name\": \"money\", \"type\": \"decimal\", \"optional\": true, \"unique\": true},"
    "{\"name\": \"doc\", \"type\": \"json\", \"optional\": true}]}]}";

/* {"k0":0,"k1":1,...} with `count` distinct keys, then `"k0"` again if `duplicate`. */
static void add_big_object(check_buf *b, int count, int duplicate) {
    char item[48];
    check_buf_add(b, "{");
    for (int i = 0; i < count; i++) {
        snprintf(item, sizeof item, "%s\"k%d\":%d", i ? "," : "", i, i);
        check_buf_add(b, item);
    }
    if (duplicate) check_buf_add(b, ",\"k0\":-1");
    check_buf_add(b, "}");
}

static strata_context *open_context(strata_container **db, const char *name) {
    char *config = malloc(strlen(schema) + 64);
    CHECK(config != NULL);
    sprintf(config, "{\"schema\": %s}", schema);
    strata_config *cfg = NULL;
    CHECK_STATUS(strata_config_new(config, &cfg));
    free(config);
    char *path = test_store_path(name);
    CHECK_STATUS(strata_open(path, cfg, db));
    free(path);
    strata_config_free(cfg);
    strata_context *ctx = NULL;
    CHECK_STATUS(strata_context_new(*db, &ctx));
    return ctx;
}

/* The last error's member `key` equals `want`; the error never contains `secret` (if given). */
static void expect_error(const char *key, const char *want, const char *secret) {
    json_object *err = parse_json_or_die(strata_last_error());
    json_object *v = NULL;
    const char *got = json_object_object_get_ex(err, key, &v) ? json_object_get_string(v) : NULL;
    if (!got || strcmp(got, want) != 0) fprintf(stderr, "error %s: %s\n", key, strata_last_error());
    CHECK_STR_EQ(got, want);
    if (secret) CHECK(strstr(strata_last_error(), secret) == NULL);
    json_object_put(err);
}

/*
 * Composite attributes through the C API: written and read as one object, a field
 * in a predicate, a sort, fetched properties, a unique constraint and a prepared
 * fetch's variable; a bad field value is an error naming the field's JSON path.
 */
static void test_composite(void) {
    const char *config =
        "{\"schema\": {\"version\": \"1\", \"entities\": [{\"name\": \"Place\", \"attributes\": ["
        "{\"name\": \"name\", \"type\": \"string\"},"
        "{\"name\": \"address\", \"type\": \"composite\", \"optional\": true, \"fields\": ["
        "  {\"name\": \"city\", \"type\": \"string\"},"
        "  {\"name\": \"zip\", \"type\": \"string\", \"optional\": true},"
        "  {\"name\": \"since\", \"type\": \"date\", \"optional\": true}]}],"
        " \"uniqueConstraints\": [[\"address.city\", \"address.zip\"]]}]}}";
    char *path = test_store_path("composite.store");
    strata_container *db = check_open(config, path);
    strata_context *ctx = check_context(db);
    char *ids = NULL;
    CHECK_STATUS(strata_insert_many(ctx, "Place",
        "[{\"name\": \"a\", \"address\": {\"city\": \"Paris\", \"zip\": \"75001\", \"since\": \"2020-01-01T00:00:00Z\"}},"
        " {\"name\": \"b\", \"address\": {\"city\": \"Lyon\"}},"
        " {\"name\": \"c\", \"address\": null},"
        " {\"name\": \"d\", \"address\": {\"city\": \"Paris\", \"zip\": \"75002\"}}]", &ids));
    strata_free(ids);
    CHECK_STATUS(strata_save(ctx));

    char *out = NULL;
    CHECK_STATUS(strata_fetch(ctx, "{\"entity\": \"Place\", \"predicate\": \"$0.address?.city == \\\"Paris\\\"\","
                                   " \"sortBy\": [{\"key\": \"address.zip\", \"order\": \"reverse\"}]}", &out));
    json_object *all = parse_json_or_die(out);
    CHECK(json_object_array_length(all) == 2);
    expect_fields(json_object_array_get_idx(all, 0), "{\"name\": \"d\", \"address\": {\"city\": \"Paris\", \"zip\": \"75002\", \"since\": null}}");
    expect_fields(json_object_array_get_idx(all, 1),
                  "{\"name\": \"a\", \"address\": {\"city\": \"Paris\", \"zip\": \"75001\", \"since\": \"2020-01-01T00:00:00Z\"}}");
    json_object_put(all);
    strata_free(out);

    CHECK_STATUS(strata_fetch(ctx, "{\"entity\": \"Place\", \"predicate\": \"$0.name == \\\"c\\\"\", \"propertiesToFetch\": [\"address.city\"]}", &out));
    CHECK(strstr(out, "\"address\":null") != NULL);
    strata_free(out);
    CHECK_STATUS(strata_fetch(ctx, "{\"entity\": \"Place\", \"predicate\": \"$0.name == \\\"b\\\"\", \"propertiesToFetch\": [\"address.city\"]}", &out));
    CHECK(strstr(out, "\"address\":{\"city\":\"Lyon\"}") != NULL);
    strata_free(out);

    /* A prepared fetch with a variable compared to a field. */
    strata_prepared *p = NULL;
    CHECK_STATUS(strata_prepare(ctx, "{\"entity\": \"Place\", \"predicate\": \"$0.address?.city == city && $0.address?.since == nil\"}", &p));
    int64_t n = -1;
    CHECK_STATUS(strata_prepared_fetch_count(p, "{\"city\": \"Paris\"}", &n));
    CHECK(n == 1);
    CHECK_STATUS(strata_prepared_fetch_count(p, "{\"city\": \"Lyon\"}", &n));
    CHECK(n == 1);
    CHECK_ERROR_CODE(strata_prepared_fetch_count(p, "{\"city\": 5}", &n), STRATA_ERR_INVALID);
    strata_prepared_free(p);

    /* The unique constraint over two fields: the same pair is the same object (an upsert). */
    CHECK_STATUS(strata_insert(ctx, "Place", "{\"name\": \"a2\", \"address\": {\"city\": \"Paris\", \"zip\": \"75001\"}}", &ids));
    strata_free(ids);
    CHECK_STATUS(strata_save(ctx));
    CHECK_STATUS(strata_fetch_count(ctx, "{\"entity\": \"Place\"}", &n));
    CHECK(n == 4);

    CHECK_ERROR_CODE(strata_insert(ctx, "Place", "{\"name\": \"e\", \"address\": {\"city\": \"Oslo\", \"since\": \"soon\"}}", &ids),
                     STRATA_ERR_VALIDATION);
    expect_error("path", "/address/since", NULL);
    expect_error("attribute", "address.since", NULL);
    CHECK_ERROR_CODE(strata_fetch(ctx, "{\"entity\": \"Place\", \"sortBy\": [{\"key\": \"address\"}]}", &out), STRATA_ERR_INVALID);
    CHECK(!strata_has_changes(ctx));

    strata_context_free(ctx);
    strata_close(db);
    free(path);
}

/* 200,000 keys: well under a second; with a linear duplicate scan per key each call took minutes. */
#define MANY_KEYS 200000

static void test_many_keys(strata_context *ctx) {
    check_buf b = {0};
    check_buf_add(&b, "{\"code\": \"big\", \"doc\": ");
    add_big_object(&b, MANY_KEYS, 0);
    check_buf_add(&b, "}");
    char *id = NULL;
    CHECK_STATUS(strata_insert(ctx, "Value", b.s, &id));
    CHECK_STATUS(strata_save(ctx));
    char *out = NULL;
    CHECK_STATUS(strata_get(ctx, id, &out));
    json_object *o = parse_json_or_die(out);
    json_object *doc = NULL;
    CHECK(json_object_object_get_ex(o, "doc", &doc) && json_object_object_length(doc) == MANY_KEYS);
    json_object_put(o);
    strata_free(out);
    strata_free(id);

    /* The same keys and a duplicate at the end: found, with its path. */
    b.len = 0;
    check_buf_add(&b, "{\"doc\": ");
    add_big_object(&b, MANY_KEYS, 1);
    check_buf_add(&b, "}");
    CHECK_ERROR_CODE(strata_insert(ctx, "Value", b.s, &id), STRATA_ERR_VALIDATION);
    CHECK(id == NULL);
    expect_error("path", "/doc/k0", NULL);
    expect_error("attribute", "doc", NULL);

    /* A configuration: the default of a json attribute. */
    b.len = 0;
    check_buf_add(&b, "{\"schema\": {\"version\": \"1\", \"entities\": [{\"name\": \"A\", \"attributes\": "
            "[{\"name\": \"doc\", \"type\": \"json\", \"default\": ");
    add_big_object(&b, MANY_KEYS, 0);
    check_buf_add(&b, "}]}]}}");
    strata_config *cfg = NULL;
    CHECK_STATUS(strata_config_new(b.s, &cfg));
    strata_config_free(cfg);
    b.len = 0;
    check_buf_add(&b, "{\"schema\": {\"version\": \"1\", \"entities\": [{\"name\": \"A\", \"attributes\": "
            "[{\"name\": \"doc\", \"type\": \"json\", \"default\": ");
    add_big_object(&b, MANY_KEYS, 1);
    check_buf_add(&b, "}]}]}}");
    cfg = NULL;
    CHECK_ERROR_CODE(strata_config_new(b.s, &cfg), STRATA_ERR_INVALID);
    CHECK(cfg == NULL);
    expect_error("path", "/schema/entities/0/attributes/0/default/k0", NULL);
    free(b.s);
}

static void test_dates(strata_context *ctx) {
    static const char *const outside[] = {
        "253402300800", "-62167219201", "1e300", "253402300799.9999999", "\"9999-12-31T23:59:60Z\"",
        "\"9999-12-31T23:59:59-00:01\"", "\"0000-01-01T00:00:00+00:01\"",
    };
    char json[160];
    for (size_t i = 0; i < sizeof outside / sizeof outside[0]; i++) {
        char *id = NULL;
        snprintf(json, sizeof json, "{\"t\": %s}", outside[i]);
        CHECK_ERROR_CODE(strata_insert(ctx, "Value", json, &id), STRATA_ERR_VALIDATION);
        CHECK(id == NULL);
        expect_error("entity", "Value", NULL);
        expect_error("attribute", "t", NULL);
        expect_error("path", "/t", NULL);
    }
    CHECK(!strata_has_changes(ctx));

    static const char *const inside[][2] = {
        {"\"0000-01-01T00:00:00Z\"", "0000-01-01T00:00:00Z"},
        {"-62167219200", "0000-01-01T00:00:00Z"},
        {"\"9999-12-31T23:59:59.999Z\"", "9999-12-31T23:59:59.999Z"},
        {"253402300799", "9999-12-31T23:59:59Z"},
    };
    for (size_t i = 0; i < sizeof inside / sizeof inside[0]; i++) {
        char *id = NULL, *out = NULL;
        snprintf(json, sizeof json, "{\"code\": \"date%zu\", \"t\": %s}", i, inside[i][0]);
        CHECK_STATUS(strata_insert(ctx, "Value", json, &id));
        CHECK_STATUS(strata_save(ctx));
        CHECK_STATUS(strata_get(ctx, id, &out));
        json_object *o = parse_json_or_die(out);
        expect_fields(o, "{\"t\": \"%s\"}", inside[i][1]);
        json_object_put(o);
        /* Fed back: to update, and to insert (an upsert on the unique code, so '_id' agrees). */
        CHECK_STATUS(strata_update(ctx, id, out));
        char *again = NULL;
        CHECK_STATUS(strata_insert(ctx, "Value", out, &again));
        CHECK_STR_EQ(again, id);
        CHECK_STATUS(strata_save(ctx));
        strata_free(out);
        CHECK_STATUS(strata_get(ctx, id, &out));
        o = parse_json_or_die(out);
        expect_fields(o, "{\"t\": \"%s\"}", inside[i][1]);
        json_object_put(o);
        strata_free(out);
        strata_free(again);
        strata_free(id);
    }

    /* A schema default and a predicate literal out of range. */
    strata_config *cfg = NULL;
    CHECK_ERROR_CODE(strata_config_new("{\"schema\": {\"version\": \"1\", \"entities\": [{\"name\": \"A\", \"attributes\": "
                                       "[{\"name\": \"t\", \"type\": \"date\", \"default\": 253402300800}]}]}}", &cfg),
                     STRATA_ERR_SCHEMA);
    expect_error("path", "/schema/entities/0/attributes/0/default", NULL);
    char *out = NULL;
    CHECK_ERROR_CODE(strata_fetch(ctx, "{\"entity\": \"Value\", \"predicate\": {\">\": [{\"key\": \"t\"}, {\"date\": \"10000-01-01\"}]}}", &out),
                     STRATA_ERR_INVALID);
    CHECK_ERROR_CODE(strata_fetch(ctx, "{\"entity\": \"Value\", \"predicate\": {\">\": [{\"key\": \"t\"}, {\"date\": -62167219201}]}}", &out),
                     STRATA_ERR_INVALID);
    expect_error("path", "/predicate/>/1", NULL);
    CHECK(out == NULL);
}

static void test_decimals(strata_context *ctx) {
    char *a = NULL, *b = NULL;
    CHECK_STATUS(strata_insert(ctx, "Value", "{\"money\": \"1.50\"}", &a));
    CHECK_STATUS(strata_save(ctx));
    CHECK_ERROR_CODE(strata_insert(ctx, "Value", "{\"money\": \"1.5\", \"_onConflict\": \"error\"}", &b), STRATA_ERR_CONSTRAINT);
    expect_error("attribute", "money", NULL);
    CHECK_ERROR_CODE(strata_insert(ctx, "Value", "{\"money\": 1.500, \"_onConflict\": \"error\"}", &b), STRATA_ERR_CONSTRAINT);
    CHECK_STATUS(strata_insert(ctx, "Value", "{\"money\": \"15e-1\", \"code\": \"dec\"}", &b));
    CHECK_STR_EQ(a, b);
    CHECK_STATUS(strata_save(ctx));
    char *out = NULL;
    CHECK_STATUS(strata_get(ctx, a, &out));
    json_object *o = parse_json_or_die(out);
    expect_fields(o, "{\"money\": \"1.5\", \"code\": \"dec\"}");
    json_object_put(o);
    strata_free(out);
    int64_t n = 0;
    CHECK_STATUS(strata_fetch_count(ctx, "{\"entity\": \"Value\", \"predicate\": {\"==\": [{\"key\": \"money\"}, {\"decimal\": \"1.50\"}]}}", &n));
    CHECK(n == 1);
    strata_free(a);
    strata_free(b);
}

static void test_deep_json(strata_context *ctx) {
    enum { LIMIT = 100 };
    check_buf b = {0};
    check_buf_add(&b, "{\"code\": \"deep\", \"doc\": ");
    for (int i = 0; i < LIMIT; i++) check_buf_add(&b, "[");
    check_buf_add(&b, "0");
    for (int i = 0; i < LIMIT; i++) check_buf_add(&b, "]");
    check_buf_add(&b, "}");
    char *id = NULL;
    CHECK_STATUS(strata_insert(ctx, "Value", b.s, &id));
    CHECK_STATUS(strata_save(ctx));
    /* Everything strata_fetch and strata_get return goes back in. */
    char *all = NULL, *one = NULL;
    CHECK_STATUS(strata_fetch(ctx, "{\"entity\": \"Value\", \"predicate\": {\"==\": [{\"key\": \"code\"}, \"deep\"]}}", &all));
    CHECK_STATUS(strata_insert_many(ctx, "Value", all, &one));
    CHECK(strstr(one, id) != NULL);
    strata_free(one);
    CHECK_STATUS(strata_get(ctx, id, &one));
    CHECK_STATUS(strata_update(ctx, id, one));
    CHECK_STATUS(strata_save(ctx));
    strata_free(one);
    strata_free(all);

    /* One level more (and the 127 levels that went in before and could not come back) is a validation error. */
    for (int levels = LIMIT + 1; levels <= 127; levels += 127 - LIMIT - 1) {
        b.len = 0;
        check_buf_add(&b, "{\"doc\": ");
        for (int i = 0; i < levels; i++) check_buf_add(&b, "[");
        check_buf_add(&b, "0");
        for (int i = 0; i < levels; i++) check_buf_add(&b, "]");
        check_buf_add(&b, "}");
        char *none = NULL;
        CHECK_ERROR_CODE(strata_insert(ctx, "Value", b.s, &none), STRATA_ERR_VALIDATION);
        CHECK(none == NULL);
        expect_error("attribute", "doc", NULL);
        CHECK_ERROR_CODE(strata_update(ctx, id, b.s), STRATA_ERR_VALIDATION);
    }
    CHECK(!strata_has_changes(ctx));
    strata_free(id);
    free(b.s);
}

int main(void) {
    strata_container *db = NULL;
    strata_context *ctx = open_context(&db, "values.store");
    test_dates(ctx);
    test_decimals(ctx);
    test_deep_json(ctx);
    test_many_keys(ctx);
    strata_context_free(ctx);
    strata_close(db);
    test_composite();
    printf("test_values: ok\n");
    return 0;
}
