#include "output/sink/gzip_sink.h"

#include <algorithm>

namespace ppt {
namespace {
constexpr size_t kOutBytes = 256 * 1024;
constexpr int kGzipWindowBits = 15 + 16;  // 32 KiB window, gzip header and trailer
}  // namespace

GzipSink::GzipSink(ByteSink& out, int level) : out_(out), buffer_(kOutBytes, '\0') {
  initialized_ = deflateInit2(&z_, level, Z_DEFLATED, kGzipWindowBits, 8, Z_DEFAULT_STRATEGY) == Z_OK;
  ok_ = initialized_;
}

GzipSink::~GzipSink() {
  if (initialized_) deflateEnd(&z_);
}

bool GzipSink::deflate_some(int flush) {
  int ret = Z_OK;
  do {
    z_.next_out = reinterpret_cast<Bytef*>(buffer_.data());
    z_.avail_out = static_cast<uInt>(buffer_.size());
    ret = deflate(&z_, flush);
    if (ret == Z_STREAM_ERROR) return false;
    size_t produced = buffer_.size() - z_.avail_out;
    if (produced > 0) out_.write(std::string_view(buffer_.data(), produced));
  } while (z_.avail_out == 0 || (flush == Z_FINISH && ret != Z_STREAM_END));
  return true;
}

void GzipSink::write(std::string_view bytes) {
  if (!ok_ || finished_) return;
  // zlib counts input in uInt: large pieces go in slices.
  while (!bytes.empty() && ok_) {
    size_t n = std::min<size_t>(bytes.size(), size_t{1} << 30);
    z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
    z_.avail_in = static_cast<uInt>(n);
    ok_ = deflate_some(Z_NO_FLUSH);
    bytes.remove_prefix(n);
  }
}

bool GzipSink::finish() {
  if (finished_) return ok_;
  finished_ = true;
  if (!ok_) return false;
  z_.next_in = nullptr;
  z_.avail_in = 0;
  ok_ = deflate_some(Z_FINISH);
  return ok_;
}

}  // namespace ppt
