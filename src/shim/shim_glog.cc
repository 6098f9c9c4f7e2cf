#include "pp_timeline/shim_glog.h"

#include <glog/logging.h>

namespace ppt::shim {

LineSink glog_sink() {
  return [](std::string_view line) { LOG(INFO) << line; };
}

}  // namespace ppt::shim
