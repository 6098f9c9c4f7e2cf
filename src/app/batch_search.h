// Finding the runs of a batch artifact: the folders below it that hold logs.
#pragma once

#include <cstddef>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace ppt {

// Directories at or below `root` that hold logs (workerlog.<i>[.gz] files or
// machine folders of them, by log_layout's is_machine_folder_name: machine*/,
// 10.0.0.2/), in natural order, as paths relative to `root`
// ("." for root itself). Does not follow symbolic links; stops at a log
// directory and at `max_depth`.
std::vector<std::string> find_log_dirs(const std::string& root, size_t max_depth = 8);

// What a search met besides log folders, for the artifact's messages: no
// folder or archive is passed over without a word.
struct SearchNotes {
  std::string unlisted;               // the first folder that could not be listed for lack of descriptors
  std::vector<std::string> too_deep;  // folders at --max-depth whose sub-folders were not searched
  std::vector<std::string> archives;  // archives inside the artifact (not extracted)
};

// find_log_dirs, passing over the folders in `skip` (canonical paths: the
// batch's own output directory); `notes` (when given): what the search met
// besides log folders.
std::vector<std::string> find_log_dirs_skipping(const std::string& root, size_t max_depth,
                                                const std::set<std::filesystem::path>& skip,
                                                SearchNotes* notes = nullptr);

}  // namespace ppt
