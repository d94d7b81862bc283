/* SHA-256's compression function with the x86-64 SHA extensions (Intel's SHA-NI: sha256rnds2,
   sha256msg1, sha256msg2), four rounds per step, the message schedule kept in four registers.
   Chosen at run time: a processor without them uses Values/SHA256.swift's own rounds, over the
   round constants kept here for both. */
#include "CStrataSHA.h"

/* The round constants: the first 32 bits of the fractional parts of the cube roots of the first
   64 primes. */
static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

const uint32_t *cstrata_sha256_constants(void) { return K; }

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <immintrin.h>
#if defined(__has_include)
#if __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h>
#define CSTRATA_GLIBC_CPU_FEATURES 1
#endif
#endif
#ifndef CSTRATA_GLIBC_CPU_FEATURES
#include <cpuid.h>
#endif

int cstrata_sha256_hardware(void) {
#ifdef CSTRATA_GLIBC_CPU_FEATURES
    /* What the C library found when the process started (glibc >= 2.33): no cpuid here, an
       instruction a virtual machine's hypervisor answers slowly. */
    return CPU_FEATURE_ACTIVE(SHA) && CPU_FEATURE_ACTIVE(SSSE3) && CPU_FEATURE_ACTIVE(SSE4_1);
#else
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSSE3) && (c & bit_SSE4_1) &&
           __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_SHA);
#endif
}

__attribute__((target("sha,ssse3,sse4.1")))
void cstrata_sha256_blocks(uint32_t state[8], const uint8_t *data, size_t blocks) {
    /* Big-endian words: byte order reversed within each 32-bit lane. */
    const __m128i order = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    /* The instructions keep the state as ABEF and CDGH. */
    __m128i t = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&state[0]), 0xB1); /* CDAB */
    __m128i s1 = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&state[4]), 0x1B); /* EFGH */
    __m128i s0 = _mm_alignr_epi8(t, s1, 8);    /* ABEF */
    s1 = _mm_blend_epi16(s1, t, 0xF0);         /* CDGH */
    for (; blocks > 0; blocks--, data += 64) {
        const __m128i abef = s0, cdgh = s1;
        __m128i m[4];
        for (int g = 0; g < 16; g++) {
            __m128i *w = &m[g & 3];
            if (g < 4) {
                *w = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(data + 16 * g)), order);
            } else {
                /* W[t] = s1(W[t-2]) + W[t-7] + s0(W[t-15]) + W[t-16], four at a time. */
                const __m128i prev = m[(g - 1) & 3], prev2 = m[(g - 2) & 3];
                __m128i x = _mm_sha256msg1_epu32(*w, m[(g - 3) & 3]);
                x = _mm_add_epi32(x, _mm_alignr_epi8(prev, prev2, 4));
                *w = _mm_sha256msg2_epu32(x, prev);
            }
            __m128i msg = _mm_add_epi32(*w, _mm_loadu_si128((const __m128i *)&K[4 * g]));
            s1 = _mm_sha256rnds2_epu32(s1, s0, msg);
            s0 = _mm_sha256rnds2_epu32(s0, s1, _mm_shuffle_epi32(msg, 0x0E));
        }
        s0 = _mm_add_epi32(s0, abef);
        s1 = _mm_add_epi32(s1, cdgh);
    }
    t = _mm_shuffle_epi32(s0, 0x1B);           /* FEBA */
    s1 = _mm_shuffle_epi32(s1, 0xB1);          /* DCHG */
    s0 = _mm_blend_epi16(t, s1, 0xF0);         /* DCBA */
    s1 = _mm_alignr_epi8(s1, t, 8);            /* HGFE */
    _mm_storeu_si128((__m128i *)&state[0], s0);
    _mm_storeu_si128((__m128i *)&state[4], s1);
}

#else

int cstrata_sha256_hardware(void) { return 0; }

void cstrata_sha256_blocks(uint32_t state[8], const uint8_t *data, size_t blocks) {
    (void)state;
    (void)data;
    (void)blocks;
}

#endif
