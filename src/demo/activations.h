// The memory a demo rank really holds: a static part for the whole run (the
// model's state) and the activations of the micro-batches in flight, each
// held from its forward to the job that frees it. Like a caching device
// allocator (Paddle's auto-growth allocator keeps what it reserved), a freed
// block goes back to the rank's cache, and the next allocation reuses a
// cached block at least as big before it maps a new one. Every allocation
// writes every page of its block, so the process's resident memory holds
// all that is reserved (a new block's pages are really allocated then).
//
// What a `[Pipeline details]` line reports from it: allocated, the bytes
// asked for and not freed (static + the activations held); reserved, the
// blocks mapped (held or cached), each rounded up to kReserveGranularity: it
// never falls, and with blocks of one size it is the high-water mark of the
// blocks held at once.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>

namespace ppt::demo {

inline constexpr int64_t kMiB = int64_t{1} << 20;
inline constexpr int64_t kReserveGranularity = 2 * kMiB;

// A byte count from a size in MiB (fractions allowed): llround(mb * 2^20).
int64_t mib_to_bytes(double mb);

class HeldMemory {
 public:
  HeldMemory() = default;
  ~HeldMemory();
  HeldMemory(const HeldMemory&) = delete;
  HeldMemory& operator=(const HeldMemory&) = delete;

  // Maps and writes `bytes` for the whole run. false and *error on failure
  // (then nothing more is held).
  bool hold_static(int64_t bytes, std::string* error);
  // Takes `bytes` for (micro_batch, chunk), from the cache or newly mapped,
  // and writes every page. false and *error when the mapping fails or that
  // key is already held.
  bool allocate(int micro_batch, int chunk, int64_t bytes, std::string* error);
  // Returns what (micro_batch, chunk) holds to the cache. false and *error
  // when it holds nothing.
  bool release(int micro_batch, int chunk, std::string* error);

  int64_t allocated_bytes() const { return allocated_; }
  int64_t reserved_bytes() const { return reserved_; }
  int64_t peak_allocated_bytes() const { return allocated_peak_; }
  size_t activations_held() const { return held_.size(); }
  size_t blocks_cached() const { return cache_.size(); }

 private:
  struct Block {
    void* data = nullptr;
    int64_t mapped = 0;  // the block's size
    int64_t bytes = 0;   // what was asked for (at most `mapped`)
  };
  bool map(int64_t bytes, Block* block, std::string* error);
  static void touch(const Block& block);

  Block static_;
  std::map<std::pair<int, int>, Block> held_;  // by (micro-batch, chunk)
  std::multimap<int64_t, Block> cache_;        // freed blocks, by size
  int64_t allocated_ = 0;
  int64_t allocated_peak_ = 0;
  int64_t reserved_ = 0;
};

// The process's resident memory (VmRSS) and its high-water mark (VmHWM) from
// /proc/self/status, in bytes; -1 where it cannot be read.
struct ResidentMemory {
  int64_t rss_bytes = -1;
  int64_t hwm_bytes = -1;
};
ResidentMemory resident_memory();

}  // namespace ppt::demo
