// Small helpers for unit tests: job lines with a glog prefix, temp folders.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "pp_timeline/log_line.h"

namespace ppt::testing {

// A glog-prefixed job line with times in microseconds (relative to a fixed epoch).
inline std::string job_line(const std::string& type, int mb, int64_t start_us, int64_t end_us,
                            int64_t id = -1, int tid = 4242) {
  constexpr int64_t kEpochNs = 1697793307000000000;
  return "I1020 09:15:07.265326 " + std::to_string(tid) + " standalone_executor.cc:217] " +
         log_line::format_job_line(id >= 0 ? id : mb, type, mb, kEpochNs + start_us * 1000,
                                   kEpochNs + end_us * 1000) +
         "\n";
}

inline constexpr int64_t kEpochNs = 1697793307000000000;

class TempDir {
 public:
  TempDir() {
    std::string templ = (std::filesystem::temp_directory_path() / "ppt-unit-XXXXXX").string();
    path_ = mkdtemp(templ.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string write(const std::string& rel, const std::string& content) const {
    std::filesystem::path p = std::filesystem::path(path_) / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
    return p.string();
  }

 private:
  std::string path_;
};

}  // namespace ppt::testing
