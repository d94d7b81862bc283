/* CStrataSHA: SHA-256's block function on the processor's SHA extensions (x86-64 SHA-NI), for
   Values/SHA256.swift, which keeps its own portable one for processors without them. Nothing
   here is part of the C API (include/strata.h). */
#ifndef CSTRATASHA_H
#define CSTRATASHA_H

#include <stddef.h>
#include <stdint.h>

/* SHA-256's 64 round constants (FIPS 180-4, 4.2.2), for the Swift rounds as for these. */
const uint32_t *cstrata_sha256_constants(void);

/* Whether cstrata_sha256_blocks runs here: 1 on an x86-64 processor with the SHA, SSSE3 and
   SSE4.1 instructions, else 0 (then it must not be called). */
int cstrata_sha256_hardware(void);

/* Runs SHA-256's compression function over `blocks` 64-byte blocks at `data`, updating the
   eight state words `state` (FIPS 180-4 order: a first). Only where cstrata_sha256_hardware(). */
void cstrata_sha256_blocks(uint32_t state[8], const uint8_t *data, size_t blocks);

#endif
