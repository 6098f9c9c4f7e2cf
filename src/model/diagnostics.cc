#include "model/diagnostics.h"

#include <fmt/format.h>

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

void Diagnostics::add(IssueKind kind, uint32_t file, uint64_t line, std::string detail,
                      std::string_view text) {
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
  std::string out;
  bool cut = text.size() > max_bytes;
  if (cut) text = text.substr(0, max_bytes);
  out.reserve(text.size() + 8);
  for (unsigned char c : text) {
    if (c == '\t') {
      out.push_back(' ');
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  if (cut) out += "...";
  return out;
}

}  // namespace ppt
