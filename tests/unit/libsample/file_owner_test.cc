// The group-write rule (libsample/file_owner.h): a file or directory its
// owner's private group may write (umask 002 on Debian and Fedora: 0664
// files, 0775 directories) is writable only by its owner; one a shared
// group may write (a group of another name, or with another member) is not,
// nor one anyone may write. The rule alone on made-up database entries;
// then real files, whose users and groups are probed on this host (and,
// as root, a user with a private group made with useradd and given a
// second member), each part skipping with its reason when the host has no
// such user or group.
#include "libsample/file_owner.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tests/unit/group_probe.h"
#include "tests/unit/temp_dir.h"

namespace sample {
namespace {

TEST(IsPrivateGroupTest, OnlyThePrimaryGroupNamedAsTheUserWithNoOtherMember) {
  const std::vector<std::string> none;
  const std::vector<std::string> self = {"alice"};
  const std::vector<std::string> bob = {"alice", "bob"};
  PrivateGroupFacts facts{.user_name = "alice",
                          .user_primary_gid = 1000,
                          .gid = 1000,
                          .group_name = "alice",
                          .group_members = none};
  EXPECT_TRUE(IsPrivateGroup(facts));
  facts.group_members = self;  // some tools list the user in its own group
  EXPECT_TRUE(IsPrivateGroup(facts));
  facts.group_members = bob;  // another member: bob writes it too
  EXPECT_FALSE(IsPrivateGroup(facts));
  facts.group_members = none;
  facts.primary_of_another_user = true;  // useradd -g alice bob
  EXPECT_FALSE(IsPrivateGroup(facts));
  facts.primary_of_another_user = false;
  facts.group_name = "users";  // another name: a shared group
  EXPECT_FALSE(IsPrivateGroup(facts));
  facts.group_name = "alice";
  facts.gid = 1001;  // not the user's primary group
  EXPECT_FALSE(IsPrivateGroup(facts));
}

class FileOwnerTest : public ::testing::Test {
 protected:
  FileOwnerTest() : dir_("file owner test"), path_((dir_.path() / "file").string()) {
    std::ofstream(path_) << "text\n";
  }
  struct stat Stat() const {
    struct stat st {};
    EXPECT_EQ(stat(path_.c_str(), &st), 0);
    return st;
  }

  testing::TempDir dir_;
  std::string path_;
};

TEST_F(FileOwnerTest, OwnFileOfOwnPrivateGroupMayBeGroupWritable) {
  if (!IsPrivateGroupOf(geteuid(), getegid())) {
    GTEST_SKIP() << fmt::format("gid {} is not uid {}'s private group on this host", getegid(),
                                geteuid());
  }
  ASSERT_EQ(chmod(path_.c_str(), 0664), 0);
  EXPECT_TRUE(WritableOnlyByOwner(Stat()));
  ASSERT_EQ(chmod(path_.c_str(), 0646), 0);
  EXPECT_FALSE(WritableOnlyByOwner(Stat()));
  EXPECT_EQ(WhoElseMayWrite(Stat()), "everyone");
}

TEST_F(FileOwnerTest, GroupWritableForASharedGroupIsRefused) {
  const auto shared = testing::SharedGroupForSelf();
  if (!shared) GTEST_SKIP() << "this user can give its files no group but its private one";
  ASSERT_EQ(chown(path_.c_str(), static_cast<uid_t>(-1), *shared), 0);
  ASSERT_EQ(chmod(path_.c_str(), 0664), 0);
  EXPECT_FALSE(WritableOnlyByOwner(Stat()));
  EXPECT_EQ(WhoElseMayWrite(Stat()),
            fmt::format("its group, gid {}, not the owner's private group", *shared));
  ASSERT_EQ(chmod(path_.c_str(), 0644), 0);
  EXPECT_TRUE(WritableOnlyByOwner(Stat()));
}

TEST_F(FileOwnerTest, AnotherUsersFileOfTheirPrivateGroupOrOfAnotherGroup) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another user";
  const auto user = testing::UserWithPrivateGroup();
  if (!user) GTEST_SKIP() << "no user of /etc/passwd has a private group";
  ASSERT_EQ(chown(path_.c_str(), user->first, user->second), 0);
  ASSERT_EQ(chmod(path_.c_str(), 0664), 0);
  EXPECT_TRUE(WritableOnlyByOwner(Stat()));
  // The same mode, the group named for no user (nogroup).
  ASSERT_EQ(chown(path_.c_str(), user->first, 65534), 0);
  EXPECT_FALSE(WritableOnlyByOwner(Stat()));
}

// A group named as its user and primary to it, but with a second member:
// that member may write the file too.
TEST_F(FileOwnerTest, APrivateLookingGroupWithAnotherMemberIsShared) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to add a user and a group member";
  if (access("/usr/sbin/useradd", X_OK) != 0 || access("/usr/sbin/usermod", X_OK) != 0) {
    GTEST_SKIP() << "no useradd/usermod to make a user with a group";
  }
  const std::string name = fmt::format("smplgrp{}", getpid() % 100000);
  const auto run = [](const std::string& command) {
    return std::system((command + " >/dev/null 2>&1").c_str());
  };
  ASSERT_EQ(run(fmt::format("/usr/sbin/useradd -M -U -s /usr/sbin/nologin {}", name)), 0);
  const int added = run(fmt::format("/usr/sbin/usermod -a -G {} nobody", name));
  passwd* entry = getpwnam(name.c_str());
  const uid_t uid = entry != nullptr ? entry->pw_uid : 0;
  const gid_t gid = entry != nullptr ? entry->pw_gid : 0;
  if (added == 0 && entry != nullptr) {
    ASSERT_EQ(chown(path_.c_str(), uid, gid), 0);
    ASSERT_EQ(chmod(path_.c_str(), 0664), 0);
    EXPECT_FALSE(IsPrivateGroupOf(uid, gid));
    EXPECT_FALSE(WritableOnlyByOwner(Stat()));
  }
  run(fmt::format("/usr/sbin/gpasswd -d nobody {}", name));
  run(fmt::format("/usr/sbin/userdel {}", name));
  run(fmt::format("/usr/sbin/groupdel {}", name));
  ASSERT_EQ(added, 0) << "usermod -a -G " << name << " nobody failed";
  ASSERT_NE(entry, nullptr);
}

}  // namespace
}  // namespace sample
