// Leaving a one-shot command's large results for the process's exit to free.
//
// A 1024-rank run's timeline, edges and stats are about 200 MB in some
// thousands of blocks; freeing them one by one at the end of the command
// took 10-15 ms that the exit right after spends again, on the same pages,
// when the kernel takes the address space back (the same reasoning as a
// compiler that skips freeing its trees before it exits). So the one-shot
// commands (convert, stats, whatif) move their results, as they return, into
// a heap object that is never freed. It stays reachable (from a static list),
// so leak checkers do not report it. Only a process whose main() says it
// exits after its command keeps anything: the tests, which run commands over
// and over, free the results as usual; `batch` and `watch`, which run the
// driver many times, do not use this.
#pragma once

#include <exception>
#include <new>
#include <utility>

namespace ppt {

// Whether this process exits after its one command (main() says so).
void set_exits_after_command(bool exits);
bool exits_after_command();

// Called first by a one-shot command (convert, stats, whatif), whose results
// stay until the process exits (KeptAtExit): where this process exits after
// the command, turns on bulk memory (util/bulk_memory.h) for what it scans.
// With `reuse_freed` (stats, whatif: their analyses make and free blocks of
// megabytes, the model's durations, the replays' tables, the JSON text),
// glibc's malloc also serves blocks up to 32 MB from its heap and keeps what
// is freed there for the next ones, instead of a fresh mapping for each
// that the kernel zeroes page by page (a third of the page faults of a
// stats run at 1024 ranks; 3-4 MB more peak RSS).
void begin_one_shot_command(bool reuse_freed = false);

// Holds `p` until the process exits (never throws: where the list cannot
// grow, `p` is simply never freed).
void keep_until_exit(void* p);

// On destruction (the end of the scope it is declared in, after `value`),
// moves `value` into a heap object kept until exit, when the process exits
// after this command; otherwise does nothing. `value` is left moved-from,
// so its own destructor frees next to nothing.
template <typename T>
class KeptAtExit {
 public:
  explicit KeptAtExit(T& value) : value_(value) {}
  KeptAtExit(const KeptAtExit&) = delete;
  KeptAtExit& operator=(const KeptAtExit&) = delete;
  ~KeptAtExit() {
    // Not while an exception unwinds the stack: out of memory, main() says
    // how far the run got once what it held is free again.
    if (!exits_after_command() || std::uncaught_exceptions() > 0) return;
    if (T* kept = new (std::nothrow) T(std::move(value_))) keep_until_exit(kept);
  }

 private:
  T& value_;
};

}  // namespace ppt
