#include "output/trace/proto_wire.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace ppt::proto {
namespace {

// The same fields through a Writer and through a Reserved on another
// Writer's buffer: nested messages of any length (their lengths past 127
// bytes take more than one byte), varints of every size, fixed64 values.
template <typename W>
void write_fields(W& w, std::mt19937_64& rng, int depth) {
  const int fields = static_cast<int>(rng() % 12);
  for (int k = 0; k < fields; ++k) {
    const uint32_t field = 1 + static_cast<uint32_t>(rng() % 90);  // tags of one and two bytes
    switch (rng() % 5) {
      case 0: w.varint(field, rng() >> (rng() % 64)); break;
      case 1: w.int64(field, -static_cast<int64_t>(rng() % 1000)); break;
      case 2: w.fixed64(field, rng()); break;
      case 3: w.boolean(field, rng() % 2 == 0); break;
      default:
        if (depth < 3) {
          auto token = w.open_nested(field);
          write_fields(w, rng, depth + 1);
          w.close_nested(token);
        }
    }
  }
}

TEST_CASE("Reserved writes the bytes a Writer writes", "[perfetto]") {
  for (uint64_t seed = 0; seed < 300; ++seed) {
    std::string a, b;
    Writer wa(a), wb(b);
    wa.varint(1, 150);  // something before, as a job's packets follow others
    wb.varint(1, 150);
    std::mt19937_64 ra(seed), rb(seed);
    {
      auto p = wa.open_nested(1);
      write_fields(wa, ra, 0);
      wa.close_nested(p);
    }
    {
      // Room for the most write_fields writes: 12^4 fields of 12 bytes at
      // most would be 250 KB; the random ones stay far below.
      Reserved r(wb, 256 * 1024);
      auto p = r.open_nested(1);
      write_fields(r, rb, 0);
      r.close_nested(p);
    }
    INFO("seed " << seed);
    REQUIRE(wb.size() == wa.size());
    REQUIRE(wb.view() == wa.view());
    // The Writer goes on after the Reserved's bytes.
    wa.varint(2, 7);
    wb.varint(2, 7);
    REQUIRE(wb.view() == wa.view());
  }
}

TEST_CASE("A nested message of 128 bytes or more gets its longer length", "[perfetto]") {
  for (size_t len : {size_t{126}, size_t{127}, size_t{128}, size_t{300}, size_t{16383}, size_t{16384}}) {
    std::string buf;
    Writer w(buf);
    {
      Reserved r(w, len + 64);
      char* p = r.open_nested(3);
      // len bytes of content: a fixed64 field is 9 bytes; the rest (4 to
      // 12 bytes) varints of 2 and 3 bytes (a one-byte tag, values 5 and 200).
      size_t left = len;
      while (left > 12) r.fixed64(1, 0x0102030405060708ULL), left -= 9;
      if (left % 2 == 1) r.varint(1, 200), left -= 3;
      while (left > 0) r.varint(1, 5), left -= 2;
      r.close_nested(p);
    }
    std::string_view v = w.view();
    REQUIRE(v[0] == 0x1a);  // field 3, length-delimited
    uint64_t got = 0;
    size_t i = 1;
    for (int shift = 0;; shift += 7) {
      const auto byte = static_cast<uint8_t>(v[i++]);
      got |= uint64_t{byte & 0x7fu} << shift;
      if (byte < 0x80) break;
    }
    CHECK(got == len);
    CHECK(v.size() == i + len);
  }
}

}  // namespace
}  // namespace ppt::proto
