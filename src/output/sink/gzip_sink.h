// A ByteSink that gzips what it is given into another sink, as it comes
// (zlib's deflate with the gzip wrapper, RFC 1952): a trace is never held
// whole, compressed or not. One gzip member, which is what the viewers read:
// Perfetto's trace processor and catapult's importer both tell gzip by its
// first bytes (1f 8b) and inflate one member (docs/perfetto.md).
#pragma once

#include <zlib.h>

#include <string>
#include <string_view>

#include "output/sink/byte_sink.h"

namespace ppt {

class GzipSink : public ByteSink {
 public:
  explicit GzipSink(ByteSink& out, int level = Z_DEFAULT_COMPRESSION);
  ~GzipSink() override;
  GzipSink(const GzipSink&) = delete;
  GzipSink& operator=(const GzipSink&) = delete;

  void write(std::string_view bytes) override;
  // Ends the gzip member (the rest of the deflate stream, CRC-32 and size).
  // False when zlib failed; nothing may be written after.
  bool finish();

 private:
  bool deflate_some(int flush);

  ByteSink& out_;
  z_stream z_{};
  std::string buffer_;
  bool initialized_ = false;
  bool ok_ = false;
  bool finished_ = false;
};

}  // namespace ppt
