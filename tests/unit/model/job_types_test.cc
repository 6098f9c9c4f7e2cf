// The job-type vocabulary: parts, kinds, legend order and colours.
#include "model/job_types.h"

#include <catch2/catch.hpp>

#include <regex>
#include <string>

using namespace ppt;

TEST_CASE("job types split into base, suffix and chunk", "[types]") {
  struct Row {
    const char* type;
    const char* base;
    const char* suffix;
    int chunk;
  };
  const Row rows[] = {
      {"forward", "forward", "", -1},
      {"forward1", "forward", "", 1},
      {"backward_b", "backward", "b", -1},
      {"backward_w1", "backward", "w", 1},
      {"backward_w1_reduce", "backward", "w_reduce", 1},
      {"forward(chunk0)", "forward", "", 0},
      {"backward(chunk1)", "backward", "", 1},
      {"recv_forward", "recv_forward", "", -1},
      {"optimizer", "optimizer", "", -1},
      {"lr", "lr", "", -1},
      {"default", "default", "", -1},
      {"forwarder", "forwarder", "", -1},
      {"backward1_reduce", "backward", "reduce", 1},
      {"backward(1)", "backward", "", 1},
      {"stage3", "stage", "", 3},
      {"42", "42", "", -1},
  };
  for (const Row& r : rows) {
    INFO(r.type);
    TypeParts p = split_type(r.type);
    CHECK(p.base == r.base);
    CHECK(p.suffix == r.suffix);
    CHECK(p.chunk == r.chunk);
  }
}

TEST_CASE("job types are classified by what the job does", "[job_types]") {
  struct Row {
    const char* type;
    JobKind kind;
  };
  const Row rows[] = {
      {"forward", JobKind::kForward},
      {"forward3", JobKind::kForward},
      {"forward(chunk1)", JobKind::kForward},
      {"backward", JobKind::kBackward},
      {"backward_b1", JobKind::kBackward},
      {"backward_w", JobKind::kBackwardWeight},
      {"backward_w_reduce", JobKind::kBackwardWeight},
      {"optimizer", JobKind::kOptimizer},
      {"lr", JobKind::kLr},
      {"recv_forward", JobKind::kCommunication},
      {"send_backward", JobKind::kCommunication},
      {"default", JobKind::kNoPipeline},
      {"forwarder", JobKind::kOther},
      {"something_new", JobKind::kOther},
  };
  for (const Row& r : rows) {
    INFO(r.type);
    CHECK(job_kind(r.type) == r.kind);
  }
  CHECK(legend_rank(split_type("lr")) < legend_rank(split_type("forward")));
  CHECK(legend_rank(split_type("forward")) < legend_rank(split_type("backward_w")));
  CHECK(legend_rank(split_type("backward_w")) == legend_rank(split_type("backward")));
  CHECK(legend_rank(split_type("backward")) < legend_rank(split_type("optimizer")));
  CHECK(legend_rank(split_type("optimizer")) < legend_rank(split_type("recv_forward")));
}
