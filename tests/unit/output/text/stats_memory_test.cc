// What stats says of each stage's memory: the table in every format, whether
// each stage fits a device, and the JSON's memory block read back as written.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>

#include "output/text/stats_writers.h"
#include "support/test_support.h"
#include "util/escape.h"

namespace ppt {
namespace {

constexpr int64_t kRes = 10737418;  // 0.01 GiB
constexpr int64_t kGiB = int64_t{1} << 30;

std::string gib(int64_t bytes) { return fmt::format("{:.2f}", static_cast<double>(bytes) / static_cast<double>(kGiB)); }

StageMemory stage_memory(int32_t stage, int64_t stat, std::vector<int64_t> acts, int32_t in_flight) {
  StageMemory m;
  m.stage = stage;
  m.ranks = 2;
  m.static_bytes = stat;
  m.activation_bytes_per_chunk = std::move(acts);
  for (int64_t a : m.activation_bytes_per_chunk) m.activation_bytes_per_micro_batch += a;
  m.peak_in_flight = in_flight;
  m.peak_allocated_bytes = stat + in_flight * m.activation_bytes_per_micro_batch;
  m.peak_reserved_bytes = m.peak_allocated_bytes + 3 * kGiB;
  m.peak_rank = stage;
  m.peak_step = 2;
  m.peak_at = fmt::format("after forward, micro-batch {}", in_flight - 1);
  return m;
}

// Two stages of a 1F1B run: stage 0 holds 2 micro-batches at its peak, stage 1 one.
Stats stats_with_memory() {
  Stats st;
  st.source = "logs";
  st.memory.resolution_bytes = kRes;
  st.memory.stages = {stage_memory(0, 6100 * kRes, {1530 * kRes}, 2), stage_memory(1, 5207 * kRes, {1211 * kRes}, 1)};
  return st;
}

TEST_CASE("without memory samples no format says anything of memory", "[stats][memory]") {
  Stats st;
  st.source = "logs";
  CHECK(format_stats_text(st).find("memory") == std::string::npos);
  CHECK(format_stats_markdown(st).find("Memory") == std::string::npos);
  CHECK(format_stats_html(st).find("Memory") == std::string::npos);
  CHECK_FALSE(nlohmann::json::parse(format_stats_json(st)).contains("memory"));
}

TEST_CASE("the memory table gives each stage's peak, where, in flight, static, activation and reserved",
          "[stats][memory]") {
  Stats st = stats_with_memory();
  const std::string text = format_stats_text(st);
  REQUIRE(text.find("memory, per stage") != std::string::npos);
  CHECK(text.find("to 0.01 GiB") != std::string::npos);
  for (const StageMemory& m : st.memory.stages) {
    CAPTURE(m.stage);
    // The stage's row, from its number to its place.
    const std::string where = fmt::format("rank {}, step {}, {}", m.peak_rank, m.peak_step, m.peak_at);
    const size_t end = text.rfind(where);  // the table's row, below the summary's line
    REQUIRE(end != std::string::npos);
    const size_t start = text.rfind('\n', end) + 1;
    const std::string row = text.substr(start, end - start);
    std::vector<std::string> cells;
    for (size_t i = 0; i < row.size();) {
      size_t j = row.find_first_not_of(' ', i);
      if (j == std::string::npos) break;
      size_t k = row.find(' ', j);
      cells.push_back(row.substr(j, k - j));
      i = k == std::string::npos ? row.size() : k;
    }
    REQUIRE(cells.size() == 6);
    CHECK(cells[0] == std::to_string(m.stage));
    CHECK(cells[1] == gib(m.peak_allocated_bytes));
    CHECK(cells[2] == std::to_string(m.peak_in_flight));
    CHECK(cells[3] == gib(m.static_bytes));
    CHECK(cells[4] == gib(m.activation_bytes_per_micro_batch));
    CHECK(cells[5] == gib(m.peak_reserved_bytes));
  }
  // The summary names the highest peak: stage 0's.
  const StageMemory& top = st.memory.stages[0];
  CHECK(text.find(fmt::format("peak {} GiB allocated on stage 0 (rank 0, step 2, {})", gib(top.peak_allocated_bytes),
                              top.peak_at)) != std::string::npos);
  CHECK(text.find("fits") == std::string::npos);
  const std::string md = format_stats_markdown(st);
  CHECK(md.find("**Memory, per stage") != std::string::npos);
  CHECK(md.find("| " + markdown_text(gib(top.peak_allocated_bytes)) + " |") != std::string::npos);
  const std::string html = format_stats_html(st);
  CHECK(html.find("<h3>Memory, per stage") != std::string::npos);
  CHECK(html.find("<td>" + gib(top.static_bytes) + "</td>") != std::string::npos);
}

TEST_CASE("a VPP stage's activation is shown per chunk beside its sum", "[stats][memory]") {
  Stats st = stats_with_memory();
  st.memory.stages[1] = stage_memory(1, 5000 * kRes, {700 * kRes, 650 * kRes}, 5);
  const std::string text = format_stats_text(st);
  CHECK(text.find("per chunk GiB") != std::string::npos);
  CHECK(text.find(gib(700 * kRes) + " + " + gib(650 * kRes)) != std::string::npos);
  CHECK(text.find(gib(1350 * kRes)) != std::string::npos);
}

TEST_CASE("with a device size each stage says whether it fits and by how much", "[stats][memory]") {
  Stats st = stats_with_memory();
  const StageMemory& big = st.memory.stages[0];
  const StageMemory& small = st.memory.stages[1];
  // Between the two peaks: stage 1 fits, stage 0 does not.
  st.memory.device_memory_bytes = (big.peak_allocated_bytes + small.peak_allocated_bytes) / 2;
  const int64_t device = st.memory.device_memory_bytes;
  const std::string text = format_stats_text(st);
  CHECK(text.find("on " + gib(device) + " GiB") != std::string::npos);
  CHECK(text.find("does not fit (" + gib(big.peak_allocated_bytes - device) + " GiB over)") != std::string::npos);
  CHECK(text.find("fits (" + gib(device - small.peak_allocated_bytes) + " GiB free)") != std::string::npos);
  CHECK(text.find(fmt::format("on a device of {} GiB: stage 0 does not fit ({} GiB over)", gib(device),
                              gib(big.peak_allocated_bytes - device))) != std::string::npos);
  const std::string html = format_stats_html(st);
  CHECK(html.find("<td class=\"text bad\">does not fit") != std::string::npos);
  CHECK(html.find("<td class=\"text good\">fits") != std::string::npos);

  nlohmann::json doc = nlohmann::json::parse(format_stats_json(st));
  const nlohmann::json& mem = doc["memory"];
  CHECK(mem["device_memory_bytes"] == device);
  CHECK(mem["stages"][0]["fits"] == false);
  CHECK(mem["stages"][0]["margin_bytes"] == device - big.peak_allocated_bytes);
  CHECK(mem["stages"][1]["fits"] == true);
  CHECK(mem["stages"][1]["margin_bytes"] == device - small.peak_allocated_bytes);

  // A device both fit: the least headroom is the highest peak's.
  st.memory.device_memory_bytes = big.peak_allocated_bytes + 5 * kGiB;
  CHECK(format_stats_text(st).find(
            fmt::format("every stage fits, the least headroom {} GiB (stage 0)", gib(5 * kGiB))) != std::string::npos);
}

TEST_CASE("the JSON's memory block reads back as written", "[stats][memory][json]") {
  Stats st = stats_with_memory();
  st.memory.stages[1] = stage_memory(1, 5000 * kRes, {700 * kRes, 650 * kRes}, 5);
  for (int64_t device : {int64_t{0}, 80 * kGiB}) {
    CAPTURE(device);
    st.memory.device_memory_bytes = device;
    const std::string text = format_stats_json(st);
    nlohmann::json doc = nlohmann::json::parse(text);
    REQUIRE(doc.contains("memory"));
    CHECK(doc["memory"]["resolution_bytes"] == kRes);
    CHECK(doc["memory"].contains("device_memory_bytes") == (device > 0));
    const nlohmann::json& s1 = doc["memory"]["stages"][1];
    for (const char* key :
         {"stage", "peak_allocated_bytes", "peak_reserved_bytes", "static_bytes", "activation_bytes_per_micro_batch",
          "activation_bytes_per_chunk", "peak_in_flight", "peak_rank", "peak_step", "peak_at"}) {
      CHECK(s1.contains(key));
    }
    CHECK(s1["activation_bytes_per_chunk"] == nlohmann::json::array({700 * kRes, 650 * kRes}));
    CHECK(s1.contains("fits") == (device > 0));

    std::string error;
    std::optional<Stats> back = parse_stats_json(text, &error);
    REQUIRE(back);
    CHECK(error.empty());
    const MemoryStats& m = back->memory;
    CHECK(m.resolution_bytes == kRes);
    CHECK(m.device_memory_bytes == device);
    REQUIRE(m.stages.size() == 2);
    for (size_t i = 0; i < 2; ++i) {
      const StageMemory& a = st.memory.stages[i];
      const StageMemory& b = m.stages[i];
      CHECK(b.stage == a.stage);
      CHECK(b.ranks == a.ranks);
      CHECK(b.peak_allocated_bytes == a.peak_allocated_bytes);
      CHECK(b.peak_reserved_bytes == a.peak_reserved_bytes);
      CHECK(b.static_bytes == a.static_bytes);
      CHECK(b.activation_bytes_per_chunk == a.activation_bytes_per_chunk);
      CHECK(b.activation_bytes_per_micro_batch == a.activation_bytes_per_micro_batch);
      CHECK(b.peak_in_flight == a.peak_in_flight);
      CHECK(b.peak_rank == a.peak_rank);
      CHECK(b.peak_step == a.peak_step);
      CHECK(b.peak_at == a.peak_at);
    }
    CHECK(format_stats_json(*back) == text);
  }
}

TEST_CASE("a crafted memory block is refused by field", "[stats][memory][json]") {
  const std::string good = format_stats_json(stats_with_memory());
  struct Case {
    const char* key;
    nlohmann::json value;
  };
  for (const Case& c : {Case{"peak_allocated_bytes", -1}, Case{"static_bytes", 1e30}, Case{"peak_at", 3},
                        Case{"activation_bytes_per_chunk", nlohmann::json::array({1.5})}, Case{"peak_rank", 1e12}}) {
    CAPTURE(c.key, c.value.dump());
    nlohmann::json doc = nlohmann::json::parse(good);
    doc["memory"]["stages"][1][c.key] = c.value;
    std::string error;
    bool bad_value = false;
    CHECK_FALSE(parse_stats_json(doc.dump(), &error, &bad_value));
    CHECK(bad_value);
    CHECK_THAT(error, Catch::StartsWith(std::string("not a valid stats file: memory.stages[1].") + c.key));
  }
}

TEST_CASE("stats --json with memory follows stats.v2.json", "[stats][memory][json]") {
  if (testing::run_command("python3 -c 'import jsonschema' 2>/dev/null") != 0) {
    WARN("python3 jsonschema is not installed (scripts/setup.sh installs it): not checked");
    return;
  }
  testing::TempDir dir;
  const std::string schema = std::string(PPT_SOURCE_DIR) + "/docs/schemas/stats.v2.json";
  const std::string check =
      "import json,sys,jsonschema; jsonschema.Draft202012Validator(json.load(open(sys.argv[1])))"
      ".validate(json.load(open(sys.argv[2])))";
  Stats st = stats_with_memory();
  for (int64_t device : {int64_t{0}, 80 * kGiB}) {
    st.memory.device_memory_bytes = device;
    const std::string path = dir.write("stats.json", format_stats_json(st));
    CHECK(testing::run_command("python3 -c '" + check + "' " + schema + " " + path) == 0);
  }
  // And a stage without a key it requires does not.
  nlohmann::json doc = nlohmann::json::parse(format_stats_json(st));
  doc["memory"]["stages"][0].erase("static_bytes");
  const std::string path = dir.write("bad.json", doc.dump());
  CHECK(testing::run_command("python3 -c '" + check + "' " + schema + " " + path + " 2>/dev/null") != 0);
}

}  // namespace
}  // namespace ppt
