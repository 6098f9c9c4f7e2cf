// A sink that writes the shim's lines through glog's LOG(INFO), for C++
// programs that use glog and want the lines in its stream (with its real
// prefix). Link ppt_shim_glog. The shim itself does not need glog.
//
//   options.sink = ppt::shim::glog_sink();
#pragma once

#include "pp_timeline/shim.h"

namespace ppt::shim {

LineSink glog_sink();

}  // namespace ppt::shim
