// FrameCache: the frames embedding learnt of one build of a binary
// (KnownFrames: every byte of the functions that had hits), kept between
// recordings in UserCacheDir("frames") (libsample/cache_dir.h), so that a
// binary whose hit functions were embedded before is embedded without
// reading its DWARF. That read is most of a short recording's cost: libc's
// debug file alone took 10-20 ms at every close, Go binaries (whose DWARF
// is compressed inside them) 20-40 ms.
//
// One file per build-id and display name. It is taken only as written:
// for this build of sample (the recorder's own build-id, and those of the
// libdw and libelf it loaded), this build of the binary and this file of
// it (a stripped copy keeps the build-id but not the frames: its size and
// section headers tell it apart), the same short name (FDE-named
// functions carry it) and the same debug file (path, inode, size and
// modification time: installing or removing a debug package changes the
// frames). Anything else, a file that fails its checksum or decoding, or
// one not ours and regular, counts as empty and is replaced at the next
// save. Binaries without a build-id (GNU's, or Go's note) are not cached.
// Two recorders closing at once each write their own file whole; the last
// rename wins, and what the other learnt is learnt again later. A file is
// the size of the learnt functions' frames (libc's after ten qsort runs:
// ~250 KB; ld.so, learnt whole: ~650 KB; goleaf, whole: 1.6 MB), at most
// 64 MiB (a larger one is neither written nor read); once a recording has
// saved its binaries' files (Trim, at the end of the embedding: not after
// each save, which listed and stat'ed the whole directory once a binary)
// the directory is trimmed to kMaxFrameCacheBytes, least recently used
// first (a read marks its file used, a save is a use), and files unused
// for kFrameCacheUnusedSeconds go: a new build of each binary adds a file,
// and nothing else ever removed them.
//
// The directory is reached by the checked walk of libsample/cache_dir.h
// (no cache when a component is another user's: root run with a user's
// HOME) and used through its fd: files are read only as regular files of
// this user, without following a symlink, and written under an
// unpredictable temporary name (O_EXCL, 0600) renamed into place.
//
// A file is kept in pieces of ~4-8 KB, each with its own checksum, and a
// recording reads only those holding the offsets it looks up: goleaf's
// recordings read ~370 KB of its 1.6 MB in ~45 reads, where reading the
// whole file (fresh pages, copy, checksum) was a tenth of the recorder's
// CPU. A recording that learns more reads the rest first; should that
// fail (the file damaged or replaced since), it saves what it read and
// learnt, and the rest is learnt again when a later recording needs it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "libsample/symbols/elf_file.h"
#include "libsample/symbols/known_frames.h"
#include "libsample/unique_fd.h"

namespace sample::record {

// Hundreds of binaries' frames (the largest seen, goleaf's, is 1.6 MB).
inline constexpr uint64_t kMaxFrameCacheBytes = uint64_t{256} << 20;
inline constexpr int64_t kFrameCacheUnusedSeconds = int64_t{30} * 24 * 3600;

struct FrameCacheKey {
  std::string build_id;      // lowercase hex
  std::string display_name;  // the basename of the path the recording names
  std::string debug;         // the separate debug file read, or empty
  std::string fingerprint;   // Fingerprint() of the binary read
};

class FrameCache {
 public:
  // The cache of `key` in `dir`; disabled (known() is nullptr) when `dir`
  // is empty or cannot be made ours, or `key` has no build-id.
  // With `wanted`, only the pieces of the file holding those offsets are
  // read (known() covers at least what the file holds of them), and the
  // rest before anything is learnt (KnownFrames::LearnAfter).
  static FrameCache Open(const std::string& dir, const FrameCacheKey& key,
                         std::optional<std::span<const uint64_t>> wanted = std::nullopt);

  KnownFrames* known() { return enabled_ ? &known_ : nullptr; }
  // Writes the frames back if they learnt more since Open or the last
  // save (best effort: a recording never fails for its cache), in pieces
  // of about `piece_bytes` (KnownFrames::Pieces).
  static constexpr size_t kPieceBytes = size_t{8} << 10;
  void Save(size_t piece_bytes = kPieceBytes);
  // Trims the directory `dir` (see above); once a recording, after its
  // saves. Makes nothing when `dir` does not exist.
  static void Trim(const std::string& dir);

  // What Open read of the file.
  struct Stats {
    size_t pieces_read = 0;
    size_t pieces = 0;
  };
  const Stats& stats() const { return stats_; }

  // The file of `key` in `dir`, and its name there.
  static std::string PathOf(const std::string& dir, const FrameCacheKey& key);
  static std::string NameOf(const FrameCacheKey& key);
  // The identity a file must carry to be taken for `key`.
  static std::string Identity(const FrameCacheKey& key);
  // What tells copies of one build apart: the file's size and a checksum
  // of its section headers (strip, objcopy and the like change them).
  static std::string Fingerprint(const ElfFile& file);

 private:
  bool enabled_ = false;
  // The checked directory (shared with the load of the rest of the file).
  std::shared_ptr<UniqueFd> dir_;
  std::string name_;
  std::string identity_;
  KnownFrames known_;
  uint64_t saved_ = 0;  // known_.learnt() when last saved
  Stats stats_;
};

}  // namespace sample::record
