#include "activations.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace ppt::demo {
namespace {

int64_t rounded_up(int64_t bytes) {
  return (bytes + kReserveGranularity - 1) / kReserveGranularity * kReserveGranularity;
}

// "VmRSS:     1234 kB" -> 1234 * 1024; -1 when `line` is not `key`'s.
int64_t status_kib(const std::string& line, const char* key) {
  const size_t n = std::strlen(key);
  if (line.compare(0, n, key) != 0) return -1;
  char* end = nullptr;
  const long long kib = std::strtoll(line.c_str() + n, &end, 10);
  return end == line.c_str() + n ? -1 : kib * 1024;
}

}  // namespace

int64_t mib_to_bytes(double mb) { return std::llround(mb * static_cast<double>(kMiB)); }

HeldMemory::~HeldMemory() {
  for (auto& [key, block] : held_) ::munmap(block.data, static_cast<size_t>(block.mapped));
  for (auto& [size, block] : cache_) ::munmap(block.data, static_cast<size_t>(block.mapped));
  if (static_.data != nullptr) ::munmap(static_.data, static_cast<size_t>(static_.mapped));
}

void HeldMemory::touch(const Block& block) {
  // Write every page: an untouched mapping is address space, not memory.
  const long page = ::sysconf(_SC_PAGESIZE);
  auto* bytes_at = static_cast<volatile uint8_t*>(block.data);
  for (int64_t off = 0; off < block.bytes; off += page) bytes_at[off] = 1;
}

bool HeldMemory::map(int64_t bytes, Block* block, std::string* error) {
  *block = Block{nullptr, bytes, bytes};
  if (bytes <= 0) return true;
  // MAP_POPULATE: the pages in one call rather than a fault each.
  void* p = ::mmap(nullptr, static_cast<size_t>(bytes), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (p == MAP_FAILED) {
    *error = "cannot map " + std::to_string(bytes) + " bytes: " + std::strerror(errno);
    return false;
  }
  block->data = p;
  reserved_ += rounded_up(bytes);
  return true;
}

bool HeldMemory::hold_static(int64_t bytes, std::string* error) {
  if (static_.mapped > 0) {
    *error = "the static part is already held";
    return false;
  }
  if (!map(bytes, &static_, error)) return false;
  touch(static_);
  allocated_ += static_.bytes;
  allocated_peak_ = std::max(allocated_peak_, allocated_);
  return true;
}

bool HeldMemory::allocate(int micro_batch, int chunk, int64_t bytes, std::string* error) {
  const auto key = std::make_pair(micro_batch, chunk);
  if (held_.count(key) != 0) {
    *error = "micro-batch " + std::to_string(micro_batch) + " chunk " + std::to_string(chunk) +
             " already holds its activations";
    return false;
  }
  Block block;
  if (auto it = cache_.lower_bound(bytes); it != cache_.end()) {  // the smallest cached block that fits
    block = it->second;
    block.bytes = bytes;
    cache_.erase(it);
  } else if (!map(bytes, &block, error)) {
    return false;
  }
  touch(block);
  held_.emplace(key, block);
  allocated_ += bytes;
  allocated_peak_ = std::max(allocated_peak_, allocated_);
  return true;
}

bool HeldMemory::release(int micro_batch, int chunk, std::string* error) {
  const auto it = held_.find(std::make_pair(micro_batch, chunk));
  if (it == held_.end()) {
    *error = "micro-batch " + std::to_string(micro_batch) + " chunk " + std::to_string(chunk) +
             " holds no activations to free";
    return false;
  }
  allocated_ -= it->second.bytes;
  cache_.emplace(it->second.mapped, it->second);
  held_.erase(it);
  return true;
}

ResidentMemory resident_memory() {
  ResidentMemory m;
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (int64_t v = status_kib(line, "VmRSS:"); v >= 0) m.rss_bytes = v;
    if (int64_t v = status_kib(line, "VmHWM:"); v >= 0) m.hwm_bytes = v;
  }
  return m;
}

}  // namespace ppt::demo
