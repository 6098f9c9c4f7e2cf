#include "output/trace/packet_deflate.h"

#include <emmintrin.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>

namespace ppt::proto {
namespace {

constexpr uint32_t kMinMatch = 4;  // a run of 3 equal bytes costs about as much as 3 literals
constexpr uint32_t kMaxMatch = 258;
constexpr size_t kWindow = 32768;
constexpr size_t kMaxReferenced = 1024;  // packets longer than this are literals only
constexpr int kEndOfBlock = 256;

// RFC 1951, 3.2.5: the length and distance codes' extra bits.
constexpr uint8_t kLengthExtra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                      2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
constexpr uint16_t kLengthBase[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                      31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
constexpr uint8_t kDistExtra[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                    6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
constexpr uint16_t kDistBase[30] = {1,    2,    3,    4,    5,    7,    9,    13,    17,    25,
                                    33,   49,   65,   97,   129,  193,  257,  385,   513,   769,
                                    1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};

int floor_log2(uint32_t v) { return 31 - __builtin_clz(v); }

// The length code (0-28, symbol 257 + code) of a match of 3-258 bytes.
uint32_t length_code(uint32_t length) {
  if (length <= 10) return length - 3;
  if (length == kMaxMatch) return 28;
  const uint32_t l = length - 3;
  const int b = floor_log2(l);
  return 4 * static_cast<uint32_t>(b - 1) + ((l >> (b - 2)) & 3);
}

// The distance code (0-29) of a distance of 1-32768.
uint32_t distance_code(uint32_t distance) {
  if (distance <= 4) return distance - 1;
  const uint32_t d = distance - 1;
  const int b = floor_log2(d);
  return 2 * static_cast<uint32_t>(b) + ((d >> (b - 1)) & 1);
}

// The bytes of a Trace.packet field at `pos` (tag 0x0a, length, packet);
// 0 when there is none there that ends within `data`.
size_t packet_size(std::string_view data, size_t pos) {
  if (data[pos] != 0x0a) return 0;
  uint64_t len = 0;
  size_t p = pos + 1;
  for (int shift = 0; p < data.size() && shift < 35; shift += 7) {
    const auto b = static_cast<uint8_t>(data[p++]);
    len |= uint64_t{b & 0x7fu} << shift;
    if (b < 0x80) return len <= data.size() - p ? p - pos + len : 0;
  }
  return 0;
}

// Deflate's fixed Huffman codes (RFC 1951, 3.2.6), bit-reversed (deflate
// sends a code's first bit first, and the bit writer fills bytes from their
// low bit), each as (code << 5) | its length.
struct FixedCodes {
  uint32_t litlen[288];
  uint32_t dist[30];
  static uint32_t reversed(uint32_t code, int len) {
    uint32_t r = 0;
    for (int i = 0; i < len; ++i, code >>= 1) r = (r << 1) | (code & 1);
    return r << 5 | static_cast<uint32_t>(len);
  }
  FixedCodes() {
    for (uint32_t s = 0; s < 288; ++s) {
      if (s < 144) {
        litlen[s] = reversed(0x30 + s, 8);
      } else if (s < 256) {
        litlen[s] = reversed(0x190 + s - 144, 9);
      } else if (s < 280) {
        litlen[s] = reversed(s - 256, 7);
      } else {
        litlen[s] = reversed(0xc0 + s - 280, 8);
      }
    }
    for (uint32_t d = 0; d < 30; ++d) dist[d] = reversed(d, 5);
    for (uint32_t l = 3; l <= kMaxMatch; ++l) {
      const uint32_t lc = length_code(l);
      const uint32_t c = litlen[257 + lc];
      length_bits[l] = (c >> 5) | (l - kLengthBase[lc]) << (c & 31);
      length_count[l] = static_cast<uint8_t>((c & 31) + kLengthExtra[lc]);
    }
  }
  // A match length's code and extra bits (13 at most), by length (3-258).
  uint32_t length_bits[kMaxMatch + 1] = {};
  uint8_t length_count[kMaxMatch + 1] = {};
};
const FixedCodes kFixed;

// The bits of the stream being written. Kept in a local object that
// nothing else points to, so the compiler keeps it in registers.
struct Bits {
  char* p;           // where the next whole bytes go
  uint64_t buf = 0;  // bits not written yet (fewer than 8 between calls)
  int n = 0;         // how many

  // Appends `count` bits (at most 56), low bit first: the pending bits are
  // stored whole (8 bytes; the buffer has room) and the whole bytes among
  // them passed, without a branch.
  [[gnu::always_inline]] void put(uint64_t value, int count) {
    buf |= value << n;
    n += count;
    std::memcpy(p, &buf, 8);  // little-endian (below), as deflate's bit order wants
    p += n >> 3;
    buf >>= n & ~7;
    n &= 7;
  }
  // Two literals' codes (9 bits at most each) a put.
  [[gnu::always_inline]] void literals(const char* bytes, size_t count) {
    size_t i = 0;
    for (; i + 2 <= count; i += 2) {
      const uint32_t a = kFixed.litlen[static_cast<uint8_t>(bytes[i])];
      const uint32_t b = kFixed.litlen[static_cast<uint8_t>(bytes[i + 1])];
      put((a >> 5) | uint64_t{b >> 5} << (a & 31), static_cast<int>((a & 31) + (b & 31)));
    }
    if (i < count) {
      const uint32_t c = kFixed.litlen[static_cast<uint8_t>(bytes[i])];
      put(c >> 5, static_cast<int>(c & 31));
    }
  }
  // A distance's code and extra bits, as match() puts them: the same for
  // every match of a packet, so coded once a packet.
  struct Distance {
    uint64_t bits;
    int count;
  };
  static Distance distance_bits(uint32_t distance) {
    const uint32_t dc = distance_code(distance);
    const uint32_t d = kFixed.dist[dc];
    return {(d >> 5) | uint64_t{distance - kDistBase[dc]} << 5, 5 + kDistExtra[dc]};  // fixed distance codes: 5 bits
  }
  [[gnu::always_inline]] void match(uint32_t length, Distance distance) {
    const uint64_t dist_bits = distance.bits;
    const int dist_count = distance.count;
    while (length > 0) {
      uint32_t l = length;
      if (l > kMaxMatch) l = length - kMaxMatch < 3 ? length - 3 : kMaxMatch;  // what is left stays a match
      // The length's code and extra bits (13 at most), then the distance's
      // (18 at most): one put.
      const int length_count = kFixed.length_count[l];
      put(kFixed.length_bits[l] | dist_bits << length_count, length_count + dist_count);
      length -= l;
    }
  }
};
static_assert(std::endian::native == std::endian::little, "Bits::put stores its buffer as little-endian bytes");

// Byte by byte against the earlier packet of the same size: runs of equal
// bytes are matches, the rest literals.
[[gnu::always_inline]] inline void repeat_of(Bits& bits, const char* packet, const char* earlier, size_t size) {
  const Bits::Distance distance = Bits::distance_bits(static_cast<uint32_t>(packet - earlier));
  size_t i = 0;
  while (i < size) {
    size_t j = i;
    for (; j + 8 <= size; j += 8) {
      uint64_t a, b;
      std::memcpy(&a, packet + j, 8);
      std::memcpy(&b, earlier + j, 8);
      if (a != b) {
        j += static_cast<size_t>(__builtin_ctzll(a ^ b)) / 8;  // little-endian: the first differing byte
        break;
      }
    }
    if (j + 8 > size) {
      while (j < size && packet[j] == earlier[j]) ++j;
    }
    if (j - i >= kMinMatch) {
      bits.match(static_cast<uint32_t>(j - i), distance);
      i = j;
    } else {
      const size_t end = j < size ? j + 1 : j;  // the equal bytes and the first that differs
      bits.literals(packet + i, end - i);
      i = end;
    }
  }
}

// The set bits of a 128-bit map (two words), lowest first.
struct BitWalk {
  uint64_t lo, hi;
  bool empty() const { return (lo | hi) == 0; }
  [[gnu::always_inline]] size_t pop() {
    if (lo != 0) {
      const size_t b = static_cast<size_t>(__builtin_ctzll(lo));
      lo &= lo - 1;
      return b;
    }
    const size_t b = 64 + static_cast<size_t>(__builtin_ctzll(hi));
    hi &= hi - 1;
    return b;
  }
};

// repeat_of() for a packet of at most 128 bytes whose 16-byte blocks can be
// read whole (`packet` + its size rounded up to 16 lies within the data),
// with the same symbols. The equal bytes are one 128-bit map (SSE2
// compares); the bytes that runs of kMinMatch or more equal bytes cover are
// worked out from it with shifts, and the edges of those runs walked two at
// a time: the literals before a run, then its match. One step a match, where
// repeat_of() takes one a run of equal bytes, long or short (a begin packet
// has about 12 runs and 4 matches).
[[gnu::always_inline]] inline void short_repeat_of(Bits& bits, const char* packet, const char* earlier, size_t size) {
  static_assert(kMinMatch == 4, "the runs' cover below is written for runs of four");
  uint64_t equal[2] = {0, 0};
  for (size_t off = 0; off < size; off += 16) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(packet + off));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(earlier + off));
    equal[off >> 6] |= uint64_t{static_cast<uint16_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(a, b)))} << (off & 63);
  }
  uint64_t m0 = equal[0], m1 = equal[1];  // the bytes past the packet differ
  if (size < 64) {
    m0 &= (uint64_t{1} << size) - 1;
    m1 = 0;
  } else if (size < 128) {
    m1 &= (uint64_t{1} << (size - 64)) - 1;
  }
  // Bit i of r: bytes i..i+3 are equal (the map shifted down across words).
  const uint64_t r0 = m0 & (m0 >> 1 | m1 << 63) & (m0 >> 2 | m1 << 62) & (m0 >> 3 | m1 << 61);
  const uint64_t r1 = m1 & m1 >> 1 & m1 >> 2 & m1 >> 3;
  // Bit i of c: byte i lies in such a run (r shifted up across words).
  const uint64_t c0 = r0 | r0 << 1 | r0 << 2 | r0 << 3;
  const uint64_t c1 = r1 | r1 << 1 | r1 << 2 | r1 << 3 | r0 >> 63 | r0 >> 62 | r0 >> 61;
  // Where c changes: each run's first byte and the byte after its last
  // (none for a run that reaches byte 128).
  BitWalk edges{c0 ^ c0 << 1, c1 ^ (c1 << 1 | c0 >> 63)};
  const Bits::Distance distance = Bits::distance_bits(static_cast<uint32_t>(packet - earlier));
  size_t at = 0;
  while (!edges.empty()) {
    const size_t first = edges.pop();
    const size_t past = edges.empty() ? size : edges.pop();
    bits.literals(packet + at, first - at);
    bits.match(static_cast<uint32_t>(past - first), distance);
    at = past;
  }
  bits.literals(packet + at, size - at);
}

// The stream's bits come in by value and go back the same way, and the
// helpers that take them are inlined, so that they live in registers here
// (through a reference, every put loaded and stored each field).
Bits find_repeats(Bits bits, std::string_view data) {
  std::array<uint32_t, kMaxReferenced> last;  // by packet size: where the last one began + 1
  last.fill(0);
  size_t pos = 0;
  while (pos < data.size()) {
    const size_t size = packet_size(data, pos);
    if (size == 0) {  // not a packet: the rest as it is
      bits.literals(data.data() + pos, data.size() - pos);
      break;
    }
    const size_t earlier = size < kMaxReferenced && last[size] ? last[size] - 1 : pos;
    if (earlier < pos && pos - earlier <= kWindow) {
      if (size <= 128 && pos + ((size + 15) & ~size_t{15}) <= data.size()) {
        short_repeat_of(bits, data.data() + pos, data.data() + earlier, size);
      } else {
        repeat_of(bits, data.data() + pos, data.data() + earlier, size);
      }
    } else {
      bits.literals(data.data() + pos, size);
    }
    if (size < kMaxReferenced) last[size] = static_cast<uint32_t>(pos + 1);
    pos += size;
  }
  return bits;
}

}  // namespace

size_t deflate_packets(std::string_view packets, std::string& out, size_t at) {
  // At most 9 bits a byte (a literal; a match of 3 or more takes at most 31
  // bits), the block's header and end, the zlib header and trailer, and the
  // 8 bytes put() stores past its last whole byte.
  const size_t bound = 2 + packets.size() * 9 / 8 + 16 + 4 + 8;
  if (out.size() < at + bound) out.resize(at + bound);
  char* start = out.data() + at;
  Bits bits{start};
  *bits.p++ = 0x78;  // zlib (RFC 1950): deflate, 32 KB window
  *bits.p++ = 0x01;  // no dictionary, fastest; (0x78 << 8 | 0x01) % 31 == 0
  bits.put(1, 1);    // BFINAL: the only block
  bits.put(1, 2);    // BTYPE 01: fixed Huffman codes
  bits = find_repeats(bits, packets);
  bits.put(kFixed.litlen[kEndOfBlock] >> 5, static_cast<int>(kFixed.litlen[kEndOfBlock] & 31));
  char* p = bits.p;
  if (bits.n > 0) *p++ = static_cast<char>(bits.buf & 0xff);  // the last byte, padded with zeros
  const uint32_t adler = adler32_of(packets);
  for (int shift = 24; shift >= 0; shift -= 8) *p++ = static_cast<char>((adler >> shift) & 0xff);
  return static_cast<size_t>(p - start);
}

// zlib's adler32() takes the bytes one by one (unrolled): 4% of a conversion
// to .pftrace.
// Here a 16-byte block at a time. Over bytes b_1..b_L, from (a0, s0):
//   a = a0 + sum b_j,   s = s0 + L * a0 + sum (L - j + 1) b_j,
// and in blocks of 16, (L - j + 1) is 16 * (the blocks after b_j's) plus
// (16 - its place in its block): so s gains 16 * (the sum of the bytes
// before each block, summed over the blocks) plus each block's bytes
// weighted 16..1. The sums are taken modulo 65521 every 5552 bytes or
// fewer (zlib's NMAX), before 32-bit lanes could overflow.
uint32_t adler32_of(std::string_view bytes, uint32_t adler) {
  constexpr uint32_t kMod = 65521;
  constexpr size_t kBlocksPerRound = 5552 / 16;
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  size_t n = bytes.size();
  uint64_t a = adler & 0xffff, s = adler >> 16;
  const __m128i zero = _mm_setzero_si128();
  const __m128i weights_lo = _mm_setr_epi16(16, 15, 14, 13, 12, 11, 10, 9);
  const __m128i weights_hi = _mm_setr_epi16(8, 7, 6, 5, 4, 3, 2, 1);
  while (n >= 16) {
    const size_t blocks = std::min(n / 16, kBlocksPerRound);
    __m128i sum = zero;     // the bytes so far this round (two 64-bit lanes)
    __m128i before = zero;  // the sums before each block, added up (two 64-bit lanes)
    __m128i weighted = zero;
    for (size_t k = 0; k < blocks; ++k, p += 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      before = _mm_add_epi64(before, sum);
      sum = _mm_add_epi64(sum, _mm_sad_epu8(v, zero));
      weighted = _mm_add_epi32(weighted, _mm_madd_epi16(_mm_unpacklo_epi8(v, zero), weights_lo));
      weighted = _mm_add_epi32(weighted, _mm_madd_epi16(_mm_unpackhi_epi8(v, zero), weights_hi));
    }
    alignas(16) uint64_t sums[2], befores[2];
    alignas(16) uint32_t w[4];
    _mm_store_si128(reinterpret_cast<__m128i*>(sums), sum);
    _mm_store_si128(reinterpret_cast<__m128i*>(befores), before);
    _mm_store_si128(reinterpret_cast<__m128i*>(w), weighted);
    const uint64_t length = 16 * blocks;
    s += length * a + 16 * (befores[0] + befores[1]) + w[0] + w[1] + w[2] + w[3];
    a += sums[0] + sums[1];
    a %= kMod;
    s %= kMod;
    n -= length;
  }
  for (; n > 0; --n) {
    a += *p++;
    s += a;
  }
  return static_cast<uint32_t>((s % kMod) << 16 | (a % kMod));
}

}  // namespace ppt::proto
