#include "input/dygraph_profile.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include "input/gzip_reader.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <unordered_map>

namespace ppt {

int dygraph_profile_rank(std::string_view name) {
  if (name.size() <= kDygraphProfilePrefix.size() ||
      name.substr(0, kDygraphProfilePrefix.size()) != kDygraphProfilePrefix) {
    return -1;
  }
  std::string_view rest = name.substr(kDygraphProfilePrefix.size());
  if (is_gzip_name(rest)) rest.remove_suffix(3);
  if (rest.empty() || rest.size() > 7) return -1;
  int value = -1;
  auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
  if (ec != std::errc() || ptr != rest.data() + rest.size() || value < 0 || value > kMaxRankIndex) return -1;
  return value;
}

bool looks_like_dygraph_profile(std::string_view head) {
  size_t i = 0;
  while (i < head.size() && (head[i] == ' ' || head[i] == '\t' || head[i] == '\r' || head[i] == '\n')) ++i;
  if (i >= head.size() || head[i] != '{') return false;
  std::string_view line = head.substr(i, head.find('\n', i) - i);
  return line.find("\"ph\"") != std::string_view::npos;
}

namespace {

// One record, as far as it could be read.
struct Record {
  std::string name;
  bool begin = false;
  int64_t ts_ms = 0;
  int64_t tid = 0;
  std::string cat;
  std::string type;  // forward, backward, forward1, ...
  int32_t micro = -1;
  std::string bad;  // why the record is not usable; "" when it is
};

// F -> forward, B -> backward, with the virtual stage as the chunk
// (forward1), as launch logs name VPP jobs.
bool split_name(std::string_view name, std::string& type, int32_t& micro) {
  size_t i = 0;
  while (i < name.size() && ((name[i] >= 'A' && name[i] <= 'Z') || (name[i] >= 'a' && name[i] <= 'z'))) ++i;
  if (i == 0 || i > 32) return false;
  std::string_view letters = name.substr(0, i);
  size_t j = i;
  while (j < name.size() && name[j] >= '0' && name[j] <= '9') ++j;
  if (j == i || j - i > 7) return false;
  std::from_chars(name.data() + i, name.data() + j, micro);
  int32_t chunk = -1;
  std::string_view rest = name.substr(j);
  if (!rest.empty()) {
    constexpr std::string_view kVp = "_VP";
    if (rest.size() <= kVp.size() || rest.size() > kVp.size() + 3 || rest.substr(0, kVp.size()) != kVp) return false;
    rest.remove_prefix(kVp.size());
    auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), chunk);
    if (ec != std::errc() || p != rest.data() + rest.size()) return false;
  }
  if (letters == "F")
    type = "forward";
  else if (letters == "B")
    type = "backward";
  else
    type = std::string(letters);
  if (chunk >= 0) type += std::to_string(chunk);
  return true;
}

// Reads a whole number from a JSON value (an integer, or a float with no
// fraction: Paddle writes int(...), a rewriting tool may not).
bool whole_number(const nlohmann::json& v, int64_t& out) {
  if (v.is_number_integer()) {
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) return false;
    out = v.get<int64_t>();
    return true;
  }
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (!std::isfinite(d) || d != std::floor(d) || std::fabs(d) > 9.0e15) return false;
    out = static_cast<int64_t>(d);
    return true;
  }
  return false;
}

Record read_record(std::string_view text, bool& is_json) {
  Record r;
  nlohmann::json j = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  is_json = !j.is_discarded();
  if (!is_json) {
    r.bad = "not a JSON record";
    return r;
  }
  if (!j.is_object()) {
    r.bad = "not a JSON object";
    return r;
  }
  auto name = j.find("name");
  auto ph = j.find("ph");
  if (name == j.end() || !name->is_string()) {
    r.bad = "no \"name\" string";
    return r;
  }
  r.name = name->get<std::string>();
  if (ph == j.end() || !ph->is_string() || (ph->get<std::string>() != "B" && ph->get<std::string>() != "E")) {
    r.bad = "\"ph\" is not \"B\" or \"E\"";
    return r;
  }
  r.begin = ph->get<std::string>() == "B";
  if (!split_name(r.name, r.type, r.micro)) {
    r.bad = fmt::format("name \"{}\" is not F<n> or B<n> (with _VP<v>)", r.name);
    return r;
  }
  auto cat = j.find("cat");
  if (cat != j.end() && cat->is_string()) r.cat = cat->get<std::string>();
  auto tid = j.find("tid");
  if (tid == j.end() || !whole_number(*tid, r.tid) || r.tid < 1 || r.tid > (1 << 20)) {
    r.bad = "\"tid\" is not a stage + 1 (a positive integer)";
    return r;
  }
  auto ts = j.find("ts");
  if (ts == j.end() || !whole_number(*ts, r.ts_ms)) {
    r.bad = "\"ts\" is not a whole number of milliseconds";
    return r;
  }
  // ns must fit in 64 bits: up to year ~2262.
  if (r.ts_ms < 0 || r.ts_ms > INT64_MAX / kDygraphResolutionNs) {
    r.bad = fmt::format("\"ts\" {} is not milliseconds since 1970", r.ts_ms);
    return r;
  }
  return r;
}

class Reader {
 public:
  Reader(uint32_t file_index, FileScan& out) : file_(file_index), scan_(out) {}

  void line(std::string_view text, uint64_t line_no, bool last_unterminated) {
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    size_t a = text.find_first_not_of(" \t");
    if (a == std::string_view::npos) return;  // blank
    size_t z = text.find_last_not_of(" \t");
    std::string_view body = text.substr(a, z - a + 1);
    if (!body.empty() && body.back() == ',') body.remove_suffix(1);  // a line of a merged array
    ++scan_.counts.profile_records;
    bool is_json = false;
    Record r = read_record(body, is_json);
    if (!r.bad.empty() && r.name.empty()) {
      // Not even a name: a job half that cannot be paired.
      ++scan_.counts.profiler_lines;
      if (!is_json && last_unterminated) {
        scan_.diagnostics.add(IssueKind::kTruncatedProfileRecord, file_, line_no,
                              "the last line is cut short (no newline): the file ends inside a record", text);
      } else {
        scan_.diagnostics.add(IssueKind::kBadProfileRecord, file_, line_no, r.bad, text);
      }
      return;
    }
    if (!r.bad.empty() && last_unterminated && !is_json) {
      ++scan_.counts.profiler_lines;
      scan_.diagnostics.add(IssueKind::kTruncatedProfileRecord, file_, line_no,
                            "the last line is cut short (no newline): the file ends inside a record", text);
      return;
    }
    if (r.bad.empty()) {
      // Another stage or category than the file's: a new process.
      if (have_first_ && (r.tid != tid_ || r.cat != cat_)) {
        close_open();
        scan_.process_starts.push_back({static_cast<uint32_t>(scan_.jobs.size()), static_cast<uint32_t>(line_no)});
      }
      if (!have_first_) {
        have_first_ = true;
        scan_.stage = static_cast<int32_t>(r.tid - 1);
      }
      tid_ = r.tid;
      cat_ = r.cat;
    }
    if (r.begin) {
      auto it = open_.find(r.name);
      if (it != open_.end()) {
        unmatched_begin(it->second);
        open_.erase(it);
      }
      std::string key = r.name;
      open_.emplace(std::move(key), Open{line_no, std::move(r), std::string(text)});
      return;
    }
    auto it = open_.find(r.name);
    if (it == open_.end()) {
      ++scan_.counts.profiler_lines;
      if (!r.bad.empty()) {
        scan_.diagnostics.add(IssueKind::kBadProfileRecord, file_, line_no, r.bad, text);
      } else {
        scan_.diagnostics.add(IssueKind::kUnmatchedEnd, file_, line_no,
                              fmt::format("\"E\" of {} without a \"B\" before it", r.name), text);
      }
      return;
    }
    Open b = std::move(it->second);
    open_.erase(it);
    ++scan_.counts.profiler_lines;
    if (!b.record.bad.empty()) {
      scan_.diagnostics.add(IssueKind::kBadProfileRecord, file_, b.line, b.record.bad, b.text);
      return;
    }
    if (!r.bad.empty()) {
      scan_.diagnostics.add(IssueKind::kBadProfileRecord, file_, line_no, r.bad, text);
      return;
    }
    if (r.ts_ms < b.record.ts_ms) {
      scan_.diagnostics.add(
          IssueKind::kEndBeforeStart, file_, line_no,
          fmt::format("{} ends at {} ms, before its \"B\" at line {} ({} ms)", r.name, r.ts_ms, b.line, b.record.ts_ms),
          text);
      return;
    }
    Job job;
    job.start_ns = b.record.ts_ms * kDygraphResolutionNs;
    job.end_ns = r.ts_ms * kDygraphResolutionNs;
    job.job_id = b.record.micro;
    job.micro_batch = b.record.micro;
    job.type = intern(b.record.type);
    job.line = static_cast<uint32_t>(b.line);
    scan_.jobs.push_back(job);
    ++scan_.counts.jobs;
  }

  void finish() { close_open(); }

 private:
  struct Open {
    uint64_t line;
    Record record;
    std::string text;
  };

  void unmatched_begin(const Open& o) {
    ++scan_.counts.profiler_lines;
    if (!o.record.bad.empty()) {
      scan_.diagnostics.add(IssueKind::kBadProfileRecord, file_, o.line, o.record.bad, o.text);
    } else {
      scan_.diagnostics.add(IssueKind::kUnmatchedBegin, file_, o.line,
                            fmt::format("\"B\" of {} without its \"E\"", o.record.name), o.text);
    }
  }

  // Every open "B", in line order, is unmatched.
  void close_open() {
    std::vector<const Open*> left;
    for (const auto& [name, o] : open_) left.push_back(&o);
    std::sort(left.begin(), left.end(), [](const Open* a, const Open* b) { return a->line < b->line; });
    for (const Open* o : left) unmatched_begin(*o);
    open_.clear();
  }

  uint32_t intern(const std::string& type) {
    auto [it, inserted] = types_.emplace(type, static_cast<uint32_t>(scan_.types.size()));
    if (inserted) scan_.types.push_back(type);
    return it->second;
  }

  uint32_t file_;
  FileScan& scan_;
  std::map<std::string, Open> open_;
  std::unordered_map<std::string, uint32_t> types_;
  bool have_first_ = false;
  int64_t tid_ = 0;
  std::string cat_;
};

void read_all(std::string_view data, uint32_t file_index, FileScan& out) {
  FileScan& scan = out;
  scan.counts.files = 1;
  scan.counts.bytes += data.size();
  scan.dygraph = true;
  Reader reader(file_index, out);
  uint64_t line_no = 0;
  size_t pos = 0;
  while (pos < data.size()) {
    size_t nl = data.find('\n', pos);
    bool unterminated = nl == std::string_view::npos;
    size_t end = unterminated ? data.size() : nl;
    ++line_no;
    reader.line(data.substr(pos, end - pos), line_no, unterminated);
    pos = unterminated ? data.size() : nl + 1;
  }
  reader.finish();
  scan.counts.lines = line_no;
  if (scan.counts.profile_records == 0) {
    scan.diagnostics.add(IssueKind::kNoProfilerLines, file_index, 0,
                         "no profile record in this dynamic-graph profile file (empty: the trainer wrote no step)");
  }
}

}  // namespace

FileScan scan_dygraph_buffer(std::string_view data, uint32_t file_index) {
  FileScan out;
  read_all(data, file_index, out);
  return out;
}

FileScan scan_dygraph_profile(const std::string& path, uint32_t file_index) {
  struct stat st {};
  std::string why;
  int fd = open_input_file(path, "profile file", &st, &why);
  if (fd < 0) return unreadable_file_scan(file_index, why);
  FileScan out;
  std::string data;
  if (has_gzip_magic(fd)) {
    GzipReader gz(GzipReader::from_fd(fd), "gzip: unexpected end of file (the .gz is cut short)");
    char buf[1 << 16];
    long n = 0;
    std::string why;
    while ((n = gz.read(buf, sizeof buf, &why)) > 0) data.append(buf, static_cast<size_t>(n));
    close(fd);
    read_all(data, file_index, out);
    if (n < 0) out.diagnostics.add(IssueKind::kUnreadableFile, file_index, 0, why + "; what came before was read");
    if (gz.trailing_bytes() > 0) {
      out.diagnostics.add(IssueKind::kTrailingData, file_index, 0,
                          std::to_string(gz.trailing_bytes()) +
                              " bytes after the gzip data are not gzip; read as plain text, where gunzip would drop "
                              "them");
    }
    return out;
  }
  // Only the bytes present at open are read.
  data.resize(static_cast<size_t>(st.st_size));
  size_t got = 0;
  while (got < data.size()) {
    ssize_t n = read(fd, data.data() + got, data.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  close(fd);
  data.resize(got);
  read_all(data, file_index, out);
  if (got < static_cast<size_t>(st.st_size)) {
    out.diagnostics.add(IssueKind::kFileChanged, file_index, 0,
                        fmt::format("shrank from {} to {} bytes while being read", st.st_size, got));
  }
  return out;
}

}  // namespace ppt
