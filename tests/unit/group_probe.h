// Groups for tests of the group-write rule (libsample/file_owner.h): a
// group this process may give its files that is NOT its user's private
// group (group write there lets another user in), and a user of this host
// whose primary group IS private (for root to give files to). Hosts differ
// (a container's root, a CI user of a shared group), so each is probed and
// may be absent: the caller skips with the reason.
#pragma once

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <cstdio>
#include <optional>
#include <utility>
#include <vector>

#include "libsample/file_owner.h"

namespace sample::testing {

// A gid this process can chown its own files to (any as root, else its
// groups) that is not the private group of its effective user.
inline std::optional<gid_t> SharedGroupForSelf() {
  std::vector<gid_t> candidates;
  if (geteuid() == 0) {
    candidates = {65534, 100, 50};  // nogroup, users, staff: named for no user
  } else {
    candidates.push_back(getegid());
    const int n = getgroups(0, nullptr);
    std::vector<gid_t> groups(n > 0 ? static_cast<size_t>(n) : 0);
    if (n > 0 && getgroups(n, groups.data()) == n) {
      candidates.insert(candidates.end(), groups.begin(), groups.end());
    }
  }
  for (gid_t gid : candidates) {
    if (!IsPrivateGroupOf(geteuid(), gid)) return gid;
  }
  return std::nullopt;
}

// A user of /etc/passwd (not root) whose primary group is its private
// group, as (uid, gid).
inline std::optional<std::pair<uid_t, gid_t>> UserWithPrivateGroup() {
  FILE* file = fopen("/etc/passwd", "re");
  if (file == nullptr) return std::nullopt;
  std::optional<std::pair<uid_t, gid_t>> found;
  passwd entry{};
  passwd* result = nullptr;
  std::vector<char> buffer(16384);
  while (fgetpwent_r(file, &entry, buffer.data(), buffer.size(), &result) == 0) {
    if (entry.pw_uid != 0 && IsPrivateGroupOf(entry.pw_uid, entry.pw_gid)) {
      found = std::pair(entry.pw_uid, entry.pw_gid);
      break;
    }
  }
  fclose(file);
  return found;
}

}  // namespace sample::testing
