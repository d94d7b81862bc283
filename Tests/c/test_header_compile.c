/*
 * test_header_compile — strata.h on its own compiles as C99 and (built from a
 * copy of this file) as C++11, both with -Wall -Wextra -Werror -pedantic, and
 * links: in C++ a missing extern "C" would leave strata_version unresolved.
 * Includes nothing but strata.h on purpose: the header must be self-sufficient.
 */
#include <strata.h>

static int same_text(const char *a, const char *b) {
    while (*a != '\0' && *a == *b) { a++; b++; }
    return *a == *b;
}

int main(void) {
    const char *version = strata_version();
    if (version == 0 || version[0] == '\0') return 1;
#ifdef STRATA_VERSION
    if (!same_text(version, STRATA_VERSION)) return 2;
#else
    (void)same_text;
#endif
    {
        /* The status type is an int-based enum with STRATA_OK == 0. */
        strata_status ok = STRATA_OK;
        if ((int)ok != 0) return 3;
    }
    return 0;
}
