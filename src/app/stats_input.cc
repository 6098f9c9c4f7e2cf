#include "app/stats_input.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "output/text/stats_json.h"

namespace ppt {

RunPathKind classify_run_path(const std::string& path) {
  namespace fs = std::filesystem;
  // One rank's log on standard input (a stats JSON must be named as a file).
  if (is_stdin_path(path)) return RunPathKind::kStdin;
  std::error_code ec;
  fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) return RunPathKind::kMissing;
  if (fs::is_directory(st)) return RunPathKind::kLogDir;
  std::ifstream in(path, std::ios::binary);
  char head[256] = {};
  in.read(head, sizeof head);
  return looks_like_json(std::string_view(head, static_cast<size_t>(in.gcount()))) ? RunPathKind::kStatsJson
                                                                                   : RunPathKind::kLogFile;
}

DriverRequest request_for_path(DriverRequest request, const std::string& path, RunPathKind kind) {
  request.input.log_dir.clear();
  request.input.files.clear();
  if (kind == RunPathKind::kLogDir)
    request.input.log_dir = path;
  else
    request.input.files = {path};
  return request;
}

bool read_stats_file(const std::string& path, StatsInput* out, std::string* error, bool* usage) {
  *usage = false;
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) {
    *error = fmt::format("{}: cannot read", path);
    return false;
  }
  std::string why;
  std::optional<Stats> stats = parse_stats_json(text.str(), &why, usage);
  if (!stats) {
    // A value its schema does not allow: the file given is not a baseline
    // this version can use (a usage error, like any argument that is wrong).
    *error = fmt::format("{}: {}", path, why);
    return false;
  }
  out->stats = std::move(*stats);
  if (out->stats.source.empty()) out->stats.source = path;
  out->stats.source = fmt::format("{} (stats of {})", path, out->stats.source);
  return true;
}

}  // namespace ppt
