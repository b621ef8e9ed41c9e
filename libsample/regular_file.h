// Opening files we did not write, and placing files we write, without being
// fooled by what sits at the path.
//
// The reporter opens whatever a recording names (binaries, debug files,
// perf maps) and whatever -i says; any local user can plant a FIFO (open
// blocks forever), a device node (/dev/zero never ends, /dev/tty and
// /dev/kmsg have side effects when opened) or a symlink there. Only
// regular files are opened, and nothing else is ever opened at all: the
// path is stat()ed first, opened non-blocking, and the open file is checked
// to be the regular file that was stat()ed.
//
// The recorder and the reporter's -o replace only regular files: a device,
// FIFO, socket or directory at the output path is refused, and a symlink
// that another user planted in a sticky world-writable directory (/tmp) is
// never renamed or written through.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "libsample/result.h"
#include "libsample/unique_fd.h"

namespace sample {

struct OpenRegularOptions {
  // Refuse a symlink as the last component (for files whose owner is
  // checked: the link's target would be someone else's file).
  bool no_follow = false;
};

// `path` opened read-only if it is a regular file; an error naming the path
// and what it is otherwise (a FIFO, a character device, a directory, ...).
Result<UniqueFd> OpenRegularFile(const std::string& path, OpenRegularOptions options = {});

// Reads `out.size()` bytes of `fd` from `offset`, a pread at a time
// (again after EINTR); returns how many were read: fewer at the file's end
// or on an error.
size_t PreadAll(int fd, std::span<std::byte> out, uint64_t offset);

// "a FIFO", "a character device", "a directory", ... for st_mode.
const char* FileKindName(mode_t mode);

// Whether `path` may be replaced by (or renamed out of the way of) a file
// we write: it does not exist, or is a regular file, or a symlink that is
// not another user's in a sticky world-writable directory. `option` names
// the option that gave the path, for the message ("-o").
Result<void> CheckReplaceable(const std::string& path, const std::string& option);

// Moves an existing `path` aside as PATH.old, as perf does with its output
// (after CheckReplaceable: only a file that check allows is moved).
Result<void> MoveAside(const std::string& path, const std::string& option);

}  // namespace sample
