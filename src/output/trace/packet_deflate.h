// A fast deflate encoder for a run of Perfetto trace packets (the .pftrace
// writer's compressed_packets, docs/perfetto.md).
//
// zlib's own deflate finds repeats by hashing every byte; at its fastest
// level it takes about as long again as encoding the packets. The packets of
// one track are alike: a job's begin packet is the previous one of the same
// length with a few bytes changed (times, line, job id, flow id). So this
// encoder looks for repeats in one place only: the last earlier packet of the
// same length, byte by byte at the same offsets. A run of at least four equal
// bytes becomes a match (its length, and the two packets' distance), any
// other byte a literal; the symbols are coded as they are found, in one
// deflate block with deflate's fixed Huffman codes (RFC 1951, 3.2.6), inside
// a zlib stream (RFC 1950: header, Adler-32 trailer), which every inflater
// reads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ppt::proto {

// Writes the zlib stream of `packets` (Trace.packet fields, `0a <length>
// <packet>`; other bytes are coded as literals, still exactly) into `out`
// from `at` on, growing it as needed; returns the stream's size. The bytes
// depend on `packets` only.
size_t deflate_packets(std::string_view packets, std::string& out, size_t at);

// The Adler-32 checksum (RFC 1950, 8.2) of `bytes`, continuing from `adler`
// (1 for a new stream): zlib's adler32(), 16 bytes at a time with SSE2.
uint32_t adler32_of(std::string_view bytes, uint32_t adler = 1);

}  // namespace ppt::proto
