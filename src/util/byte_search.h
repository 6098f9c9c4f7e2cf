// The two loops that touch every byte of every log: counting newlines and
// finding the job, start-up or details literal. Hand-written with SSE2 (every x86-64 has it) because
// std::count compiles to a byte loop and memmem's two-way search is several
// times slower than a 16-byte-wide filter on the first and a later byte of
// the needle; elsewhere they fall back to portable code.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace ppt {

inline size_t count_newlines(const char* p, const char* end) {
  size_t n = 0;
#if defined(__SSE2__)
  // Counted in 16 byte lanes (a match is -1, subtracted) for up to 255
  // blocks, then summed by one psadbw: no popcount per block, which without
  // -mpopcnt (the build targets every x86-64) is a call into libgcc, 5% of a
  // stats run's time.
  const __m128i nl = _mm_set1_epi8('\n');
  const __m128i zero = _mm_setzero_si128();
  while (end - p >= 16) {
    const size_t blocks = std::min<size_t>(255, static_cast<size_t>(end - p) / 16);
    __m128i lanes = zero;
    for (size_t b = 0; b < blocks; ++b, p += 16) {
      lanes = _mm_sub_epi8(lanes, _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), nl));
    }
    const __m128i sums = _mm_sad_epu8(lanes, zero);  // two 64-bit halves, each at most 8 x 255
    n += static_cast<size_t>(_mm_cvtsi128_si32(sums)) + static_cast<size_t>(_mm_extract_epi16(sums, 4));
  }
#endif
  for (; p < end; ++p) n += (*p == '\n');
  return n;
}

// First occurrence of any of three needles in [p, end), or nullptr. The
// needles (at least 2 bytes each) begin with the same byte (the scanner's job,
// start-up and `[Pipeline details]` literals); `probe_a`, `probe_b` and
// `probe_c` index a byte of each that is rarer than the first in ordinary
// text. A candidate must match the first byte and any needle's probe byte (16
// bytes per step) before the full comparison. Written out for three, not as
// a loop over the needles: that loop made a conversion about a tenth slower.
inline const char* find_any_of_three(const char* p, const char* end, std::string_view a, size_t probe_a,
                                     std::string_view b, size_t probe_b, std::string_view c, size_t probe_c) {
  const size_t longest = std::max(a.size(), std::max(b.size(), c.size()));
  auto match_at = [&](const char* q) {
    size_t left = static_cast<size_t>(end - q);
    return (left >= a.size() && memcmp(q, a.data(), a.size()) == 0) ||
           (left >= b.size() && memcmp(q, b.data(), b.size()) == 0) ||
           (left >= c.size() && memcmp(q, c.data(), c.size()) == 0);
  };
#if defined(__SSE2__)
  if (static_cast<size_t>(end - p) >= longest + 16) {
    const __m128i first = _mm_set1_epi8(a[0]);
    const __m128i pa = _mm_set1_epi8(a[probe_a]);
    const __m128i pb = _mm_set1_epi8(b[probe_b]);
    const __m128i pc = _mm_set1_epi8(c[probe_c]);
    const char* last_start = end - longest;  // every load below stays inside [p, end)
    while (last_start - p >= 16) {
      __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      __m128i va = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + probe_a));
      __m128i vb = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + probe_b));
      __m128i vc = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + probe_c));
      __m128i any = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(va, pa), _mm_cmpeq_epi8(vb, pb)), _mm_cmpeq_epi8(vc, pc));
      unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(v, first), any)));
      while (mask != 0) {
        int bit = __builtin_ctz(mask);
        if (match_at(p + bit)) return p + bit;
        mask &= mask - 1;
      }
      p += 16;
    }
  }
#else
  (void)probe_a;
  (void)probe_b;
  (void)probe_c;
  (void)longest;
#endif
  for (; p < end; ++p) {
    p = static_cast<const char*>(memchr(p, a[0], static_cast<size_t>(end - p)));
    if (p == nullptr) return nullptr;
    if (match_at(p)) return p;
  }
  return nullptr;
}

}  // namespace ppt
