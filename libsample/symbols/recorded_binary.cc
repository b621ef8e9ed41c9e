#include "libsample/symbols/recorded_binary.h"

#include <utility>

#include <fmt/format.h>

#include "libsample/symbols/elf_symbols.h"
#include "libsample/symbols/inflated_debug.h"

namespace sample {

void LocatedBinary::NoteOpened(bool has_dwarf) {
  if (!is_vdso() && has_dwarf) source += " + DWARF";
}

void LocatedBinary::NoteUnreadable(const std::string& error) {
  binary.clear();
  debug.clear();
  found_debug.clear();
  if (is_vdso()) {
    warnings.push_back("the recording's [vdso] image is unreadable: " + error);
    source = "none: unreadable image";
    return;
  }
  warnings.push_back(error);
  source = mismatched ? "none: build-id differs" : "none: not found";
  missing = !mismatched;
}

BinaryLocator::BinaryLocator(BinaryLocatorOptions options, RecordedCode recorded, LocatorUse use)
    : options_(std::move(options)),
      recorded_(recorded),
      finder_(
          [&] {
            DebugFileFinderOptions files = options_.files;
            files.use_debuginfod = files.use_debuginfod && use.debuginfod;
            return files;
          }(),
          std::move(use.progress)) {
  options_.files.use_debuginfod = finder_.options().use_debuginfod;
}

LocatedBinary BinaryLocator::Locate(const std::string& path, const std::string& recorded_build_id) {
  return path == kVdsoPath ? LocateVdso(recorded_build_id) : LocateFile(path, recorded_build_id);
}

LocatedBinary BinaryLocator::LocateFile(const std::string& path,
                                        const std::string& recorded_build_id) {
  LocatedBinary out;
  out.path = path;
  out.source = "none: not found";
  if (!path.starts_with('/')) return out;  // [heap], [stack], memfd:..., ...
  const EmbeddedBinary* embedded =
      recorded_.embedded != nullptr ? recorded_.embedded->Find(path, recorded_build_id) : nullptr;
  // With the recorded build's own tables at hand, a binary missing here is
  // not fetched: debuginfod could only make the report wait.
  if (embedded != nullptr && options_.files.use_debuginfod && !local_finder_) {
    DebugFileFinderOptions local = options_.files;
    local.use_debuginfod = false;
    local_finder_.emplace(std::move(local));
  }
  FoundFiles found = (embedded != nullptr && local_finder_ ? *local_finder_ : finder_)
                         .Find(path, recorded_build_id);
  // The binary is here: its debug file may still come from debuginfod.
  if (embedded != nullptr && local_finder_ && !found.binary.empty()) {
    found = finder_.Find(path, recorded_build_id);
  }
  if (!found.binary.empty()) {
    out.binary = found.binary;
    // A distribution's compressed debug file is read from its inflated copy
    // (inflated_debug.h): libdw would inflate it on every open.
    out.debug = found.debug.empty() || found.build_id.empty()
                    ? found.debug
                    : InflatedDebugFile(found.debug, found.build_id);
    if (out.debug != found.debug) out.found_debug = found.debug;
    out.source = FileSourceName(found.symbol_source());
    return out;
  }
  // The recorded build's own tables name every address the recording hit:
  // nothing is missing, so nothing is said but where the names came from.
  const bool use_embedded =
      embedded != nullptr && (found.mismatched_binary.empty() || !options_.force);
  if (use_embedded) {
    out.embedded = embedded;
    // A file of another build at the path counts as a mismatch, whatever
    // names the code.
    out.mismatched = !found.mismatched_binary.empty();
    out.source = found.mismatched_binary.empty()
                     ? "embedded"
                     : fmt::format("embedded (the file found has build-id {})",
                                   BuildIdOrNone(found.mismatched_build_id));
    return out;
  }
  if (found.mismatched_binary.empty()) {
    out.missing = true;
    return out;
  }
  out.mismatched = true;
  const std::string seen = BuildIdOrNone(found.mismatched_build_id);
  if (!options_.force) {
    out.warnings.push_back(fmt::format(
        "{} has build-id {} but the recording saw {}; its frames are shown as [unknown] "
        "(--force uses it anyway)",
        path, seen, recorded_build_id));
    out.source = "none: build-id differs";
    return out;
  }
  out.warnings.push_back(fmt::format(
      "{} has build-id {} but the recording saw {}; used anyway (--force){}", path, seen,
      recorded_build_id,
      embedded != nullptr ? "; without --force the recording's own tables name it" : ""));
  // Debug files were matched against the recorded build-id, not this
  // file's: none is used with it.
  // (The finder names no source for a file it turned down.)
  out.binary = found.mismatched_binary;
  out.source = fmt::format("{} (build-id differs, --force)",
                           options_.files.symfs.empty() ? FileSourceName(FileSource::kRecordedPath)
                                                        : FileSourceName(FileSource::kSymfs));
  return out;
}

LocatedBinary BinaryLocator::LocateVdso(const std::string& recorded_build_id) {
  LocatedBinary out;
  out.path = std::string(kVdsoPath);
  if (recorded_.vdso_image.empty()) {
    // Recorders since 2026-11-27 embed the functions of it that were hit,
    // as any binary's, instead of the whole image.
    const EmbeddedBinary* embedded = recorded_.embedded != nullptr
                                         ? recorded_.embedded->Find(out.path, recorded_build_id)
                                         : nullptr;
    if (embedded != nullptr) {
      out.embedded = embedded;
      out.source = "embedded";
      return out;
    }
    out.source = "none: not in the recording";
    return out;
  }
  // libelf and libdw read files: the image goes through an in-memory one.
  if (!vdso_file_ && vdso_error_.empty()) {
    auto file = MemoryFile::Create("vdso", recorded_.vdso_image);
    if (file) {
      vdso_file_.emplace(std::move(*file));
    } else {
      vdso_error_ = file.error().message;
    }
  }
  if (!vdso_file_) {
    out.NoteUnreadable(vdso_error_);
    return out;
  }
  auto id = ReadElfBuildId(vdso_file_->path());
  if (!id) {
    out.NoteUnreadable(id.error().message);
    return out;
  }
  if (recorded_build_id.empty() || recorded_build_id == *id) {
    out.binary = vdso_file_->path();
    out.source = "recorded image";
    return out;
  }
  // Another kernel's vDSO: its symbols and CFI would be the wrong ones.
  out.mismatched = true;
  if (!options_.force) {
    out.warnings.push_back(fmt::format(
        "the recording's [vdso] image has build-id {} but the recording saw {}; its frames "
        "are shown as [unknown] (--force uses it anyway)",
        BuildIdOrNone(*id), recorded_build_id));
    out.source = "none: build-id differs";
    return out;
  }
  out.warnings.push_back(fmt::format(
      "the recording's [vdso] image has build-id {} but the recording saw {}; used anyway "
      "(--force)",
      BuildIdOrNone(*id), recorded_build_id));
  out.binary = vdso_file_->path();
  out.source = "recorded image (build-id differs)";
  return out;
}

}  // namespace sample
