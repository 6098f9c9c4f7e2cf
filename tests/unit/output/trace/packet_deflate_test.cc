#include "output/trace/packet_deflate.h"

#include <zlib.h>
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

using ppt::proto::deflate_packets;

namespace {

// `packets` deflated (after `at` bytes of something else) and inflated by
// zlib, which checks the header, every code and the Adler-32 trailer.
std::string round_trip(const std::string& packets, size_t* deflated = nullptr, size_t at = 5) {
  std::string out(at, 'x');
  const size_t n = deflate_packets(packets, out, at);
  REQUIRE(out.substr(0, at) == std::string(at, 'x'));
  if (deflated) *deflated = n;
  z_stream z{};
  REQUIRE(inflateInit(&z) == Z_OK);  // a zlib header, as Perfetto's service writes
  z.next_in = reinterpret_cast<Bytef*>(out.data() + at);
  z.avail_in = static_cast<uInt>(n);
  std::string back(packets.size() + 64, '\0');
  z.next_out = reinterpret_cast<Bytef*>(back.data());
  z.avail_out = static_cast<uInt>(back.size());
  const int rc = inflate(&z, Z_FINISH);
  back.resize(z.total_out);
  const uInt left = z.avail_in;
  inflateEnd(&z);
  CHECK(rc == Z_STREAM_END);
  CHECK(left == 0);  // the stream ends where the encoder said
  return back;
}

void packet(std::string& out, const std::string& body) {
  out.push_back(0x0a);
  size_t n = body.size();
  while (n >= 0x80) {
    out.push_back(static_cast<char>((n & 0x7f) | 0x80));
    n >>= 7;
  }
  out.push_back(static_cast<char>(n));
  out += body;
}

// The size deflate_packets() must give `packets`, worked out by the rule it
// promises (packet_deflate.h), byte by byte: each packet is compared with the
// last earlier packet of its size (under 1024 bytes, within 32 KB), a run of
// four or more equal bytes is a match and every other byte a literal, coded
// with deflate's fixed codes (RFC 1951, 3.2.6). An oracle for the encoder's
// symbols: a wrong choice of literal or match changes the size even where the
// stream still inflates to the same bytes.
size_t expected_size(const std::string& packets) {
  static const int kLengthBase[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                      31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
  static const int kLengthExtra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                       2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
  static const int kDistBase[30] = {1,    2,    3,    4,    5,    7,    9,    13,    17,    25,
                                    33,   49,   65,   97,   129,  193,  257,  385,   513,   769,
                                    1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
  static const int kDistExtra[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                     6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
  auto literal = [](unsigned char c) -> size_t { return c < 144 ? 8 : 9; };
  auto match = [&](size_t length, size_t distance) {
    size_t bits = 0;
    int d = 29;
    while (kDistBase[d] > static_cast<int>(distance)) --d;
    while (length > 0) {
      size_t l = length;
      if (l > 258) l = length - 258 < 3 ? length - 3 : 258;
      int c = 28;
      while (kLengthBase[c] > static_cast<int>(l)) --c;
      bits += (c < 23 ? 7 : 8) + kLengthExtra[c] + 5 + kDistExtra[d];  // codes 257-279: 7 bits, 280-: 8
      length -= l;
    }
    return bits;
  };
  std::vector<size_t> last(1024, 0);  // by size: where the last packet began + 1
  size_t bits = 3 + 7;                // the block's header and end code
  size_t pos = 0;
  while (pos < packets.size()) {
    size_t len = 0, p = pos + 1;
    bool whole = packets[pos] == 0x0a;
    for (int shift = 0; whole; shift += 7) {
      if (p >= packets.size() || shift >= 35) {
        whole = false;
        break;
      }
      const auto b = static_cast<unsigned char>(packets[p++]);
      len |= size_t{b & 0x7fu} << shift;
      if (b < 0x80) break;
    }
    if (!whole || len > packets.size() - p) {  // not a packet: the rest as literals
      for (; pos < packets.size(); ++pos) bits += literal(static_cast<unsigned char>(packets[pos]));
      break;
    }
    const size_t size = p - pos + len;
    const size_t earlier = size < 1024 && last[size] ? last[size] - 1 : pos;
    const char* a = packets.data() + pos;
    const char* e = packets.data() + earlier;
    if (earlier < pos && pos - earlier <= 32768) {
      size_t i = 0;
      while (i < size) {
        size_t j = i;
        while (j < size && a[j] == e[j]) ++j;
        if (j - i >= 4) {
          bits += match(j - i, pos - earlier);
          i = j;
        } else {
          for (const size_t end = j < size ? j + 1 : j; i < end; ++i) bits += literal(static_cast<unsigned char>(a[i]));
        }
      }
    } else {
      for (size_t i = 0; i < size; ++i) bits += literal(static_cast<unsigned char>(a[i]));
    }
    if (size < 1024) last[size] = pos + 1;
    pos += size;
  }
  return 2 + (bits + 7) / 8 + 4;  // zlib header, the block, Adler-32
}

}  // namespace

TEST_CASE("The .pftrace's deflated packets inflate with zlib to the same bytes", "[perfetto][deflate]") {
  std::mt19937 rng(7);
  SECTION("packets alike, as a track's jobs are: well under half the size") {
    std::string in;
    for (int i = 0; i < 5000; ++i) {
      std::string body = "\x08\x81\x02\x50\x91\x07\x5a\x22\x48\x01\x50\x03\x18\x01\x22\x04\x08\x01\x20\x05";
      body[1] = static_cast<char>(0x80 | (rng() & 0x7f));  // a varying time
      body +=
          std::string("\x22\x05\x08\x05\x20") + static_cast<char>(0x80 | (i & 0x7f)) + static_cast<char>(1 + i / 128);
      packet(in, body);
      packet(in, std::string("\x08") + static_cast<char>(rng() & 0x7f) + "\x50\x91\x07\x5a\x02\x48\x02");
    }
    size_t n = 0;
    CHECK(round_trip(in, &n) == in);
    CHECK(n * 2 < in.size());
  }
  SECTION("random packets and random bytes: every code and length, literal and match") {
    for (int k = 0; k < 200; ++k) {
      std::string in;
      const int mode = k % 3, count = static_cast<int>(rng() % 300);
      for (int i = 0; i < count; ++i) {
        if (mode == 0) {
          in.push_back(static_cast<char>(rng()));
          continue;
        }
        std::string body(rng() % (mode == 1 ? 40 : 700), '\0');
        for (size_t j = 0; j < body.size(); ++j) body[j] = static_cast<char>(rng() % 5 == 0 ? rng() : j);
        packet(in, body);
      }
      INFO("case " << k << ", " << in.size() << " bytes");
      CHECK(round_trip(in) == in);
    }
  }
  SECTION("packets of every size around the 16- and 64-byte reads, alike but for a few bytes, the last at the end") {
    for (size_t size = 1; size <= 80; ++size) {
      std::string in;
      for (int i = 0; i < 4; ++i) {
        std::string body(size, 'p');
        for (size_t j = 0; j < size; ++j) body[j] = static_cast<char>('a' + j % 7);
        if (i > 0) body[rng() % size] = static_cast<char>(rng());  // one byte changed, anywhere
        if (i == 3 && size > 4) body[size - 1] = '#';              // the last byte too
        packet(in, body);
      }
      INFO(size << "-byte packets");
      CHECK(round_trip(in) == in);
    }
  }
  SECTION("edge cases") {
    std::string long_run;
    for (int i = 0; i < 3; ++i) packet(long_run, std::string(900, 'a'));  // matches longer than 258 bytes
    std::string far;
    for (int i = 0; i < 400; ++i) packet(far, std::string(100 + i, static_cast<char>('a' + i % 26)));
    packet(far, std::string(100, 'a'));  // its twin is more than 32 KB back
    for (const std::string& in :
         {std::string(), std::string("\x0a\x00", 2), std::string("\x0a\x05hello\x0a\x05hello\x0a\x05hellp", 21),
          std::string("\x0a\xff", 2), std::string(70000, 'z'), long_run, far}) {
      INFO(in.size() << " bytes");
      CHECK(round_trip(in) == in);
    }
  }
}

TEST_CASE("The .pftrace's deflated packets hold a match for every run of four equal bytes, literals for the rest",
          "[perfetto][deflate]") {
  std::mt19937 rng(1951);
  std::vector<std::string> inputs;
  // Packets of every size up to past the 128 bytes compared as one map,
  // each with runs of 1-6 equal bytes between changed ones, so that runs
  // start, end and cross every byte (the 64-byte word's edge included).
  for (size_t size = 1; size <= 140; ++size) {
    std::string in;
    std::string body(size, '\0');
    for (size_t j = 0; j < size; ++j) body[j] = static_cast<char>(j * 7);
    for (int i = 0; i < 12; ++i) {
      for (size_t j = rng() % 4; j < size; j += 1 + rng() % 6) body[j] = static_cast<char>(rng());
      if (i % 3 == 2) body[size - 1] = static_cast<char>(rng());  // the last byte differs
      packet(in, body);
    }
    inputs.push_back(in);
  }
  // Random packets: short and long, alike and not, and bytes that are no packet.
  for (int k = 0; k < 60; ++k) {
    std::string in;
    for (int i = 0, n = static_cast<int>(rng() % 200); i < n; ++i) {
      std::string body(rng() % (k % 2 ? 140 : 1100), '\0');
      for (size_t j = 0; j < body.size(); ++j) body[j] = static_cast<char>(rng() % 4 == 0 ? rng() : j);
      packet(in, body);
    }
    if (k % 5 == 0) in += "\x0a\x7f tail";
    inputs.push_back(in);
  }
  for (const std::string& in : inputs) {
    size_t n = 0;
    INFO(in.size() << " bytes");
    CHECK(round_trip(in, &n) == in);
    CHECK(n == expected_size(in));
  }
}

TEST_CASE("The .pftrace's deflated packets depend on the packets only", "[perfetto][deflate]") {
  std::string in;
  for (int i = 0; i < 300; ++i) packet(in, "job " + std::to_string(i % 17) + " line " + std::to_string(i));
  std::string other;
  for (int i = 0; i < 50; ++i) packet(other, std::string(i + 3, 'q'));
  // Into a fresh buffer, and into one that held another stream.
  std::string a, b;
  const size_t na = deflate_packets(in, a, 0);
  deflate_packets(other, b, 0);
  const size_t nb = deflate_packets(in, b, 0);
  CHECK(a.substr(0, na) == b.substr(0, nb));
}

TEST_CASE("The Adler-32 trailer is zlib's adler32, at every length and from any start", "[perfetto][deflate]") {
  std::mt19937_64 rng(1950);
  std::string bytes(70000, '\0');
  for (char& c : bytes) c = static_cast<char>(rng() % 256);
  // 0xff bytes are the largest sums: several 5552-byte rounds of them.
  const std::string all_ff(3 * 5552 + 17, '\xff');
  for (const std::string* data : {static_cast<const std::string*>(&bytes), &all_ff}) {
    for (size_t len :
         std::vector<size_t>{0, 1, 15, 16, 17, 31, 32, 33, 5551, 5552, 5553, 5568, 11104, 16673, 65536, 70000}) {
      if (len > data->size()) continue;
      for (size_t offset : std::vector<size_t>{0, 1, 7}) {  // unaligned starts
        if (offset + len > data->size()) continue;
        const std::string_view part(data->data() + offset, len);
        const auto* z = reinterpret_cast<const Bytef*>(part.data());
        const uLong want = adler32(adler32(0, nullptr, 0), z, static_cast<uInt>(len));
        INFO("length " << len << ", offset " << offset);
        CHECK(ppt::proto::adler32_of(part) == want);
        // Continued from another checksum, as zlib's second argument.
        const uLong start = adler32(adler32(0, nullptr, 0), reinterpret_cast<const Bytef*>("pp-timeline"), 11);
        CHECK(ppt::proto::adler32_of(part, static_cast<uint32_t>(start)) == adler32(start, z, static_cast<uInt>(len)));
      }
    }
  }
}
