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
// that another user planted in a directory others may create entries in
// (/tmp) is never renamed or written through (CheckNotPlanted, the rule
// --control's FIFOs share).
#pragma once

#include <sys/stat.h>
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

// The directory a path's last component is found in, opened once and
// stat()ed, so that what is judged of it is the directory then used (its
// fd, for *at() calls), not one looked up again by name meanwhile.
struct ParentDirectory {
  UniqueFd fd;       // O_PATH | O_DIRECTORY
  std::string path;  // as named ("." for a bare name), for messages
  std::string name;  // the last component
  struct stat st {};
};

// `path`'s parent directory, following links up to it (as the kernel does
// for the path); an error naming it when it cannot be opened, or when
// `path` names no entry of a directory ("dir/", "..").
Result<ParentDirectory> OpenParentDirectory(const std::string& path);

// Whether an entry of uid `owner` in `parent` may be a trap another user
// laid for whoever names its path next (a symlink -o writes through, a
// FIFO --control obeys): users besides the directory's owner may create
// entries there (/tmp; WritableOnlyByOwner, sticky or not) and the entry
// is neither this user's nor root's. Elsewhere only the directory's owner
// could have put it there, and naming it is a choice. The error says whose
// entry in which directory, for the caller to put after what the entry is.
Result<void> CheckNotPlanted(const ParentDirectory& parent, uid_t owner);

// Whether `path` may be replaced by (or renamed out of the way of) a file
// we write: it does not exist, or is a regular file, or a symlink that is
// not another user's in a directory others may create entries in
// (CheckNotPlanted). `option` names
// the option that gave the path, for the message ("-o").
Result<void> CheckReplaceable(const std::string& path, const std::string& option);

// Moves an existing `path` aside as PATH.old, as perf does with its output
// (after CheckReplaceable: only a file that check allows is moved).
Result<void> MoveAside(const std::string& path, const std::string& option);

}  // namespace sample
