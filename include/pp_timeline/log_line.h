// The one definition of the profiler's log lines, shared by the reader
// (line_parser) and the writers (the instrumentation shim, the demo run and the
// log generator's tests), so that the two sides cannot drift apart.
//
// A job line, as PaddlePaddle's StandaloneExecutor prints it (after a glog
// prefix that this header does not define):
//
//   Profiler Info: Job (3), type = forward, micro_batch_id = 2, job_start_time = 1697793307213.760986, job_end_time = 1697793307254.006104
//
// Times are milliseconds since the Unix epoch printed with six decimals, i.e.
// nanosecond text. They are carried as integer nanoseconds everywhere in this
// project; formatting and parsing never go through a floating-point number.
//
// The marker line some training front-ends print when the profiling window is
// set:
//
//   Schedule Profiler start at step 10 and end at step 20
//
// Everything here is header-only and allocation-free except format_*(), so the
// shim can include it without linking the converter.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ppt::log_line {

// The literal that every job line contains. Readers use it as a cheap
// pre-filter before running the full pattern.
inline constexpr std::string_view kJobMarker = "Profiler Info: Job (";
inline constexpr std::string_view kTypeKey = "), type = ";
inline constexpr std::string_view kMicroBatchKey = ", micro_batch_id = ";
inline constexpr std::string_view kStartKey = ", job_start_time = ";
inline constexpr std::string_view kEndKey = ", job_end_time = ";

inline constexpr std::string_view kScheduleMarker = "Schedule Profiler start at step ";
inline constexpr std::string_view kScheduleMarkerEnd = " and end at step ";

// The literal that both the job line and the schedule marker contain: readers
// search for it alone to find every candidate line of either kind in one pass.
inline constexpr std::string_view kProfilerLiteral = "Profiler ";
static_assert(kJobMarker.find(kProfilerLiteral) != std::string_view::npos &&
                  kScheduleMarker.find(kProfilerLiteral) != std::string_view::npos,
              "kProfilerLiteral must find both the job line and the schedule marker");

// The start-up line a Paddle process prints once, when it first sets up a GPU
// (LOG_FIRST_N(WARNING, 1) in paddle/phi/backends/gpu/gpu_resources.cc, in
// paddle/fluid/platform/device_context.cc before 2.3):
//
//   W1020 09:15:00.197323 25999 gpu_resources.cc:119] Please NOTE: device: 0, GPU Compute Capability: 9.0, Driver API Version: 12.4, Runtime API Version: 12.3
//
// (older: "..., CUDA Capability: 70, ..."). A second one in a file is a new
// process: a rerun appended to the same log.
inline constexpr std::string_view kProcessStartMarker = "Please NOTE: device: ";

// RE2 syntax. Applied to the text that starts at kJobMarker, up to the end of
// the line (without the newline). Groups: 1 job id, 2 type, 3 micro-batch id
// (optional), 4 start time text, 5 end time text. A type is any run of
// characters up to the comma that precedes the next key, so `forward(chunk0)`
// and `backward_w1` are both types. Time texts are captured loosely and then
// validated by parse_ms_to_ns(), so that a bad number gets its own message.
inline constexpr const char* kJobPattern =
    R"(Profiler Info: Job \(([^)]*)\), type = (.*?)(?:, micro_batch_id = ([^,]*))?, job_start_time = ([^,]*), job_end_time = ([^,\r\n]*?)[ \t\r]*)";

// RE2 syntax, applied from kScheduleMarker to the end of the line.
// Groups: 1 first step, 2 end step.
inline constexpr const char* kSchedulePattern = R"(Schedule Profiler start at step (-?\d+) and end at step (-?\d+).*)";

namespace detail {

// Eight bytes from p, the first in the lowest byte (x86-64 and arm64 are
// little-endian; the memcpy is one load).
inline uint64_t load8(const char* p) {
  uint64_t v;
  __builtin_memcpy(&v, p, 8);
  if constexpr (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__) v = __builtin_bswap64(v);
  return v;
}

// The value of eight ASCII digits (the first in the lowest byte); false when
// a byte is no digit. Each byte's high half must be 3 and its low half at
// most 9 (adding 6 to a digit leaves the high half 3); then the digits are
// combined in pairs, pairs of pairs and halves by three multiplies: each
// step's products land in separate bytes, 16-bit and 32-bit fields, and
// none overflows its field (99, 9999, 99999999).
[[gnu::always_inline]] inline bool eight_digits(uint64_t w, uint64_t* value) {
  constexpr uint64_t kHigh = 0xf0f0f0f0f0f0f0f0ULL, kThrees = 0x3030303030303030ULL;
  if ((w & kHigh) != kThrees || ((w + 0x0606060606060606ULL) & kHigh) != kThrees) return false;
  w -= kThrees;
  w = (w * 10 + (w >> 8)) & 0x00ff00ff00ff00ffULL;    // 2-digit values in bytes 0, 2, 4, 6
  w = (w * 100 + (w >> 16)) & 0x0000ffff0000ffffULL;  // 4-digit values in 16-bit fields 0 and 2
  *value = (w * 10000 + (w >> 32)) & 0xffffffffULL;   // the 8-digit value in the low 32 bits
  return true;
}

// A wall-clock time as std::to_string prints it, the 20 bytes from p: 13
// digits (the first not 0), '.', 6 digits, read in three words of eight
// (digits 0-7, 5-12 and the fraction): its nanoseconds, or false for any
// other bytes or a value past int64 nanoseconds (parse_ms_to_ns() then
// decides).
[[gnu::always_inline]] inline bool wall_clock_ns(const char* p, int64_t* ns) {
  if (p[13] != '.' || p[0] == '0') return false;
  uint64_t head = 0, tail = 0, frac = 0;
  const uint64_t frac_word = (load8(p + 12) & ~uint64_t{0xffff}) | 0x3030;  // "00" + the six decimals
  if (!eight_digits(load8(p), &head) || !eight_digits(load8(p + 5), &tail) || !eight_digits(frac_word, &frac)) {
    return false;
  }
  const uint64_t ms = head * 100'000 + tail % 100'000;
  if (ms >= static_cast<uint64_t>(INT64_MAX / 1'000'000)) return false;
  *ns = static_cast<int64_t>(ms * 1'000'000 + frac);
  return true;
}

}  // namespace detail

// Result of parsing a time text.
enum class TimeParse { kOk, kEmpty, kNotANumber, kNegative, kTooLarge };

namespace detail {

// parse_ms_to_ns() without its fast paths: the definition they must agree
// with (tests/unit/input/log_line_test.cc compares them).
inline TimeParse parse_ms_general(std::string_view text, int64_t* out_ns) {
  // 9.2e18 ns is the year 2262; more than 13 significant integer digits of
  // milliseconds (year 2286) cannot be a wall-clock time. Leading zeros are
  // not significant, and the whole text is checked first: "12x" with many
  // digits is not a number rather than too large.
  constexpr size_t kMaxIntDigits = 13;
  size_t i = 0;
  int64_t ms = 0;
  int int_digits = 0;
  size_t significant = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    if (significant > 0 || text[i] != '0') {
      if (significant < kMaxIntDigits) ms = ms * 10 + (text[i] - '0');
      ++significant;
    }
    ++int_digits;
    ++i;
  }
  int64_t frac = 0;
  int frac_digits = 0;
  bool any_frac_digit = false;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      any_frac_digit = true;
      if (frac_digits < 6) {
        frac = frac * 10 + (text[i] - '0');
        ++frac_digits;
      }
      ++i;
    }
    if (!any_frac_digit && int_digits == 0) return TimeParse::kNotANumber;
  }
  if (int_digits == 0 && !any_frac_digit) return TimeParse::kNotANumber;
  if (i != text.size()) return TimeParse::kNotANumber;
  if (significant > kMaxIntDigits) return TimeParse::kTooLarge;
  for (; frac_digits < 6; ++frac_digits) frac *= 10;
  // 13 digits reach 9999999999999.999999 ms, past what int64 nanoseconds
  // hold (9223372036854.775807 ms, April 2262): refuse rather than overflow.
  constexpr int64_t kMaxMs = INT64_MAX / 1'000'000;
  if (ms > kMaxMs || (ms == kMaxMs && frac > INT64_MAX % 1'000'000)) return TimeParse::kTooLarge;
  *out_ns = ms * 1'000'000 + frac;
  return TimeParse::kOk;
}

}  // namespace detail

// Parses "<ms>[.<fraction>]" milliseconds since the epoch into integer
// nanoseconds. Digits past the sixth decimal are below a nanosecond and are
// dropped (to_string never prints them). Accepts no sign, exponent, nan or inf:
// those are reported, never guessed at.
inline TimeParse parse_ms_to_ns(std::string_view text, int64_t* out_ns) {
  if (text.empty()) return TimeParse::kEmpty;
  if (text.front() == '-') {
    // Distinguish "-12.5" (a number, but impossible) from junk.
    std::string_view rest = text.substr(1);
    int64_t ignored = 0;
    return parse_ms_to_ns(rest, &ignored) == TimeParse::kOk ? TimeParse::kNegative : TimeParse::kNotANumber;
  }
  // Fast path for the form Paddle prints (std::to_string of a double): 1 to
  // 13 integer digits without a leading zero, '.', 6 digits. Anything else,
  // or a value past int64 nanoseconds, takes the general path below.
  if (text.size() == 20 && detail::wall_clock_ns(text.data(), out_ns)) return TimeParse::kOk;
  constexpr int64_t kMaxWholeMs = INT64_MAX / 1'000'000;
  if (text.size() >= 15 && text.size() <= 20 && text[text.size() - 7] == '.' && text[0] != '0') {
    // 8 to 13 integer digits (a wall-clock time has 13): three words of
    // eight digits each, read eight bytes at a time (detail::eight_digits),
    // every load inside the text. 6 of the reads' bytes are the fraction,
    // after the integer part's last digit and the '.'; the integer part is
    // its last 8 digits and the 0-5 before them, padded with '0's.
    const size_t n = text.size() - 7;
    const char* p = text.data();
    uint64_t frac_word = detail::load8(p + text.size() - 8);
    frac_word = (frac_word & ~uint64_t{0xffff}) | 0x3030;  // "00" + the six decimals
    const size_t head = n - 8;
    uint64_t head_word = 0x3030303030303030;
    if (head > 0) head_word = detail::load8(p) << (8 * (8 - head)) | (head_word >> (8 * head));
    uint64_t frac = 0, lo = 0, hi = 0;
    if (detail::eight_digits(frac_word, &frac) && detail::eight_digits(detail::load8(p + n - 8), &lo) &&
        detail::eight_digits(head_word, &hi)) {
      const uint64_t ms = hi * 100'000'000 + lo;
      if (ms < static_cast<uint64_t>(kMaxWholeMs)) {
        *out_ns = static_cast<int64_t>(ms) * 1'000'000 + static_cast<int64_t>(frac);
        return TimeParse::kOk;
      }
    }
  } else if (text.size() >= 8 && text.size() <= 20 && text[text.size() - 7] == '.' && text[0] != '0') {
    // Up to three independent runs of digits (the integer part's head and
    // last 8 digits, the fraction), so that the multiply-add chains overlap.
    unsigned bad = 0;
    auto digits = [&](const char* p, size_t n) {
      uint64_t v = 0;
      for (size_t k = 0; k < n; ++k) {
        unsigned d = static_cast<unsigned char>(p[k]) - unsigned{'0'};
        bad |= d > 9 ? 1u : 0u;
        v = v * 10 + d;
      }
      return v;
    };
    const size_t n = text.size() - 7;
    const size_t head = n > 8 ? n - 8 : 0;
    const uint64_t hi = digits(text.data(), head);
    const uint64_t lo = digits(text.data() + head, n - head);
    const uint64_t frac = digits(text.data() + n + 1, 6);
    const uint64_t ms = hi * 100'000'000 + lo;
    if (bad == 0 && ms < static_cast<uint64_t>(kMaxWholeMs)) {
      *out_ns = static_cast<int64_t>(ms) * 1'000'000 + static_cast<int64_t>(frac);
      return TimeParse::kOk;
    }
  }
  return detail::parse_ms_general(text, out_ns);
}

// Appends `ns` as milliseconds with exactly six decimals, the way
// std::to_string(double) prints Paddle's times (but exact).
inline void append_ns_as_ms(std::string& out, int64_t ns) {
  if (ns < 0) {
    out.push_back('-');
    ns = -ns;
  }
  std::string ms = std::to_string(ns / 1'000'000);
  out += ms;
  out.push_back('.');
  char frac[6];
  int64_t f = ns % 1'000'000;
  for (int k = 5; k >= 0; --k) {
    frac[k] = static_cast<char>('0' + f % 10);
    f /= 10;
  }
  out.append(frac, 6);
}

// The job line without any prefix and without a newline. A micro_batch_id
// below zero leaves the field out, as older builds did.
inline std::string format_job_line(int64_t job_id, std::string_view type, int64_t micro_batch_id, int64_t start_ns,
                                   int64_t end_ns) {
  std::string out;
  out.reserve(160);
  out += kJobMarker;
  out += std::to_string(job_id);
  out += kTypeKey;
  out += type;
  if (micro_batch_id >= 0) {
    out += kMicroBatchKey;
    out += std::to_string(micro_batch_id);
  }
  out += kStartKey;
  append_ns_as_ms(out, start_ns);
  out += kEndKey;
  append_ns_as_ms(out, end_ns);
  return out;
}

inline std::string format_schedule_marker(int64_t start_step, int64_t end_step) {
  std::string out(kScheduleMarker);
  out += std::to_string(start_step);
  out += kScheduleMarkerEnd;
  out += std::to_string(end_step);
  return out;
}

// A job type may contain any character but the ones that would break the line
// apart for a reader: a comma ends the type, a newline ends the line.
inline bool is_valid_job_type(std::string_view type) {
  if (type.empty()) return false;
  for (char c : type) {
    if (c == ',' || c == '\n' || c == '\r' || c == '\0') return false;
  }
  return true;
}

}  // namespace ppt::log_line
