#include "app/batch_out_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

namespace ppt {
namespace fs = std::filesystem;
namespace {

constexpr const char* kLockFile = ".pp-timeline-batch.lock";
constexpr const char* kManifestSchema = "pp-timeline-batch-manifest/1";

// A manifest path that stays inside the output directory: relative, no '..',
// no empty or '.' component.
bool safe_relative(const std::string& rel) {
  if (rel.empty() || rel[0] == '/') return false;
  for (const fs::path& part : fs::path(rel)) {
    std::string p = part.string();
    if (p.empty() || p == "." || p == "..") return false;
  }
  return true;
}

// True when no component of `rel` below `out` is a symbolic link: what the
// manifest names is removed only where batch wrote it, never through a link
// someone put in its place.
bool no_link_on_the_way(const fs::path& out, const std::string& rel) {
  fs::path at = out;
  for (const fs::path& part : fs::path(rel)) {
    at /= part;
    std::error_code ec;
    if (fs::is_symlink(fs::symlink_status(at, ec))) return false;
  }
  return true;
}

}  // namespace

// Removes what the last batch into `out` wrote, as its manifest lists it:
// regular files, then the folders it made once they are empty. A user's file
// beside them, or in a run folder, stays. Before the manifest (an older
// pp-timeline) run folders were marked with kRunMarker: in those only the
// files batch writes are removed.
void remove_previous_outputs(const fs::path& out) {
  std::error_code ec;
  std::vector<std::string> files, dirs;
  fs::path manifest = out / kManifestFile;
  if (fs::is_regular_file(fs::symlink_status(manifest, ec))) {
    std::ifstream in(manifest, std::ios::binary);
    nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
    if (doc.is_object() && doc.value("schema", "") == kManifestSchema) {
      for (const char* key : {"files", "dirs"}) {
        if (!doc.contains(key) || !doc[key].is_array()) continue;
        for (const auto& v : doc[key]) {
          if (v.is_string() && safe_relative(v.get<std::string>())) {
            (std::string(key) == "files" ? files : dirs).push_back(v.get<std::string>());
          }
        }
      }
    }
  }
  for (fs::directory_iterator it(out, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code sec;
    if (!fs::is_directory(it->symlink_status(sec)) || sec) continue;
    if (!fs::is_regular_file(fs::symlink_status(it->path() / kRunMarker, sec)) || sec) continue;
    std::string name = it->path().filename().string();
    for (const char* f : {kRunMarker, "stats.json", "report.html", "timeline.svg", "trace.json", "trace.pftrace"}) {
      files.push_back(name + "/" + f);
    }
    dirs.push_back(name);
  }
  for (const std::string& rel : files) {
    std::error_code fec;
    fs::path p = out / rel;
    if (no_link_on_the_way(out, rel) && fs::is_regular_file(fs::symlink_status(p, fec))) fs::remove(p, fec);
  }
  // Deepest first; a folder that still holds something (the user's) stays.
  std::sort(dirs.begin(), dirs.end(), [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  for (const std::string& rel : dirs) {
    std::error_code dec;
    fs::path p = out / rel;
    if (no_link_on_the_way(out, rel) && fs::is_directory(fs::symlink_status(p, dec))) ::rmdir(p.c_str());
  }
}

// Extraction folders a batch left in `out` when it was killed (SIGKILL, a
// power cut): .extract-* folders holding kExtractMarker. Called with the
// lock held, so none of them is in use.
void remove_stale_extractions(const fs::path& out) {
  std::error_code ec;
  for (fs::directory_iterator it(out, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code sec;
    if (!it->path().filename().string().starts_with(".extract-")) continue;
    if (!fs::is_directory(it->symlink_status(sec)) || sec) continue;
    if (!fs::is_regular_file(fs::symlink_status(it->path() / kExtractMarker, sec)) || sec) continue;
    fs::remove_all(it->path(), sec);  // does not follow links inside
  }
}

std::string manifest_text(const std::vector<std::string>& files, const std::vector<std::string>& dirs) {
  nlohmann::ordered_json doc;
  doc["schema"] = kManifestSchema;
  doc["about"] =
      "The files and folders pp-timeline batch wrote here: the next batch into this folder removes "
      "these, and nothing else.";
  doc["files"] = files;
  doc["dirs"] = dirs;
  return doc.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

OutLock::~OutLock() {
  if (fd_ >= 0) ::close(fd_);
}

std::string OutLock::take(const fs::path& out) {
  fs::path path = out / kLockFile;
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0644);
  if (fd_ < 0) return fmt::format("{}: cannot open the lock file: {}", path.string(), std::strerror(errno));
  struct stat st;
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) return fmt::format("{}: not a regular file", path.string());
  if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) return "";
  if (errno == EWOULDBLOCK) {
    return fmt::format(
        "{}: another pp-timeline batch is writing into this output directory (it holds {}); "
        "two batches never write into one: wait for it, or give another --out",
        out.string(), kLockFile);
  }
  return fmt::format("{}: cannot lock: {}", path.string(), std::strerror(errno));
}

}  // namespace ppt
