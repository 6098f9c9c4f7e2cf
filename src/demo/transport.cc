#include "transport.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace ppt::demo {
namespace {

constexpr uint32_t kMagic = 0x70706d62;  // "ppmb"

struct Header {
  uint32_t magic;
  int32_t payload;
  int32_t chunk;  // the receiving chunk
  int32_t micro_batch;
  uint32_t size;
};

bool write_all(int fd, const void* data, size_t size, std::string* error) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      *error = std::string("sending to a neighbour stage failed: ") + std::strerror(errno) +
               " (it has probably exited; see its workerlog)";
      return false;
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// Reads exactly `size` bytes before `deadline`.
bool read_all(int fd, void* data, size_t size, std::chrono::steady_clock::time_point deadline, std::string* error) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      *error = "timed out";
      return false;
    }
    pollfd pfd{fd, POLLIN, 0};
    const int r = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      *error = std::string("poll failed: ") + std::strerror(errno);
      return false;
    }
    if (r == 0) continue;  // the deadline check above ends the loop
    const ssize_t n = ::read(fd, p, size);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      *error = std::string("reading failed: ") + std::strerror(errno);
      return false;
    }
    if (n == 0) {
      *error = "the neighbour closed the link (it has probably failed; see its workerlog)";
      return false;
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

const char* payload_name(Payload p) { return p == Payload::kActivation ? "activation" : "gradient"; }

}  // namespace

Mailbox::Mailbox(int stage, int prev_fd, int next_fd, int timeout_ms)
    : stage_(stage), prev_fd_(prev_fd), next_fd_(next_fd), timeout_ms_(timeout_ms) {}

Mailbox::~Mailbox() {
  if (prev_fd_ >= 0) ::close(prev_fd_);
  if (next_fd_ >= 0) ::close(next_fd_);
}

bool Mailbox::send(const Endpoint& to, int micro_batch, const std::vector<uint8_t>& data, std::string* error) {
  if (to.stage == stage_) {  // the next chunk on this very rank
    arrived_[Key{static_cast<int>(to.payload), to.chunk, micro_batch}] = data;
    return true;
  }
  const int fd = to.payload == Payload::kActivation ? next_fd_ : prev_fd_;
  if (fd < 0) {
    *error = std::string("no link for a ") + payload_name(to.payload) + " to stage " + std::to_string(to.stage);
    return false;
  }
  const Header h{kMagic, static_cast<int32_t>(to.payload), to.chunk, micro_batch, static_cast<uint32_t>(data.size())};
  return write_all(fd, &h, sizeof h, error) && write_all(fd, data.data(), data.size(), error);
}

bool Mailbox::read_one(int fd, const Endpoint& from, std::string* error) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms_);
  Header h{};
  std::string why;
  if (!read_all(fd, &h, sizeof h, deadline, &why)) {
    *error = "waiting for a " + std::string(payload_name(from.payload)) + " from stage " + std::to_string(from.stage) +
             ": " + why;
    return false;
  }
  if (h.magic != kMagic) {
    *error = "a message from stage " + std::to_string(from.stage) + " is garbled";
    return false;
  }
  std::vector<uint8_t> data(h.size);
  if (!read_all(fd, data.data(), data.size(), deadline, &why)) {
    *error = "reading a message from stage " + std::to_string(from.stage) + ": " + why;
    return false;
  }
  arrived_[Key{h.payload, h.chunk, h.micro_batch}] = std::move(data);
  return true;
}

bool Mailbox::receive(const Endpoint& from, int chunk, int micro_batch, std::vector<uint8_t>* data,
                      std::string* error) {
  const Key key{static_cast<int>(from.payload), chunk, micro_batch};
  for (;;) {
    if (auto it = arrived_.find(key); it != arrived_.end()) {
      *data = std::move(it->second);
      arrived_.erase(it);
      return true;
    }
    if (from.stage == stage_) {
      *error = "a local message for chunk " + std::to_string(chunk) + " micro-batch " + std::to_string(micro_batch) +
               " was never sent (the schedule is out of order)";
      return false;
    }
    const int fd = from.payload == Payload::kActivation ? prev_fd_ : next_fd_;
    if (fd < 0) {
      *error = "no link to stage " + std::to_string(from.stage);
      return false;
    }
    if (!read_one(fd, from, error)) {
      *error += " (for chunk " + std::to_string(chunk) + " micro-batch " + std::to_string(micro_batch) + ")";
      return false;
    }
  }
}

}  // namespace ppt::demo
