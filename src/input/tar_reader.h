// Extracts a .tar or .tar.gz (what CI systems hand out as artifacts) into a
// directory, safely:
//  - only regular files and directories are created, always inside `dest`;
//    absolute names and names with a `..` component are refused;
//  - symbolic links, hard links, devices and FIFOs are never created (they
//    are skipped and listed in `skipped`), and nothing is written through an
//    existing link;
//  - the number of entries and the bytes read from the (decompressed) stream
//    are bounded, so a size claim or a gzip bomb stops with an error before
//    anything large is written;
//  - file modes from the archive are ignored (files 0644, directories 0755).
//
// Formats: POSIX ustar, GNU tar (long names in 'L' records, base-256 sizes)
// and pax (`path` and `size` from 'x' headers). Compression is detected by
// the gzip magic, not by the name.
//
// Thread safety: extract_tar() keeps no state; calls on different archives
// may run at once.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ppt {

struct TarLimits {
  uint64_t max_bytes = uint64_t{16} << 30;  // bytes read from the decompressed stream
  uint64_t max_entries = 200000;
  uint64_t max_name_bytes = 4096;           // a long name ('L' or pax path)
};

struct TarResult {
  bool ok = false;
  std::string error;                  // one line, when !ok (what was extracted stays)
  uint64_t files = 0;                 // regular files written
  uint64_t bytes = 0;                 // bytes of regular files written
  std::vector<std::string> skipped;   // "name: reason", one per entry not extracted
};

// `dest` must exist and should be a fresh, empty directory.
TarResult extract_tar(const std::string& archive, const std::string& dest, const TarLimits& limits = {});

// True when `path` names something extract_tar() is meant for, by name:
// .tar, .tar.gz, .tgz.
bool looks_like_tar_name(const std::string& path);

}  // namespace ppt
