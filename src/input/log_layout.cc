#include "input/log_layout.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>
#include <system_error>

#include "input/dygraph_profile.h"
#include "input/gzip_reader.h"
#include "util/escape.h"
#include "util/text.h"

namespace ppt {
namespace fs = std::filesystem;

int workerlog_index(const std::string& name) {
  constexpr std::string_view kPrefix = "workerlog.";
  if (name.size() <= kPrefix.size() || name.compare(0, kPrefix.size(), kPrefix) != 0) return -1;
  std::string_view rest(name);
  rest.remove_prefix(kPrefix.size());
  if (is_gzip_name(rest)) rest.remove_suffix(3);
  if (rest.empty() || rest.size() > 6) return -1;
  int value = -1;
  if (!parse_whole_number(rest, &value) || value < 0 || value > kMaxRankIndex) return -1;
  return value;
}

bool is_log_name_past_rank_bound(std::string_view name) {
  std::string_view rest;
  for (std::string_view prefix : {std::string_view("workerlog."), kDygraphProfilePrefix}) {
    if (name.size() > prefix.size() && name.substr(0, prefix.size()) == prefix) rest = name.substr(prefix.size());
  }
  if (is_gzip_name(rest)) rest.remove_suffix(3);
  if (rest.empty() || !std::all_of(rest.begin(), rest.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return false;
  }
  // A log's name with digits that neither index reads: past the bound, or
  // more digits than it has.
  return workerlog_index(std::string(name)) < 0 && dygraph_profile_rank(name) < 0;
}

bool is_machine_folder_name(std::string_view name) {
  if (name.starts_with("machine")) return true;
  int parts = 0, digits = 0;
  for (char c : name) {
    if (c >= '0' && c <= '9') {
      if (++digits > 3) return false;
    } else if (c == '.' && digits > 0) {
      ++parts;
      digits = 0;
    } else {
      return false;
    }
  }
  return parts == 3 && digits > 0;
}

bool is_stdin_path(const std::string& path) { return path == kStdinPath; }

bool is_dygraph_profile_file(const std::string& path) {
  if (dygraph_profile_rank(fs::path(path).filename().string()) >= 0) return true;
  std::error_code ec;
  if (!fs::is_regular_file(fs::path(path), ec)) return false;  // a FIFO must not be opened here
  FILE* f = fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  char head[512];
  size_t n = fread(head, 1, sizeof head, f);
  fclose(f);
  return looks_like_dygraph_profile(std::string_view(head, n));
}

std::string format_rank_ranges(const std::vector<int32_t>& sorted_ranks) {
  std::string out;
  for (size_t i = 0; i < sorted_ranks.size();) {
    size_t k = i;
    while (k + 1 < sorted_ranks.size() && sorted_ranks[k + 1] == sorted_ranks[k] + 1) ++k;
    if (!out.empty()) out += ", ";
    out += k == i ? fmt::format("{}", sorted_ranks[i]) : fmt::format("{}-{}", sorted_ranks[i], sorted_ranks[k]);
    i = k + 1;
  }
  return out;
}

std::string resolve_positional_dir(LayoutRequest& request) {
  std::vector<std::string> dirs, files;
  for (const std::string& f : request.files) {
    std::error_code ec;
    if (!is_stdin_path(f) && fs::is_directory(fs::path(f), ec)) {
      dirs.push_back(f);
    } else {
      files.push_back(f);
    }
  }
  if (dirs.empty()) return "";
  if (!request.log_dir.empty()) {
    return fmt::format("{}: a directory, and --log_dir {} is given too: give one log directory", dirs[0],
                       request.log_dir);
  }
  if (dirs.size() > 1) {
    return fmt::format("{} and {}: one log directory at a time (pp-timeline batch converts many)", dirs[0], dirs[1]);
  }
  if (!files.empty()) {
    return fmt::format("{} is a directory and {} a file: give a log directory or log files, not both", dirs[0],
                       files[0]);
  }
  request.log_dir = dirs[0];
  request.files.clear();
  return "";
}

namespace {

struct DirScan {
  std::map<int, std::string> workerlogs;  // local index -> path
  std::map<int, std::string> profiles;    // global rank -> path of profile_record_tmp_file_for_rank_<N>
  std::vector<std::string> subdirs;       // names of the sub-folders
  std::vector<std::string> duplicates;    // workerlog.N and workerlog.N.gz both present
  std::vector<std::string> past_bound;    // logs whose index is past kMaxRankIndex (not read)
  // Other files whose names say "log" (shim.0.log, rank1.log, train.log),
  // but not the launcher's own (envlog.<i>, endpoints.log): what a message
  // names when the folder holds no workerlog.<i>, natural order.
  std::vector<std::string> other_logs;
};

// A file name that says it is a log, but is none Paddle's launcher writes
// beside the workerlogs.
bool is_other_log_name(const std::string& name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower.find("log") == std::string::npos) return false;
  return lower.rfind("envlog.", 0) != 0 && lower != "endpoints.log";
}

DirScan scan_dir(const fs::path& dir, std::error_code& ec) {
  DirScan out;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    std::error_code type_ec;
    if (int rank = dygraph_profile_rank(name); rank >= 0 && !it->is_directory(type_ec)) {
      auto [pos, inserted] = out.profiles.emplace(rank, it->path().string());
      if (!inserted) {
        // Prefer the plain file over its compressed copy.
        bool gz = is_gzip_name(name);
        out.duplicates.push_back(gz ? it->path().string() : pos->second);
        if (!gz) pos->second = it->path().string();
      }
      continue;
    }
    int index = workerlog_index(name);
    // A directory named workerlog.<i> stays that rank's log: reading it
    // fails with a message, so the rank is not lost in silence.
    if (index < 0 && it->is_directory(type_ec)) {
      out.subdirs.push_back(name);
      continue;
    }
    if (index < 0) {  // envlog.<i>, <job>.<pod>.log, endpoints.log, ...
      if (is_log_name_past_rank_bound(name)) {
        out.past_bound.push_back(it->path().string());
      } else if (is_other_log_name(name) && it->is_regular_file(type_ec)) {
        out.other_logs.push_back(name);
      }
      continue;
    }
    auto [pos, inserted] = out.workerlogs.emplace(index, it->path().string());
    if (!inserted) {
      // Prefer the plain file over its compressed copy.
      if (is_gzip_name(name)) {
        out.duplicates.push_back(it->path().string());
      } else {
        out.duplicates.push_back(pos->second);
        pos->second = it->path().string();
      }
    }
  }
  std::sort(out.subdirs.begin(), out.subdirs.end(), natural_less);
  std::sort(out.past_bound.begin(), out.past_bound.end(), natural_less);
  std::sort(out.other_logs.begin(), out.other_logs.end(), natural_less);
  return out;
}

// "Job3_GBS16_DP1_..." : a task folder of Paddle's auto tuner (launch/main.py),
// one run per configuration.
bool is_auto_tuner_task(const std::string& name) {
  if (name.size() < 5 || name.compare(0, 3, "Job") != 0) return false;
  size_t i = 3;
  while (i < name.size() && name[i] >= '0' && name[i] <= '9') ++i;
  return i > 3 && i < name.size() && name[i] == '_';
}

std::string first_names(const std::vector<std::string>& names, size_t most, const char* suffix = "") {
  std::vector<std::string> shown;
  for (size_t i = 0; i < names.size() && i < most; ++i) shown.push_back(names[i] + suffix);
  std::string s = fmt::format("{}", fmt::join(shown, ", "));
  if (names.size() > most) s += fmt::format(" and {} more", names.size() - most);
  return s;
}

// A log whose index is past the bound is not read, and said so.
void note_past_bound(const DirScan& scan, std::vector<std::string>& notes) {
  for (const std::string& path : scan.past_bound) {
    notes.push_back(fmt::format(
        "{}: not read: its index is past {}, the highest rank index read (a million ranks; rename the file to read it)",
        path, kMaxRankIndex));
  }
}

// Names the first few of `count` indices `present` lacks, and how many more:
// the work and the text follow the indices present, never `count` (an index
// may be up to kMaxRankIndex with one log beside it).
template <typename Map>
std::string missing_names(const Map& present, int count, std::string_view prefix, size_t most, size_t* missing) {
  *missing = static_cast<size_t>(count) - present.size();
  std::vector<std::string> shown;
  int next = 0;  // the first index not yet looked at
  auto take_gap = [&](int end) {
    for (; next < end && shown.size() < most; ++next) shown.push_back(fmt::format("{}{}", prefix, next));
  };
  for (const auto& entry : present) {
    if (shown.size() >= most) break;
    take_gap(entry.first);
    next = entry.first + 1;
  }
  take_gap(count);
  std::string s = fmt::format("{}", fmt::join(shown, ", "));
  if (*missing > shown.size()) s += fmt::format(" and {} more", *missing - shown.size());
  return s;
}

// A rank whose log is missing must not vanish silently: names the
// workerlog.<i> below `count` that `where` lacks.
void note_missing(const std::string& where, const std::map<int, std::string>& logs, int count,
                  std::vector<std::string>& notes) {
  size_t n = 0;
  std::string names = missing_names(logs, count, "workerlog.", 8, &n);
  if (n == 0) return;
  notes.push_back(
      fmt::format("{}: no {} ({} of {} local ranks have no log; the others keep their ranks)", where, names, n, count));
}

struct Machine {
  std::string name;  // "" for a single-machine directory
  fs::path dir;
  std::map<int, std::string> logs;
};

// A folder of a dynamic-graph run: the top one ("") or a sub-folder.
struct ProfileFolder {
  std::string name;
  fs::path path;
  DirScan scan;
};

// The top folder and the sub-folders that hold logs; `any` tells whether any
// holds a profile file.
std::vector<ProfileFolder> profile_folders(const fs::path& dir, const DirScan& top, bool* any) {
  std::vector<ProfileFolder> folders;
  folders.push_back({"", dir, top});
  *any = !top.profiles.empty();
  for (const std::string& name : top.subdirs) {
    std::error_code ec;
    DirScan sub = scan_dir(dir / name, ec);
    if (ec) continue;
    *any = *any || !sub.profiles.empty();
    if (!sub.profiles.empty() || !sub.workerlogs.empty() || !sub.past_bound.empty())
      folders.push_back({name, dir / name, std::move(sub)});
  }
  return folders;
}

// The files of one folder: its profile files by rank (the ranks wanted), its
// launch logs as companions; a folder with profile files is a machine.
void take_folder(const ProfileFolder& f, size_t with_profiles, const std::set<int>& wanted, Layout& layout,
                 std::map<int, SourceFile>& by_rank, std::vector<SourceFile>& companions) {
  for (const std::string& d : f.scan.duplicates) {
    layout.notes.push_back(fmt::format("{}: ignored, a plain copy of the same file is present", d));
  }
  note_past_bound(f.scan, layout.notes);
  int32_t machine = -1;
  std::string machine_name = f.name.empty() && with_profiles > 1 ? "." : f.name;
  if (!f.scan.profiles.empty()) {
    machine = static_cast<int32_t>(layout.machines.size());
    layout.machines.push_back(machine_name);
  }
  for (const auto& [rank, path] : f.scan.profiles) {
    if (!wanted.empty() && wanted.count(rank) == 0) continue;
    SourceFile file{path, machine_name, machine, rank, rank};
    file.dygraph_profile = true;
    auto [it, inserted] = by_rank.emplace(rank, file);
    if (!inserted) {
      layout.notes.push_back(fmt::format("{}: ignored, rank {} is read from {}", path, rank, it->second.path));
    }
  }
  for (const auto& [index, path] : f.scan.workerlogs) {
    SourceFile file{path, machine_name, std::max(machine, 0), index, -1};
    file.companion = true;
    companions.push_back(file);
  }
}

// The ranks of every profile file present (wanted or not).
std::set<int> ranks_present(const std::vector<ProfileFolder>& folders) {
  std::set<int> present;
  for (const ProfileFolder& f : folders) {
    for (const auto& [rank, path] : f.scan.profiles) present.insert(rank);
  }
  return present;
}

// Names the profile files missing below the highest rank present.
void note_missing_profiles(const std::string& where, const std::set<int>& present, int32_t max_rank, Layout& layout) {
  std::map<int, bool> present_ranks;
  for (int r : present) present_ranks.emplace(r, true);
  size_t missing = 0;
  std::string names = missing_names(present_ranks, max_rank + 1, kDygraphProfilePrefix, 4, &missing);
  if (missing > 0) {
    layout.notes.push_back(fmt::format("{}: no {} ({} of {} ranks have no profile file; the others keep their ranks)",
                                       where, names, missing, max_rank + 1));
  }
}

// Dynamic-graph profile files (input/dygraph_profile.h) in `dir` or its
// sub-folders: each is the rank its name says (a global rank). Launch logs
// anywhere in the directory then are companions: read for the account of job
// lines (mixed_formats), no ranks. Returns false when there is no profile file.
bool dygraph_layout(const fs::path& dir, const std::string& where, const DirScan& top, const std::set<int>& wanted,
                    Layout& layout, std::string& error) {
  bool any = false;
  const std::vector<ProfileFolder> folders = profile_folders(dir, top, &any);
  if (!any) return false;
  // Machines: the folders that hold profile files (the top folder is "" when
  // it is the only one, "." beside sub-folders).
  size_t with_profiles = 0;
  for (const ProfileFolder& f : folders) with_profiles += f.scan.profiles.empty() ? 0 : 1;
  std::map<int, SourceFile> by_rank;
  std::vector<SourceFile> companions;
  for (const ProfileFolder& f : folders) take_folder(f, with_profiles, wanted, layout, by_rank, companions);
  const std::set<int> present = ranks_present(folders);
  const int32_t max_rank = present.empty() ? -1 : std::max(-1, *present.rbegin());
  if (by_rank.empty()) {
    error = fmt::format(
        "{}: no profile_record_tmp_file_for_rank_<N> for the ranks asked for (--devices picks the "
        "N; this directory has {})",
        where, format_rank_ranges(std::vector<int32_t>(present.begin(), present.end())));
    return true;
  }
  for (auto& [rank, file] : by_rank) layout.files.push_back(std::move(file));
  layout.world_ranks = max_rank + 1;
  note_missing_profiles(where, present, max_rank, layout);
  if (!companions.empty()) {
    layout.notes.push_back(
        fmt::format("{}: {} launch log{} beside the dynamic-graph profile records: read for their job lines only (the "
                    "profile records are the ranks)",
                    where, companions.size(), companions.size() == 1 ? "" : "s"));
    for (SourceFile& c : companions) layout.files.push_back(std::move(c));
  }
  return true;
}

}  // namespace

namespace {

// Why there is no layout: the line for the user, and whether the request
// itself is wrong (a usage error, exit 2) rather than the logs.
struct LayoutError {
  std::string text;
  bool usage = false;
};

// The machines of a directory of launch logs: every sub-folder that holds
// workerlog.<i> files is one (machine<k>/, or a node's copy under its host
// name or address: 10.0.0.2/, node-a/); without any, the directory itself.
std::optional<LayoutError> find_machines(const fs::path& dir, const std::string& where, DirScan& top,
                                         std::vector<Machine>& machines, Layout& layout) {
  for (const std::string& d : top.duplicates) {
    layout.notes.push_back(fmt::format("{}: ignored, a plain copy of the same log is present", d));
  }
  note_past_bound(top, layout.notes);
  for (const std::string& name : top.subdirs) {
    std::error_code ec;
    DirScan sub = scan_dir(dir / name, ec);
    if (ec) return LayoutError{fmt::format("{}: cannot list the directory: {}", (dir / name).string(), ec.message())};
    note_past_bound(sub, layout.notes);
    if (sub.workerlogs.empty()) {
      if (is_machine_folder_name(name)) {
        layout.notes.push_back(fmt::format("{}: no workerlog.<i> files", (dir / name).string()));
      }
      continue;
    }
    for (const std::string& d : sub.duplicates) {
      layout.notes.push_back(fmt::format("{}: ignored, a plain copy of the same log is present", d));
    }
    machines.push_back({name, dir / name, std::move(sub.workerlogs)});
  }
  if (!machines.empty() && !top.workerlogs.empty()) {
    std::vector<std::string> tops, subs;
    for (const auto& [index, path] : top.workerlogs) tops.push_back(fs::path(path).filename().string());
    for (const Machine& m : machines) subs.push_back(m.name);
    return LayoutError{
        fmt::format(
            "{}: holds workerlog files ({}) and machine folders that hold them too ({}); a run's folder has one or "
            "the other. Read one machine with --log_dir {}, or move the top-level logs into a folder named after "
            "their machine to read all machines",
            where, first_names(tops, 3), first_names(subs, 3, "/"), (dir / machines[0].name).string()),
        true};
  }
  if (machines.size() > 1 &&
      std::all_of(machines.begin(), machines.end(), [](const Machine& m) { return is_auto_tuner_task(m.name); })) {
    std::vector<std::string> subs;
    for (const Machine& m : machines) subs.push_back(m.name);
    return LayoutError{
        fmt::format(
            "{}: the folders {} are the auto tuner's tasks, each a run of its own, not machines of one run: read one "
            "with --log_dir {}, or all with pp-timeline batch {} --out DIR",
            where, first_names(subs, 2, "/"), (dir / machines[0].name).string(), where),
        true};
  }
  if (machines.empty()) {
    if (top.workerlogs.empty() && !layout.notes.empty() && !top.past_bound.empty()) {
      // Only logs past the rank bound: the error says why none is read.
      return LayoutError{fmt::format("{}: no workerlog.<i> file that can be read: {}", where, layout.notes.back())};
    }
    if (top.workerlogs.empty() && !top.other_logs.empty()) {
      // Logs under other names (the shim's log_file, a trainer's own): say
      // what --log_dir reads and how to name these instead, in rank order.
      const std::vector<std::string>& logs = top.other_logs;
      constexpr size_t kListed = 8;
      std::vector<std::string> words;
      for (size_t i = 0; i < logs.size() && i < kListed; ++i) {
        words.push_back(terminal_text(shell_word((dir / logs[i]).string())));
      }
      if (logs.size() > kListed) words.push_back("... " + terminal_text(shell_word((dir / logs.back()).string())));
      std::vector<std::string> shown;
      for (const std::string& n : logs) shown.push_back(terminal_text(n));
      return LayoutError{fmt::format(
          "{}: no workerlog.<i> files, nor folders of them, but {} other log file{} ({}): --log_dir reads "
          "workerlog.<rank> (and workerlog.<rank>.gz, profile_record_tmp_file_for_rank_<rank>) only. If {} the "
          "ranks' logs, name them on the command line, one per rank in rank order: pp-timeline {} -o trace.json "
          "(a shell's * puts 10 before 2); or name each file workerlog.<rank> and keep --log_dir",
          where, logs.size(), logs.size() == 1 ? "" : "s", first_names(shown, 4),
          logs.size() == 1 ? "it is" : "they are", fmt::join(words, " "))};
    }
    if (top.workerlogs.empty()) {
      return LayoutError{
          fmt::format("{}: no workerlog.<i> files, nor folders of them (is this the --log_dir given to "
                      "paddle.distributed.launch?)",
                      where)};
    }
    machines.push_back({"", dir, std::move(top.workerlogs)});
  }
  return std::nullopt;
}

// The machines' logs as ranks of the whole run; only the local indices in
// `wanted` (--devices; empty: all) are loaded.
//
// Paddle numbers ranks machine-major: rank = (ranks of the machines before)
// + i, with i the local index of workerlog.<i> (collective.py). With the
// same number n of processes on every machine that is m * n + i; n is
// taken as the highest local index + 1 over all machines, so a missing or
// unloaded log never renumbers the others.
std::optional<LayoutError> number_ranks(const std::vector<Machine>& machines, const std::string& where,
                                        const std::set<int>& wanted, Layout& layout) {
  int per_machine = 0;
  size_t present_files = 0;
  for (const Machine& m : machines) {
    per_machine = std::max(per_machine, m.logs.rbegin()->first + 1);
    present_files += m.logs.size();
  }
  // Indices far beyond the files present (workerlog.999999 in many folders)
  // would make a run of billions of ranks: number the files present instead.
  constexpr int64_t kMaxRanks = int64_t{1} << 20;
  bool dense = static_cast<int64_t>(machines.size()) * per_machine > kMaxRanks;
  if (dense) {
    layout.notes.push_back(fmt::format(
        "{}: local indices up to {} on {} machines are too sparse to be ranks; the {} files present are numbered "
        "in order instead",
        where, per_machine - 1, machines.size(), present_files));
  }
  int32_t next_dense = 0;
  std::set<int> present;
  for (int32_t k = 0; k < static_cast<int32_t>(machines.size()); ++k) {
    const Machine& m = machines[k];
    layout.machines.push_back(m.name);
    for (const auto& [index, path] : m.logs) {
      present.insert(index);
      int32_t rank = dense ? next_dense++ : k * per_machine + index;
      if (!wanted.empty() && wanted.count(index) == 0) continue;
      layout.files.push_back({path, m.name, k, index, rank});
    }
    // With --devices, only the devices asked for (below) are missed.
    if (wanted.empty() && !dense) {
      note_missing(m.name.empty() ? where : m.dir.string(), m.logs, per_machine, layout.notes);
    }
  }
  layout.world_ranks =
      dense ? static_cast<int32_t>(present_files) : static_cast<int32_t>(machines.size()) * per_machine;
  std::vector<std::string> absent;
  for (int d : wanted) {
    if (present.count(d) == 0) absent.push_back("workerlog." + std::to_string(d));
  }
  if (layout.files.empty()) {
    return LayoutError{
        fmt::format("{}: no workerlog files for the devices asked for (--devices picks the i of "
                    "workerlog.<i>; this directory has {})",
                    where, format_rank_ranges(std::vector<int32_t>(present.begin(), present.end())))};
  }
  if (!absent.empty()) {
    layout.notes.push_back(
        fmt::format("{}: --devices asks for {}, which no machine has", where, first_names(absent, 8)));
  }
  return std::nullopt;
}

// The files named on the command line, after the directory's ranks: each a
// rank of its own, in the order given ("-": standard input, once).
std::optional<LayoutError> add_named_files(const LayoutRequest& request, Layout& layout) {
  int32_t machine = static_cast<int32_t>(layout.machines.size());
  if (request.log_dir.empty())
    layout.machines.push_back("");
  else
    machine = 0;
  int32_t position = 0;
  bool have_stdin = false;
  for (const std::string& f : request.files) {
    SourceFile file{f, layout.machines[machine], machine, position, layout.world_ranks + position};
    if (is_stdin_path(f)) {
      if (have_stdin) return LayoutError{"-: standard input is read once; name '-' only once", true};
      if (isatty(STDIN_FILENO) == 1) {
        return LayoutError{
            "-: standard input is a terminal; pipe a log into it (kubectl logs POD | pp-timeline - -o "
            "trace.json)",
            true};
      }
      have_stdin = true;
      file.path = std::string(kStdinName);
      file.standard_input = true;
    } else {
      std::error_code ec;
      if (!fs::exists(fs::path(f), ec)) return LayoutError{fmt::format("{}: no such file", f), true};
      file.dygraph_profile = is_dygraph_profile_file(f);
    }
    layout.files.push_back(std::move(file));
    ++position;
  }
  layout.world_ranks += position;
  // Profile files named on the command line keep the global rank of their
  // name when every file has one and no two share it.
  std::set<int> named;
  bool by_name = request.log_dir.empty();
  for (const SourceFile& file : layout.files) {
    int r = file.dygraph_profile ? dygraph_profile_rank(fs::path(file.path).filename().string()) : -1;
    by_name = by_name && r >= 0 && named.insert(r).second;
  }
  if (by_name) {
    for (SourceFile& file : layout.files) {
      file.global_rank = dygraph_profile_rank(fs::path(file.path).filename().string());
      file.local_index = file.global_rank;
    }
    std::sort(layout.files.begin(), layout.files.end(),
              [](const SourceFile& a, const SourceFile& b) { return a.global_rank < b.global_rank; });
    layout.world_ranks = *named.rbegin() + 1;
  }
  return std::nullopt;
}

// Loaded ranks that are not the whole run: said wherever the ranks are
// counted, so that a subset is never read as a smaller pipeline.
void describe_partial(bool devices, Layout& layout) {
  size_t rank_files = 0;
  for (const SourceFile& f : layout.files) rank_files += f.companion ? 0 : 1;
  if (static_cast<int32_t>(rank_files) < layout.world_ranks) {
    std::vector<int32_t> ranks;
    for (const SourceFile& f : layout.files) {
      if (!f.companion) ranks.push_back(f.global_rank);
    }
    std::sort(ranks.begin(), ranks.end());
    layout.partial =
        fmt::format("{} {} of {} loaded ({})", ranks.size() == 1 ? "rank" : "ranks", format_rank_ranges(ranks),
                    layout.world_ranks, devices ? "--devices" : "the other logs are missing");
  }
}

}  // namespace

// The steps: the log directory's files (dynamic-graph profiles, or launch
// logs on their machines, numbered as Paddle numbers ranks), then the files
// named, then whether what is loaded is the whole run.
LayoutResult discover_layout(const LayoutRequest& original) {
  LayoutResult result;
  auto failed = [&](std::string error, bool usage) {
    result.error = std::move(error);
    result.usage_error = usage;
    return result;
  };
  auto usage = [&](std::string error) { return failed(std::move(error), true); };
  LayoutRequest request = original;
  if (std::string error = resolve_positional_dir(request); !error.empty()) return usage(error);
  Layout layout;
  std::set<int> wanted(request.devices.begin(), request.devices.end());

  if (!request.log_dir.empty()) {
    const std::string& where = request.log_dir;
    fs::path dir(where);
    std::error_code ec;
    auto status = fs::status(dir, ec);
    if (ec || !fs::exists(status)) return usage(fmt::format("{}: log directory does not exist", where));
    if (!fs::is_directory(status)) {
      return usage(fmt::format("{}: not a directory (name log files without --log_dir)", where));
    }
    DirScan top = scan_dir(dir, ec);
    if (ec) return failed(fmt::format("{}: cannot list the directory: {}", where, ec.message()), false);
    std::string dygraph_error;
    if (dygraph_layout(dir, where, top, wanted, layout, dygraph_error)) {
      if (!dygraph_error.empty()) return failed(dygraph_error, false);
      if (!request.files.empty())
        return usage("name log files or a log directory, not both, with dynamic-graph profiles");
    } else {
      std::vector<Machine> machines;
      std::optional<LayoutError> error = find_machines(dir, where, top, machines, layout);
      if (!error) error = number_ranks(machines, where, wanted, layout);
      if (error) return failed(error->text, error->usage);
    }
  } else if (!wanted.empty()) {
    layout.notes.push_back("--devices picks workerlog.<i> files of a log directory; the files named are all read");
  }

  if (!request.files.empty()) {
    if (std::optional<LayoutError> error = add_named_files(request, layout)) return failed(error->text, error->usage);
  }
  if (layout.files.empty()) return usage("no log files given (use --log_dir DIR or name the files)");
  describe_partial(!wanted.empty(), layout);
  result.layout = std::move(layout);
  return result;
}

}  // namespace ppt
