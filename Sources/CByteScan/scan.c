// The vector scan behind ImportInput.namesLedgerOnly, in C for its
// intrinsics: Swift's SIMD types compiled to lane-by-lane code here, eight
// times the instructions of the word-at-a-time loop they were to replace.
// MSGLOG_SCAN_PORTABLE builds the other CPUs' path on x86-64 (to test it).
#include "CByteScan.h"

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && !defined(MSGLOG_SCAN_PORTABLE)
#define MSGLOG_SCAN_SSE2 1
#include <emmintrin.h>
#endif

size_t msglog_next_quote_before_u_or_o(const void *bytes, size_t count, size_t from) {
  const unsigned char *p = bytes;
  size_t at = from;
#if defined(MSGLOG_SCAN_SSE2)
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
#else
  // Eight bytes a step in a word elsewhere: a byte flagged in both masks
  // (a zero byte of the word XOR the byte looked for, borrows flagging
  // some above one too) is looked at below, and none is missed.
#define MSGLOG_ZERO_BYTES(w) (((w) - 0x0101010101010101ull) & ~(w) & 0x8080808080808080ull)
  while (at + 9 <= count) {
    uint64_t here, next;
    memcpy(&here, p + at, 8);
    memcpy(&next, p + at + 1, 8);
    if (MSGLOG_ZERO_BYTES(here ^ 0x2222222222222222ull) &
        (MSGLOG_ZERO_BYTES(next ^ 0x7575757575757575ull) | MSGLOG_ZERO_BYTES(next ^ 0x6F6F6F6F6F6F6F6Full))) {
      // A pair may start in these eight bytes.
      for (size_t k = at; k < at + 8; k++) {
        if (p[k] == '"' && (p[k + 1] == 'u' || p[k + 1] == 'o')) return k;
      }
    }
    at += 8;
  }
#endif
  for (; at + 1 < count; at++) {
    if (p[at] == '"' && (p[at + 1] == 'u' || p[at + 1] == 'o')) return at;
  }
  return count;
}
