/* placeholder: replaced by the full contract */
#ifndef STRATA_H
#define STRATA_H
#ifdef __cplusplus
extern "C" {
#endif
#define STRATA_VERSION "0.1.0"
#define STRATA_VERSION_NUMBER 1000
/** Returns the library version text. Cannot fail. */
const char *strata_version(void);
#ifdef __cplusplus
}
#endif
#endif
