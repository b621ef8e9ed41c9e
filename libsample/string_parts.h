// Parts of strings every part of the tool takes: a word without the blanks
// around it (read from a text file or a command line), lower case, bytes
// as hex, a path's last part.
// (Not "strings.h": libsample/ is on the include path and <string.h> includes
// the C library's <strings.h>.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace sample {

// `text` without the spaces, tabs, carriage returns and line feeds at its
// ends (sysfs and tracefs files end in '\n'; lines read from a FIFO or a
// file written on Windows may end in '\r').
std::string_view Trim(std::string_view text);

// ASCII lower case, for comparing names and hex digits without case.
std::string Lowercase(std::string_view text);

// Bytes as lower-case hex digits, two a byte ("0a1b"), as build-ids are
// written.
std::string HexBytes(std::span<const std::byte> bytes);

// A byte count for people: "850 B" below 10 KiB, then "12.7 KiB" below
// 10 MiB, "10.5 MiB" below 10 GiB, "12.3 GiB".
std::string HumanBytes(uint64_t bytes);

// What follows the last '/' of `path` (all of it when there is none; empty
// when it ends in '/'), as a report shows a DSO by name.
std::string Basename(std::string_view path);

}  // namespace sample
