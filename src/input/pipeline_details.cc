#include "input/pipeline_details.h"

#include <ctime>

namespace ppt {
namespace {

bool digits(std::string_view s, size_t at, size_t n, int64_t* value) {
  if (at + n > s.size()) return false;
  int64_t v = 0;
  for (size_t i = at; i < at + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *value = v;
  return true;
}

// `[YYYY-MM-DD HH:MM:SS,mmm]` at `at`, read as UTC, in ns.
bool stamp_at(std::string_view s, size_t at, int64_t* ns) {
  constexpr std::string_view kShape = "[0000-00-00 00:00:00,000]";
  if (at + kShape.size() > s.size()) return false;
  for (size_t i = 0; i < kShape.size(); ++i) {
    char want = kShape[i], got = s[at + i];
    if (want == '0' ? (got < '0' || got > '9') : got != want) return false;
  }
  int64_t y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0, ms = 0;
  digits(s, at + 1, 4, &y);
  digits(s, at + 6, 2, &mo);
  digits(s, at + 9, 2, &d);
  digits(s, at + 12, 2, &h);
  digits(s, at + 15, 2, &mi);
  digits(s, at + 18, 2, &sec);
  digits(s, at + 21, 3, &ms);
  // ns since 1970 fit in 64 bits up to 2262.
  if (y < 1970 || y > 2261 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return false;
  std::tm tm{};
  tm.tm_year = static_cast<int>(y - 1900);
  tm.tm_mon = static_cast<int>(mo - 1);
  tm.tm_mday = static_cast<int>(d);
  tm.tm_hour = static_cast<int>(h);
  tm.tm_min = static_cast<int>(mi);
  tm.tm_sec = static_cast<int>(sec);
  int64_t secs = static_cast<int64_t>(timegm(&tm));
  if (secs < 0) return false;
  *ns = (secs * 1000 + ms) * kDetailsResolutionNs;
  return true;
}

// `None` or a non-negative integer (at most 9 digits), up to `stop`.
bool id_or_none(std::string_view s, int32_t* out) {
  if (s == "None") {
    *out = -1;
    return true;
  }
  int64_t v = 0;
  if (s.empty() || s.size() > 9 || !digits(s, 0, s.size(), &v)) return false;
  *out = static_cast<int32_t>(v);
  return true;
}

// A size in GiB (digits, optionally '.' and digits) as bytes: round(GiB * 2^30),
// exactly (integer arithmetic: the decimal is never a tie).
bool gib_bytes(std::string_view s, int64_t* bytes) {
  size_t dot = s.find('.');
  std::string_view whole = s.substr(0, dot);
  std::string_view frac = dot == std::string_view::npos ? std::string_view() : s.substr(dot + 1);
  if (whole.empty() || whole.size() > 9 || frac.size() > 9 || (dot != std::string_view::npos && frac.empty())) {
    return false;
  }
  int64_t w = 0, f = 0;
  if (!digits(whole, 0, whole.size(), &w) || (!frac.empty() && !digits(frac, 0, frac.size(), &f))) return false;
  __int128 scale = 1;
  for (size_t i = 0; i < frac.size(); ++i) scale *= 10;
  __int128 num = (static_cast<__int128>(w) * scale + f) << 30;
  *bytes = static_cast<int64_t>((num + scale / 2) / scale);
  return true;
}

bool fail(std::string* why, const char* text) {
  *why = text;
  return false;
}

// The message between the literal and ": memory_allocated_size=".
bool read_message(std::string_view msg, DetailsLine* out, std::string* why) {
  if (msg == "Start_forward_backward_pipeline") {
    out->point = MemoryPoint::kStartPipeline;
    return true;
  }
  if (msg == "End_forward_backward_pipeline") {
    out->point = MemoryPoint::kEndPipeline;
    return true;
  }
  struct Head {
    std::string_view text;
    MemoryPoint point;
  };
  constexpr Head kHeads[] = {{"Before_forward_step_chunk_", MemoryPoint::kBeforeForward},
                             {"After_forward_step_chunk_", MemoryPoint::kAfterForward},
                             {"Before_backward_step_chunk_", MemoryPoint::kBeforeBackward},
                             {"After_backward_step_chunk_", MemoryPoint::kAfterBackward}};
  for (const Head& h : kHeads) {
    if (msg.substr(0, h.text.size()) != h.text) continue;
    std::string_view rest = msg.substr(h.text.size());
    size_t sep = rest.find("_step_");
    if (sep == std::string_view::npos) return fail(why, "no _step_<s> after the chunk");
    if (!id_or_none(rest.substr(0, sep), &out->chunk)) return fail(why, "the chunk is not None or a number");
    if (!id_or_none(rest.substr(sep + 6), &out->step_id)) return fail(why, "the step is not None or a number");
    out->point = h.point;
    return true;
  }
  return fail(why,
              "the message is not Before_/After_forward_step_chunk_<c>_step_<s>, the backward ones, or "
              "Start_/End_forward_backward_pipeline");
}

}  // namespace

bool parse_details_line(std::string_view line, DetailsLine* out, std::string* why) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
  size_t lit = line.find(kDetailsLiteral);
  if (lit == std::string_view::npos) return fail(why, "no '[Pipeline details] '");
  *out = DetailsLine{};
  bool stamped = false;
  for (size_t at = line.find('['); at < lit && !stamped; at = line.find('[', at + 1)) {
    stamped = stamp_at(line, at, &out->ts_ns);
  }
  if (!stamped) return fail(why, "no [YYYY-MM-DD HH:MM:SS,mmm] stamp before '[Pipeline details]'");
  std::string_view body = line.substr(lit + kDetailsLiteral.size());
  constexpr std::string_view kAlloc = ": memory_allocated_size=";
  constexpr std::string_view kReserved = ", memory_reserved_size=";
  size_t a = body.find(kAlloc);
  if (a == std::string_view::npos) return fail(why, "no ': memory_allocated_size=' after the message");
  if (!read_message(body.substr(0, a), out, why)) return false;
  std::string_view sizes = body.substr(a + kAlloc.size());
  size_t r = sizes.find(kReserved);
  if (r == std::string_view::npos) return fail(why, "no ', memory_reserved_size=' after the allocated size");
  if (!gib_bytes(sizes.substr(0, r), &out->allocated_bytes)) {
    return fail(why, "memory_allocated_size is not a non-negative decimal number of GiB");
  }
  if (!gib_bytes(sizes.substr(r + kReserved.size()), &out->reserved_bytes)) {
    return fail(why, "memory_reserved_size is not a non-negative decimal number of GiB (or text follows it)");
  }
  return true;
}

DetailsPairing::Step DetailsPairing::feed(const DetailsLine& d, uint64_t line_no, std::string_view text) {
  Step out;
  if (!is_step_point(d.point)) {
    out.unmatched = std::move(open_);
    open_.reset();
    if (d.point == MemoryPoint::kStartPipeline) counts_.clear();
    return out;
  }
  if (is_before_point(d.point)) {
    out.unmatched = std::move(open_);
    int32_t& count = counts_[int64_t{d.chunk} * 2 + (is_forward_point(d.point) ? 1 : 0)];
    out.micro_batch = d.chunk < 0 && d.step_id >= 0 ? d.step_id : count;
    ++count;
    open_ = Before{d, line_no, out.micro_batch, std::string(text)};
    return out;
  }
  bool pairs = open_ && is_forward_point(open_->d.point) == is_forward_point(d.point) && open_->d.chunk == d.chunk &&
               open_->d.step_id == d.step_id;
  if (!pairs) {
    out.micro_batch = d.chunk < 0 ? d.step_id : -1;
    out.unmatched_after = true;
    return out;
  }
  out.micro_batch = open_->micro_batch;
  out.end_before_start = d.ts_ns < open_->d.ts_ns;
  out.pair = std::move(open_);
  open_.reset();
  return out;
}

std::optional<DetailsPairing::Before> DetailsPairing::close() {
  std::optional<Before> left = std::move(open_);
  open_.reset();
  counts_.clear();
  return left;
}

const char* memory_point_name(MemoryPoint p) {
  switch (p) {
    case MemoryPoint::kStartPipeline: return "Start_forward_backward_pipeline";
    case MemoryPoint::kBeforeForward: return "Before_forward_step";
    case MemoryPoint::kAfterForward: return "After_forward_step";
    case MemoryPoint::kBeforeBackward: return "Before_backward_step";
    case MemoryPoint::kAfterBackward: return "After_backward_step";
    case MemoryPoint::kEndPipeline: return "End_forward_backward_pipeline";
  }
  return "?";
}

}  // namespace ppt
