// Activations and gradients between the demo's rank processes, over the
// socket pairs the launcher made: one to the next stage (activations go out,
// gradients come in) and one to the previous stage. A receive blocks until the
// message is there, so a stage really waits for its neighbour.
//
// Messages on one link arrive in the sender's order, which need not be the
// receiver's (interleaved schedules); a message that arrives before it is
// needed is kept until it is.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "schedule.h"

namespace ppt::demo {

class Mailbox {
 public:
  // `prev_fd` and `next_fd` are this stage's ends of the links to the
  // previous and next stage, -1 where there is none. Takes ownership.
  Mailbox(int stage, int prev_fd, int next_fd, int timeout_ms);
  ~Mailbox();
  Mailbox(const Mailbox&) = delete;
  Mailbox& operator=(const Mailbox&) = delete;

  // Sends `data` for micro-batch `micro_batch` to `to`. false and *error on
  // failure.
  bool send(const Endpoint& to, int micro_batch, const std::vector<uint8_t>& data, std::string* error);
  // Waits for what `from` sends to this stage's `chunk` for `micro_batch`.
  bool receive(const Endpoint& from, int chunk, int micro_batch, std::vector<uint8_t>* data, std::string* error);

 private:
  using Key = std::tuple<int, int, int>;  // payload, receiving chunk, micro-batch
  bool read_one(int fd, const Endpoint& from, std::string* error);

  int stage_;
  int prev_fd_;
  int next_fd_;
  int timeout_ms_;
  std::map<Key, std::vector<uint8_t>> arrived_;
};

}  // namespace ppt::demo
