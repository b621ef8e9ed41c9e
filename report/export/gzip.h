// GzipCompress: bytes in, one gzip member (RFC 1952) out, by zlib, for the
// formats that are gzip files by definition (pprof's .pb.gz).
#pragma once

#include <string>
#include <string_view>

#include "libsample/result.h"

namespace sample::report {

Result<std::string> GzipCompress(std::string_view bytes);

}  // namespace sample::report
