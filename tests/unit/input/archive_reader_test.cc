// The archive reader: archives made by the real `tar` and `zstd`, hostile
// archives, hand-made tar headers for what `tar` will not write (size claims,
// bad sums), and zip files written byte by byte (zip-slip names, symbolic
// links, lying sizes, bombs, encryption, truncation).
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "input/archive_reader.h"
#include "support/test_support.h"

using namespace ppt;
using ppt::testing::slurp;
using ppt::testing::TempDir;
namespace fs = std::filesystem;

namespace {

int sh(const std::string& cmd) { return std::system(("(" + cmd + ") >/dev/null 2>&1").c_str()); }

std::string quoted(const std::string& s) { return "'" + s + "'"; }

void write_bytes(const fs::path& p, const std::string& data) { std::ofstream(p, std::ios::binary) << data; }

// A ustar header block for `name` with `size` (as 11 octal digits, or
// base-256 when `base256`), and a correct checksum unless `bad_sum`.
std::string header(const std::string& name, uint64_t size, char type = '0', bool base256 = false,
                   bool bad_sum = false) {
  std::string h(512, '\0');
  std::memcpy(h.data(), name.data(), std::min<size_t>(name.size(), 100));
  std::memcpy(h.data() + 100, "0000644", 7);
  std::memcpy(h.data() + 108, "0000000", 7);
  std::memcpy(h.data() + 116, "0000000", 7);
  if (base256) {
    h[124] = static_cast<char>(0x80);
    for (int i = 0; i < 8; ++i) h[135 - i] = static_cast<char>((size >> (8 * i)) & 0xff);
  } else {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%011llo", static_cast<unsigned long long>(size));
    std::memcpy(h.data() + 124, buf, 11);
  }
  std::memcpy(h.data() + 136, "00000000000", 11);
  h[156] = type;
  std::memcpy(h.data() + 257,
              "ustar\0"
              "00",
              8);
  std::memset(h.data() + 148, ' ', 8);
  unsigned sum = 0;
  for (unsigned char c : h) sum += c;
  if (bad_sum) sum += 1;
  char buf[16];
  std::snprintf(buf, sizeof buf, "%06o", sum);
  std::memcpy(h.data() + 148, buf, 6);
  h[154] = '\0';
  h[155] = ' ';
  return h;
}

std::string padded(const std::string& data) { return data + std::string((512 - data.size() % 512) % 512, '\0'); }

void gzip_to(const fs::path& p, const std::string& data) {
  gzFile f = gzopen(p.c_str(), "wb");
  gzwrite(f, data.data(), static_cast<unsigned>(data.size()));
  gzclose(f);
}

// Every path below `root`, with whether it is a symbolic link.
std::vector<std::string> listing(const fs::path& root, bool* any_link) {
  std::vector<std::string> out;
  *any_link = false;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    if (it->is_symlink()) *any_link = true;
    out.push_back(fs::relative(it->path(), root).generic_string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("archives made by tar are extracted whole, plain or gzipped, in every format", "[archive]") {
  TempDir t;
  fs::path src = fs::path(t.path()) / "src";
  t.write("src/logs/workerlog.0", "line 0\n");
  t.write("src/logs/machine1/workerlog.1", std::string(70000, 'x'));  // several blocks, not a multiple of 512
  std::string long_dir(120, 'd');                                     // longer than the 100-byte name field
  t.write("src/logs/" + long_dir + "/workerlog.2", "deep\n");
  t.write("src/logs/empty.txt", "");
  for (std::string fmt : {"gnu", "pax", "ustar", "posix"}) {
    for (bool gz : {false, true}) {
      DYNAMIC_SECTION(fmt << (gz ? " gzipped" : "")) {
        fs::path archive = fs::path(t.path()) / ("a-" + fmt + (gz ? ".tar.gz" : ".tar"));
        int rc = sh("cd " + quoted(src.string()) + " && tar --format=" + fmt + (gz ? " -czf " : " -cf ") +
                    quoted(archive.string()) + " logs");
        if (fmt == "ustar") {
          // ustar cannot hold the long name unless it splits at a '/': tar refuses or manages; both are fine.
          if (rc != 0) continue;
        }
        REQUIRE(rc == 0);
        fs::path dest = fs::path(t.path()) / ("out-" + fmt + (gz ? "-gz" : ""));
        fs::create_directories(dest);
        ArchiveResult r = extract_archive(archive.string(), dest.string());
        INFO(r.error);
        REQUIRE(r.ok);
        CHECK(r.files == 4);
        CHECK(r.skipped.empty());
        CHECK(slurp(dest / "logs/workerlog.0") == "line 0\n");
        CHECK(slurp(dest / "logs/machine1/workerlog.1") == std::string(70000, 'x'));
        CHECK(slurp(dest / "logs" / long_dir / "workerlog.2") == "deep\n");
        CHECK(fs::is_regular_file(dest / "logs/empty.txt"));
        CHECK(r.bytes == 7 + 70000 + 5);
      }
    }
  }
}

TEST_CASE("a hostile archive writes nothing outside the directory and creates no link", "[archive]") {
  TempDir t;
  fs::path work = fs::path(t.path());
  t.write("payload", "pwned\n");
  std::string abs_target = (work / "abs-evil").string();  // inside the temp dir, so the test cleans up
  fs::create_symlink("/etc", work / "etclink");
  fs::create_directories(work / "outside");
  fs::create_symlink(work / "outside", work / "dirlink");
  std::string cd = "cd " + quoted(work.string()) + " && ";
  REQUIRE(sh(cd + "tar -cPf h.tar --transform='s,^payload$,../evil,' payload") == 0);
  REQUIRE(sh(cd + "tar -rPf h.tar --transform='s,^payload$," + abs_target + ",' payload") == 0);
  REQUIRE(sh(cd + "tar -rPf h.tar --transform='s,^payload$,ok/../../evil2,' payload") == 0);
  REQUIRE(sh(cd + "tar -rf h.tar etclink dirlink") == 0);
  REQUIRE(sh(cd + "tar -rPf h.tar --transform='s,^payload$,etclink/evil-passwd,' payload") == 0);
  REQUIRE(sh(cd + "tar -rPf h.tar --transform='s,^payload$,dirlink/evil3,' payload") == 0);
  REQUIRE(sh(cd + "ln payload hard && tar -rf h.tar payload hard") == 0);  // 'hard' becomes a hard link entry
  REQUIRE(sh(cd + "mkfifo fifo && tar -rf h.tar fifo") == 0);
  REQUIRE(sh(cd + "cp payload after && tar -rf h.tar after") == 0);  // a harmless file after all that

  fs::path dest = work / "x" / "dest";
  fs::create_directories(dest);
  ArchiveResult r = extract_archive((work / "h.tar").string(), dest.string());
  INFO(r.error);
  REQUIRE(r.ok);

  CHECK_FALSE(fs::exists(work / "x" / "evil"));
  CHECK_FALSE(fs::exists(work / "evil"));
  CHECK_FALSE(fs::exists(work / "evil2"));
  CHECK_FALSE(fs::exists(abs_target));
  CHECK_FALSE(fs::exists("/etc/evil-passwd"));
  CHECK(fs::is_empty(work / "outside"));
  bool any_link = false;
  std::vector<std::string> got = listing(dest, &any_link);
  CHECK_FALSE(any_link);
  // The links were not made, so the names under them are plain folders in dest.
  CHECK(got ==
        std::vector<std::string>{"after", "dirlink", "dirlink/evil3", "etclink", "etclink/evil-passwd", "payload"});

  std::string skipped;
  for (const std::string& s : r.skipped) skipped += s + "\n";
  INFO(skipped);
  CHECK(skipped.find("../evil: '..' in the path refused") != std::string::npos);
  CHECK(skipped.find(abs_target + ": absolute path refused") != std::string::npos);
  CHECK(skipped.find("ok/../../evil2: '..' in the path refused") != std::string::npos);
  CHECK(skipped.find("etclink: symbolic link not extracted") != std::string::npos);
  CHECK(skipped.find("hard: hard link not extracted") != std::string::npos);
  CHECK(skipped.find("fifo: FIFO not extracted") != std::string::npos);
}

TEST_CASE("pax headers give long names and sizes, and a name with a NUL stays inside", "[archive]") {
  TempDir t;
  fs::path work(t.path());
  auto pax = [](const std::string& records) { return header("PaxHeader", records.size(), 'x') + padded(records); };
  std::string long_name = std::string(150, 'p') + "/workerlog.0";
  std::string path_rec = " path=" + long_name + "\n";
  path_rec = std::to_string(path_rec.size() + 3) + path_rec;  // the length counts itself (3 digits)
  std::string nul_rec = std::string(" path=a\0b\n", 10);
  nul_rec = std::to_string(nul_rec.size() + 2) + nul_rec;
  std::string size_rec = " size=3\n";
  size_rec = std::to_string(size_rec.size() + 2) + size_rec;
  std::string tar = pax(path_rec) + header("short", 5) + padded("hello") +  // the pax path wins
                    pax(size_rec) + header("sized", 999) + padded("abc") +  // the pax size wins
                    pax(nul_rec) + header("x", 1) + padded("x") + std::string(1024, '\0');
  write_bytes(work / "p.tar", tar);
  fs::path dest = work / "dest";
  fs::create_directories(dest);
  ArchiveResult r = extract_archive((work / "p.tar").string(), dest.string());
  INFO(r.error);
  REQUIRE(r.ok);
  CHECK(slurp(dest / long_name) == "hello");
  CHECK(slurp(dest / "sized") == "abc");
  CHECK_FALSE(fs::exists(dest / "short"));
  // libarchive reads a pax path up to its NUL: "a", inside dest; the header's
  // name is not used.
  CHECK(slurp(dest / "a") == "x");
  CHECK_FALSE(fs::exists(dest / "x"));
  CHECK(r.skipped.empty());
}

TEST_CASE("a link already in the destination is never written through", "[archive]") {
  TempDir t;
  fs::path work(t.path());
  fs::create_directories(work / "outside");
  fs::path dest = work / "dest";
  fs::create_directories(dest);
  fs::create_symlink(work / "outside", dest / "pre");
  fs::create_symlink(work / "outside" / "target", dest / "file");
  std::string tar =
      header("pre/evil", 4) + padded("evil") + header("file", 4) + padded("evil") + std::string(1024, '\0');
  write_bytes(work / "a.tar", tar);
  ArchiveResult r = extract_archive((work / "a.tar").string(), dest.string());
  REQUIRE(r.ok);
  CHECK(r.files == 0);
  CHECK(fs::is_empty(work / "outside"));
  REQUIRE(r.skipped.size() == 2);
  std::string a = (work / "a.tar").string();
  CHECK(r.skipped[0] == a + ":pre/evil: a parent in the path is not a directory");
  CHECK(r.skipped[1] == a + ":file: a link is in the way");
}

TEST_CASE("sizes and entry counts are bounded before anything large is written", "[archive]") {
  TempDir t;
  fs::path work(t.path());
  struct Row {
    const char* what;
    std::string archive;
    ArchiveLimits limits;
    const char* error_has;
  };
  ArchiveLimits small;
  small.max_bytes = 64 * 1024;
  ArchiveLimits few;
  few.max_entries = 3;
  ArchiveLimits gib;
  gib.max_bytes = 1 << 30;
  std::string five_files;
  for (int i = 0; i < 5; ++i) five_files += header("f" + std::to_string(i), 1) + padded("x");
  const Row rows[] = {
      {"an 8 GiB claim in a tiny file", header("big", 077777777777) + padded("tiny"), gib, "claims 8589934591 bytes"},
      {"a 1 TiB base-256 claim", header("huge", uint64_t{1} << 40, '0', true) + padded("tiny"), ArchiveLimits{},
       "claims 1099511627776 bytes"},
      {"a real file above a small limit", header("big", 100000) + padded(std::string(100000, 'z')), small,
       "more than the 65536 byte limit"},
      {"more entries than allowed", five_files + std::string(1024, '\0'), few, "more than 3 entries"},
  };
  for (const Row& row : rows) {
    DYNAMIC_SECTION(row.what) {
      for (bool gz : {false, true}) {
        fs::path archive = work / (gz ? "a.tar.gz" : "a.tar");
        if (gz)
          gzip_to(archive, row.archive);
        else
          write_bytes(archive, row.archive);
        fs::path dest = work / (gz ? "dest-gz" : "dest");
        fs::create_directories(dest);
        ArchiveResult r = extract_archive(archive.string(), dest.string(), row.limits);
        CHECK_FALSE(r.ok);
        CHECK(r.error.find(row.error_has) != std::string::npos);
        CHECK_FALSE(fs::exists(dest / "big"));
        CHECK_FALSE(fs::exists(dest / "huge"));
        CHECK(r.files <= 3);
      }
    }
  }
}

TEST_CASE("a plain archive's size claim is checked against the file, and a cut file is removed", "[archive]") {
  TempDir t;
  fs::path work(t.path());
  write_bytes(work / "a.tar", header("ok", 2) + padded("ok") + header("big", 077777777777) + padded("tiny"));
  fs::path dest = work / "dest";
  fs::create_directories(dest);
  ArchiveResult r = extract_archive((work / "a.tar").string(), dest.string());
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("a.tar:big: claims 8589934591 bytes, but the archive ends before") != std::string::npos);
  CHECK(slurp(dest / "ok") == "ok");
  CHECK_FALSE(fs::exists(dest / "big"));
  // Compressed, the end is only found by reading: the partial file is removed.
  gzip_to(work / "a.tar.gz", header("big", 5000) + padded("tiny"));
  fs::path dest2 = work / "dest2";
  fs::create_directories(dest2);
  r = extract_archive((work / "a.tar.gz").string(), dest2.string());
  CHECK_FALSE(r.ok);
  CHECK(r.error.rfind((work / "a.tar.gz").string() + ":big: ", 0) == 0);
  CHECK_FALSE(fs::exists(dest2 / "big"));
}

TEST_CASE("a gzip bomb stops at the byte limit, before the entry that passes it", "[archive]") {
  TempDir t;
  fs::path work(t.path());
  // 16 entries of 1 MiB of zeros each, a few kilobytes compressed: each is
  // within the limit, together they are not.
  gzFile f = gzopen((work / "bomb.tar.gz").c_str(), "wb9");
  std::string zeros(1 << 20, '\0');
  for (int i = 0; i < 16; ++i) {
    std::string h = header("bomb" + std::to_string(i), zeros.size());
    gzwrite(f, h.data(), 512);
    gzwrite(f, zeros.data(), static_cast<unsigned>(zeros.size()));
  }
  gzclose(f);
  CHECK(fs::file_size(work / "bomb.tar.gz") < 100000);
  ArchiveLimits limits;
  limits.max_bytes = 8 << 20;
  fs::path dest = work / "dest";
  fs::create_directories(dest);
  ArchiveResult r = extract_archive((work / "bomb.tar.gz").string(), dest.string(), limits);
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("bomb.tar.gz:bomb8: claims 1048576 bytes, more than the 8388608 byte limit") != std::string::npos);
  CHECK(r.files == 8);  // 8 MiB fit, the 9th entry does not
  CHECK(r.bytes <= limits.max_bytes);
  CHECK_FALSE(fs::exists(dest / "bomb8"));
}

TEST_CASE("a compression ratio past the limit stops extraction (a bomb under the byte limit)", "[archive]") {
  TempDir t;
  fs::path work(t.path());
  gzFile f = gzopen((work / "bomb.tar.gz").c_str(), "wb9");
  std::string zeros(1 << 20, '\0');
  std::string h = header("zeros", uint64_t{32} << 20);
  gzwrite(f, h.data(), 512);
  for (int i = 0; i < 32; ++i) gzwrite(f, zeros.data(), static_cast<unsigned>(zeros.size()));
  gzclose(f);
  ArchiveLimits limits;
  limits.ratio_floor = 1 << 20;
  limits.max_ratio = 100;
  fs::path dest = work / "dest";
  fs::create_directories(dest);
  ArchiveResult r = extract_archive((work / "bomb.tar.gz").string(), dest.string(), limits);
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("bomb.tar.gz:zeros: more than 100 times the archive's") != std::string::npos);
  CHECK_FALSE(fs::exists(dest / "zeros"));
  // The same archive under the default limits (the ratio counted past 64 MiB only) is fine.
  fs::path dest2 = work / "dest2";
  fs::create_directories(dest2);
  r = extract_archive((work / "bomb.tar.gz").string(), dest2.string());
  CHECK(r.ok);
  CHECK(fs::file_size(dest2 / "zeros") == uint64_t{32} << 20);
}

TEST_CASE("broken archives give one error line and no crash", "[archive]") {
  TempDir t;
  fs::path work(t.path());
  std::string good = header("a", 600) + padded(std::string(600, 'a')) + std::string(1024, '\0');
  std::string gz_good;
  {
    gzip_to(work / "g.tar.gz", good);
    gz_good = slurp(work / "g.tar.gz");
  }
  struct Row {
    const char* what;
    std::string bytes;
    const char* error_has;
  };
  const Row rows[] = {
      {"an empty file", "", "empty file, not an archive"},
      {"text", padded("hello, this is not a tar archive\n"), "not a tar or zip archive"},
      {"a bad checksum after a good entry",
       header("a", 1) + padded("a") + header("b", 1, '0', false, true) + padded("b"), "after 'a': "},
      {"a file cut inside its data", good.substr(0, 512 + 300),
       "b.tar:a: claims 600 bytes, but the archive ends before"},
      {"a gzip stream cut short", gz_good.substr(0, gz_good.size() / 2), ""},
      {"a header cut short", good.substr(0, 200), "not a tar or zip archive"},
      {"a second header cut short", (header("a", 1) + padded("a") + header("b", 1) + padded("b")).substr(0, 1024 + 100),
       "after 'a': "},
  };
  for (const Row& row : rows) {
    DYNAMIC_SECTION(row.what) {
      write_bytes(work / "b.tar", row.bytes);
      fs::path dest = work / "dest";
      fs::create_directories(dest);
      ArchiveResult r = extract_archive((work / "b.tar").string(), dest.string());
      CHECK_FALSE(r.ok);
      CHECK(r.error.rfind((work / "b.tar").string() + ":", 0) == 0);
      CHECK(r.error.find(row.error_has) != std::string::npos);
      CHECK(r.error.find('\n') == std::string::npos);
    }
  }
  // No end-of-archive blocks at all: accepted, as tar itself does.
  write_bytes(work / "c.tar", header("a", 1) + padded("a"));
  fs::create_directories(work / "dest2");
  ArchiveResult r = extract_archive((work / "c.tar").string(), (work / "dest2").string());
  CHECK(r.ok);
  CHECK(slurp(work / "dest2" / "a") == "a");
}

TEST_CASE("archive names are recognised by their extension", "[archive]") {
  CHECK(looks_like_archive_name("a.tar"));
  CHECK(looks_like_archive_name("dir/logs.tar.gz"));
  CHECK(looks_like_archive_name("x.tgz"));
  CHECK(looks_like_archive_name("logs.zip"));
  CHECK(looks_like_archive_name("logs.tar.zst"));
  CHECK_FALSE(looks_like_archive_name("workerlog.0.gz"));
  CHECK_FALSE(looks_like_archive_name("workerlog.0"));
}

TEST_CASE("zip and zstd archives made by the real tools are extracted whole", "[archive]") {
  TempDir t;
  fs::path work(t.path());
  t.write("src/logs/workerlog.0", "line 0\n");
  t.write("src/logs/machine1/workerlog.1", std::string(70000, 'x'));
  std::string cd = "cd " + quoted((work / "src").string()) + " && ";
  struct Row {
    const char* what;
    std::string file;
    std::string command;
  };
  const Row rows[] = {
      {"zip, deflated", "a.zip", "zip -qr ../a.zip logs"},
      {"zip, stored", "s.zip", "zip -qr0 ../s.zip logs"},
      {"tar.zst", "a.tar.zst", "tar -cf - logs | zstd -q -o ../a.tar.zst"},
  };
  for (const Row& row : rows) {
    DYNAMIC_SECTION(row.what) {
      if (sh(cd + row.command) != 0) {
        FAIL(row.command << " failed (zip and zstd: scripts/setup.sh installs them)");
      }
      fs::path dest = work / ("out-" + row.file);
      fs::create_directories(dest);
      CHECK(looks_like_archive_data((work / row.file).string()));
      ArchiveResult r = extract_archive((work / row.file).string(), dest.string());
      INFO(r.error);
      REQUIRE(r.ok);
      CHECK(r.files == 2);
      CHECK(slurp(dest / "logs/workerlog.0") == "line 0\n");
      CHECK(slurp(dest / "logs/machine1/workerlog.1") == std::string(70000, 'x'));
    }
  }
}

namespace {

// A zip file written byte by byte, so that every field can lie.
struct ZipEntry {
  std::string name;
  std::string data;              // as stored (deflated already when method is 8)
  uint16_t method = 0;           // 0 stored, 8 deflated
  uint32_t crc = 0;              // computed from `plain` when 0 and plain is set
  std::string plain;             // the uncompressed bytes (for the CRC and size)
  int64_t claimed_size = -1;     // uncompressed size written; -1: plain.size()
  uint32_t unix_mode = 0100644;  // in the external attributes
  uint16_t flags = 0;            // bit 0: encrypted
};

void put16(std::string* s, uint32_t v) {
  s->push_back(static_cast<char>(v & 0xff));
  s->push_back(static_cast<char>((v >> 8) & 0xff));
}
void put32(std::string* s, uint32_t v) {
  put16(s, v & 0xffff);
  put16(s, v >> 16);
}

std::string zip_bytes(const std::vector<ZipEntry>& entries) {
  std::string out, central;
  for (const ZipEntry& e : entries) {
    uint32_t crc = e.crc ? e.crc
                         : static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(e.plain.data()),
                                                       static_cast<uInt>(e.plain.size())));
    uint32_t usize =
        e.claimed_size >= 0 ? static_cast<uint32_t>(e.claimed_size) : static_cast<uint32_t>(e.plain.size());
    uint32_t offset = static_cast<uint32_t>(out.size());
    auto common = [&](std::string* s) {
      put16(s, 20);  // version needed
      put16(s, e.flags);
      put16(s, e.method);
      put16(s, 0);
      put16(s, 0x21);  // 1980-01-01
      put32(s, crc);
      put32(s, static_cast<uint32_t>(e.data.size()));
      put32(s, usize);
      put16(s, static_cast<uint32_t>(e.name.size()));
      put16(s, 0);  // extra
    };
    put32(&out, 0x04034b50);
    common(&out);
    out += e.name + e.data;
    put32(&central, 0x02014b50);
    put16(&central, (3 << 8) | 20);  // made by: unix, so the mode is read
    common(&central);
    put16(&central, 0);  // comment
    put16(&central, 0);  // disk
    put16(&central, 0);  // internal attributes
    put32(&central, e.unix_mode << 16);
    put32(&central, offset);
    central += e.name;
  }
  uint32_t cd_offset = static_cast<uint32_t>(out.size());
  out += central;
  put32(&out, 0x06054b50);
  put16(&out, 0);
  put16(&out, 0);
  put16(&out, static_cast<uint32_t>(entries.size()));
  put16(&out, static_cast<uint32_t>(entries.size()));
  put32(&out, static_cast<uint32_t>(central.size()));
  put32(&out, cd_offset);
  put16(&out, 0);
  return out;
}

// Raw deflate (as zip stores it) of `data`.
std::string deflated(const std::string& data) {
  z_stream z{};
  REQUIRE(deflateInit2(&z, 9, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&z, static_cast<uLong>(data.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

ZipEntry stored(const std::string& name, const std::string& data) {
  ZipEntry e;
  e.name = name;
  e.data = data;
  e.plain = data;
  return e;
}

ZipEntry deflated_entry(const std::string& name, const std::string& data) {
  ZipEntry e;
  e.name = name;
  e.data = deflated(data);
  e.plain = data;
  e.method = 8;
  return e;
}

}  // namespace

TEST_CASE("a hostile zip writes nothing outside, creates no link, and names each refused entry", "[archive]") {
  TempDir t;
  fs::path work(t.path());
  fs::path dest = work / "x" / "dest";
  fs::create_directories(dest);
  ZipEntry link = stored("logs/etc", "/etc");
  link.unix_mode = 0120777;
  ZipEntry enc = stored("logs/secret", "xxxxxxxxxxxxyyyy");
  enc.flags = 1;
  std::vector<ZipEntry> entries = {
      stored("../evil", "pwned"),
      stored("logs/../../evil2", "pwned"),
      stored((work / "abs-evil").string(), "pwned"),
      stored("..\\evil3", "pwned"),
      link,
      stored("logs/etc/passwd-evil", "pwned"),  // a plain folder here: the link was not made
      enc,
      deflated_entry("logs/workerlog.0", "line 0\n"),
  };
  write_bytes(work / "h.zip", zip_bytes(entries));
  ArchiveResult r = extract_archive((work / "h.zip").string(), dest.string());
  INFO(r.error);
  REQUIRE(r.ok);
  CHECK_FALSE(fs::exists(work / "x" / "evil"));
  CHECK_FALSE(fs::exists(work / "evil2"));
  CHECK_FALSE(fs::exists(work / "abs-evil"));
  bool any_link = false;
  std::vector<std::string> got = listing(dest, &any_link);
  CHECK_FALSE(any_link);
  CHECK(got == std::vector<std::string>{"logs", "logs/etc", "logs/etc/passwd-evil", "logs/workerlog.0"});
  CHECK(slurp(dest / "logs/workerlog.0") == "line 0\n");
  std::string skipped;
  for (const std::string& s : r.skipped) skipped += s + "\n";
  INFO(skipped);
  std::string z = (work / "h.zip").string() + ":";
  CHECK(skipped.find(z + "../evil: '..' in the path refused") != std::string::npos);
  CHECK(skipped.find(z + "logs/../../evil2: '..' in the path refused") != std::string::npos);
  CHECK(skipped.find(z + (work / "abs-evil").string() + ": absolute path refused") != std::string::npos);
  // libarchive reads a zip's '\\' as '/'.
  CHECK(skipped.find(z + "../evil3: '..' in the path refused") != std::string::npos);
  CHECK(skipped.find(z + "logs/etc: symbolic link not extracted") != std::string::npos);
  CHECK(skipped.find(z + "logs/secret: encrypted entry not extracted (no password is asked for)") != std::string::npos);
  CHECK(r.skipped.size() == 6);
}

TEST_CASE("a zip's lying sizes, bombs and truncation stop with the entry named, nothing half written", "[archive]") {
  TempDir t;
  fs::path work(t.path());
  ZipEntry longer = stored("logs/lie-long", "0123456789");
  longer.claimed_size = 1000;  // more than is stored
  ZipEntry shorter = deflated_entry("logs/lie-short", std::string(100000, 'a'));
  shorter.claimed_size = 10;  // less than the data inflates to
  ZipEntry huge = stored("logs/huge", "tiny");
  huge.claimed_size = 0xfffffff0;
  ArchiveLimits small;
  small.max_entry_bytes = 1 << 20;
  ZipEntry bomb = deflated_entry("logs/bomb", std::string(size_t{48} << 20, '\0'));
  ArchiveLimits ratio;
  ratio.ratio_floor = 1 << 20;
  ratio.max_ratio = 200;
  std::string good = zip_bytes({deflated_entry("logs/workerlog.0", std::string(20000, 'l')),
                                deflated_entry("logs/workerlog.1", std::string(20000, 'm'))});
  struct Row {
    const char* what;
    std::string bytes;
    ArchiveLimits limits;
    const char* error_has;
    const char* absent;
  };
  const Row rows[] = {
      {"a stored entry claiming more than it holds", zip_bytes({longer}), {}, ":logs/lie-long: ", "logs/lie-long"},
      {"a deflated entry claiming less than it holds", zip_bytes({shorter}), {}, ":logs/lie-short: ", "logs/lie-short"},
      {"a 4 GiB claim over the entry limit", zip_bytes({huge}), small, ":logs/huge: claims 4294967280 bytes",
       "logs/huge"},
      {"a zip bomb (48 MiB of zeros in about 50 KiB)", zip_bytes({bomb}), ratio, ":logs/bomb: more than 200 times",
       "logs/bomb"},
      {"a truncated zip", good.substr(0, good.size() / 2), {}, "", "logs/workerlog.1"},
  };
  for (const Row& row : rows) {
    DYNAMIC_SECTION(row.what) {
      write_bytes(work / "b.zip", row.bytes);
      fs::path dest = work / "dest";
      fs::remove_all(dest);
      fs::create_directories(dest);
      ArchiveResult r = extract_archive((work / "b.zip").string(), dest.string(), row.limits);
      INFO(r.error);
      CHECK_FALSE(r.ok);
      CHECK(r.error.rfind((work / "b.zip").string() + ":", 0) == 0);
      CHECK(r.error.find(row.error_has) != std::string::npos);
      CHECK(r.error.find('\n') == std::string::npos);
      CHECK_FALSE(fs::exists(dest / row.absent));
    }
  }
}

TEST_CASE("a zip holding one path twice is refused, never read as the last of the two", "[archive]") {
  TempDir t;
  fs::path work(t.path());
  fs::path dest = work / "dest";
  fs::create_directories(dest);
  write_bytes(work / "twice.zip", zip_bytes({stored("run/workerlog.0", "first\n"), stored("run/workerlog.1", "one\n"),
                                             stored("run/./workerlog.0", "second\n")}));
  ArchiveResult r = extract_archive((work / "twice.zip").string(), dest.string());
  CHECK_FALSE(r.ok);
  CHECK(r.error == (work / "twice.zip").string() +
                       ":run/./workerlog.0: a second entry of this path (the archive holds two files at one name, and "
                       "one would replace the other); refused");
  // A tar with a path twice (tar -r appends a file again) is refused too.
  t.write("payload", "one\n");
  std::string cd = "cd " + quoted(work.string()) + " && ";
  REQUIRE(sh(cd + "tar -cf twice.tar payload && tar -rf twice.tar payload") == 0);
  fs::path dest3 = work / "dest3";
  fs::create_directories(dest3);
  ArchiveResult tr = extract_archive((work / "twice.tar").string(), dest3.string());
  CHECK_FALSE(tr.ok);
  CHECK(tr.error.find("twice.tar:payload: a second entry of this path") != std::string::npos);
  // A folder entry repeated is no conflict.
  fs::path dest2 = work / "dest2";
  fs::create_directories(dest2);
  ZipEntry dir = stored("run/", "");
  dir.unix_mode = 040755;
  write_bytes(work / "dirs.zip", zip_bytes({dir, stored("run/workerlog.0", "x\n"), dir}));
  ArchiveResult d = extract_archive((work / "dirs.zip").string(), dest2.string());
  INFO(d.error);
  CHECK(d.ok);
  CHECK(d.files == 1);
}

TEST_CASE("a zip's names flagged UTF-8 (bit 11, as Python's zipfile writes them) are read as they are", "[archive]") {
  TempDir t;
  fs::path work(t.path());
  fs::path dest = work / "dest";
  fs::create_directories(dest);
  ZipEntry a = stored("logs/r\xC3\xA9sultats/workerlog.0", "line 0\n");
  a.flags = 0x800;
  ZipEntry b = stored("logs/\xE6\x97\xA5\xE5\xBF\x97/workerlog.1", "line 1\n");
  b.flags = 0x800;
  write_bytes(work / "utf8.zip", zip_bytes({a, b}));
  ArchiveResult r = extract_archive((work / "utf8.zip").string(), dest.string());
  INFO(r.error);
  REQUIRE(r.ok);
  std::string skipped;
  for (const std::string& s : r.skipped) skipped += s + "\n";
  INFO(skipped);
  CHECK(r.skipped.empty());
  CHECK(r.files == 2);
  CHECK(slurp(dest / "logs/r\xC3\xA9sultats/workerlog.0") == "line 0\n");
  CHECK(slurp(dest / "logs/\xE6\x97\xA5\xE5\xBF\x97/workerlog.1") == "line 1\n");
}
