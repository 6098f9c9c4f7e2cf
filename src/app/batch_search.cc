#include "app/batch_search.h"

#include <algorithm>
#include <system_error>

#include "input/archive_reader.h"
#include "input/dygraph_profile.h"
#include "input/log_layout.h"
#include "util/text.h"

namespace ppt {
namespace fs = std::filesystem;

namespace {

// A launch log, or a dynamic-graph profile file (input/dygraph_profile.h).
bool is_workerlog_file(const fs::directory_entry& e) {
  const std::string name = e.path().filename().string();
  // A log past the rank bound makes its folder a run too, so the layout names it.
  if (workerlog_index(name) < 0 && dygraph_profile_rank(name) < 0 && !is_log_name_past_rank_bound(name)) return false;
  std::error_code ec;
  return e.is_regular_file(ec);
}

struct DirInfo {
  bool has_logs = false;              // workerlog files, or machine folders holding some
  std::vector<fs::path> subdirs;      // real directories (not links), for the search below
  std::string out_of_descriptors;     // a folder that could not be listed for lack of them
  std::vector<std::string> archives;  // files named as archives (an archive inside an artifact)
};

// A folder that cannot be listed for lack of file descriptors is no folder
// without logs: the search says so instead of "no workerlog files found".
bool out_of_descriptors(const std::error_code& ec) {
  return ec == std::errc::too_many_files_open || ec == std::errc::too_many_files_open_in_system;
}

DirInfo look_at(const fs::path& dir) {
  DirInfo info;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code sec;
    fs::file_status st = it->symlink_status(sec);
    if (sec) continue;
    if (fs::is_directory(st)) {
      std::string name = it->path().filename().string();
      if (is_machine_folder_name(name)) {
        std::error_code mec;
        for (fs::directory_iterator m(it->path(), mec), mend; !mec && m != mend; m.increment(mec)) {
          if (is_workerlog_file(*m)) {
            info.has_logs = true;
            break;
          }
        }
        if (out_of_descriptors(mec)) info.out_of_descriptors = it->path().string() + ": " + mec.message();
      }
      info.subdirs.push_back(it->path());
    } else if (is_workerlog_file(*it)) {
      info.has_logs = true;
    } else if (fs::is_regular_file(st) && looks_like_archive_name(it->path().string())) {
      info.archives.push_back(it->path().filename().string());
    }
  }
  if (out_of_descriptors(ec)) info.out_of_descriptors = dir.string() + ": " + ec.message();
  return info;
}

void search(const fs::path& root, const fs::path& rel, size_t depth, size_t max_depth, const std::set<fs::path>& skip,
            std::vector<std::string>* out, SearchNotes* notes) {
  fs::path dir = rel.empty() ? root : root / rel;
  DirInfo info = look_at(dir);
  if (!info.out_of_descriptors.empty() && notes->unlisted.empty()) notes->unlisted = info.out_of_descriptors;
  for (const std::string& a : info.archives) notes->archives.push_back((rel / a).generic_string());
  if (info.has_logs) {
    out->push_back(rel.empty() ? std::string(".") : rel.generic_string());
    return;
  }
  if (depth >= max_depth) {
    if (!info.subdirs.empty()) notes->too_deep.push_back(rel.empty() ? std::string(".") : rel.generic_string());
    return;
  }
  std::vector<std::string> names;
  for (const fs::path& p : info.subdirs) names.push_back(p.filename().string());
  std::sort(names.begin(), names.end(), natural_less);
  for (const std::string& n : names) {
    fs::path sub = dir / n;
    std::error_code ec;
    fs::path canon = fs::weakly_canonical(sub, ec);
    if (!ec && skip.count(canon)) continue;
    search(root, rel / n, depth + 1, max_depth, skip, out, notes);
  }
}

}  // namespace

std::vector<std::string> find_log_dirs(const std::string& root, size_t max_depth) {
  return find_log_dirs_skipping(root, max_depth, {});
}

// `notes` (when given): what the search met besides log folders.
std::vector<std::string> find_log_dirs_skipping(const std::string& root, size_t max_depth,
                                                const std::set<fs::path>& skip, SearchNotes* notes) {
  std::vector<std::string> out;
  SearchNotes none;
  search(fs::path(root), fs::path(), 0, max_depth, skip, &out, notes ? notes : &none);
  return out;
}

}  // namespace ppt
