// End to end: root runs sample-record and sample-report with a user's HOME
// or XDG_CACHE_HOME (`sudo -E`, an env_keep rule), that user being nobody
// (uid 65534), who owns the tree the cache path goes through (issue 56
// item 1). What the old code did here: a symlink at a middle component
// (~/.cache/sample -> a directory elsewhere) was followed and root made
// debug/, frames/ and annotate/ there; XDG_CACHE_HOME/sample and a fresh
// home's ~/.cache were made root:root 0700, which their owner could then
// neither write nor remove (and root's directories in the user's tree were
// open to the swap race the unit tests of inflated_debug and cache_dir
// play out name by name). Now the walk to the cache (libsample/cache_dir.h)
// meets a directory of uid 65534 and there is no cache: nothing is made in
// that tree or where its links point. A control run with a home of root's
// own shows the same runs do use the caches. Needs root (the attack is on
// root's runs) and skips without.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/e2e/e2e_util.h"

namespace sample::e2e {
namespace {

namespace fs = std::filesystem;

const std::string kRecord = SAMPLE_RECORD_PATH;
const std::string kReport = SAMPLE_REPORT_PATH;
const std::string kAlloc = WORKLOAD_ALLOC_PATH;
constexpr uid_t kNobody = 65534;

// Every entry under `root` (not following links) that uid 0 owns.
std::vector<std::string> RootOwnedUnder(const std::string& root) {
  std::vector<std::string> found;
  std::error_code error;
  for (auto it = fs::recursive_directory_iterator(root, error); !error && it != fs::end(it);
       it.increment(error)) {
    struct stat st {};
    if (lstat(it->path().c_str(), &st) == 0 && st.st_uid == 0) found.push_back(it->path());
  }
  return found;
}

// Everything under `root`, for messages.
std::string Listing(const std::string& root) {
  std::string out;
  std::error_code error;
  for (auto it = fs::recursive_directory_iterator(root, error); !error && it != fs::end(it);
       it.increment(error)) {
    out += it->path().string() + "\n";
  }
  return out;
}

class CacheAttackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "the attack is on root's runs: needs root";
    ASSERT_FALSE(nobody_.path().empty()) << "cannot make a directory of nobody's";
  }

  // A directory (and its parents below nobody's directory) of nobody's.
  std::string NobodyMakes(const std::string& relative) const {
    const fs::path path = fs::path(nobody_.path()) / relative;
    fs::create_directories(path);
    for (fs::path p = path; p != fs::path(nobody_.path()); p = p.parent_path()) {
      EXPECT_EQ(lchown(p.c_str(), kNobody, kNobody), 0) << p;
    }
    return path.string();
  }

  // A symlink of nobody's at `relative` to `target`.
  void NobodyLinks(const std::string& target, const std::string& relative) const {
    const std::string link = nobody_.path() + "/" + relative;
    fs::create_symlink(target, link);
    EXPECT_EQ(lchown(link.c_str(), kNobody, kNobody), 0);
  }

  // Records the alloc workload (its samples hit libc, whose debug file
  // this machine may have compressed) and reports it, plain and annotated:
  // every cache is used. `env`: "NAME=value" or "-u NAME" items for env(1).
  void RecordAndReport(const std::vector<std::string>& env) {
    std::vector<std::string> prefix = {"/usr/bin/env"};
    for (const std::string& item : env) {
      if (item.starts_with("-u ")) {  // env(1)'s options come first
        prefix.insert(prefix.begin() + 1, {"-u", item.substr(3)});
      } else {
        prefix.push_back(item);
      }
    }
    const auto with_env = [&](std::vector<std::string> argv) {
      argv.insert(argv.begin(), prefix.begin(), prefix.end());
      return argv;
    };
    const RunResult rec = RunTool(
        with_env({kRecord, "-e", "cpu-clock", "-F", "2000", "-o", data_, "--", kAlloc, "3000000"}),
        dir_);
    ASSERT_EQ(rec.exit_code, 0) << rec.err;
    const RunResult report = RunTool(with_env({kReport, "-i", data_, "--stdio"}), dir_);
    ASSERT_EQ(report.exit_code, 0) << report.err;
    const RunResult annotate =
        RunTool(with_env({kReport, "-i", data_, "--annotate"}), dir_);  // the hottest
    EXPECT_EQ(annotate.exit_code, 0) << annotate.err;
  }

  ScratchDir dir_;
  NobodyDir nobody_;
  const std::string data_ = dir_ / "attack.data";
};

// ~/.cache/sample -> elsewhere: a symlink of the user's at a middle
// component. The old code made debug/, frames/ and annotate/ there, root's.
TEST_F(CacheAttackTest, RootWithAUsersHomeFollowsNoSymlinkOfTheirsAndMakesNothing) {
  const std::string home = NobodyMakes("home");
  NobodyMakes("home/.cache");
  const std::string elsewhere = NobodyMakes("elsewhere");
  NobodyLinks(elsewhere, "home/.cache/sample");
  RecordAndReport({"HOME=" + home, "-u XDG_CACHE_HOME"});
  EXPECT_TRUE(RootOwnedUnder(nobody_.path()).empty()) << Listing(nobody_.path());
}

TEST_F(CacheAttackTest, RootWithAUsersXdgCacheHomeMakesNothingThere) {
  const std::string xdg = NobodyMakes("xdg");
  RecordAndReport({"XDG_CACHE_HOME=" + xdg, "HOME=" + (dir_ / "unused-home")});
  EXPECT_TRUE(fs::is_empty(xdg)) << Listing(xdg);
  EXPECT_TRUE(RootOwnedUnder(nobody_.path()).empty()) << Listing(nobody_.path());
  // XDG_CACHE_HOME/sample -> elsewhere, theirs.
  const std::string elsewhere = NobodyMakes("elsewhere");
  NobodyLinks(elsewhere, "xdg/sample");
  RecordAndReport({"XDG_CACHE_HOME=" + xdg, "HOME=" + (dir_ / "unused-home")});
  EXPECT_TRUE(fs::is_empty(elsewhere)) << Listing(elsewhere);
  EXPECT_TRUE(RootOwnedUnder(nobody_.path()).empty()) << Listing(nobody_.path());
}

// A fresh home: the old code made ~/.cache root:root 0700 in it.
TEST_F(CacheAttackTest, AFreshHomeGetsNoRootOwnedCache) {
  const std::string home = NobodyMakes("fresh");
  RecordAndReport({"HOME=" + home, "-u XDG_CACHE_HOME"});
  EXPECT_TRUE(fs::is_empty(home)) << Listing(home);
}

// The control: a home of root's own gets the caches, private.
TEST_F(CacheAttackTest, RootsOwnHomeGetsPrivateCaches) {
  const std::string home = dir_ / "root-home";
  fs::create_directories(home);
  RecordAndReport({"HOME=" + home, "-u XDG_CACHE_HOME"});
  const std::string cache = home + "/.cache/sample";
  for (const std::string& made : {home + "/.cache", cache, cache + "/frames"}) {
    struct stat st {};
    ASSERT_EQ(lstat(made.c_str(), &st), 0) << made << "\n" << Listing(home);
    EXPECT_TRUE(S_ISDIR(st.st_mode)) << made;
    EXPECT_EQ(st.st_mode & 077, 0u) << made;
  }
  EXPECT_FALSE(fs::is_empty(cache + "/frames")) << Listing(home);
  // libc's debug file, when this machine has one (and it holds compressed
  // sections, as Debian's do), inflated: libc's build-id names its frames.
  for (const auto& entry : fs::directory_iterator(cache + "/frames")) {
    const std::string name = entry.path().filename();
    if (!name.ends_with(".libc.so.6.frames") || name.find('.') < 3) continue;
    const std::string id = name.substr(0, name.find('.'));
    const std::string debug =
        "/usr/lib/debug/.build-id/" + id.substr(0, 2) + "/" + id.substr(2) + ".debug";
    if (!fs::exists(debug)) continue;
    EXPECT_TRUE(fs::exists(cache + "/debug/" + id + ".debug")) << Listing(home);
  }
}

}  // namespace
}  // namespace sample::e2e
