/*
 * Declarations of the migration calls for a strata.h that does not have them
 * yet (CMake defines TRIPS_HEADER_HAS_STAGE_HOOKS when it does). Declared
 * weak, so that the demo links against a library without them and says so.
 */
#ifndef TRIPS_MIGRATION_COMPAT_H
#define TRIPS_MIGRATION_COMPAT_H

#ifndef TRIPS_HEADER_HAS_STAGE_HOOKS
typedef strata_status (*strata_stage_fn)(strata_context *ctx, void *userdata);
typedef void (*strata_progress_fn)(const char *event_json, void *userdata);
__attribute__((weak)) strata_status strata_config_set_stage_hooks(strata_config *config, const char *stage_name,
    strata_stage_fn will_migrate, strata_stage_fn did_migrate, void *userdata, strata_free_fn free_userdata);
__attribute__((weak)) strata_status strata_config_set_progress(strata_config *config, strata_progress_fn fn,
    void *userdata, strata_free_fn free_userdata);
#define TRIPS_MIGRATION_API_PRESENT() (strata_config_set_stage_hooks != NULL && strata_config_set_progress != NULL)
#else
#define TRIPS_MIGRATION_API_PRESENT() 1
#endif

#endif
