// The scanner's hand-written byte loops against the standard library's plain
// search, on seeded random text full of near-misses: every needle position,
// including the last bytes of a buffer, where the 16-byte loads must stop.
#include "util/byte_search.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <string>

namespace {

constexpr std::string_view kProfiler = "Profiler ";
constexpr std::string_view kStartup = "Please NOTE: device: ";
constexpr std::string_view kDetails = "Pipeline details] ";

// Text made of the needles' own bytes, so that first-byte and probe-byte
// candidates are everywhere, with whole needles planted at random places.
std::string noisy_text(std::mt19937& rng, size_t size) {
  const std::string alphabet = "PlearofiNOTE: dvc]t\n";
  std::uniform_int_distribution<size_t> pick(0, alphabet.size() - 1);
  std::string s(size, ' ');
  for (char& c : s) c = alphabet[pick(rng)];
  std::uniform_int_distribution<int> plant(0, 3);
  for (std::string_view needle : {kProfiler, kStartup, kDetails}) {
    if (plant(rng) == 0 && size >= needle.size()) {
      std::uniform_int_distribution<size_t> at(0, size - needle.size());
      s.replace(at(rng), needle.size(), needle);
    }
  }
  return s;
}

}  // namespace

TEST_CASE("find_any_of_three finds the earliest of three needles, at every offset and buffer end", "[byte_search]") {
  std::mt19937 rng(17);
  for (size_t size = 0; size < 200; ++size) {
    for (int rep = 0; rep < 20; ++rep) {
      std::string text = noisy_text(rng, size);
      std::string_view v(text);
      for (size_t from = 0; from <= size; from += 5) {
        const char* got =
            ppt::find_any_of_three(text.data() + from, text.data() + size, kProfiler, 3, kStartup, 7, kDetails, 16);
        size_t first = std::min({v.find(kProfiler, from), v.find(kStartup, from), v.find(kDetails, from)});
        REQUIRE(got == (first == std::string_view::npos ? nullptr : text.data() + first));
      }
    }
  }
}

TEST_CASE("count_newlines counts what std::count counts", "[byte_search]") {
  std::mt19937 rng(3);
  for (size_t size = 0; size < 300; ++size) {
    std::string text = noisy_text(rng, size);
    for (size_t from = 0; from <= size; from += 11) {
      auto want = static_cast<size_t>(std::count(text.begin() + static_cast<std::ptrdiff_t>(from), text.end(), '\n'));
      REQUIRE(ppt::count_newlines(text.data() + from, text.data() + size) == want);
    }
  }
  // Newlines only, past the 255 blocks a byte lane counts before it is
  // summed (a 256th would wrap it to 0), and noisy text as long.
  for (size_t size : {size_t{255 * 16}, size_t{255 * 16 + 1}, size_t{256 * 16}, size_t{3 * 255 * 16 + 7}}) {
    const std::string all(size, '\n');
    REQUIRE(ppt::count_newlines(all.data(), all.data() + size) == size);
    std::string text = noisy_text(rng, size);
    REQUIRE(ppt::count_newlines(text.data(), text.data() + size) ==
            static_cast<size_t>(std::count(text.begin(), text.end(), '\n')));
  }
}
