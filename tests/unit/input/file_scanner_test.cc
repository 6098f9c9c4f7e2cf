#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>

#include "input/file_scanner.h"
#include "input/text_encoding.h"
#include "support/test_support.h"

using namespace ppt;
using ppt::testing::job_line;
using ppt::testing::parser;

namespace {
// `log` scanned through a read buffer of `buffer` bytes.
FileScan scan_with_buffer(const std::string& log, size_t buffer) {
  ScanOptions opt;
  opt.buffer_bytes = buffer;
  return scan_buffer(log, 0, parser(), opt);
}
}  // namespace

TEST_CASE("jobs keep their exact line numbers among other threads' lines", "[scanner]") {
  std::string log = "noise 1\n" + job_line("forward", 0, 0, 10) + "I1020 other.cc:1] Profiler summary\n\n" +
                    job_line("backward", 0, 20, 40) + "tail\n";
  for (size_t buffer : {256u, 333u, 1u << 20}) {
    INFO("buffer " << buffer);
    FileScan s = scan_with_buffer(log, buffer);
    REQUIRE(s.jobs.size() == 2);
    CHECK(s.jobs[0].line == 2);
    CHECK(s.jobs[1].line == 5);
    CHECK(s.counts.lines == 6);
    CHECK(s.counts.profiler_lines == 2);
    CHECK(s.types == std::vector<std::string>{"forward", "backward"});
  }
}

TEST_CASE("CRLF, NUL bytes and binary junk around jobs lose nothing", "[scanner]") {
  std::string junk("\x00\xff\xfe garbage\r\n", 14);
  std::string line = job_line("forward", 1, 0, 5);
  line.insert(line.size() - 1, "\r");
  std::string log = junk + line + std::string(1000, '\0') + "\n" + job_line("forward", 2, 5, 9);
  FileScan s = scan_buffer(log, 0, parser());
  REQUIRE(s.jobs.size() == 2);
  CHECK(s.jobs[0].micro_batch == 1);
  CHECK(s.jobs[1].line == 4);
  CHECK(s.diagnostics.rejected_jobs() == 0);
}

TEST_CASE("a cut-off last line is reported as truncated", "[scanner]") {
  std::string full = job_line("forward", 0, 0, 10);
  std::string log = full + full.substr(0, full.size() / 2);
  FileScan s = scan_buffer(log, 3, parser());
  CHECK(s.jobs.size() == 1);
  CHECK(s.counts.profiler_lines == 2);
  CHECK(s.diagnostics.count_of(IssueKind::kTruncatedJobLine) == 1);
  REQUIRE(s.diagnostics.examples().size() == 1);
  CHECK(s.diagnostics.examples()[0].line == 2);
  CHECK(s.diagnostics.examples()[0].file == 3);
  // A complete last line without a newline is still a job.
  FileScan ok = scan_buffer(full.substr(0, full.size() - 1), 0, parser());
  CHECK(ok.jobs.size() == 1);
}

TEST_CASE("a job line cut short is a truncated line, wherever the cut falls", "[scanner]") {
  // start 213.760986 ms, end 254.006104 ms after the epoch second.
  const std::string full =
      "I1020 09:15:07.265326 22317 standalone_executor.cc:217] Profiler Info: Job (3), type = forward, "
      "micro_batch_id = 2, job_start_time = 1697793307213.760986, job_end_time = 1697793307254.006104";
  const std::string before = job_line("forward", 0, 0, 10);
  auto check_truncated = [&](const std::string& log, size_t jobs, const std::string& tail) {
    INFO(log);
    FileScan s = scan_buffer(log, 0, parser());
    CHECK(s.jobs.size() == jobs);
    CHECK(s.diagnostics.count_of(IssueKind::kTruncatedJobLine) == 1);
    CHECK(s.diagnostics.count_of(IssueKind::kEndBeforeStart) == 0);
    CHECK(s.diagnostics.count_of(IssueKind::kMalformedJobLine) == 0);
    CHECK(s.diagnostics.count_of(IssueKind::kBadTime) == 0);
    CHECK(s.counts.jobs + s.diagnostics.rejected_jobs() == s.counts.profiler_lines);
    for (const Diagnostic& d : s.diagnostics.examples()) {
      if (d.kind != IssueKind::kTruncatedJobLine) continue;
      CHECK(d.line == 2);
      CHECK(d.detail.find(tail) != std::string::npos);
    }
  };
  SECTION("at the end of the file, inside a key") {
    check_truncated(before + full.substr(0, full.find("job_end_time") + 10), 1, "job_end_ti");
  }
  SECTION("at the end of the file, inside the end time's whole milliseconds (a valid but wrong number)") {
    check_truncated(before + full.substr(0, full.size() - 9), 1, "job_end_time = 16977933072");
  }
  SECTION("at the end of the file, inside the end time's decimals") {
    check_truncated(before + full.substr(0, full.size() - 4), 1, "1697793307254.00");
    check_truncated(before + full.substr(0, full.size() - 7), 1, "1697793307254");
  }
  SECTION("followed by the next process's first line") {
    std::string cut = full.substr(0, full.size() - 9);
    check_truncated(before + cut +
                        "W1020 09:16:02.010258 21402 gpu_resources.cc:119] Please NOTE: device: 0, GPU Compute "
                        "Capability: 9.0, Driver API Version: 12.4, Runtime API Version: 12.3\n" +
                        job_line("forward", 0, 60'000'000, 60'000'010),
                    2, "job_end_time = 16977933072");
  }
  SECTION("followed by the next job line: both lines' jobs are accounted for, the second is drawn") {
    std::string cut = full.substr(0, full.size() - 9);
    check_truncated(before + cut + job_line("forward", 1, 20, 30), 2, "job_end_time = 16977933072");
  }
  SECTION("followed by a Python logging line") {
    std::string cut = full.substr(0, full.find("job_start_time") + 20);
    check_truncated(before + cut + "[2023-10-20 09:16:02,010] [    INFO] - PaddleNLP version: 3.0.0b2\n", 1,
                    "job_start_time = 1");
  }
  SECTION("a cut end time followed by a newline is not a job whose end precedes its start") {
    check_truncated(before + full.substr(0, full.size() - 9) + "\n" + job_line("forward", 1, 20, 30), 2,
                    "job_end_time = 16977933072");
  }
  SECTION("a whole last line without a newline is a job, with CR or without") {
    FileScan a = scan_buffer(before + full, 0, parser());
    CHECK(a.jobs.size() == 2);
    CHECK(a.diagnostics.rejected_jobs() == 0);
    FileScan b = scan_buffer(before + full + "\r", 0, parser());
    CHECK(b.jobs.size() == 2);
    CHECK(b.diagnostics.rejected_jobs() == 0);
  }
}

TEST_CASE("a line longer than the buffer is skipped and reported, the rest is read", "[scanner]") {
  ScanOptions opt;
  opt.buffer_bytes = 256;
  std::string huge = "Profiler Info: Job (1), type = " + std::string(5000, 'x') + "\n";
  std::string plain_long = std::string(5000, 'y') + "\n";
  std::string log = job_line("forward", 0, 0, 1) + huge + plain_long + job_line("forward", 1, 1, 2);
  FileScan s = scan_buffer(log, 0, parser(), opt);
  CHECK(s.jobs.size() == 2);
  CHECK(s.jobs[1].line == 4);
  CHECK(s.counts.profiler_lines == 3);
  CHECK(s.diagnostics.count_of(IssueKind::kLineTooLong) == 1);
  // The marker split across two reads of a long line is still seen.
  std::string split = std::string(250, 'a') + "Profiler Info: Job (" + std::string(600, 'b') + "\n";
  FileScan t = scan_buffer(split, 0, parser(), opt);
  CHECK(t.diagnostics.count_of(IssueKind::kLineTooLong) == 1);
}

TEST_CASE("markers and thread changes are placed in the job stream", "[scanner]") {
  std::string log = "Schedule Profiler start at step 7 and end at step 9\n" + job_line("forward", 0, 0, 1, -1, 11) +
                    job_line("forward", 1, 1, 2, -1, 11) + job_line("forward", 0, 9, 10, -1, 12);
  FileScan s = scan_buffer(log, 0, parser());
  REQUIRE(s.markers.size() == 1);
  CHECK(s.markers[0].job_index == 0);
  CHECK(s.markers[0].start_step == 7);
  REQUIRE(s.thread_changes.size() == 2);
  CHECK(s.thread_changes[1].job_index == 2);
  CHECK(s.thread_changes[1].thread_id == 12);
}

TEST_CASE("a file with no profiler line says how to turn the profiler on", "[scanner]") {
  FileScan s = scan_buffer("just\nnoise\n", 0, parser());
  CHECK(s.diagnostics.count_of(IssueKind::kNoProfilerLines) == 1);
  // Each switch that current Paddle and PaddleNLP read (docs/log-format.md), and the old flag: said
  // once per run, by the count of no_profiler_lines or the error that no log holds a job
  // (cli_messages.py checks each command says it once).
  std::string explanation(PPT_PROFILER_ON_HINT);
  for (const char* name : {"--job_schedule_profiler_start", "switch_job_schedule_profiler", "pp_configs",
                           "FLAGS_auto_parallel_profiler=1 on older Paddle"}) {
    CHECK(explanation.find(name) != std::string::npos);
  }
}

TEST_CASE("gzip-compressed and plain logs read the same", "[scanner]") {
  ppt::testing::TempDir dir;
  std::string log = "x\n" + job_line("forward", 0, 0, 1) + job_line("backward", 0, 1, 3);
  std::string plain = dir.write("workerlog.0", log);
  std::string gz = dir.path() + "/workerlog.1.gz";
  gzFile f = gzopen(gz.c_str(), "wb");
  gzwrite(f, log.data(), static_cast<unsigned>(log.size()));
  gzclose(f);
  FileScan a = scan_file(plain, 0, parser());
  FileScan b = scan_file(gz, 1, parser());
  REQUIRE(a.jobs.size() == 2);
  REQUIRE(b.jobs.size() == 2);
  CHECK(a.jobs[1].line == b.jobs[1].line);
  CHECK(a.jobs[1].end_ns == b.jobs[1].end_ns);
}

TEST_CASE("'-' reads standard input once, plain or gzip, through a pipe", "[scanner]") {
  ppt::testing::TempDir dir;
  std::string log = "x\n" + job_line("forward", 0, 0, 1) + "noise\n" + job_line("backward", 0, 1, 3);
  std::string gz_path = dir.path() + "/log.gz";
  gzFile f = gzopen(gz_path.c_str(), "wb");
  gzwrite(f, log.data(), static_cast<unsigned>(log.size()));
  gzclose(f);
  std::string gz = testing::slurp(gz_path);
  for (const std::string* input : {&log, &gz}) {
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    // Small enough for the pipe's buffer: written whole before reading.
    REQUIRE(write(fds[1], input->data(), input->size()) == static_cast<ssize_t>(input->size()));
    close(fds[1]);
    int saved = dup(STDIN_FILENO);
    dup2(fds[0], STDIN_FILENO);
    close(fds[0]);
    FileScan s = scan_file("-", 0, parser());
    dup2(saved, STDIN_FILENO);
    close(saved);
    CHECK(s.readable);
    REQUIRE(s.jobs.size() == 2);
    CHECK(s.jobs[1].line == 4);
    CHECK(s.counts.lines == 4);
    CHECK(s.counts.bytes == log.size());
  }
}

TEST_CASE("what is not a regular file is refused without blocking", "[scanner]") {
  ppt::testing::TempDir dir;
  std::filesystem::create_directory(dir.path() + "/workerlog.0");
  FileScan d = scan_file(dir.path() + "/workerlog.0", 0, parser());
  CHECK_FALSE(d.readable);
  CHECK(d.diagnostics.count_of(IssueKind::kUnreadableFile) == 1);
  std::string fifo = dir.path() + "/fifo";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  FileScan f = scan_file(fifo, 0, parser());  // would hang if it waited for a writer
  CHECK_FALSE(f.readable);
  FileScan m = scan_file(dir.path() + "/missing", 0, parser());
  CHECK_FALSE(m.readable);
}

TEST_CASE("a job printed twice is drawn once and the copy is counted as rejected", "[hardening][scanner]") {
  std::string a = job_line("forward", 0, 0, 100);
  std::string b = job_line("forward", 1, 100, 200);
  std::string c = job_line("backward", 0, 200, 400);
  struct Case {
    const char* what;
    std::string log;
    uint64_t jobs, duplicates;
  };
  const Case cases[] = {
      {"each line twice in a row", a + a + b + b + c + c, 3, 3},
      {"the whole log twice", a + b + c + a + b + c, 3, 3},
      {"no duplicate", a + b + c, 3, 0},
      // Same times, other type or micro-batch: two jobs, not a copy.
      {"same times, other job", a + job_line("backward", 0, 0, 100) + job_line("forward", 5, 0, 100), 3, 0},
  };
  for (const Case& k : cases) {
    INFO(k.what);
    FileScan s = scan_buffer(k.log, 0, parser());
    CHECK(s.jobs.size() == k.jobs);
    CHECK(s.diagnostics.count_of(IssueKind::kDuplicateJob) == k.duplicates);
    CHECK(s.counts.profiler_lines == s.jobs.size() + s.diagnostics.rejected_jobs());
  }
  FileScan twice = scan_buffer(a + a, 0, parser());
  REQUIRE_FALSE(twice.diagnostics.examples().empty());
  CHECK(twice.diagnostics.examples()[0].line == 2);
  CHECK(twice.diagnostics.examples()[0].detail.find("line 1") != std::string::npos);
}

namespace {
// The job line without its newline.
std::string bare(const std::string& line) { return line.substr(0, line.size() - 1); }
}  // namespace

TEST_CASE("lines ended by a lone CR (a progress bar's) are lines: every job is written or counted", "[scanner]") {
  std::string log;
  for (int i = 0; i < 20; ++i) log += bare(job_line("forward", i, i * 10, i * 10 + 5)) + "\r";
  log += "\n";
  // A progress bar rewriting its line, then a job on the same '\n' line; and CRLF endings.
  log += "epoch 1:  10%|#   |\repoch 1:  50%|##  |\r" + job_line("backward", 0, 300, 310);
  log += bare(job_line("backward", 1, 320, 330)) + "\r\n";
  for (size_t buffer : {256u, 1u << 20}) {
    INFO("buffer " << buffer);
    FileScan s = scan_with_buffer(log, buffer);
    CHECK(s.counts.profiler_lines == 22);
    CHECK(s.diagnostics.rejected_jobs() == 0);
    REQUIRE(s.jobs.size() == 22);
    for (int i = 0; i < 20; ++i) {
      CHECK(s.jobs[i].micro_batch == i);
      CHECK(s.jobs[i].line == 1);
      CHECK(s.jobs[i].end_ns - s.jobs[i].start_ns == 5000);
    }
    CHECK(s.jobs[20].line == 2);
    CHECK(s.jobs[21].line == 3);
    CHECK(s.types == std::vector<std::string>{"forward", "backward"});
  }
}

TEST_CASE("a line cut inside 'Job (' and then a whole job line loses only the cut one", "[scanner]") {
  std::string whole = job_line("forward", 3, 100, 150);
  std::string prefix = "I1020 09:15:07.265326 4242 standalone_executor.cc:217] ";
  std::string log = job_line("forward", 2, 0, 50) + prefix + "Profiler Info: Job (" + whole + prefix +
                    "Profiler Info: Job (1" + job_line("forward", 4, 200, 250);
  FileScan s = scan_buffer(log, 0, parser());
  CHECK(s.counts.profiler_lines == 5);
  REQUIRE(s.jobs.size() == 3);
  CHECK(s.jobs[1].micro_batch == 3);
  CHECK(s.jobs[1].line == 2);
  CHECK(s.jobs[1].start_ns == testing::kEpochNs + 100000);
  CHECK(s.jobs[1].end_ns == testing::kEpochNs + 150000);
  CHECK(s.jobs[2].micro_batch == 4);
  CHECK(s.diagnostics.count_of(IssueKind::kTruncatedJobLine) == 2);
  CHECK(s.diagnostics.count_of(IssueKind::kBadJobId) == 0);
}

TEST_CASE("a whole job line and a damaged marker without a newline between: the job as its line gave it", "[scanner]") {
  std::string first = bare(job_line("forward", 1, 10, 15));
  std::string damaged =
      "Profiler Info: Jo (7), type = forward, micro_batch_id = 7, job_start_time = "
      "1697793307070.000000, job_end_time = 1697793307075.500000";
  std::string log = job_line("forward", 0, 0, 5) + first + damaged + "\n" + job_line("forward", 2, 20, 25);
  FileScan s = scan_buffer(log, 0, parser());
  CHECK(s.counts.profiler_lines == 3);
  CHECK(s.diagnostics.rejected_jobs() == 0);
  REQUIRE(s.jobs.size() == 3);
  CHECK(s.types == std::vector<std::string>{"forward"});
  CHECK(s.jobs[1].micro_batch == 1);
  CHECK(s.jobs[1].start_ns == testing::kEpochNs + 10000);
  CHECK(s.jobs[1].end_ns == testing::kEpochNs + 15000);
}

TEST_CASE("a UTF-16 log, with or without a byte-order mark, is read and its encoding named", "[scanner]") {
  testing::TempDir t;
  std::string text = "I1020 09:15:00.000000 1 x.cc:1] caf\xC3\xA9 \xF0\x9F\x98\x80 starting\n" +
                     job_line("forward", 0, 0, 5) + job_line("backward", 0, 10, 20);
  // UTF-8 to UTF-16 by hand (the text holds one character beyond the BMP: a surrogate pair).
  auto utf16 = [&](bool big) {
    std::u32string cps;
    for (size_t i = 0; i < text.size();) {
      unsigned char c = static_cast<unsigned char>(text[i]);
      int n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
      char32_t cp = n == 1 ? c : n == 2 ? c & 0x1F : n == 3 ? c & 0x0F : c & 0x07;
      for (int k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
      cps.push_back(cp);
      i += n;
    }
    std::string out;
    auto unit = [&](uint16_t u) {
      out.push_back(static_cast<char>(big ? u >> 8 : u & 0xff));
      out.push_back(static_cast<char>(big ? u & 0xff : u >> 8));
    };
    for (char32_t cp : cps) {
      if (cp >= 0x10000) {
        unit(static_cast<uint16_t>(0xD800 + ((cp - 0x10000) >> 10)));
        unit(static_cast<uint16_t>(0xDC00 + ((cp - 0x10000) & 0x3FF)));
      } else {
        unit(static_cast<uint16_t>(cp));
      }
    }
    return out;
  };
  struct Case {
    std::string name, bytes, says;
  };
  for (const Case& c : {Case{"le-bom", "\xFF\xFE" + utf16(false), "UTF-16LE (it starts with a byte-order mark)"},
                        Case{"be-bom", "\xFE\xFF" + utf16(true), "UTF-16BE (it starts with a byte-order mark)"},
                        Case{"le", utf16(false), "UTF-16LE (a NUL beside every ASCII byte)"},
                        Case{"be", utf16(true), "UTF-16BE (a NUL beside every ASCII byte)"}}) {
    INFO(c.name);
    for (size_t buffer : {256u, 1u << 20}) {
      ScanOptions opt;
      opt.buffer_bytes = buffer;
      FileScan s = scan_file(t.write(c.name, c.bytes), 0, parser(), opt);
      REQUIRE(s.jobs.size() == 2);
      CHECK(s.types == std::vector<std::string>{"forward", "backward"});
      CHECK(s.jobs[1].line == 3);
      CHECK(s.diagnostics.count_of(IssueKind::kNoProfilerLines) == 0);
      int named = 0, changed = 0;
      for (const Diagnostic& d : s.diagnostics.examples()) {
        named += d.detail.find(c.says) != std::string::npos;
        changed += d.detail.find("shrank") != std::string::npos || d.detail.find("grew") != std::string::npos;
      }
      CHECK(named == 1);
      CHECK(changed == 0);
      CHECK(s.diagnostics.count_of(IssueKind::kTranscoded) == 1);
      CHECK(s.diagnostics.count_of(IssueKind::kFileChanged) == 0);
    }
  }
  // A cut last unit and a lone surrogate become U+FFFD; nothing is lost before them.
  std::string odd = "\xFF\xFE" + utf16(false) + std::string("\x00\xD8", 2) + "x";
  FileScan s = scan_file(t.write("odd", odd), 0, parser());
  CHECK(s.jobs.size() == 2);
  // A UTF-8 log with NUL bytes is not taken for UTF-16.
  std::string nuls = std::string(64, '\0') + job_line("forward", 0, 0, 5);
  FileScan n = scan_file(t.write("nuls", nuls), 0, parser());
  CHECK(n.jobs.size() == 1);
  CHECK(n.diagnostics.examples().empty());
}

TEST_CASE("UTF-16 is converted the same whatever room each read leaves", "[scanner]") {
  // "a é 😀 \n" in UTF-16LE: one, two and four UTF-8 bytes a character.
  const std::string le("a\0 \0\xE9\0 \0\x3D\xD8\x00\xDE\n\0", 14);
  for (size_t cap : {1u, 2u, 3u, 4u, 5u, 64u}) {
    INFO("cap " << cap);
    size_t pos = 0;
    Utf16Decoder d(TextEncoding::kUtf16Le, [&](char* dst, size_t n, std::string*) -> long {
      size_t k = std::min(n, le.size() - pos);
      std::memcpy(dst, le.data() + pos, k);
      pos += k;
      return static_cast<long>(k);
    });
    std::string out, error;
    char buf[64];
    for (long n; (n = d.read(buf, cap, &error)) > 0;) out.append(buf, static_cast<size_t>(n));
    CHECK(out == "a \xC3\xA9 \xF0\x9F\x98\x80\n");
  }
}

TEST_CASE("job lines with a CR inside or a start-up literal after the marker are read line by line, as any other",
          "[scanner]") {
  // The scanner takes a usual job line in one pass; these lines look like
  // one yet are not, and must give what the line-by-line reading gives.
  const std::string progress = "epoch 1:  50%|##  |\r" + job_line("forward", 1, 10, 15, -1, 77);
  std::string cr_in_type = job_line("for\rward", 2, 20, 25);
  std::string startup_in_type = job_line("forward", 3, 30, 35);
  startup_in_type.replace(startup_in_type.find("forward"), 7, "fwd Please NOTE: device: 0");
  const std::string log = job_line("forward", 0, 0, 5, -1, 76) + progress + cr_in_type + startup_in_type;
  for (size_t buffer : {256u, 1u << 20}) {
    INFO("buffer " << buffer);
    FileScan s = scan_with_buffer(log, buffer);
    REQUIRE(s.jobs.size() == 3);
    // The progress bar's text is a line of its own: the job after it has the
    // thread of its own prefix.
    CHECK(s.jobs[1].line == 2);
    REQUIRE(s.thread_changes.size() == 3);
    CHECK(s.thread_changes[1].job_index == 1);
    CHECK(s.thread_changes[1].thread_id == 77);
    // "for" then "ward, ...": a cut job line, not a job of type "for\rward".
    CHECK(s.diagnostics.rejected_jobs() == 1);
    CHECK(std::find(s.types.begin(), s.types.end(), "for\rward") == s.types.end());
    // A start-up literal in the line starts a process after its job.
    REQUIRE(s.process_starts.size() == 1);
    CHECK(s.process_starts[0].line == 4);
    CHECK(s.process_starts[0].job_index == 3);
  }
}
