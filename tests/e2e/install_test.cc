// `meson install` into a DESTDIR, as a packager or `sudo meson install`
// would: the three programs, their man pages and bash completion land
// where the prefix says, the programs run from there, the pages render
// without a warning, and the completion completes.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/e2e/e2e_util.h"

namespace sample::e2e {
namespace {

namespace fs = std::filesystem;

const char* const kPrograms[] = {"sample-record", "sample-report", "sample-top"};

// The one file under `root` whose path ends in `suffix`, or "".
std::string FindUnder(const std::string& root, const std::string& suffix) {
  std::error_code error;
  for (fs::recursive_directory_iterator it(root, error), end; it != end; it.increment(error)) {
    if (error) break;
    const std::string path = it->path().string();
    if (path.size() >= suffix.size() && path.ends_with(suffix)) return path;
  }
  return "";
}

// The option names a --help lists: its lines read "  -F, --freq <n>  help",
// "      --call-graph <mode>  help", "  -g  help".
std::vector<std::string> HelpOptions(const std::string& help) {
  std::vector<std::string> options;
  for (const std::string& line : Lines(help)) {
    if (!line.starts_with("  -") && !line.starts_with("      --")) continue;
    const size_t start = line.find('-');
    std::string names = line.substr(start, line.find("  ", start) - start);
    while (!names.empty()) {
      options.push_back(names.substr(0, names.find_first_of(" ,[=")));
      const size_t next = names.find(", -");
      names = next == std::string::npos ? "" : names.substr(next + 2);
    }
  }
  return options;
}

// An option as roff writes it: \-\-call\-graph.
std::string Roff(const std::string& option) {
  std::string escaped;
  for (char c : option) escaped += c == '-' ? std::string("\\-") : std::string(1, c);
  return escaped;
}

class InstallTest : public ::testing::Test {
 protected:
  // Installs the build into dir_/root; false (said) on failure.
  bool Install() {
    const RunResult installed = RunTool({"/usr/bin/env", "meson", "install", "-C", MESON_BUILD_ROOT,
                                         "--no-rebuild", "--quiet", "--destdir", dir_ / "root"},
                                        dir_);
    EXPECT_EQ(installed.exit_code, 0) << installed.out << installed.err;
    return installed.exit_code == 0;
  }
  std::string Installed(const std::string& suffix) const {
    return FindUnder(dir_ / "root", suffix);
  }

  ScratchDir dir_;
};

TEST_F(InstallTest, ProgramsRunAndSayTheirVersion) {
  ASSERT_TRUE(Install());
  for (const char* program : kPrograms) {
    const std::string path = Installed(std::string("/bin/") + program);
    ASSERT_FALSE(path.empty()) << program << " not installed";
    struct stat st {};
    ASSERT_EQ(stat(path.c_str(), &st), 0);
    EXPECT_NE(st.st_mode & S_IXUSR, 0u) << path;
    const RunResult version = RunTool({path, "--version"}, dir_);
    EXPECT_EQ(version.exit_code, 0) << version.err;
    // "sample-record 0.1.0 (commit 3f2b48915a2e)"
    EXPECT_TRUE(version.out.starts_with(std::string(program) + " ")) << version.out;
    EXPECT_NE(version.out.find(" (commit "), std::string::npos) << version.out;
  }
}

TEST_F(InstallTest, ManPagesRenderWithoutWarningsAndNameEveryOption) {
  if (RunTool({"/usr/bin/env", "man", "--version"}, dir_).exit_code != 0) {
    GTEST_SKIP() << "man is not installed (scripts/setup.sh installs man-db with the tests)";
  }
  ASSERT_TRUE(Install());
  for (const char* program : kPrograms) {
    const std::string page = Installed(std::string("/share/man/man1/") + program + ".1");
    ASSERT_FALSE(page.empty()) << program << ".1 not installed";
    const RunResult shown = RunTool(
        {"/usr/bin/env", "MANWIDTH=80", "man", "--warnings", "-E", "UTF-8", "-l", page}, dir_);
    EXPECT_EQ(shown.exit_code, 0) << shown.err;
    EXPECT_EQ(shown.err, "") << page;
    EXPECT_NE(shown.out.find(program), std::string::npos);
    // Every option the program's --help lists is in its page.
    const std::string bin = Installed(std::string("/bin/") + program);
    const RunResult help = RunTool({bin, "--help"}, dir_);
    const std::string text = ReadFile(page);
    for (const std::string& option : HelpOptions(help.out)) {
      EXPECT_NE(text.find(Roff(option)), std::string::npos) << program << ".1 lacks " << option;
    }
  }
}

TEST_F(InstallTest, CompletionCompletesOptionsAndEvents) {
  ASSERT_TRUE(Install());
  const std::string script = Installed("/share/bash-completion/completions/sample-record");
  ASSERT_FALSE(script.empty());
  for (const char* program : {"sample-report", "sample-top"}) {
    EXPECT_FALSE(Installed(std::string("/share/bash-completion/completions/") + program).empty());
  }
  const std::string bin = fs::path(Installed("/bin/sample-record")).parent_path().string();
  // One completion as bash would ask for it: the line so far, split.
  auto complete = [&](const std::string& line) {
    const std::string shell =
        "source " + ShellQuote(script) + "; COMP_LINE=" + ShellQuote(line) +
        "; COMP_POINT=${#COMP_LINE}; read -ra COMP_WORDS <<< \"$COMP_LINE\"; "
        "[[ $COMP_LINE == *' ' ]] && COMP_WORDS+=(''); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); "
        "_sample; printf '%s\\n' \"${COMPREPLY[@]}\"";
    return RunTool({"/bin/bash", "-c", shell}, dir_).out;
  };
  EXPECT_EQ(complete(bin + "/sample-record --call-gr"), "--call-graph\n");
  EXPECT_EQ(complete(bin + "/sample-record -e cpu-cl"), "cpu-clock\n");
  EXPECT_EQ(complete(bin + "/sample-record -e page-faults,task-cl"), "page-faults,task-clock\n");
  EXPECT_EQ(complete(bin + "/sample-report --format sv"), "svg\n");
  EXPECT_EQ(complete(bin + "/sample-report --no-chi"), "--no-children\n");
  EXPECT_EQ(complete(bin + "/sample-top --std"), "--stdio\n");
  EXPECT_EQ(complete(bin + "/sample-top -e task-cl"), "task-clock\n");
  // A number is not guessed: no commands offered after -F.
  EXPECT_EQ(complete(bin + "/sample-record -F "), "\n");
}

}  // namespace
}  // namespace sample::e2e
