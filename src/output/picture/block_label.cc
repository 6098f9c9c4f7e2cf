#include "output/picture/block_label.h"

namespace ppt {
namespace {

// DejaVu Sans advance widths in em (its hmtx table: advance / 2048 units per
// em) for the characters labels use; report.js carries the same table.
double advance_em(char c) {
  if (c >= '0' && c <= '9') return 1303.0 / 2048;
  switch (c) {
    case 'F': return 1178.0 / 2048;
    case 'B': return 1405.0 / 2048;
    case 'W': return 2025.0 / 2048;
    case 'c': return 1126.0 / 2048;
    case 'o': return 1253.0 / 2048;
    case 'p': return 1300.0 / 2048;
    case 't': return 803.0 / 2048;
    case 'l': return 569.0 / 2048;
    case 'r': return 842.0 / 2048;
    default: return 2025.0 / 2048;  // the widest of the table: never under-measured
  }
}

}  // namespace

std::vector<std::string> label_forms(const TypeParts& p, int32_t micro_batch) {
  const char* letter = nullptr;
  switch (job_kind(p)) {
    case JobKind::kForward: letter = "F"; break;
    case JobKind::kBackward: letter = "B"; break;
    case JobKind::kBackwardWeight: letter = "W"; break;
    case JobKind::kOptimizer: return {"opt"};
    case JobKind::kLr: return {"lr"};
    default: return {};
  }
  if (micro_batch < 0) return {letter};
  std::string mb = std::to_string(micro_batch);
  std::vector<std::string> forms;
  if (p.chunk >= 0) {
    // A chunk's block keeps its chunk: a VPP row of "4c0" beside a bare "5"
    // reads as two kinds of block.
    std::string chunk = "c" + std::to_string(p.chunk);
    forms.push_back(letter + mb + chunk);
    forms.push_back(mb + chunk);
    return forms;
  }
  forms.push_back(letter + mb);
  forms.push_back(mb);
  return forms;
}

double label_text_width(std::string_view text, double font_px) {
  double em = 0;
  for (char c : text) em += advance_em(c);
  return em * font_px;
}

std::string fitting_label(const std::vector<std::string>& forms, double block_px) {
  for (const std::string& f : forms) {
    if (label_text_width(f) + 2 * kLabelPadPx <= block_px) return f;
  }
  return {};
}

double narrowest_labelled(const std::vector<std::string>& forms) {
  return forms.empty() ? 0 : label_text_width(forms.back()) + 2 * kLabelPadPx;
}

}  // namespace ppt
