// SourceOwners: whose source files the annotate view may show the text of
// for one function, decided from the files its DWARF came from
// (SourceOwnersOf), and checked by SourceFiles on each source file as it
// is opened.
//
// A path that DWARF names may be any file of the machine the report runs
// on, and the report may run as root: the text shown must be what whoever
// wrote the DWARF could read anyway. A build-id proves nothing of who wrote
// a binary (alice builds ~/evil whose DWARF names /etc/shadow, root records
// it and annotates it), so the rule is by owner. A binary (and the debug
// file its DWARF is read from) owned by root or by the reporting user and
// writable by no one else (WritableOnlyByOwner, libsample/file_owner.h)
// vouches for any path it names. Another user's file vouches only for its
// owner's files: root annotating alice's build sees alice's sources, never
// root's. A file others may write vouches for nothing, nor do files of two
// different users together. A recording's own tables, jitdumps and vDSO image vouch for
// nothing either: the view gives them no owners.
#pragma once

#include <sys/types.h>

#include <span>
#include <string>
#include <vector>

#include "libsample/symbols/function_code.h"

namespace sample::report {

struct SourceOwners {
  bool any = false;         // any owner's file
  std::vector<uid_t> uids;  // else only files of these owners

  bool none() const { return !any && uids.empty(); }
  bool Allows(uid_t owner) const;
  // Allows what either allows (the HTML page reads a file once for every
  // function that names it).
  void Merge(const SourceOwners& other);
};

struct SourceOwnersDecision {
  SourceOwners owners;
  // For the reader, one line: what is not shown and why; empty when any
  // file is.
  std::string note;
};

// The owners `files` (NamingFile: a binary and its debug file, as opened)
// vouch for when the report runs as `euid`.
SourceOwnersDecision SourceOwnersOf(std::span<const NamingFile> files, uid_t euid);

}  // namespace sample::report
