#include "libsample/file_owner.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace sample {
namespace {

// Calls `lookup(buffer, size)` (a getpwuid_r or getgrgid_r) with a buffer
// grown while it says ERANGE (a group of many members needs more than
// sysconf's hint); false when the entry is not found or the lookup fails.
template <typename Lookup>
bool WithBuffer(long hint, std::vector<char>& buffer, const Lookup& lookup) {
  buffer.resize(hint > 0 ? static_cast<size_t>(hint) : 16384);
  for (;;) {
    const int err = lookup(buffer.data(), buffer.size());
    if (err != ERANGE) return err == 0;
    if (buffer.size() >= (size_t{1} << 24)) return false;
    buffer.resize(buffer.size() * 2);
  }
}

// Whether a user of /etc/passwd other than `user_name` has `gid` as its
// primary group (useradd -g NAME gives one user another's group).
bool PrimaryOfAnotherUser(gid_t gid, const std::string& user_name) {
  FILE* file = fopen("/etc/passwd", "re");
  if (file == nullptr) return false;
  bool found = false;
  passwd entry{};
  passwd* result = nullptr;
  std::vector<char> buffer(16384);
  while (fgetpwent_r(file, &entry, buffer.data(), buffer.size(), &result) == 0) {
    if (entry.pw_gid == gid && user_name != entry.pw_name) {
      found = true;
      break;
    }
  }
  fclose(file);
  return found;
}

bool LookUpPrivateGroup(uid_t uid, gid_t gid) {
  passwd user{};
  passwd* user_found = nullptr;
  std::vector<char> user_buffer;
  if (!WithBuffer(sysconf(_SC_GETPW_R_SIZE_MAX), user_buffer,
                  [&](char* data, size_t size) {
                    return getpwuid_r(uid, &user, data, size, &user_found);
                  }) ||
      user_found == nullptr) {
    return false;
  }
  group grp{};
  group* group_found = nullptr;
  std::vector<char> group_buffer;
  if (!WithBuffer(sysconf(_SC_GETGR_R_SIZE_MAX), group_buffer,
                  [&](char* data, size_t size) {
                    return getgrgid_r(gid, &grp, data, size, &group_found);
                  }) ||
      group_found == nullptr) {
    return false;
  }
  std::vector<std::string> members;
  for (char** member = grp.gr_mem; member != nullptr && *member != nullptr; ++member) {
    members.emplace_back(*member);
  }
  PrivateGroupFacts facts{.user_name = user.pw_name,
                          .user_primary_gid = user.pw_gid,
                          .gid = gid,
                          .group_name = grp.gr_name,
                          .group_members = members};
  // Only worth reading the passwd file when the rest holds.
  if (!IsPrivateGroup(facts)) return false;
  facts.primary_of_another_user = PrimaryOfAnotherUser(gid, facts.user_name);
  return IsPrivateGroup(facts);
}

}  // namespace

bool IsPrivateGroup(const PrivateGroupFacts& facts) {
  if (facts.gid != facts.user_primary_gid || facts.group_name != facts.user_name) return false;
  if (facts.primary_of_another_user) return false;
  return std::all_of(facts.group_members.begin(), facts.group_members.end(),
                     [&](const std::string& member) { return member == facts.user_name; });
}

bool IsPrivateGroupOf(uid_t uid, gid_t gid) {
  // Asked for every cache component and JIT file: the databases (files,
  // or a directory service through NSS) once per pair.
  static std::mutex mutex;
  static std::map<std::pair<uid_t, gid_t>, bool> known;
  {
    std::lock_guard lock(mutex);
    if (auto it = known.find({uid, gid}); it != known.end()) return it->second;
  }
  const bool is_private = LookUpPrivateGroup(uid, gid);
  std::lock_guard lock(mutex);
  known.emplace(std::pair(uid, gid), is_private);
  return is_private;
}

bool WritableOnlyByOwner(const struct stat& st) {
  if ((st.st_mode & S_IWOTH) != 0) return false;
  return (st.st_mode & S_IWGRP) == 0 || IsPrivateGroupOf(st.st_uid, st.st_gid);
}

std::string WhoElseMayWrite(const struct stat& st) {
  if ((st.st_mode & S_IWOTH) != 0) return "everyone";
  return fmt::format("its group, gid {}, not the owner's private group", st.st_gid);
}

}  // namespace sample
