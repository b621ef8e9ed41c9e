// The per-user cache of sample's tools: $XDG_CACHE_HOME/sample, else
// ~/.cache/sample (the XDG base directory rule). Kept there: the sorted
// kernel symbols of this boot (libsample/symbols/kallsyms_snapshot.h), inflated
// debug files (libsample/symbols/inflated_debug.h) and learnt frames
// (record/embed/frame_cache.h) and annotate indexes (report/annotate_cache.h),
// each in a directory of its own.
//
// Root runs the tools too, often with a user's HOME or XDG_CACHE_HOME
// (`sudo -E`, an env_keep rule), so the cache path may lie in a tree another
// user controls: a symlink at any component, a directory swapped between a
// check and a write (renameat2 RENAME_EXCHANGE), a file planted at a name
// we are about to write. Hence one way in, OpenCacheDirectory: the path is
// walked from "/" one component at a time through directory fds, each
// checked to belong to root or to this user and to be writable by no one
// else (a sticky directory such as /tmp excepted: no one can rename what
// is ours in it); a symlink is followed only when root or this user owns
// it, its target walked by the same rules. A component of anyone else
// (root with HOME=/home/alice: /home/alice is alice's) means no cache at
// all, and nothing is made there. Everything after goes through the
// directory's fd with *at() calls: files are read without following a
// symlink and only as regular files of this user, written under an
// unpredictable temporary name created exclusively (mode 0600) and renamed
// into place, and trimmed by size and age (TrimCacheDirectory).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "libsample/result.h"
#include "libsample/unique_fd.h"

namespace sample {

// The cache directory, or CACHE/`sub` when `sub` is not empty; "" when
// neither variable names an absolute directory.
std::string UserCacheDir(std::string_view sub = "");

// A cache directory reached by the checked walk: its fd (O_RDONLY, for
// *at() calls and listing) and the path the walk took, symlinks resolved.
// That path names only directories of root or of this user that no one
// else may change, so it may be handed to a library that opens files by
// name (libdw): it leads where the fd does.
struct CacheDirectory {
  UniqueFd fd;
  std::string path;
};

struct CacheDirectoryOptions {
  // Make missing components (mode 0700), in directories that passed.
  bool create = true;
};

// `path` (absolute) walked as the header says; the last directory must be
// this user's and writable by no one else. An error naming the component
// and what was wrong when there is to be no cache.
Result<CacheDirectory> OpenCacheDirectory(const std::string& path,
                                          CacheDirectoryOptions options = {});

// The first refusal by the rules above in this process of a cache path
// under `under` (UserCacheDir()): a component's owner or mode, a symlink of
// another user; "" if none. Callers use no cache without a word; a report
// says this once (a warning), so that `sudo -E` with a user's HOME is not
// silently slower.
std::string CacheRefusal(std::string_view under);

// The same, for callers that need only the fd: invalid when refused.
UniqueFd OpenOwnDirectory(const std::string& path, CacheDirectoryOptions options = {});

// `name` (one component) in the cache directory `dir_fd`, opened
// read-only without following a symlink or blocking, and taken only when
// it is a regular file of this user that no one else may write.
Result<UniqueFd> OpenCacheFile(int dir_fd, std::string_view name);

// Marks an open cache file used now (its access time; the modification
// time, which other caches key on, is left as it is): trimming removes
// the least recently used first.
void MarkCacheFileUsed(int fd);

// A file being written into a cache directory: created as
// NAME.<random>.tmp with O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600, and renamed
// over NAME by Commit (readers never see half a file); removed when
// destroyed uncommitted. Owns the file's fd and a duplicate of the
// directory's.
class CacheFileWriter {
 public:
  static Result<CacheFileWriter> Create(int dir_fd, std::string name);
  CacheFileWriter(CacheFileWriter&&) = default;
  CacheFileWriter& operator=(CacheFileWriter&&) = delete;
  ~CacheFileWriter();

  int fd() const { return fd_.get(); }
  // All of `bytes` at the current offset.
  Result<void> Write(std::span<const std::byte> bytes);
  // Closes the file and renames it into place.
  Result<void> Commit();

 private:
  CacheFileWriter() = default;
  UniqueFd dir_;
  UniqueFd fd_;
  std::string name_;
  std::string temporary_;
  bool committed_ = false;
};

// Convenience: `bytes` written whole as `name` in `dir_fd`.
Result<void> WriteCacheFile(int dir_fd, const std::string& name, std::span<const std::byte> bytes);

// How much a cache directory may hold. Files are the regular files whose
// names end in `suffix`; "last used" is the later of their access and
// modification times (MarkCacheFileUsed). Temporaries (NAME.*.tmp, and
// SUFFIX.* names of older versions) an hour old are a killed run's and go.
struct CacheTrimPolicy {
  std::string_view suffix;
  uint64_t max_bytes = UINT64_MAX;
  size_t max_files = SIZE_MAX;
  // Files unused this long go whatever room is left.
  int64_t max_unused_seconds = INT64_MAX;
  // A file never removed (the one just written).
  std::string_view keep;
};

// Removes from `dir_fd` the files past `policy`'s age, then the least
// recently used until what is left fits its bytes and count. Best effort.
void TrimCacheDirectory(int dir_fd, const CacheTrimPolicy& policy);


}  // namespace sample
