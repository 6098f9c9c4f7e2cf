// libarchive parses the formats and filters; what is written, where, and how
// much is ours (archive_reader.h): entries are read with archive_read_data
// and written with openat/mkdirat below one directory descriptor, never with
// libarchive's disk writer, so its defaults never decide the safety policy.
#include "input/archive_reader.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <locale.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <set>

#include "model/diagnostics.h"

namespace ppt {
namespace {

constexpr size_t kMaxSkippedListed = 50;

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(Fd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      if (fd_ >= 0) ::close(fd_);
      fd_ = o.fd_;
      o.fd_ = -1;
    }
    return *this;
  }
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }

 private:
  int fd_;
};

struct ArchiveFree {
  void operator()(struct archive* a) const { archive_read_free(a); }
};

// The path below `dest` an entry may use, or nullopt and why not.
std::optional<std::vector<std::string>> safe_components(const std::string& name, std::string* why) {
  if (name.empty()) {
    *why = "empty name";
    return std::nullopt;
  }
  if (name[0] == '/' || name[0] == '\\') {
    *why = "absolute path refused";
    return std::nullopt;
  }
  std::vector<std::string> parts;
  size_t i = 0;
  while (i <= name.size()) {
    size_t j = name.find('/', i);
    if (j == std::string::npos) j = name.size();
    std::string part = name.substr(i, j - i);
    // A zip made on Windows may use '\' as a separator: "..\x" is refused too.
    if (part == ".." || part.starts_with("..\\") || part.ends_with("\\..") ||
        part.find("\\..\\") != std::string::npos) {
      *why = "'..' in the path refused";
      return std::nullopt;
    }
    if (!part.empty() && part != ".") parts.push_back(std::move(part));
    i = j + 1;
  }
  if (parts.empty()) {
    *why = "empty name";
    return std::nullopt;
  }
  return parts;
}

class Extractor {
 public:
  Extractor(const std::string& archive, const std::string& dest, const ArchiveLimits& limits)
      : archive_(archive), limits_(limits) {
    root_ = Fd(::open(dest.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!root_.valid())
      dest_error_ = fmt::format("{}: cannot open the extraction directory: {}", dest, std::strerror(errno));
  }

  ArchiveResult run();

 private:
  bool fail(std::string message) {
    result_.ok = false;
    result_.error = std::move(message);
    return false;
  }
  std::string where(const std::string& name) const {
    return fmt::format("{}:{}", archive_, printable_excerpt(name, 200));
  }
  void skip_note(const std::string& name, const std::string& why) {
    ++skipped_;
    if (result_.skipped.size() < kMaxSkippedListed) result_.skipped.push_back(fmt::format("{}: {}", where(name), why));
  }
  std::string library_error() const {
    const char* e = archive_error_string(in_.get());
    std::string text = e ? e : "unknown error";
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '.')) text.pop_back();
    return printable_excerpt(text, 300);
  }
  // Opens (creating) each directory of `parts[0..n)` below the root without
  // following links; an invalid Fd and `why` when one is not a directory.
  Fd open_dirs(const std::vector<std::string>& parts, size_t n, std::string* why);
  bool write_file(const std::string& name, const std::vector<std::string>& parts);
  // The limits on what is out so far, with `more` bytes of the current entry.
  std::optional<std::string> over_limit(const std::string& name, uint64_t entry_bytes) const;
  // The archive opened for reading, with the filters and formats allowed;
  // false (failed) when it cannot be.
  bool open();
  // The path of entry `e` named `name` below the root, when it is a file to
  // extract; nullopt (with a note, or a directory made) for any other entry.
  std::optional<std::vector<std::string>> file_entry(struct archive_entry* e, const std::string& name);
  // The size an entry claims, against the limits and the archive's own
  // size; false (failed) when past them.
  bool claim_allowed(struct archive_entry* e, const std::string& name);
  // A second entry of one path is refused: false (failed).
  bool first_of_its_path(const std::string& name, const std::vector<std::string>& parts);

  std::string archive_;
  ArchiveLimits limits_;
  std::unique_ptr<struct archive, ArchiveFree> in_;
  uint64_t archive_size_ = 0;
  Fd root_;
  std::string dest_error_;
  ArchiveResult result_;
  uint64_t skipped_ = 0;
  std::set<std::string> files_;  // the paths of the regular files extracted so far
};

Fd Extractor::open_dirs(const std::vector<std::string>& parts, size_t n, std::string* why) {
  Fd dir(::dup(root_.get()));
  for (size_t i = 0; i < n; ++i) {
    if (::mkdirat(dir.get(), parts[i].c_str(), 0755) != 0 && errno != EEXIST) {
      *why = fmt::format("cannot create directory: {}", std::strerror(errno));
      return Fd();
    }
    Fd next(::openat(dir.get(), parts[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next.valid()) {
      *why = errno == ELOOP || errno == ENOTDIR ? std::string("a parent in the path is not a directory")
                                                : fmt::format("cannot open directory: {}", std::strerror(errno));
      return Fd();
    }
    dir = std::move(next);
  }
  return dir;
}

std::optional<std::string> Extractor::over_limit(const std::string& name, uint64_t entry_bytes) const {
  uint64_t total = result_.bytes + entry_bytes;
  if (entry_bytes > limits_.max_entry_bytes) {
    return fmt::format("{}: more than the {} byte limit for one entry once decompressed; the rest is not extracted",
                       where(name), limits_.max_entry_bytes);
  }
  if (total > limits_.max_bytes) {
    return fmt::format("{}: more than {} bytes once decompressed; the rest is not extracted", where(name),
                       limits_.max_bytes);
  }
  if (total > limits_.ratio_floor &&
      static_cast<double>(total) > limits_.max_ratio * static_cast<double>(archive_size_)) {
    return fmt::format(
        "{}: more than {:g} times the archive's {} bytes once decompressed (a decompression bomb); "
        "the rest is not extracted",
        where(name), limits_.max_ratio, archive_size_);
  }
  return std::nullopt;
}

bool Extractor::write_file(const std::string& name, const std::vector<std::string>& parts) {
  std::string why;
  Fd dir = open_dirs(parts, parts.size() - 1, &why);
  Fd out;
  if (dir.valid()) {
    // O_NOFOLLOW: never write through a link, even one that was already there.
    out = Fd(::openat(dir.get(), parts.back().c_str(),
                      O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644));
    struct stat st;
    if (!out.valid()) {
      why =
          errno == ELOOP ? std::string("a link is in the way") : fmt::format("cannot create: {}", std::strerror(errno));
    } else if (::fstat(out.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
      why = "not a regular file in the way";
      out = Fd();
    }
  }
  if (!out.valid()) {
    skip_note(name, why);
    return true;  // the next header skips the data
  }
  auto remove_partial = [&] { ::unlinkat(dir.get(), parts.back().c_str(), 0); };  // no half file left behind
  char buf[1 << 16];
  uint64_t written = 0;
  while (true) {
    la_ssize_t n = archive_read_data(in_.get(), buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      // ARCHIVE_WARN is not returned by archive_read_data; any negative value is the end of this entry.
      std::string error = library_error();
      remove_partial();
      return fail(fmt::format("{}: {}", where(name), error));
    }
    written += static_cast<uint64_t>(n);
    if (std::optional<std::string> over = over_limit(name, written)) {
      remove_partial();
      return fail(*over);
    }
    size_t done = 0;
    while (done < static_cast<size_t>(n)) {
      ssize_t w = ::write(out.get(), buf + done, static_cast<size_t>(n) - done);
      if (w < 0) {
        if (errno == EINTR) continue;
        remove_partial();
        return fail(fmt::format("{}: cannot write: {}", where(name), std::strerror(errno)));
      }
      done += static_cast<size_t>(w);
    }
  }
  ++result_.files;
  result_.bytes += written;
  return true;
}

bool Extractor::open() {
  if (!dest_error_.empty()) return fail(dest_error_);
  struct stat st;
  if (::stat(archive_.c_str(), &st) != 0)
    return fail(fmt::format("{}: cannot open: {}", archive_, std::strerror(errno)));
  archive_size_ = static_cast<uint64_t>(st.st_size);
  if (archive_size_ == 0) return fail(fmt::format("{}: empty file, not an archive", archive_));
  in_.reset(archive_read_new());
  if (!in_) return fail(fmt::format("{}: out of memory", archive_));
  // Only these: no filter that runs an external program, no format CI
  // artifacts do not use.
  archive_read_support_filter_gzip(in_.get());
  archive_read_support_filter_bzip2(in_.get());
  archive_read_support_filter_xz(in_.get());
  archive_read_support_filter_zstd(in_.get());
  archive_read_support_format_tar(in_.get());
  archive_read_support_format_gnutar(in_.get());
  archive_read_support_format_zip(in_.get());
  if (archive_read_open_filename(in_.get(), archive_.c_str(), 1 << 16) != ARCHIVE_OK) {
    return fail(fmt::format("{}: not a tar or zip archive, or a damaged one: {}", archive_, library_error()));
  }
  return true;
}

std::optional<std::vector<std::string>> Extractor::file_entry(struct archive_entry* e, const std::string& name) {
  if (name.size() > limits_.max_name_bytes) {
    skip_note(name.substr(0, 200), fmt::format("a name longer than {} bytes refused", limits_.max_name_bytes));
    return std::nullopt;
  }
  std::string why;
  std::optional<std::vector<std::string>> parts = safe_components(name, &why);
  if (!parts) {
    skip_note(name, why);
    return std::nullopt;
  }
  if (archive_entry_hardlink(e)) {
    skip_note(name, "hard link not extracted");
    return std::nullopt;
  }
  if (archive_entry_is_encrypted(e)) {
    skip_note(name, "encrypted entry not extracted (no password is asked for)");
    return std::nullopt;
  }
  switch (archive_entry_filetype(e)) {
    case AE_IFREG: return parts;
    case AE_IFDIR: {
      Fd dir = open_dirs(*parts, parts->size(), &why);
      if (!dir.valid()) skip_note(name, why);
      return std::nullopt;
    }
    case AE_IFLNK: skip_note(name, "symbolic link not extracted"); break;
    case AE_IFIFO: skip_note(name, "FIFO not extracted"); break;
    case AE_IFCHR:
    case AE_IFBLK: skip_note(name, "device not extracted"); break;
    case AE_IFSOCK: skip_note(name, "socket not extracted"); break;
    default: skip_note(name, "an entry of unknown type not extracted"); break;
  }
  return std::nullopt;
}

bool Extractor::claim_allowed(struct archive_entry* e, const std::string& name) {
  if (!archive_entry_size_is_set(e) || archive_entry_size(e) < 0) return true;
  uint64_t claim = static_cast<uint64_t>(archive_entry_size(e));
  if (claim > limits_.max_entry_bytes) {
    return fail(fmt::format("{}: claims {} bytes, more than the {} byte limit for one entry; stopped", where(name),
                            claim, limits_.max_entry_bytes));
  }
  if (result_.bytes + claim > limits_.max_bytes) {
    return fail(fmt::format("{}: claims {} bytes, more than the {} byte limit; stopped", where(name), claim,
                            limits_.max_bytes));
  }
  // A tar entry's data is stored as is, after its 512-byte header: in an
  // uncompressed tar it cannot end past the file.
  bool plain_tar = archive_filter_code(in_.get(), 0) == ARCHIVE_FILTER_NONE &&
                   (archive_format(in_.get()) & ARCHIVE_FORMAT_BASE_MASK) == ARCHIVE_FORMAT_TAR;
  la_int64_t header_at = std::max<la_int64_t>(0, archive_read_header_position(in_.get()));
  if (plain_tar && static_cast<uint64_t>(header_at) + 512 + claim > archive_size_) {
    return fail(fmt::format("{}: claims {} bytes, but the archive ends before (it is {} bytes)", where(name), claim,
                            archive_size_));
  }
  return true;
}

bool Extractor::first_of_its_path(const std::string& name, const std::vector<std::string>& parts) {
  // The second would replace the first, and the first's jobs would be lost
  // without a word. Which of the two is the log cannot be told, so the
  // archive is refused.
  std::string key;
  for (const std::string& part : parts) key += (key.empty() ? "" : "/") + part;
  if (files_.insert(key).second) return true;
  return fail(
      fmt::format("{}: a second entry of this path (the archive holds two files at one name, and one would "
                  "replace the other); refused",
                  where(name)));
}

ArchiveResult Extractor::run() {
  if (!open()) return result_;
  uint64_t entries = 0;
  std::string last;  // the previous entry's name, for errors between entries
  while (true) {
    struct archive_entry* e = nullptr;
    int r = archive_read_next_header(in_.get(), &e);
    if (r == ARCHIVE_EOF) break;
    // ARCHIVE_RETRY (a damaged header libarchive would skip past) stops too:
    // what follows a damaged header is not trusted.
    if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
      if (entries == 0) {
        fail(fmt::format("{}: not a tar or zip archive, or a damaged one: {}", archive_, library_error()));
      } else {
        fail(fmt::format("{}: after '{}': {}", archive_, printable_excerpt(last, 200), library_error()));
      }
      return result_;
    }
    if (++entries > limits_.max_entries) {
      fail(fmt::format("{}: more than {} entries; the rest is not extracted", archive_, limits_.max_entries));
      return result_;
    }
    // The name in the locale's charset, or else as UTF-8: a zip flags UTF-8
    // names (general-purpose bit 11, as Python's zipfile and most tools
    // write non-ASCII names), and libarchive cannot convert those to the C
    // locale's ASCII; archive_entry_pathname_utf8 gives them as they are.
    const char* raw = archive_entry_pathname(e);
    if (!raw) raw = archive_entry_pathname_utf8(e);
    std::string name = raw ? raw : "";
    last = name;
    if (!raw) {
      skip_note("?", "a name that cannot be read refused");
      continue;
    }
    std::optional<std::vector<std::string>> parts = file_entry(e, name);
    if (!parts) continue;
    if (!claim_allowed(e, name) || !first_of_its_path(name, *parts) || !write_file(name, *parts)) return result_;
  }
  if (skipped_ > result_.skipped.size()) {
    result_.skipped.push_back(
        fmt::format("{}: ... and {} more entries not extracted", archive_, skipped_ - result_.skipped.size()));
  }
  result_.ok = true;
  return result_;
}

}  // namespace

ArchiveResult extract_archive(const std::string& archive, const std::string& dest, const ArchiveLimits& limits) {
  // libarchive converts entry names to the locale's charset: in the C locale
  // (ASCII) a zip name flagged UTF-8 (general-purpose bit 11, how Python's
  // zipfile and most tools store non-ASCII names) cannot be converted and
  // reads as no name at all. A UTF-8 LC_CTYPE for this thread alone
  // (uselocale, so parallel extractions and the rest of the process keep
  // theirs) lets every such name through as it is.
  locale_t utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(nullptr));
  locale_t previous = utf8 ? uselocale(utf8) : static_cast<locale_t>(nullptr);
  Extractor x(archive, dest, limits);
  ArchiveResult result = x.run();
  if (utf8) {
    uselocale(previous);
    freelocale(utf8);
  }
  return result;
}

bool looks_like_archive_name(const std::string& path) {
  for (std::string_view ext : {".tar", ".tar.gz", ".tgz", ".tar.zst", ".tzst", ".zip"}) {
    if (path.ends_with(ext)) return true;
  }
  return false;
}

bool looks_like_archive_data(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char head[512] = {};
  in.read(reinterpret_cast<char*>(head), sizeof head);
  size_t n = static_cast<size_t>(in.gcount());
  if (n >= 2 && head[0] == 0x1f && head[1] == 0x8b) return true;                                        // gzip
  if (n >= 4 && head[0] == 0x28 && head[1] == 0xb5 && head[2] == 0x2f && head[3] == 0xfd) return true;  // zstd
  if (n >= 4 && head[0] == 'P' && head[1] == 'K' && (head[2] == 3 || head[2] == 5) && head[3] == head[2] + 1) {
    return true;  // zip: a local file header, or the end record of an empty one
  }
  return n >= 263 && std::memcmp(head + 257, "ustar", 5) == 0;
}

}  // namespace ppt
