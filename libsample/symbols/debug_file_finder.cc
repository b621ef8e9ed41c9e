#include "libsample/symbols/debug_file_finder.h"

#include <sys/stat.h>

#include <filesystem>
#include <utility>

#include <fmt/format.h>

#include "libsample/string_parts.h"
#include "libsample/symbols/elf_file.h"
#include "libsample/symbols/elf_symbols.h"
#include "libsample/symbols/file_identity.h"
#include "libsample/symbols/gnu_debuglink.h"

namespace sample {
namespace {

using Clock = std::chrono::steady_clock;

// What the finder needs to know about one candidate file, from one open.
struct ElfFacts {
  std::string build_id;
  std::string identity;  // file_identity.h; only when asked for
  bool has_dwarf = false;
  bool has_symtab = false;
  std::optional<GnuDebugLink> link;
};

Result<ElfFacts> Inspect(const std::string& path, bool identity = false) {
  TRY_ASSIGN(auto file, ElfFile::Open(path));
  ElfFacts facts;
  facts.build_id = ReadElfBuildId(file);
  if (identity) facts.identity = FileIdentity(file, facts.build_id);
  facts.has_dwarf = HasDebugInfo(file.get());
  facts.has_symtab = FindElfSection(file.get(), ".symtab") != nullptr;
  facts.link = ReadGnuDebugLink(file.get());
  return facts;
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

bool SameFile(const std::string& a, const std::string& b) {
  struct stat sa;
  struct stat sb;
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

// `path` under `root`; `path` itself when there is no root.
std::string UnderRoot(const std::string& root, const std::string& path) {
  if (root.empty()) return path;
  std::string joined = root;
  while (joined.size() > 1 && joined.back() == '/') joined.pop_back();
  if (path.empty() || path.front() != '/') joined += '/';
  return joined + path;
}

std::string Dirname(const std::string& path) {
  return std::filesystem::path(path).parent_path().string();
}

}  // namespace

const char* FileSourceName(FileSource source) {
  switch (source) {
    case FileSource::kNone:
      return "none";
    case FileSource::kRecordedPath:
      return "recorded path";
    case FileSource::kSymfs:
      return "symfs";
    case FileSource::kSymfsBasename:
      return "symfs basename";
    case FileSource::kDebugLink:
      return ".gnu_debuglink";
    case FileSource::kBuildIdDir:
      return "build-id dir";
    case FileSource::kDebuginfod:
      return "debuginfod";
  }
  return "none";
}

// One Find() call: the result being filled and the debuginfod deadline,
// which all of one binary's queries share.
struct DebugFileFinder::Search {
  void Reject(std::string path, std::string reason) {
    found.rejected.push_back(RejectedFile{std::move(path), std::move(reason)});
  }

  // Takes `path` as the debug file if it is one for found.build_id; `link`
  // is the .gnu_debuglink that named it, whose CRC must then match too.
  bool TryDebug(const std::string& path, FileSource source, const GnuDebugLink* link) {
    if (SameFile(path, found.binary)) return false;  // a link naming the binary itself
    auto facts = Inspect(path);
    if (!facts) {
      Reject(path, facts.error().message);
      return false;
    }
    // A file found by build-id must carry it; one named by a link may lack
    // one (the CRC vouches for it) but not carry another.
    if (facts->build_id != found.build_id && (link == nullptr || !facts->build_id.empty())) {
      Reject(path, fmt::format("build-id {}, binary has {}", BuildIdOrNone(facts->build_id),
                               BuildIdOrNone(found.build_id)));
      return false;
    }
    if (link != nullptr) {
      auto crc = DebugLinkFileCrc(path);
      if (!crc) {
        Reject(path, crc.error().message);
        return false;
      }
      if (*crc != link->crc) {
        Reject(path, fmt::format("CRC-32 {:08x}, .gnu_debuglink wants {:08x}", *crc, link->crc));
        return false;
      }
    }
    if (!facts->has_dwarf && !facts->has_symtab) {
      Reject(path, "no DWARF and no .symtab");
      return false;
    }
    found.debug = path;
    found.debug_source = source;
    return true;
  }

  std::optional<Clock::time_point> Deadline(std::chrono::milliseconds timeout) {
    if (timeout.count() <= 0) return std::nullopt;
    if (!deadline) deadline = Clock::now() + timeout;
    return deadline;
  }

  FoundFiles found;
  std::optional<Clock::time_point> deadline;
};

DebugFileFinder::DebugFileFinder(DebugFileFinderOptions options, DebuginfodProgressFn progress)
    : options_(std::move(options)), progress_(std::move(progress)) {}
DebugFileFinder::DebugFileFinder(DebugFileFinder&&) noexcept = default;
DebugFileFinder& DebugFileFinder::operator=(DebugFileFinder&&) noexcept = default;
DebugFileFinder::~DebugFileFinder() = default;

DebuginfodClient* DebugFileFinder::Debuginfod(std::string* error) {
  if (!options_.use_debuginfod || !DebuginfodClient::Configured()) return nullptr;
  if (!debuginfod_tried_) {
    debuginfod_tried_ = true;
    auto client = DebuginfodClient::Create(progress_);
    if (client) {
      debuginfod_.emplace(std::move(*client));
    } else {
      debuginfod_error_ = client.error().message;
    }
  }
  if (!debuginfod_) *error = debuginfod_error_;
  return debuginfod_ ? &*debuginfod_ : nullptr;
}

FoundFiles DebugFileFinder::Find(const std::string& recorded_path,
                                 const std::string& recorded_build_id) {
  Search search;
  FoundFiles& found = search.found;
  // A Go build ID or a hash (file_identity.h) checks the binary only:
  // debug files and debuginfod know GNU build-ids alone. (Go's has case.)
  const bool gnu_id = recorded_build_id.empty() || IsGnuBuildId(recorded_build_id);
  const std::string recorded_id = gnu_id ? Lowercase(recorded_build_id) : recorded_build_id;

  // The binary.
  std::vector<std::pair<std::string, FileSource>> binaries;
  if (options_.symfs.empty()) {
    binaries.emplace_back(recorded_path, FileSource::kRecordedPath);
  } else {
    binaries.emplace_back(UnderRoot(options_.symfs, recorded_path), FileSource::kSymfs);
    std::string flat = UnderRoot(options_.symfs, Basename(recorded_path));
    if (flat != binaries.back().first)
      binaries.emplace_back(std::move(flat), FileSource::kSymfsBasename);
  }
  std::optional<ElfFacts> binary_facts;
  for (const auto& [path, source] : binaries) {
    if (!Exists(path)) continue;
    auto facts = Inspect(path, /*identity=*/!gnu_id);
    if (!facts) {
      search.Reject(path, facts.error().message);
      continue;
    }
    const std::string& id = gnu_id ? facts->build_id : facts->identity;
    if (!recorded_id.empty() && id != recorded_id) {
      search.Reject(path, fmt::format("build-id {}, recorded {}", BuildIdOrNone(id), recorded_id));
      if (found.mismatched_binary.empty()) {
        found.mismatched_binary = path;
        found.mismatched_build_id = id;
      }
      continue;
    }
    found.binary = path;
    found.binary_source = source;
    binary_facts = std::move(*facts);
    break;
  }
  found.build_id = gnu_id && !recorded_id.empty() ? recorded_id
                   : binary_facts                 ? binary_facts->build_id
                                                  : "";

  std::string debuginfod_error;
  if (found.binary.empty() && !found.build_id.empty()) {
    if (DebuginfodClient* client = Debuginfod(&debuginfod_error)) {
      auto path =
          client->FindExecutable(found.build_id, search.Deadline(options_.debuginfod_timeout));
      if (!path) {
        search.Reject("debuginfod", path.error().message);
      } else if (auto facts = Inspect(*path); !facts) {
        search.Reject(*path, facts.error().message);
      } else if (facts->build_id != found.build_id) {
        search.Reject(*path, fmt::format("build-id {}, asked debuginfod for {}",
                                         BuildIdOrNone(facts->build_id), found.build_id));
      } else {
        found.binary = *path;
        found.binary_source = FileSource::kDebuginfod;
        binary_facts = std::move(*facts);
      }
    }
  }
  if (binary_facts && binary_facts->has_dwarf) {
    found.binary_has_dwarf = true;
    return found;
  }

  // The separate debug file: .gnu_debuglink first.
  if (binary_facts && binary_facts->link) {
    const GnuDebugLink& link = *binary_facts->link;
    const std::string dir = Dirname(found.binary);
    for (const std::string& candidate_dir :
         {dir, dir + "/.debug",
          UnderRoot(options_.symfs, UnderRoot(options_.debug_root, Dirname(recorded_path)))}) {
      const std::string candidate = candidate_dir + "/" + link.file_name;
      if (Exists(candidate) && search.TryDebug(candidate, FileSource::kDebugLink, &link)) {
        return found;
      }
    }
  }
  if (found.build_id.size() <= 2) return found;
  const std::string by_id =
      fmt::format("{}/.build-id/{}/{}.debug", UnderRoot(options_.symfs, options_.debug_root),
                  found.build_id.substr(0, 2), found.build_id.substr(2));
  if (Exists(by_id) && search.TryDebug(by_id, FileSource::kBuildIdDir, nullptr)) return found;

  if (DebuginfodClient* client = Debuginfod(&debuginfod_error)) {
    auto path = client->FindDebugInfo(found.build_id, search.Deadline(options_.debuginfod_timeout));
    if (!path) {
      search.Reject("debuginfod", path.error().message);
    } else {
      search.TryDebug(*path, FileSource::kDebuginfod, nullptr);
    }
  }
  if (!debuginfod_error.empty()) search.Reject("debuginfod", debuginfod_error);
  return found;
}

}  // namespace sample
