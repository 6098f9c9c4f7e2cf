// The batch's output directory, which is the user's: batch removes only what
// it wrote there.
//
// What batch keeps in the output directory for itself. The lock: one
// writer at a time (flock, released when the process ends, however it ends).
// The manifest: the files and folders the last batch wrote, so that the next
// one removes those and nothing else. Extraction folders hold kExtractMarker,
// so that one left by a batch that was killed is known as batch's own.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace ppt {

inline constexpr const char* kManifestFile = ".pp-timeline-batch.json";
inline constexpr const char* kExtractMarker = ".pp-timeline-extract";
// The marker file older versions wrote in every run folder: a later batch
// removes from such a folder the files batch writes, and nothing else.
inline constexpr const char* kRunMarker = ".pp-timeline-batch";

// Removes what the last batch into `out` wrote, as its manifest lists it:
// regular files, then the folders it made once they are empty. A user's file
// beside them, or in a run folder, stays; nothing is removed through a link.
// Before the manifest (an older pp-timeline) run folders were marked with
// kRunMarker: in those only the files batch writes are removed.
void remove_previous_outputs(const std::filesystem::path& out);

// Extraction folders a batch left in `out` when it was killed (SIGKILL, a
// power cut): .extract-* folders holding kExtractMarker. Called with the
// lock held, so none of them is in use.
void remove_stale_extractions(const std::filesystem::path& out);

// The manifest's text: the files and folders this batch wrote (or may write).
std::string manifest_text(const std::vector<std::string>& files, const std::vector<std::string>& dirs);

// The output directory's lock, held for the whole batch (flock, released
// when the process ends, however it ends).
class OutLock {
 public:
  OutLock() = default;
  OutLock(const OutLock&) = delete;
  OutLock& operator=(const OutLock&) = delete;
  ~OutLock();
  // "" when taken; the reason otherwise.
  std::string take(const std::filesystem::path& out);

 private:
  int fd_ = -1;
};

}  // namespace ppt
