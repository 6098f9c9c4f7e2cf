#include "model/diagnostics.h"

#include <fmt/format.h>

#include "util/escape.h"

namespace ppt {
namespace {

constexpr std::array<IssueInfo, kIssueKindCount> kIssueInfo = {{
#define PPT_ISSUE_KIND_INFO(kind, name, severity, rejects_job, explanation) \
  {name, Severity::severity, rejects_job, explanation},
    PPT_ISSUE_KINDS(PPT_ISSUE_KIND_INFO)
#undef PPT_ISSUE_KIND_INFO
}};

// std::array fills missing rows with empty ones: make sure there are none.
#define PPT_ISSUE_KIND_ROW(kind, name, severity, rejects_job, explanation) +1
static_assert(0 PPT_ISSUE_KINDS(PPT_ISSUE_KIND_ROW) == kIssueKindCount, "one row per IssueKind");
#undef PPT_ISSUE_KIND_ROW

}  // namespace

const IssueInfo& issue_info(IssueKind kind) { return kIssueInfo[static_cast<size_t>(kind)]; }

void Diagnostics::add(IssueKind kind, uint32_t file, uint64_t line, std::string detail, std::string_view text) {
  size_t k = static_cast<size_t>(kind);
  ++counts_[k];
  if (kept_[k] < kKeepPerKind) {
    ++kept_[k];
    // Details quote the input (a field's text): escaped like the excerpt, so
    // that a NUL cannot cut a message short nor a control byte reach a terminal.
    examples_.push_back({kind, file, line, printable_excerpt(detail, 1024), printable_excerpt(text)});
  }
}

void Diagnostics::merge(const Diagnostics& other) {
  for (size_t k = 0; k < kIssueKindCount; ++k) counts_[k] += other.counts_[k];
  for (const Diagnostic& d : other.examples_) {
    size_t k = static_cast<size_t>(d.kind);
    if (kept_[k] < kKeepPerKind) {
      ++kept_[k];
      examples_.push_back(d);
    }
  }
}

uint64_t Diagnostics::rejected_jobs() const {
  uint64_t n = 0;
  for (size_t k = 0; k < kIssueKindCount; ++k) {
    if (kIssueInfo[k].rejects_job) n += counts_[k];
  }
  return n;
}

std::string printable_excerpt(std::string_view text, size_t max_bytes) {
  bool cut = text.size() > max_bytes;
  if (cut) {
    // Cut before a character, not inside one (a cut sequence would show as
    // \x escapes of half a character).
    size_t end = max_bytes;
    for (int back = 0; back < 3 && end > 0 && (static_cast<unsigned char>(text[end]) & 0xc0) == 0x80; ++back) --end;
    if ((static_cast<unsigned char>(text[end]) & 0xc0) == 0x80) end = max_bytes;
    text = text.substr(0, end);
  }
  std::string out;
  out.reserve(text.size() + 8);
  // A tab reads as a blank in an excerpt; the rest by the terminal rule.
  for (size_t start = 0; start <= text.size();) {
    size_t tab = text.find('\t', start);
    append_terminal_text(out, text.substr(start, tab == std::string_view::npos ? std::string_view::npos : tab - start));
    if (tab == std::string_view::npos) break;
    out.push_back(' ');
    start = tab + 1;
  }
  if (cut) out += "...";
  return out;
}

}  // namespace ppt
