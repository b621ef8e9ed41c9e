#include "report/views/source_owners.h"

#include <algorithm>

#include <fmt/format.h>

#include "libsample/file_owner.h"

namespace sample::report {

bool SourceOwners::Allows(uid_t owner) const {
  return any || std::ranges::find(uids, owner) != uids.end();
}

void SourceOwners::Merge(const SourceOwners& other) {
  any = any || other.any;
  for (uid_t uid : other.uids) {
    if (!Allows(uid)) uids.push_back(uid);
  }
}

SourceOwnersDecision SourceOwnersOf(std::span<const NamingFile> files, uid_t euid) {
  SourceOwnersDecision out;
  out.owners.any = true;
  const NamingFile* restricting = nullptr;  // the file that made it one owner's
  for (const NamingFile& file : files) {
    const uid_t owner = file.st.st_uid;
    // Others may have written it (WritableOnlyByOwner: a user's private
    // group is not others): it vouches for nothing.
    if (!WritableOnlyByOwner(file.st)) {
      out.owners = {};
      out.note = fmt::format("source text not shown: {} may be written by {}", file.path,
                             WhoElseMayWrite(file.st));
      return out;
    }
    if (owner == 0 || owner == euid) continue;  // vouches for any path
    // Another user's: only that user's files, which they could read anyway.
    if (restricting != nullptr && restricting->st.st_uid != owner) {
      out.owners = {};
      out.note = fmt::format(
          "source text not shown: {} (user {}'s) and {} (user {}'s) belong to different users",
          restricting->path, restricting->st.st_uid, file.path, owner);
      return out;
    }
    restricting = &file;
    out.owners = SourceOwners{.any = false, .uids = {owner}};
  }
  if (restricting != nullptr) {
    out.note = fmt::format(
        "source text shown only from files of user {}, the owner of {}, not from other users' "
        "files",
        restricting->st.st_uid, restricting->path);
  }
  return out;
}

}  // namespace sample::report
