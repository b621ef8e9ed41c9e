#include "report/export/gzip.h"

#include <zlib.h>

#include <fmt/format.h>

namespace sample::report {

Result<std::string> GzipCompress(std::string_view bytes) {
  z_stream z{};
  // windowBits 15 + 16: a gzip header and trailer around the deflate stream.
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return Fail("gzip: zlib could not start a stream");
  }
  std::string out(deflateBound(&z, bytes.size()), '\0');
  // zlib's interface takes non-const input it only reads.
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  // deflateBound is enough for one Z_FINISH call; uInt bounds the sizes.
  const int status = bytes.size() > UINT32_MAX / 2 ? Z_BUF_ERROR : deflate(&z, Z_FINISH);
  const size_t written = out.size() - z.avail_out;
  deflateEnd(&z);
  if (status != Z_STREAM_END) return Fail(fmt::format("gzip: zlib failed ({})", status));
  out.resize(written);
  return out;
}

}  // namespace sample::report
