// Extracts an archive (what CI systems hand out as artifacts: GitHub Actions
// artifacts are .zip, others .tar / .tar.gz / .tar.zst) into a directory,
// through libarchive, safely:
//  - only regular files and directories are created, always inside `dest`;
//    absolute names and names with a `..` component are refused;
//  - symbolic links, hard links, devices and FIFOs are never created (they
//    are skipped and listed in `skipped`), and nothing is written through an
//    existing link (every directory is opened with O_NOFOLLOW);
//  - encrypted zip entries are skipped with their reason (no password is
//    asked for);
//  - the bytes written (in all, and per entry), the number of entries and the
//    ratio of the extracted bytes to the archive's size are bounded, so a
//    forged size or a decompression bomb stops with an error before anything
//    large is written; a size claimed beyond the end of an uncompressed
//    archive is refused before its entry is written;
//  - file modes from the archive are ignored (files 0644, directories 0755);
//  - an archive that holds one path twice (a regular file) is refused: the
//    second would replace the first, whose jobs would be lost unseen;
//  - names are read in a UTF-8 locale (this thread's only), so zip names
//    flagged UTF-8 (general-purpose bit 11) are extracted as they are.
//
// Messages name the archive and the entry: "a.zip:logs/../x: '..' in the
// path refused". Formats and filters are detected from the bytes (libarchive
// bids), not from the name; only tar (ustar, GNU, pax) and zip are accepted,
// plain or gzip / bzip2 / xz / zstd compressed.
//
// Thread safety: extract_archive() keeps no state; calls on different
// archives may run at once.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ppt {

struct ArchiveLimits {
  uint64_t max_bytes = uint64_t{16} << 30;       // bytes extracted, all entries together
  uint64_t max_entry_bytes = uint64_t{8} << 30;  // bytes of one entry
  uint64_t max_entries = 200000;
  uint64_t max_name_bytes = 4096;
  // Extracted bytes over the archive's size; checked once more than
  // `ratio_floor` bytes are out (small archives of zeros are fine). Text logs
  // compress 10 to 30 times; a zip bomb about 1000 times.
  double max_ratio = 200;
  uint64_t ratio_floor = uint64_t{64} << 20;
};

struct ArchiveResult {
  bool ok = false;
  std::string error;                 // one line, when !ok (what was extracted stays)
  uint64_t files = 0;                // regular files written
  uint64_t bytes = 0;                // bytes of regular files written
  std::vector<std::string> skipped;  // "archive:entry: reason", one per entry not extracted
};

// `dest` must exist and should be a fresh, empty directory.
ArchiveResult extract_archive(const std::string& archive, const std::string& dest, const ArchiveLimits& limits = {});

// True when `path` names an archive by its name: .tar, .tar.gz, .tgz,
// .tar.zst, .tzst, .zip.
bool looks_like_archive_name(const std::string& path);

// True when the first bytes of the file are those of an archive or of a
// compressed stream that may hold one (gzip, zstd, zip, ustar).
bool looks_like_archive_data(const std::string& path);

}  // namespace ppt
