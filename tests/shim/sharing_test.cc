// What a framework's executor does around one shared profiler: threads
// beside the compute one, a hung device at the end, a log nobody reads,
// fork() of worker processes and exit() without a destructor. CUDA is the
// fake runtime (fake_cuda.h) where the device matters.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fake_cuda.h"
#include "pp_timeline/shim.h"
#include "pp_timeline/shim_c.h"
#include "shim_run.h"

using namespace ppt::shim;

namespace {

namespace fs = std::filesystem;

// A fresh folder under the temporary directory, removed at the end.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string t = (fs::temp_directory_path() / "ppt_shim_sharing_XXXXXX").string();
    REQUIRE(::mkdtemp(t.data()) != nullptr);
    path = t;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::vector<std::string> read_lines(const fs::path& p) {
  std::vector<std::string> out;
  std::ifstream in(p);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

size_t count_containing(const std::vector<std::string>& lines, const std::string& what) {
  size_t n = 0;
  for (const auto& l : lines) n += l.find(what) != std::string::npos ? 1 : 0;
  return n;
}

void job(Profiler& p, fake_cuda::Stream s, const char* type, int64_t mb, int64_t device_ns) {
  REQUIRE(p.begin_on(s, type, mb).ok());
  fake_cuda::work(s, device_ns);
  fake_cuda::advance(10'000);
  REQUIRE(p.end().ok());
}

// Runs `child` in a child process, which then leaves through `leave`
// (exit() or _exit()), and returns its exit status.
template <class Child>
int in_child(Child&& child) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    child();
    ::_exit(0);  // not reached when child() exits itself
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

TEST_CASE("threads sharing one profiler: every job is written once, in begin order, with no error") {
  constexpr int kThreads = 4;
  constexpr int kJobs = 5000;
  std::mutex mu;
  std::vector<std::string> lines;
  Options o;
  o.use_cuda = false;
  o.max_jobs_per_step = 2 * kThreads * kJobs;
  o.sink = [&](std::string_view l) {
    std::lock_guard<std::mutex> lock(mu);
    lines.emplace_back(l);
  };
  Profiler p(o);
  std::atomic<int> errors{0};
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::string type = "forward" + std::to_string(t);
      // All together, so that the threads' jobs overlap.
      ++ready;
      while (ready < kThreads) std::this_thread::yield();
      for (int k = 0; k < kJobs; ++k) {
        if (!p.begin(type, k).ok()) ++errors;
        if (k % 4 == 0) std::this_thread::yield();  // the job's work, which lets another thread run
        if (!p.end().ok()) ++errors;
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(errors == 0);
  REQUIRE(p.flush(0).ok());
  REQUIRE(p.finish().ok());
  REQUIRE(lines.size() == static_cast<size_t>(kThreads * kJobs));
  for (int t = 0; t < kThreads; ++t) {
    CHECK(count_containing(lines, "type = forward" + std::to_string(t) + ",") == static_cast<size_t>(kJobs));
  }
  // One ordered log: the lines are in the order the jobs began.
  std::string previous;
  bool ordered = true;
  for (const auto& l : lines) {
    const auto at = l.find("job_start_time = ");
    REQUIRE(at != std::string::npos);
    const std::string start = l.substr(at + 17, l.find(',', at) - at - 17);
    if (start.size() == previous.size() && start < previous) ordered = false;
    previous = start;
  }
  CHECK(ordered);
  CHECK(p.stats().jobs_written == kThreads * kJobs);
  CHECK(p.stats().jobs_dropped == 0);
}

TEST_CASE("threads sharing one profiler: each thread has its own open job, ended on its own thread") {
  shim_test::Run r;
  Options o = r.options(nullptr);
  o.use_cuda = false;
  Profiler p(o);
  REQUIRE(p.begin("forward", 0).ok());
  Status other_begin, other_end, stray_end;
  std::thread t([&] {
    other_begin = p.begin("send_forward", 0);  // not nested: another thread's job
    other_end = p.end();
    stray_end = p.end();  // this thread has none open
  });
  t.join();
  CHECK(other_begin.ok());
  CHECK(other_end.ok());
  CHECK(stray_end.code() == Code::kEndWithoutBegin);
  CHECK_THAT(stray_end.message(), Catch::Contains("on other threads"));
  CHECK(p.begin("backward", 0).code() == Code::kNestedBegin);  // still this thread's forward
  REQUIRE(p.end().ok());
  // A job left open on another thread is dropped by the flush, and said.
  std::thread t2([&] { REQUIRE(p.begin("recv_backward", 1).ok()); });
  t2.join();
  const Status f = p.flush(0);
  CHECK(f.code() == Code::kOpenJobAtFlush);
  REQUIRE(r.lines.size() == 2);
  CHECK_THAT(r.lines[0], Catch::Contains("type = forward"));
  CHECK_THAT(r.lines[1], Catch::Contains("type = send_forward"));
  CHECK(p.stats().jobs_dropped == 1);
}

TEST_CASE("fake CUDA: finish(timeout) bounds the whole call, however many steps wait on a hung device") {
  fake_cuda::Scope fake;
  fake_cuda::Stream s = fake_cuda::make_stream(0);
  shim_test::Run r;
  Profiler p(r.options(s));
  job(p, s, "forward", 0, 1'000'000);
  fake_cuda::hang(s);
  for (int step = 0; step < 8; ++step) {
    job(p, s, "forward", 0, 1'000'000);
    job(p, s, "backward", 0, 1'000'000);
    const Status f = p.flush(step);
    CHECK((f.ok() || step == 0));
  }
  CHECK(p.stats().steps_pending == 8);
  const int64_t before = fake_cuda::steady_ns();
  const Status s_finish = p.finish(1000);
  const int64_t took = fake_cuda::steady_ns() - before;
  CHECK(s_finish.code() == Code::kCudaError);
  CHECK(took < 1'100'000'000);  // virtual time: the fake device's clock
  CHECK(p.stats().steps_pending == 0);
  CHECK(p.stats().jobs_dropped == 17);
}

TEST_CASE("fake CUDA: wait(timeout) waits in a slice and leaves the steps the device has not run queued") {
  fake_cuda::Scope fake;
  fake_cuda::Stream s = fake_cuda::make_stream(0);
  shim_test::Run r;
  Profiler p(r.options(s));
  for (int step = 0; step < 3; ++step) {
    job(p, s, "forward", 0, 40'000'000);
    REQUIRE(p.flush(step).ok());
  }
  CHECK(p.stats().steps_pending == 3);
  // 100 ms: the first two steps (80 ms of device work) are run by then.
  const int64_t before = fake_cuda::steady_ns();
  REQUIRE(p.wait(100).ok());
  CHECK(fake_cuda::steady_ns() - before < 110'000'000);
  CHECK(r.jobs.size() == 2);
  CHECK(p.stats().steps_pending == 1);
  CHECK(p.stats().jobs_dropped == 0);
  REQUIRE(p.wait(100).ok());
  CHECK(r.jobs.size() == 3);
  CHECK(p.stats().steps_pending == 0);
}

TEST_CASE("a log nobody reads never blocks flush: lines past the queue are dropped, counted and said") {
  TempDir dir;
  const fs::path fifo = dir.path / "workerlog.0";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // A reader that does not read (a stalled stderr pipe): the pipe fills.
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  REQUIRE(reader >= 0);
  Options o;
  o.use_cuda = false;
  o.log_file = fifo.string();
  auto p = std::make_unique<Profiler>(o);
  // 12,000 lines of about 130 bytes: far more than a pipe holds (64 KiB).
  auto steps = std::async(std::launch::async, [&] {
    for (int step = 0; step < 3; ++step) {
      for (int k = 0; k < 4000; ++k) {
        if (!p->begin("forward", k).ok() || !p->end().ok()) return false;
      }
      if (!p->flush(step).ok()) return false;
    }
    return true;
  });
  const bool returned = steps.wait_for(std::chrono::seconds(60)) == std::future_status::ready;
  CHECK(returned);
  // Read the pipe out, on a thread, so that whatever waits can go on.
  std::string text;
  std::thread drain([&] {
    ::fcntl(reader, F_SETFL, 0);
    char buf[65536];
    for (;;) {
      const ssize_t n = ::read(reader, buf, sizeof buf);
      if (n <= 0) break;
      text.append(buf, static_cast<size_t>(n));
    }
  });
  CHECK(steps.get());
  const Stats st = p->stats();
  CHECK(st.jobs_written == 12'000);
  CHECK(st.log_lines_dropped > 0);
  p.reset();  // writes what is queued, and closes the pipe
  drain.join();
  ::close(reader);
  std::istringstream in(text);
  size_t jobs = 0, said = 0;
  for (std::string l; std::getline(in, l);) {
    jobs += l.find("Profiler Info: Job") != std::string::npos ? 1 : 0;
    said += l.find("log line(s) were dropped") != std::string::npos ? 1 : 0;
  }
  CHECK(jobs + static_cast<size_t>(st.log_lines_dropped) >= 12'000);
  CHECK(jobs < 12'000);
  CHECK(said >= 1);
}

TEST_CASE("fake CUDA: a child of fork() writes nothing of its parent's profiler") {
  const bool fork_rules = GENERATE(false, true);
  CAPTURE(fork_rules);
  const bool child_exits = GENERATE(false, true);  // exit() rather than the destructor
  CAPTURE(child_exits);
  TempDir dir;
  const fs::path log = dir.path / "workerlog.0";
  fake_cuda::Config c;
  c.fork_rules = fork_rules;
  fake_cuda::Scope fake(c);
  fake_cuda::Stream s = fake_cuda::make_stream(0);
  Options o;
  o.stream = s;
  o.log_file = log.string();
  auto p = std::make_unique<Profiler>(o);
  // Three steps the device has not run yet at the fork (1 ms of device
  // work per job, 10 us of host time).
  for (int step = 0; step < 3; ++step) {
    for (int mb = 0; mb < 4; ++mb) job(*p, s, "forward", mb, 1'000'000);
    REQUIRE(p->flush(step).ok());
  }
  REQUIRE(p->stats().steps_pending == 3);
  const int status = in_child([&] {
    if (child_exits) std::exit(0);  // the profiler is still alive: the exit handler sees it
    p.reset();                      // as a child's interpreter collects the parent's objects
    ::_exit(0);
  });
  CHECK(status == 0);
  REQUIRE(p->finish().ok());
  p.reset();
  const auto lines = read_lines(log);
  // The parent's lines only, each once; no warning of the child's.
  CHECK(count_containing(lines, "Profiler Info: Job") == 12);
  CHECK(count_containing(lines, "dropped") == 0);
  CHECK(lines.size() == 12);
}

TEST_CASE("fake CUDA: a C program that calls exit() without ppt_shim_destroy keeps its flushed steps") {
  TempDir dir;
  const fs::path log = dir.path / "workerlog.0";
  fake_cuda::Scope fake;
  fake_cuda::Stream s = fake_cuda::make_stream(0);
  const int status = in_child([&] {
    ppt_shim* h = ppt_shim_create_with_log(s, 0, PPT_SHIM_IGNORE_ENV, log.c_str());
    if (h == nullptr) ::_exit(3);
    for (int step = 0; step < 3; ++step) {
      for (int mb = 0; mb < 4; ++mb) {
        if (ppt_shim_begin(h, "forward", mb) != 0) ::_exit(4);
        fake_cuda::work(s, 1'000'000);
        if (ppt_shim_end(h) != 0) ::_exit(5);
      }
      if (ppt_shim_flush(h, step) != 0) ::_exit(6);
    }
    std::exit(0);  // no ppt_shim_destroy
  });
  CHECK(status == 0);
  const auto lines = read_lines(log);
  CHECK(count_containing(lines, "Profiler Info: Job") == 12);
}
