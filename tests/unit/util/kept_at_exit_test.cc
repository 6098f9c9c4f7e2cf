#include "util/kept_at_exit.h"

#include <catch2/catch.hpp>

#include <memory>
#include <stdexcept>
#include <vector>

namespace {

// Counts how many of its kind hold a payload when destroyed.
struct Payload {
  static inline int freed = 0;
  std::unique_ptr<std::vector<int>> data = std::make_unique<std::vector<int>>(1000, 7);
  Payload() = default;
  Payload(Payload&&) = default;
  ~Payload() {
    if (data) ++freed;
  }
};

// Restores the process-wide setting after a test changes it.
struct ExitsAfterCommand {
  explicit ExitsAfterCommand(bool exits) : was(ppt::exits_after_command()) { ppt::set_exits_after_command(exits); }
  ~ExitsAfterCommand() { ppt::set_exits_after_command(was); }
  bool was;
};

}  // namespace

TEST_CASE("A one-shot command's results are left for the exit; anywhere else they are freed", "[util]") {
  SECTION("a process that runs commands over and over frees them at the end of the scope") {
    ExitsAfterCommand setting(false);
    Payload::freed = 0;
    {
      Payload p;
      ppt::KeptAtExit keep(p);
    }
    CHECK(Payload::freed == 1);
  }
  SECTION("a process that exits after its command keeps them, moved out of the local") {
    ExitsAfterCommand setting(true);
    Payload::freed = 0;
    const std::vector<int>* data = nullptr;
    {
      Payload p;
      data = p.data.get();
      ppt::KeptAtExit keep(p);
    }
    CHECK(Payload::freed == 0);
    CHECK(data->size() == 1000);  // still there: owned by the kept copy
    CHECK((*data)[999] == 7);
  }
  SECTION("not while an exception unwinds: out of memory, what the run held must be free again") {
    ExitsAfterCommand setting(true);
    Payload::freed = 0;
    try {
      Payload p;
      ppt::KeptAtExit keep(p);
      throw std::runtime_error("unwinding");
    } catch (const std::runtime_error&) {
    }
    CHECK(Payload::freed == 1);
  }
}
