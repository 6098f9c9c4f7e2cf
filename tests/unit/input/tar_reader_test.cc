// The tar reader: archives made by the real `tar`, hostile archives, and
// hand-made headers for what `tar` will not write (size claims, bad sums).
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

#include "input/tar_reader.h"
#include "support/test_support.h"

using namespace ppt;
using ppt::testing::TempDir;
namespace fs = std::filesystem;

namespace {

int sh(const std::string& cmd) { return std::system(("(" + cmd + ") >/dev/null 2>&1").c_str()); }

std::string quoted(const std::string& s) { return "'" + s + "'"; }

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_bytes(const fs::path& p, const std::string& data) { std::ofstream(p, std::ios::binary) << data; }

// A ustar header block for `name` with `size` (as 11 octal digits, or
// base-256 when `base256`), and a correct checksum unless `bad_sum`.
std::string header(const std::string& name, uint64_t size, char type = '0', bool base256 = false, bool bad_sum = false) {
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
  std::memcpy(h.data() + 257, "ustar\0" "00", 8);
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

TEST_CASE("archives made by tar are extracted whole, plain or gzipped, in every format", "[tar]") {
  TempDir t;
  fs::path src = fs::path(t.path()) / "src";
  t.write("src/logs/workerlog.0", "line 0\n");
  t.write("src/logs/machine1/workerlog.1", std::string(70000, 'x'));  // several blocks, not a multiple of 512
  std::string long_dir(120, 'd');  // longer than the 100-byte name field
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
        TarResult r = extract_tar(archive.string(), dest.string());
        INFO(r.error);
        REQUIRE(r.ok);
        CHECK(r.files == 4);
        CHECK(r.skipped.empty());
        CHECK(read_all(dest / "logs/workerlog.0") == "line 0\n");
        CHECK(read_all(dest / "logs/machine1/workerlog.1") == std::string(70000, 'x'));
        CHECK(read_all(dest / "logs" / long_dir / "workerlog.2") == "deep\n");
        CHECK(fs::is_regular_file(dest / "logs/empty.txt"));
        CHECK(r.bytes == 7 + 70000 + 5);
      }
    }
  }
}

TEST_CASE("a hostile archive writes nothing outside the directory and creates no link", "[tar]") {
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
  REQUIRE(sh(cd + "tar -rf h.tar payload") == 0);  // a harmless file after all that

  fs::path dest = work / "x" / "dest";
  fs::create_directories(dest);
  TarResult r = extract_tar((work / "h.tar").string(), dest.string());
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
  CHECK(got == std::vector<std::string>{"dirlink", "dirlink/evil3", "etclink", "etclink/evil-passwd", "payload"});

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

TEST_CASE("pax headers give long names and sizes, and a NUL in a name is refused", "[tar]") {
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
  TarResult r = extract_tar((work / "p.tar").string(), dest.string());
  INFO(r.error);
  REQUIRE(r.ok);
  CHECK(read_all(dest / long_name) == "hello");
  CHECK(read_all(dest / "sized") == "abc");
  CHECK_FALSE(fs::exists(dest / "short"));
  CHECK_FALSE(fs::exists(dest / "a"));
  CHECK_FALSE(fs::exists(dest / "x"));  // the pax path (refused) named it, not the header
  REQUIRE(r.skipped.size() == 1);
  CHECK(r.skipped[0].find("a NUL byte in the name refused") != std::string::npos);
}

TEST_CASE("a link already in the destination is never written through", "[tar]") {
  TempDir t;
  fs::path work(t.path());
  fs::create_directories(work / "outside");
  fs::path dest = work / "dest";
  fs::create_directories(dest);
  fs::create_symlink(work / "outside", dest / "pre");
  fs::create_symlink(work / "outside" / "target", dest / "file");
  std::string tar = header("pre/evil", 4) + padded("evil") + header("file", 4) + padded("evil") +
                    std::string(1024, '\0');
  write_bytes(work / "a.tar", tar);
  TarResult r = extract_tar((work / "a.tar").string(), dest.string());
  REQUIRE(r.ok);
  CHECK(r.files == 0);
  CHECK(fs::is_empty(work / "outside"));
  REQUIRE(r.skipped.size() == 2);
  CHECK(r.skipped[0] == "pre/evil: a parent in the path is not a directory");
  CHECK(r.skipped[1] == "file: a link is in the way");
}

TEST_CASE("sizes and entry counts are bounded before anything large is written", "[tar]") {
  TempDir t;
  fs::path work(t.path());
  struct Row {
    const char* what;
    std::string archive;
    TarLimits limits;
    const char* error_has;
  };
  TarLimits small;
  small.max_bytes = 64 * 1024;
  TarLimits few;
  few.max_entries = 3;
  TarLimits gib;
  gib.max_bytes = 1 << 30;
  std::string five_files;
  for (int i = 0; i < 5; ++i) five_files += header("f" + std::to_string(i), 1) + padded("x");
  const Row rows[] = {
      {"an 8 GiB claim in a tiny file", header("big", 077777777777) + padded("tiny"), gib, "claims 8589934591 bytes"},
      {"a 1 TiB base-256 claim", header("huge", uint64_t{1} << 40, '0', true) + padded("tiny"), TarLimits{},
       "claims 1099511627776 bytes"},
      {"a real file above a small limit", header("big", 100000) + padded(std::string(100000, 'z')), small,
       "more than the 65536 byte limit"},
      {"more entries than allowed", five_files + std::string(1024, '\0'), few, "more than 3 entries"},
  };
  for (const Row& row : rows) {
    DYNAMIC_SECTION(row.what) {
      for (bool gz : {false, true}) {
        fs::path archive = work / (gz ? "a.tar.gz" : "a.tar");
        if (gz) gzip_to(archive, row.archive);
        else write_bytes(archive, row.archive);
        fs::path dest = work / (gz ? "dest-gz" : "dest");
        fs::create_directories(dest);
        TarResult r = extract_tar(archive.string(), dest.string(), row.limits);
        CHECK_FALSE(r.ok);
        CHECK(r.error.find(row.error_has) != std::string::npos);
        CHECK_FALSE(fs::exists(dest / "big"));
        CHECK_FALSE(fs::exists(dest / "huge"));
        CHECK(r.files <= 3);
      }
    }
  }
}

TEST_CASE("a plain archive's size claim is checked against the file, and a cut file is removed", "[tar]") {
  TempDir t;
  fs::path work(t.path());
  write_bytes(work / "a.tar", header("ok", 2) + padded("ok") + header("big", 077777777777) + padded("tiny"));
  fs::path dest = work / "dest";
  fs::create_directories(dest);
  TarResult r = extract_tar((work / "a.tar").string(), dest.string());
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("'big' claims 8589934591 bytes, but the archive ends before") != std::string::npos);
  CHECK(read_all(dest / "ok") == "ok");
  CHECK_FALSE(fs::exists(dest / "big"));
  // Compressed, the end is only found by reading: the partial file is removed.
  gzip_to(work / "a.tar.gz", header("big", 5000) + padded("tiny"));
  fs::path dest2 = work / "dest2";
  fs::create_directories(dest2);
  r = extract_tar((work / "a.tar.gz").string(), dest2.string());
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("truncated archive (inside 'big')") != std::string::npos);
  CHECK_FALSE(fs::exists(dest2 / "big"));
}

TEST_CASE("a gzip bomb stops at the byte limit", "[tar]") {
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
  TarLimits limits;
  limits.max_bytes = 8 << 20;
  fs::path dest = work / "dest";
  fs::create_directories(dest);
  TarResult r = extract_tar((work / "bomb.tar.gz").string(), dest.string(), limits);
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("more than 8388608 bytes once decompressed; the rest is not extracted") != std::string::npos);
  CHECK(r.files == 7);  // 7 entries with their headers fit in 8 MiB, the 8th does not
  CHECK(r.bytes <= limits.max_bytes);
  CHECK_FALSE(fs::exists(dest / "bomb7"));
}

TEST_CASE("broken archives give one error line and no crash", "[tar]") {
  TempDir t;
  fs::path work(t.path());
  std::string good = header("a", 600) + padded(std::string(600, 'a')) + std::string(1024, '\0');
  std::string gz_good;
  {
    gzip_to(work / "g.tar.gz", good);
    gz_good = read_all(work / "g.tar.gz");
  }
  struct Row {
    const char* what;
    std::string bytes;
    const char* error_has;
  };
  const Row rows[] = {
      {"an empty file", "", "empty file, not a tar archive"},
      {"text", padded("hello, this is not a tar archive\n"), "not a tar archive (bad header checksum)"},
      {"a bad checksum after a good entry", header("a", 1) + padded("a") + header("b", 1, '0', false, true) + padded("b"),
       "bad header checksum at byte 1024"},
      {"a file cut inside its data", good.substr(0, 512 + 300), "'a' claims 600 bytes, but the archive ends before"},
      {"a gzip stream cut short", gz_good.substr(0, gz_good.size() / 2), ""},
      {"a header cut short", good.substr(0, 200), "not a tar archive (shorter than one 512-byte header)"},
      {"a second header cut short", (header("a", 1) + padded("a") + header("b", 1) + padded("b")).substr(0, 1024 + 100),
       "truncated archive (at byte 1024)"},
  };
  for (const Row& row : rows) {
    DYNAMIC_SECTION(row.what) {
      write_bytes(work / "b.tar", row.bytes);
      fs::path dest = work / "dest";
      fs::create_directories(dest);
      TarResult r = extract_tar((work / "b.tar").string(), dest.string());
      CHECK_FALSE(r.ok);
      CHECK(r.error.rfind((work / "b.tar").string() + ": ", 0) == 0);
      CHECK(r.error.find(row.error_has) != std::string::npos);
      CHECK(r.error.find('\n') == std::string::npos);
    }
  }
  // No end-of-archive blocks at all: accepted, as tar itself does.
  write_bytes(work / "c.tar", header("a", 1) + padded("a"));
  fs::create_directories(work / "dest2");
  TarResult r = extract_tar((work / "c.tar").string(), (work / "dest2").string());
  CHECK(r.ok);
  CHECK(read_all(work / "dest2" / "a") == "a");
}

TEST_CASE("archive names are recognised by their extension", "[tar]") {
  CHECK(looks_like_tar_name("a.tar"));
  CHECK(looks_like_tar_name("dir/logs.tar.gz"));
  CHECK(looks_like_tar_name("x.tgz"));
  CHECK_FALSE(looks_like_tar_name("workerlog.0.gz"));
  CHECK_FALSE(looks_like_tar_name("logs.zip"));
}
