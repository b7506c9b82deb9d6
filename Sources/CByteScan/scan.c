// The vector scan behind ImportInput.namesLedgerOnly, in C for its
// intrinsics: Swift's SIMD types compiled to lane-by-lane code here, eight
// times the instructions of the word-at-a-time loop they were to replace.
#include "CByteScan.h"

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

size_t msglog_next_quote_before_u_or_o(const void *bytes, size_t count, size_t from) {
  const unsigned char *p = bytes;
  size_t at = from;
#if defined(__x86_64__)
  const __m128i quote = _mm_set1_epi8('"'), u = _mm_set1_epi8('u'), o = _mm_set1_epi8('o');
  // Each step compares 16 bytes at `at` with a quote and the 16 after each
  // (at + 1) with the letters; a lane set in both is a pair.
  while (at + 17 <= count) {
    __m128i here = _mm_loadu_si128((const __m128i *)(p + at));
    __m128i next = _mm_loadu_si128((const __m128i *)(p + at + 1));
    __m128i letters = _mm_or_si128(_mm_cmpeq_epi8(next, u), _mm_cmpeq_epi8(next, o));
    int pairs = _mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(here, quote), letters));
    if (pairs != 0) return at + (size_t)__builtin_ctz((unsigned)pairs);
    at += 16;
  }
#endif
  for (; at + 1 < count; at++) {
    if (p[at] == '"' && (p[at + 1] == 'u' || p[at + 1] == 'o')) return at;
  }
  return count;
}
