// The shim's host costs, for scripts/bench.sh's shim section: a begin/end
// pair, a flush of a 64-job step written to a log file, the worst flush
// while the log is a pipe nobody reads for a second, and a begin/end pair
// with 4 threads sharing one profiler. On the host clock, so that it runs
// without a GPU; the CUDA path adds one cudaEventRecord per mark
// (scripts/gpu_check.sh measures that on a device).
//
// It uses only Profiler's constructor, begin, end, flush and finish, so the
// same source links against an earlier build's libppt_shim.a too (bench.sh
// --shim-baseline), for before/after figures in one run. --no-threads
// leaves the shared-profiler case out (an earlier build may not survive it).
//
//   shim_bench DIR [--no-threads]     prints "name value" lines (ns)
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "pp_timeline/shim.h"

namespace {

using Clock = std::chrono::steady_clock;

int64_t ns_since(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
}

int64_t median(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

constexpr int kJobsPerStep = 64;

ppt::shim::Options host_options(const std::string& log) {
  ppt::shim::Options o;
  o.use_cuda = false;
  o.log_file = log;
  o.max_jobs_per_step = 1 << 16;
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: shim_bench DIR [--no-threads]\n");
    return 2;
  }
  const std::string dir = argv[1];
  const bool threads = !(argc > 2 && std::strcmp(argv[2], "--no-threads") == 0);

  {  // A begin/end pair and a flush, the log a regular file.
    const std::string log = dir + "/workerlog.0";
    ::unlink(log.c_str());
    ppt::shim::Profiler p(host_options(log));
    std::vector<int64_t> pair_ns, flush_ns;
    for (int step = 0; step < 2000; ++step) {
      const auto t0 = Clock::now();
      for (int k = 0; k < kJobsPerStep; ++k) {
        (void)p.begin("forward", k);
        (void)p.end();
      }
      pair_ns.push_back(ns_since(t0) / kJobsPerStep);
      const auto t1 = Clock::now();
      (void)p.flush(step);
      flush_ns.push_back(ns_since(t1));
    }
    (void)p.finish();
    std::printf("pair_ns %lld\n", static_cast<long long>(median(pair_ns)));
    std::printf("flush64_file_median_ns %lld\n", static_cast<long long>(median(flush_ns)));
    std::sort(flush_ns.begin(), flush_ns.end());
    std::printf("flush64_file_p99_ns %lld\n", static_cast<long long>(flush_ns[flush_ns.size() * 99 / 100]));
  }

  {  // The log a pipe nobody reads for a second (a stalled stderr).
    const std::string fifo = dir + "/stalled.fifo";
    ::unlink(fifo.c_str());
    if (::mkfifo(fifo.c_str(), 0600) != 0) return 1;
    const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
    std::thread late_reader([reader] {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      ::fcntl(reader, F_SETFL, 0);
      char buf[65536];
      while (::read(reader, buf, sizeof buf) > 0) {
      }
    });
    int64_t worst = 0;
    {
      ppt::shim::Profiler p(host_options(fifo));
      for (int step = 0; step < 40; ++step) {
        for (int k = 0; k < kJobsPerStep; ++k) {
          (void)p.begin("forward", k);
          (void)p.end();
        }
        const auto t0 = Clock::now();
        (void)p.flush(step);
        worst = std::max(worst, ns_since(t0));
      }
    }
    late_reader.join();
    ::close(reader);
    ::unlink(fifo.c_str());
    std::printf("flush64_stalled_max_ns %lld\n", static_cast<long long>(worst));
  }

  if (threads) {  // 4 threads sharing one profiler
    const std::string log = dir + "/workerlog.1";
    ::unlink(log.c_str());
    ppt::shim::Profiler p(host_options(log));
    std::vector<std::thread> ts;
    std::vector<int64_t> per_thread(4);
    for (int t = 0; t < 4; ++t) {
      ts.emplace_back([&, t] {
        const auto t0 = Clock::now();
        for (int k = 0; k < 5000; ++k) {
          (void)p.begin("forward", k);
          (void)p.end();
        }
        per_thread[t] = ns_since(t0) / 5000;
      });
    }
    for (auto& t : ts) t.join();
    (void)p.flush(0);
    (void)p.finish();
    std::printf("pair_4threads_ns %lld\n", static_cast<long long>(median(per_thread)));
  }
  return 0;
}
