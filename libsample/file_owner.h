// Who besides its owner may write a file: the one rule for files and
// directories whose owner is trusted (cache directories and files, JIT perf
// maps and jitdumps).
//
// Debian, Ubuntu and Fedora give every user a private group of their own
// (USERGROUPS_ENAB: primary group named as the user, no other members) and a
// umask of 002, so other tools make ~/.cache 0775 and JITs write their
// perf maps and jitdumps 0664. Group write there lets no one else in, so it
// is not refused; group write for any other group is. Owns nothing but a
// small memo of the user and group databases' answers (thread-safe).
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <span>
#include <string>

namespace sample {

// What the user and group databases say of a user and a group, for the
// private-group rule.
struct PrivateGroupFacts {
  std::string user_name;
  gid_t user_primary_gid = 0;
  gid_t gid = 0;
  std::string group_name;
  std::span<const std::string> group_members;  // as listed (gr_mem)
  // Another user of the local passwd file has `gid` as its primary group
  // (a member the group's own entry does not list).
  bool primary_of_another_user = false;
};

// The rule on those facts: `gid` is the user's primary group, named as the
// user, with no member but the user itself.
bool IsPrivateGroup(const PrivateGroupFacts& facts);

// The same rule with the facts looked up (getpwuid_r, getgrgid_r,
// /etc/passwd for users whose primary group it is); false when the user or
// the group is unknown. Remembered per (uid, gid).
bool IsPrivateGroupOf(uid_t uid, gid_t gid);

// No one but the owner of the file `st` describes (and root) may write it:
// not writable by others, and not by its group unless that group is its
// owner's private group (IsPrivateGroupOf).
bool WritableOnlyByOwner(const struct stat& st);

// "everyone" or "its group (gid N)" for a file WritableOnlyByOwner refuses,
// for messages.
std::string WhoElseMayWrite(const struct stat& st);

}  // namespace sample
