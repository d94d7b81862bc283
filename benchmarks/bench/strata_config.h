/*
 * strata_config.h — the configuration the Strata side of the benchmark opens its stores with,
 * and the open row's query: shared by bench_strata (strata_side.c) and the open floor
 * (benchmarks/open-floor/floor.c), so that the floor measures the row's own open.
 * Include bench_schema.h first. Header-only.
 */
#ifndef BENCH_STRATA_CONFIG_H
#define BENCH_STRATA_CONFIG_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The open row's one tiny query. */
#define BENCH_OPEN_DESCRIPTOR "{\"entity\": \"Trip\", \"fetchLimit\": 1}"

/* examples/trips/schema.json with the bucket-list item's title searchable, and no history, as one
   configuration's JSON (malloc'd; the caller frees it). NULL when the schema has no plain title
   attribute to make searchable, or when memory runs out. */
static char *bench_strata_config_json(void) {
    static const char prefix[] = "{\"history\": false, \"schema\": ";
    static const char title[] = "{\"name\": \"title\", \"type\": \"string\"}";
    static const char searchable[] = "{\"name\": \"title\", \"type\": \"string\", \"searchable\": true}";
    const char *at = strstr(BENCH_SCHEMA_JSON, title);
    if (at == NULL) return NULL;
    size_t need = sizeof prefix + strlen(BENCH_SCHEMA_JSON) + sizeof searchable + 2;
    char *json = malloc(need);
    if (json == NULL) return NULL;
    snprintf(json, need, "%s%.*s%s%s}", prefix, (int)(at - BENCH_SCHEMA_JSON), BENCH_SCHEMA_JSON, searchable,
             at + strlen(title));
    return json;
}

#endif
