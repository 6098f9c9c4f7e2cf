// Hand-written on purpose: libarchive is not in our dependency list, the
// subset CI artifacts use (ustar, GNU long names, pax path/size) fits in a few
// hundred lines, and the safety policy (what is refused, what is bounded)
// must be ours to read and test rather than a library's defaults.
#include "input/tar_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <optional>

#include "model/diagnostics.h"

namespace ppt {
namespace {

constexpr size_t kBlock = 512;
constexpr size_t kMaxSkippedListed = 50;
constexpr uint64_t kMaxPaxHeader = 1 << 20;

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

// The archive as a stream of bytes, decompressed when it is gzip (zlib reads
// plain files through the same calls), with every byte counted against the
// limit.
class Stream {
 public:
  Stream(const std::string& path, uint64_t limit) : limit_(limit) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
      error_ = fmt::format("cannot open: {}", std::strerror(errno));
      return;
    }
    struct stat st;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd);
      error_ = "not a regular file";
      return;
    }
    file_size_ = static_cast<uint64_t>(st.st_size);
    // zlib owns the descriptor from here.
    gz_ = gzdopen(fd, "rb");
    if (!gz_) {
      ::close(fd);
      error_ = "cannot open";
      return;
    }
    gzbuffer(gz_, 1 << 17);
  }
  ~Stream() {
    if (gz_) gzclose(gz_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  const std::string& error() const { return error_; }
  uint64_t offset() const { return offset_; }
  bool would_exceed(uint64_t n) const { return n > limit_ || offset_ > limit_ - n; }
  // For an uncompressed archive, whether n more bytes can be there at all.
  bool beyond_end(uint64_t n) const {
    return gz_ && gzdirect(gz_) && (offset_ > file_size_ || n > file_size_ - offset_);
  }

  // Reads up to n bytes; returns the count (0 at the end). -1 on a read or
  // decompression error (error() says which).
  int64_t read_some(char* buf, size_t n) {
    int got = gzread(gz_, buf, static_cast<unsigned>(std::min<size_t>(n, 1 << 20)));
    if (got < 0) {
      int code = 0;
      const char* msg = gzerror(gz_, &code);
      error_ = fmt::format("cannot read: {}", msg ? msg : "zlib error");
      return -1;
    }
    offset_ += static_cast<uint64_t>(got);
    return got;
  }

  // Reads exactly n bytes; false at a premature end or an error.
  bool read_exact(char* buf, size_t n, bool* at_end = nullptr) {
    size_t have = 0;
    while (have < n) {
      int64_t got = read_some(buf + have, n - have);
      if (got < 0) return false;
      if (got == 0) {
        if (at_end) *at_end = have == 0;
        if (error_.empty()) error_ = "truncated archive";
        return false;
      }
      have += static_cast<size_t>(got);
    }
    return true;
  }

  bool skip(uint64_t n) {
    char buf[1 << 16];
    while (n > 0) {
      size_t want = static_cast<size_t>(std::min<uint64_t>(n, sizeof buf));
      if (!read_exact(buf, want)) return false;
      n -= want;
    }
    return true;
  }

 private:
  gzFile gz_ = nullptr;
  uint64_t limit_;
  uint64_t offset_ = 0;
  uint64_t file_size_ = 0;
  std::string error_;
};

// Numeric header field: octal text (NUL or space padded) or, for GNU tar's
// large values, base-256 with the high bit of the first byte set.
std::optional<uint64_t> parse_number(const char* field, size_t len) {
  const auto* p = reinterpret_cast<const unsigned char*>(field);
  if (p[0] & 0x80) {
    if (p[0] == 0xff) return std::nullopt;  // negative
    uint64_t v = p[0] & 0x7f;
    for (size_t i = 1; i < len; ++i) {
      if (v >> 55) return std::nullopt;  // would overflow
      v = (v << 8) | p[i];
    }
    return v;
  }
  size_t i = 0;
  while (i < len && p[i] == ' ') ++i;
  uint64_t v = 0;
  bool any = false;
  for (; i < len && p[i] >= '0' && p[i] <= '7'; ++i) {
    if (v >> 60) return std::nullopt;
    v = v * 8 + (p[i] - '0');
    any = true;
  }
  for (; i < len; ++i) {
    if (p[i] != ' ' && p[i] != '\0') return std::nullopt;
  }
  if (!any) return 0;
  return v;
}

std::string field_string(const char* field, size_t len) {
  return std::string(field, strnlen(field, len));
}

bool checksum_ok(const char* h) {
  auto stored = parse_number(h + 148, 8);
  if (!stored) return false;
  uint64_t unsigned_sum = 0;
  int64_t signed_sum = 0;
  for (size_t i = 0; i < kBlock; ++i) {
    bool in_field = i >= 148 && i < 156;
    unsigned char u = in_field ? ' ' : static_cast<unsigned char>(h[i]);
    signed char s = in_field ? ' ' : static_cast<signed char>(h[i]);
    unsigned_sum += u;
    signed_sum += s;
  }
  return *stored == unsigned_sum || static_cast<int64_t>(*stored) == signed_sum;
}

bool all_zero(const char* h) {
  for (size_t i = 0; i < kBlock; ++i) {
    if (h[i] != 0) return false;
  }
  return true;
}

// The path below `dest` an entry may use, or nullopt and why not.
std::optional<std::vector<std::string>> safe_components(const std::string& name, std::string* why) {
  if (name.empty()) {
    *why = "empty name";
    return std::nullopt;
  }
  if (name[0] == '/') {
    *why = "absolute path refused";
    return std::nullopt;
  }
  if (name.find('\0') != std::string::npos) {  // only a pax path can hold one
    *why = "a NUL byte in the name refused";
    return std::nullopt;
  }
  std::vector<std::string> parts;
  size_t i = 0;
  while (i <= name.size()) {
    size_t j = name.find('/', i);
    if (j == std::string::npos) j = name.size();
    std::string part = name.substr(i, j - i);
    if (part == "..") {
      *why = "'..' in the path refused";
      return std::nullopt;
    }
    if (!part.empty() && part != ".") parts.push_back(std::move(part));
    i = j + 1;
  }
  return parts;
}

// Pax extended header records: "<len> <key>=<value>\n".
void parse_pax(const std::string& data, std::optional<std::string>* path, std::optional<uint64_t>* size) {
  size_t pos = 0;
  while (pos < data.size()) {
    size_t space = data.find(' ', pos);
    if (space == std::string::npos) return;
    uint64_t len = 0;
    for (size_t k = pos; k < space; ++k) {
      if (data[k] < '0' || data[k] > '9') return;
      len = len * 10 + static_cast<uint64_t>(data[k] - '0');
      if (len > data.size()) return;
    }
    if (len == 0 || pos + len > data.size() || data[pos + len - 1] != '\n') return;
    std::string record = data.substr(space + 1, pos + len - 1 - (space + 1));
    size_t eq = record.find('=');
    if (eq != std::string::npos) {
      std::string key = record.substr(0, eq);
      std::string value = record.substr(eq + 1);
      if (key == "path") {
        *path = value;
      } else if (key == "size") {
        uint64_t v = 0;
        bool ok = !value.empty();
        for (char c : value) {
          if (c < '0' || c > '9' || v > (UINT64_MAX - 9) / 10) {
            ok = false;
            break;
          }
          v = v * 10 + static_cast<uint64_t>(c - '0');
        }
        if (ok) *size = v;
      }
    }
    pos += len;
  }
}

class Extractor {
 public:
  Extractor(const std::string& archive, const std::string& dest, const TarLimits& limits)
      : archive_(archive), limits_(limits), in_(archive, limits.max_bytes) {
    root_ = Fd(::open(dest.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!root_.valid()) dest_error_ = fmt::format("{}: cannot open the extraction directory: {}", dest, std::strerror(errno));
  }

  TarResult run();

 private:
  bool fail(std::string message) {
    result_.ok = false;
    result_.error = std::move(message);
    return false;
  }
  void skip_note(const std::string& name, const std::string& why) {
    ++skipped_;
    if (result_.skipped.size() < kMaxSkippedListed) {
      result_.skipped.push_back(fmt::format("{}: {}", printable_excerpt(name, 200), why));
    }
  }
  bool read_data(uint64_t size, std::string* out) {
    out->resize(static_cast<size_t>(size));
    if (size > 0 && !in_.read_exact(out->data(), static_cast<size_t>(size))) return false;
    return in_.skip(padding(size));
  }
  static uint64_t padding(uint64_t size) { return (kBlock - size % kBlock) % kBlock; }
  // Opens (creating) each directory of `parts[0..n)` below the root without
  // following links; an invalid Fd and `why` when one is not a directory.
  Fd open_dirs(const std::vector<std::string>& parts, size_t n, std::string* why);
  bool write_file(const std::string& name, const std::vector<std::string>& parts, uint64_t size);

  std::string archive_;
  TarLimits limits_;
  Stream in_;
  Fd root_;
  std::string dest_error_;
  TarResult result_;
  uint64_t skipped_ = 0;
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

bool Extractor::write_file(const std::string& name, const std::vector<std::string>& parts, uint64_t size) {
  std::string why;
  Fd dir = open_dirs(parts, parts.size() - 1, &why);
  Fd out;
  if (dir.valid()) {
    // O_NOFOLLOW: never write through a link, even one that was already there.
    out = Fd(::openat(dir.get(), parts.back().c_str(),
                      O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644));
    struct stat st;
    if (!out.valid()) {
      why = errno == ELOOP ? std::string("a link is in the way") : fmt::format("cannot create: {}", std::strerror(errno));
    } else if (::fstat(out.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
      why = "not a regular file in the way";
      out = Fd();
    }
  }
  if (!out.valid()) {
    skip_note(name, why);
    return in_.skip(size + padding(size)) || fail(fmt::format("{}: {}", archive_, in_.error()));
  }
  char buf[1 << 16];
  uint64_t left = size;
  while (left > 0) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(left, sizeof buf));
    if (!in_.read_exact(buf, want)) {
      ::unlinkat(dir.get(), parts.back().c_str(), 0);  // no half file left behind
      return fail(fmt::format("{}: {} (inside '{}')", archive_, in_.error(), printable_excerpt(name, 200)));
    }
    size_t done = 0;
    while (done < want) {
      ssize_t w = ::write(out.get(), buf + done, want - done);
      if (w < 0) {
        if (errno == EINTR) continue;
        ::unlinkat(dir.get(), parts.back().c_str(), 0);
        return fail(fmt::format("{}: cannot write '{}': {}", archive_, printable_excerpt(name, 200), std::strerror(errno)));
      }
      done += static_cast<size_t>(w);
    }
    left -= want;
  }
  ++result_.files;
  result_.bytes += size;
  if (!in_.skip(padding(size))) return fail(fmt::format("{}: {}", archive_, in_.error()));
  return true;
}

TarResult Extractor::run() {
  if (!in_.error().empty()) {
    fail(fmt::format("{}: {}", archive_, in_.error()));
    return result_;
  }
  if (!dest_error_.empty()) {
    fail(dest_error_);
    return result_;
  }
  std::optional<std::string> long_name;  // from a GNU 'L' record or a pax header
  std::optional<uint64_t> pax_size;
  uint64_t entries = 0;
  bool ended = false;
  char h[kBlock];
  while (true) {
    uint64_t header_at = in_.offset();
    if (in_.would_exceed(kBlock)) {
      fail(fmt::format("{}: more than {} bytes once decompressed; the rest is not extracted", archive_,
                       limits_.max_bytes));
      return result_;
    }
    bool at_end = false;
    if (!in_.read_exact(h, kBlock, &at_end)) {
      if (at_end && header_at > 0 && !long_name && !pax_size) break;  // no end-of-archive blocks: accepted
      if (at_end && header_at == 0 && in_.error() == "truncated archive") {
        fail(fmt::format("{}: empty file, not a tar archive", archive_));
      } else if (header_at == 0 && in_.error() == "truncated archive") {
        fail(fmt::format("{}: not a tar archive (shorter than one 512-byte header)", archive_));
      } else {
        fail(fmt::format("{}: {} (at byte {})", archive_, in_.error(), header_at));
      }
      return result_;
    }
    if (all_zero(h)) {
      ended = true;
      break;
    }
    if (!checksum_ok(h)) {
      fail(header_at == 0 ? fmt::format("{}: not a tar archive (bad header checksum)", archive_)
                          : fmt::format("{}: corrupt archive: bad header checksum at byte {}", archive_, header_at));
      return result_;
    }
    if (++entries > limits_.max_entries) {
      fail(fmt::format("{}: more than {} entries; the rest is not extracted", archive_, limits_.max_entries));
      return result_;
    }
    char type = h[156];
    std::optional<uint64_t> header_size = parse_number(h + 124, 12);
    if (!header_size) {
      fail(fmt::format("{}: corrupt archive: bad size field at byte {}", archive_, header_at));
      return result_;
    }
    uint64_t size = *header_size;
    if (pax_size && type != 'x' && type != 'g' && type != 'L' && type != 'K') size = *pax_size;
    if (size > limits_.max_bytes) {
      fail(fmt::format("{}: an entry claims {} bytes, more than the {} byte limit; stopped", archive_, size,
                       limits_.max_bytes));
      return result_;
    }
    if (in_.would_exceed(size + padding(size))) {
      fail(fmt::format("{}: more than {} bytes once decompressed; the rest is not extracted", archive_,
                       limits_.max_bytes));
      return result_;
    }
    if (in_.beyond_end(size)) {
      std::string what = long_name ? *long_name : field_string(h, 100);
      fail(fmt::format("{}: '{}' claims {} bytes, but the archive ends before (truncated or forged)", archive_,
                       printable_excerpt(what, 200), size));
      return result_;
    }

    if (type == 'L' || type == 'x') {
      uint64_t cap = type == 'L' ? limits_.max_name_bytes + 1 : kMaxPaxHeader;
      if (size > cap) {
        fail(fmt::format("{}: a {} record of {} bytes at byte {} is too long", archive_,
                         type == 'L' ? "long-name" : "pax header", size, header_at));
        return result_;
      }
      std::string data;
      if (!read_data(size, &data)) {
        fail(fmt::format("{}: {}", archive_, in_.error()));
        return result_;
      }
      if (type == 'L') {
        long_name = std::string(data.c_str());  // NUL-terminated inside the record
      } else {
        std::optional<std::string> path;
        parse_pax(data, &path, &pax_size);
        if (path) long_name = *path;
      }
      if (long_name && long_name->size() > limits_.max_name_bytes) {
        fail(fmt::format("{}: a name of {} bytes at byte {} is too long", archive_, long_name->size(), header_at));
        return result_;
      }
      continue;
    }

    std::string name;
    if (long_name) {
      name = *long_name;
    } else {
      name = field_string(h, 100);
      bool posix = std::memcmp(h + 257, "ustar\0", 6) == 0;
      std::string prefix = posix ? field_string(h + 345, 155) : std::string();
      if (!prefix.empty()) name = prefix + "/" + name;
    }
    long_name.reset();
    pax_size.reset();

    bool is_file = type == '0' || type == '\0' || type == '7';
    bool is_dir = type == '5' || (is_file && !name.empty() && name.back() == '/');
    if (is_dir) is_file = false;
    std::string why;
    auto parts = safe_components(name, &why);
    if (!parts) {
      skip_note(name, why);
      if (!in_.skip(size + padding(size))) {
        fail(fmt::format("{}: {}", archive_, in_.error()));
        return result_;
      }
      continue;
    }
    if (is_dir) {
      if (!parts->empty()) {
        Fd d = open_dirs(*parts, parts->size(), &why);
        if (!d.valid()) skip_note(name, why);
      }
      if (!in_.skip(size + padding(size))) {
        fail(fmt::format("{}: {}", archive_, in_.error()));
        return result_;
      }
      continue;
    }
    if (is_file && !parts->empty()) {
      if (!write_file(name, *parts, size)) return result_;
      continue;
    }
    switch (type) {
      case '1': skip_note(name, "hard link not extracted"); break;
      case '2': skip_note(name, "symbolic link not extracted"); break;
      case '3':
      case '4': skip_note(name, "device not extracted"); break;
      case '6': skip_note(name, "FIFO not extracted"); break;
      case 'g':
      case 'K':
      case 'V': break;  // global pax header, long link name, volume label: nothing to extract
      default: skip_note(name, fmt::format("entry type '{}' not extracted", printable_excerpt(std::string_view(&type, 1))));
    }
    if (!in_.skip(size + padding(size))) {
      fail(fmt::format("{}: {}", archive_, in_.error()));
      return result_;
    }
  }
  (void)ended;
  if (skipped_ > result_.skipped.size()) {
    result_.skipped.push_back(fmt::format("... and {} more entries not extracted", skipped_ - result_.skipped.size()));
  }
  result_.ok = true;
  return result_;
}

}  // namespace

TarResult extract_tar(const std::string& archive, const std::string& dest, const TarLimits& limits) {
  Extractor x(archive, dest, limits);
  return x.run();
}

bool looks_like_tar_name(const std::string& path) {
  return path.ends_with(".tar") || path.ends_with(".tar.gz") || path.ends_with(".tgz");
}

}  // namespace ppt
