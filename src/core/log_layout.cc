#include "pp_timeline/log_layout.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <map>
#include <set>
#include <system_error>

namespace ppt {
namespace fs = std::filesystem;

bool natural_less(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    bool da = a[i] >= '0' && a[i] <= '9';
    bool db = b[j] >= '0' && b[j] <= '9';
    if (da && db) {
      size_t i0 = i, j0 = j;
      while (i < a.size() && a[i] == '0') ++i;
      while (j < b.size() && b[j] == '0') ++j;
      size_t is = i, js = j;
      while (i < a.size() && a[i] >= '0' && a[i] <= '9') ++i;
      while (j < b.size() && b[j] >= '0' && b[j] <= '9') ++j;
      size_t la = i - is, lb = j - js;
      if (la != lb) return la < lb;
      int c = a.compare(is, la, b, js, lb);
      if (c != 0) return c < 0;
      if ((i - i0) != (j - j0)) return (i - i0) < (j - j0);  // fewer leading zeros first
    } else {
      if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
      ++i;
      ++j;
    }
  }
  return (a.size() - i) < (b.size() - j);
}

int workerlog_index(const std::string& name) {
  constexpr std::string_view kPrefix = "workerlog.";
  if (name.size() <= kPrefix.size() || name.compare(0, kPrefix.size(), kPrefix) != 0) return -1;
  std::string_view rest(name);
  rest.remove_prefix(kPrefix.size());
  if (rest.size() > 3 && rest.substr(rest.size() - 3) == ".gz") rest.remove_suffix(3);
  if (rest.empty() || rest.size() > 6) return -1;
  int value = -1;
  auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
  if (ec != std::errc() || ptr != rest.data() + rest.size() || value < 0) return -1;
  return value;
}

namespace {

struct DirScan {
  std::map<int, std::string> workerlogs;  // local index -> path
  std::vector<std::string> machine_dirs;  // names
  std::vector<std::string> duplicates;    // workerlog.N and workerlog.N.gz both present
};

DirScan scan_dir(const fs::path& dir, std::error_code& ec) {
  DirScan out;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    std::error_code type_ec;
    if (name.rfind("machine", 0) == 0 && it->is_directory(type_ec)) {
      out.machine_dirs.push_back(name);
      continue;
    }
    int index = workerlog_index(name);
    if (index < 0) continue;
    auto [pos, inserted] = out.workerlogs.emplace(index, it->path().string());
    if (!inserted) {
      // Prefer the plain file over its compressed copy.
      if (name.size() > 3 && name.substr(name.size() - 3) == ".gz") {
        out.duplicates.push_back(it->path().string());
      } else {
        out.duplicates.push_back(pos->second);
        pos->second = it->path().string();
      }
    }
  }
  std::sort(out.machine_dirs.begin(), out.machine_dirs.end(), natural_less);
  return out;
}

// A rank whose log is missing must not vanish silently: names the
// workerlog.<i> below `highest` that `where` lacks.
void note_missing(const std::string& where, const std::map<int, std::string>& logs, int highest,
                  std::vector<std::string>& notes) {
  std::vector<std::string> missing;
  for (int i = 0; i <= highest; ++i) {
    if (logs.count(i) == 0) missing.push_back("workerlog." + std::to_string(i));
  }
  if (missing.empty()) return;
  size_t n = missing.size();
  if (n > 8) missing.resize(8), missing.push_back(fmt::format("and {} more", n - 8));
  notes.push_back(fmt::format("{}: no {} ({} of {} local ranks have no log; global ranks count only the "
                              "files present)",
                              where, fmt::join(missing, ", "), n, highest + 1));
}

}  // namespace

LayoutResult discover_layout(const LayoutRequest& request) {
  LayoutResult result;
  Layout layout;
  std::set<int> wanted(request.devices.begin(), request.devices.end());
  auto keep = [&](int index) { return wanted.empty() || wanted.count(index) > 0; };

  if (!request.log_dir.empty()) {
    fs::path dir(request.log_dir);
    std::error_code ec;
    auto status = fs::status(dir, ec);
    if (ec || !fs::exists(status)) {
      result.error = fmt::format("{}: log directory does not exist", request.log_dir);
      result.usage_error = true;
      return result;
    }
    if (!fs::is_directory(status)) {
      result.error = fmt::format("{}: not a directory (name log files without --log_dir)",
                                 request.log_dir);
      result.usage_error = true;
      return result;
    }
    DirScan top = scan_dir(dir, ec);
    if (ec) {
      result.error = fmt::format("{}: cannot list the directory: {}", request.log_dir, ec.message());
      return result;
    }
    for (const std::string& d : top.duplicates) layout.notes.push_back(fmt::format("{}: ignored, a plain copy of the same log is present", d));
    if (!top.machine_dirs.empty()) {
      if (!top.workerlogs.empty()) {
        layout.notes.push_back(fmt::format(
            "{}: {} workerlog file(s) beside the machine*/ folders are ignored", request.log_dir,
            top.workerlogs.size()));
      }
      std::vector<std::pair<std::string, std::map<int, std::string>>> found_per_machine;
      for (const std::string& m : top.machine_dirs) {
        DirScan sub = scan_dir(dir / m, ec);
        if (ec) {
          result.error = fmt::format("{}: cannot list the directory: {}", (dir / m).string(), ec.message());
          return result;
        }
        for (const std::string& d : sub.duplicates) layout.notes.push_back(fmt::format("{}: ignored, a plain copy of the same log is present", d));
        if (sub.workerlogs.empty()) {
          layout.notes.push_back(fmt::format("{}: no workerlog.<i> files", (dir / m).string()));
          continue;
        }
        int32_t machine = static_cast<int32_t>(layout.machines.size());
        layout.machines.push_back(m);
        for (const auto& [index, path] : sub.workerlogs) {
          if (!keep(index)) continue;
          layout.files.push_back({path, m, machine, index, 0});
        }
        found_per_machine.emplace_back((dir / m).string(), std::move(sub.workerlogs));
      }
      if (wanted.empty()) {
        int highest = -1;
        for (const auto& [where, logs] : found_per_machine) highest = std::max(highest, logs.rbegin()->first);
        for (const auto& [where, logs] : found_per_machine) note_missing(where, logs, highest, layout.notes);
      }
    } else {
      layout.machines.push_back("");
      for (const auto& [index, path] : top.workerlogs) {
        if (!keep(index)) continue;
        layout.files.push_back({path, "", 0, index, 0});
      }
      if (wanted.empty() && !top.workerlogs.empty()) {
        note_missing(request.log_dir, top.workerlogs, top.workerlogs.rbegin()->first, layout.notes);
      }
    }
    if (layout.files.empty()) {
      if (top.workerlogs.empty() && top.machine_dirs.empty()) {
        result.error = fmt::format(
            "{}: no workerlog.<i> files and no machine*/ folders (is this the --log_dir given to "
            "paddle.distributed.launch?)",
            request.log_dir);
      } else if (!wanted.empty()) {
        result.error = fmt::format("{}: no workerlog files for the devices asked for", request.log_dir);
      } else {
        result.error = fmt::format("{}: the machine*/ folders hold no workerlog.<i> files", request.log_dir);
      }
      return result;
    }
  }

  if (!request.files.empty()) {
    int32_t machine = static_cast<int32_t>(layout.machines.size());
    if (request.log_dir.empty()) layout.machines.push_back("");
    else machine = 0;
    int32_t position = 0;
    for (const std::string& f : request.files) {
      std::error_code ec;
      if (!fs::exists(fs::path(f), ec)) {
        result.error = fmt::format("{}: no such file", f);
        result.usage_error = true;
        return result;
      }
      layout.files.push_back({f, layout.machines[machine], machine, position++, 0});
    }
  }
  if (layout.files.empty()) {
    result.error = "no log files given (use --log_dir DIR or name the files)";
    result.usage_error = true;
    return result;
  }
  for (size_t i = 0; i < layout.files.size(); ++i) layout.files[i].global_rank = static_cast<int32_t>(i);
  result.layout = std::move(layout);
  return result;
}

}  // namespace ppt
