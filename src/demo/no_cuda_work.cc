// Compiled instead of cuda_work.cc when the demo is built without CUDA.
#include "work.h"

namespace ppt::demo {

std::unique_ptr<Work> make_cuda_work(int, size_t, std::string* why_not) {
  *why_not = "built without CUDA";
  return nullptr;
}

}  // namespace ppt::demo
