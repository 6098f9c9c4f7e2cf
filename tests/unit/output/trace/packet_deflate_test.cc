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
