// DecodeBudget: the memory the embedded chunks (kEmbeddedBinary, kPerfMap,
// kJitDump) of the files one report reads may take once decoded, one
// budget over the whole set (-i A B ..., a glob of rotated files), so
// that naming a file twice, or reading a thousand small crafted files,
// does not multiply it. The set starts with kEmbeddedDecodedFloor; each
// file adds kMaxEmbeddedDecodedRatio times its stored bytes; the whole
// stays within kMaxEmbeddedTotalSize (sample_file_format.h says why these
// numbers). A chunk's payload is charged the size its header claims
// uncompressed, before it is decompressed (a chunk that claims more than is
// left is not decompressed at all), and then what decoding it charged;
// both count whether the chunk is kept or refused: a refused chunk must
// not cost the budget again and again.
// Files are opened one after the other: not for use by several threads.
#pragma once

#include <algorithm>
#include <cstdint>

#include "formats/sample_file_format.h"

namespace sample::format {

class DecodeBudget {
 public:
  // A file of `stored_bytes` joins the set.
  void AddFile(uint64_t stored_bytes) {
    const uint64_t room = kMaxEmbeddedTotalSize - total_;
    total_ += stored_bytes > room / kMaxEmbeddedDecodedRatio
                  ? room
                  : stored_bytes * kMaxEmbeddedDecodedRatio;
  }
  // What the set's chunks may still take, and all they may take.
  uint64_t left() const { return total_ - used_; }
  uint64_t total() const { return total_; }
  // Counts `bytes` decoded (at most what is left).
  void Charge(uint64_t bytes) { used_ += std::min(bytes, left()); }

 private:
  uint64_t total_ = std::min(kEmbeddedDecodedFloor, kMaxEmbeddedTotalSize);
  uint64_t used_ = 0;
};

}  // namespace sample::format
