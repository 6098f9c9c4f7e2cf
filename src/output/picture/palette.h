// The one colour scheme of every output: the Chrome JSON traces' `cname`, the
// SVG and PNG pictures' fills, the HTML report (which embeds the SVG) and the
// diff trace all ask here.
//
// A job's colour follows its family (model/job_types.h JobKind):
//
//   family            JSON cname (catapult)   fill
//   forward           thread_state_running    #7ec894 green
//   backward          rail_idle               #ee8e00 orange
//   backward_b        thread_state_uninterruptible  #b67d8f mauve
//   backward_w        rail_animation          #f44a3f red
//   optimizer         rail_response           #4387fd blue
//   lr                rail_load               #0da861 dark green
//   send_* / recv_*   generic_work            #7d7d7d grey
//   default           thread_state_unknown    #c79b7d tan
//   anything else     thread_state_unknown    a hue hashed from its base name
//
// The fills are the legacy viewer's own RGB values for those reserved names
// (catapult tracing/tracing/base/color_scheme.html), so a job is the same
// colour in chrome://tracing as in the picture; forward and backward keep the
// names Paddle's own pipeline profiler gives them (fleet
// meta_parallel/pipeline_parallel.py, `_record_format`).
//
// backward_b (the input-gradient half of a split backward) is of the
// backward family (model/job_types.h) but has its own colour, so that the
// zero-bubble plans' three kinds of backward job read apart.
//
// Virtual-stage chunks (VPP) shade their family's fill: chunk 0 is the fill
// itself, chunk 1 much darker, chunk 2 much lighter, and so on, far enough
// apart to tell backward0 from backward1 at a glance. A *_reduce suffix is a
// little darker. The JSON cname stays the family's (the legacy viewer has no
// shades).
//
// All functions are pure and thread safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "model/job_types.h"

namespace ppt {

struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
  bool operator==(const Rgb&) const = default;
};

// "#rrggbb".
std::string hex(Rgb c);

// The family's fill (chunk 0).
Rgb family_fill(JobKind kind);

// The type's fill: its family's, shaded by chunk (see above).
Rgb type_fill(std::string_view type);
// A text colour that reads on `fill`: near-black on light fills, white on dark.
std::string_view label_color(Rgb fill);

// The legacy viewer's reserved colour name for the type (catapult's cname).
const char* chrome_color_name(std::string_view type);

}  // namespace ppt
