// Produces items 0..n-1 on worker threads and consumes them on the calling
// thread in index order, with at most `in_flight` items produced and not yet
// consumed: a streaming writer encodes pieces in parallel and writes them in
// order, holding a bounded number of them.
//
// Unlike a parallel_for per batch, no thread waits at a batch's end for the
// slowest item of the batch: a worker takes the next index as soon as it is
// done, as long as the item `in_flight` places back has been consumed.
//
// produce(i, slot) runs on a worker; consume(i, slot) on the caller, for i in
// order. `slot` is i % in_flight's entry of a vector<Slot> that lives through
// the call, so a Slot's buffers are reused by the items that follow. The
// first exception thrown by either is rethrown after every worker stopped;
// no item is consumed after it.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "util/parallel.h"

namespace ppt {

template <typename Slot, typename Produce, typename Consume>
void produce_in_parallel_consume_in_order(size_t n, unsigned threads, size_t in_flight, Produce&& produce,
                                          Consume&& consume) {
  if (n == 0) return;
  threads = static_cast<unsigned>(std::min<size_t>(resolve_threads(threads), n));
  in_flight = std::max<size_t>(in_flight, threads);
  std::vector<Slot> slots(std::min(in_flight, n));
  if (threads <= 1) {
    for (size_t i = 0; i < n; ++i) {
      produce(i, slots[i % slots.size()]);
      consume(i, slots[i % slots.size()]);
    }
    return;
  }
  std::mutex m;
  std::condition_variable changed;
  std::vector<char> ready(slots.size(), 0);
  size_t next = 0;      // the next index a worker takes
  size_t consumed = 0;  // items consumed so far
  bool stop = false;
  std::exception_ptr error;
  auto fail = [&](std::exception_ptr e) {
    std::lock_guard<std::mutex> lock(m);
    if (!error) error = e;
    stop = true;
    changed.notify_all();
  };
  auto worker = [&] {
    while (true) {
      size_t i;
      {
        std::unique_lock<std::mutex> lock(m);
        // Index i reuses the slot of i - slots.size(): wait until that one
        // is consumed.
        changed.wait(lock, [&] { return stop || next >= n || next < consumed + slots.size(); });
        if (stop || next >= n) return;
        i = next++;
      }
      try {
        produce(i, slots[i % slots.size()]);
      } catch (...) {
        fail(std::current_exception());
        return;
      }
      std::lock_guard<std::mutex> lock(m);
      ready[i % slots.size()] = 1;
      changed.notify_all();
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (size_t i = 0; i < n; ++i) {
    const size_t s = i % slots.size();
    {
      std::unique_lock<std::mutex> lock(m);
      changed.wait(lock, [&] { return stop || ready[s]; });
      if (stop) break;
    }
    try {
      consume(i, slots[s]);
    } catch (...) {
      fail(std::current_exception());
      break;
    }
    std::lock_guard<std::mutex> lock(m);
    ready[s] = 0;
    consumed = i + 1;
    changed.notify_all();
  }
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace ppt
