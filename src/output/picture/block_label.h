// The labels written in a timeline's job blocks, and the one rule that says
// which label a block of a given width carries. The SVG writer applies it
// once at the picture's width; the HTML report's script (report/report.js)
// applies the same rule, with the same advances, again at every zoom.
//
// A block's label names its micro-batch; the colour already names its
// family (palette.h), so a narrow block drops the letter before it drops the
// label. A chunk's block keeps its chunk in every form: one VPP row never
// mixes "4c0" with a bare "5", which reads as another kind of block:
//
//   forward mb12           "F12"  -> "12"
//   backward0 mb0, chunk 1 "B0c1" -> "0c1"
//   backward_w mb2         "W2"   -> "2"
//   optimizer, lr          "opt", "lr" (one form)
//   communication, other   none
//
// The first form that fits is drawn: its width (DejaVu Sans advances at
// kLabelFontPx, the face the pictures name first) plus kLabelPadPx on each
// side is at most the block's width.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/job_types.h"

namespace ppt {

inline constexpr double kLabelFontPx = 10;
inline constexpr double kLabelPadPx = 2;

// The forms of a block's label, longest first; empty when its family has none.
std::vector<std::string> label_forms(const TypeParts& type, int32_t micro_batch);

// The width of `text` drawn at `font_px` in DejaVu Sans (characters the
// table lacks count as the widest digit-like advance).
double label_text_width(std::string_view text, double font_px = kLabelFontPx);

// The first of `forms` that fits a block `block_px` wide; "" when none does.
std::string fitting_label(const std::vector<std::string>& forms, double block_px);

// The narrowest block that carries one of `forms`.
double narrowest_labelled(const std::vector<std::string>& forms);

}  // namespace ppt
