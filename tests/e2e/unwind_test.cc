// End to end: call chains of binaries built without frame pointers, from
// --call-graph dwarf (user stack copies unwound by the reporter with CFI),
// and the caller a frame-pointer chain skips in a leaf, put back by
// --call-graph fp,leaf. Chains are read from sample-report --script.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/e2e/e2e_util.h"

namespace sample::e2e {
namespace {

const std::string kRecord = SAMPLE_RECORD_PATH;
const std::string kReport = SAMPLE_REPORT_PATH;
const std::string kNoFp = WORKLOAD_UNWIND_NOFP_PATH;
const std::string kFp = WORKLOAD_UNWIND_FP_PATH;
const std::string kLeaf = WORKLOAD_LEAF_PATH;
const std::string kDebugFrame = WORKLOAD_UNWIND_DEBUGFRAME_PATH;
const std::string kVdsoClock = WORKLOAD_VDSO_CLOCK_PATH;
const std::string kUnusedLib = FIXTURE_LIB_PATH;

struct Frame {
  std::string function;  // without +offset and " (inlined)"
  std::string dso;
};
using Chain = std::vector<Frame>;  // leaf first

// The chains of every sample in `script` (sample-report --script output).
std::vector<Chain> ParseScript(const std::string& script) {
  std::vector<Chain> chains;
  bool in_sample = false;
  for (const std::string& line : Lines(script)) {
    if (line.empty()) {
      in_sample = false;
      continue;
    }
    if (line[0] != '\t') {  // "comm pid [cpu] time: period event:"
      chains.emplace_back();
      in_sample = true;
      continue;
    }
    if (!in_sample) continue;
    // "\t    addr function+0x1f (dso)"
    const size_t addr = line.find_first_not_of(" \t");
    const size_t name = line.find(' ', addr);
    const size_t dso = line.rfind(" (");
    if (name == std::string::npos || dso == std::string::npos || dso <= name) continue;
    std::string function = line.substr(name + 1, dso - name - 1);
    if (function.ends_with(" (inlined)")) function.resize(function.size() - 10);
    if (const size_t plus = function.rfind("+0x"); plus != std::string::npos) {
      function.resize(plus);
    }
    chains.back().push_back(Frame{function, line.substr(dso + 2, line.size() - dso - 3)});
  }
  return chains;
}

bool Has(const Chain& chain, const std::string& function) {
  return std::any_of(chain.begin(), chain.end(),
                     [&](const Frame& f) { return f.function == function; });
}

// The functions of `chain` from its leaf up to and including `last` (all of
// them if `last` is absent).
std::vector<std::string> NamesUpTo(const Chain& chain, const std::string& last) {
  std::vector<std::string> names;
  for (const Frame& f : chain) {
    names.push_back(f.function);
    if (f.function == last) break;
  }
  return names;
}

std::string Show(const Chain& chain) {
  std::string out;
  for (const Frame& f : chain) out += f.function + " (" + f.dso + ")\n";
  return out;
}

// Changes the first byte of `path`'s GNU build-id note in place, so the
// file no longer has the build-id a recording saw; false if it has none.
bool ChangeBuildId(const std::string& path) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  // The note's type (NT_GNU_BUILD_ID) and name; the build-id follows.
  const std::string note("\x03\0\0\0GNU\0", 8);
  const size_t at = bytes.find(note);
  if (at == std::string::npos || at + note.size() >= bytes.size()) return false;
  file.clear();
  file.seekp(static_cast<std::streamoff>(at + note.size()));
  file.put(static_cast<char>(bytes[at + note.size()] ^ 0x5a));
  return static_cast<bool>(file.flush());
}

// How many times `needle` occurs in `text`.
size_t Occurrences(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

class UnwindTest : public ::testing::Test {
 protected:
  // Records `argv` with `call_graph` (the --call-graph value) and returns
  // the report's chains.
  std::vector<Chain> RecordChains(const std::vector<std::string>& command,
                                  const std::string& call_graph, const std::string& name) {
    const std::string data = dir_ / (name + ".data");
    std::vector<std::string> argv = {kRecord,        "-e",       "cpu-clock", "-F", "2000",
                                     "--call-graph", call_graph, "-o",        data, "--"};
    argv.insert(argv.end(), command.begin(), command.end());
    const RunResult rec = RunTool(argv, dir_);
    EXPECT_EQ(rec.exit_code, 0) << rec.err;
    const RunResult script = RunTool({kReport, "-i", data, "--script"}, dir_);
    EXPECT_EQ(script.exit_code, 0) << script.err;
    stats_ = RunTool({kReport, "-i", data, "--stats"}, dir_).out;
    return ParseScript(script.out);
  }

  ScratchDir dir_;
  std::string stats_;
};

TEST_F(UnwindTest, ChainsWithoutFramePointersReachMain) {
  const auto chains = RecordChains({kNoFp, "chain", "0.5"}, "dwarf", "nofp");
  size_t in_chain = 0, complete = 0;
  std::string incomplete;  // the first few, to show with a failure
  for (const Chain& chain : chains) {
    if (chain.empty() || !(chain[0].function == "hot_leaf" || chain[0].function == "level_three")) {
      continue;
    }
    ++in_chain;
    const std::vector<std::string> expected =
        chain[0].function == "hot_leaf"
            ? std::vector<std::string>{"hot_leaf", "level_three", "level_two", "level_one", "main"}
            : std::vector<std::string>{"level_three", "level_two", "level_one", "main"};
    if (NamesUpTo(chain, "main") == expected) {
      ++complete;
    } else if (in_chain - complete <= 3) {
      incomplete += "incomplete chain:\n" + Show(chain);
    }
  }
  ASSERT_GT(in_chain, 300u) << stats_;
  // The bound is the test's (an incomplete chain is shown, not failed on
  // by itself: 95% is the tolerance asked of every unwinding test here).
  EXPECT_GE(complete * 100, in_chain * 95) << complete << " of " << in_chain << "\n"
                                           << stats_ << incomplete;
  EXPECT_NE(stats_.find("samples unwound"), std::string::npos) << stats_;

  // The flat profile skips unwinding (only leaves count) and must not
  // change for it.
  const std::string data = dir_ / "nofp.data";
  const RunResult flat = RunTool({kReport, "-i", data, "--no-children", "-g", "none"}, dir_);
  const RunResult unwound = RunTool({kReport, "-i", data, "--no-children"}, dir_);
  ASSERT_EQ(flat.exit_code, 0) << flat.err;
  auto rows = [](const std::string& report) {
    std::vector<std::string> out;
    for (const std::string& line : Lines(report)) {
      if (line.find("%  ") != std::string::npos && line.find('|') == std::string::npos &&
          line.find("--") == std::string::npos) {
        out.push_back(line);
      }
    }
    return out;
  };
  EXPECT_EQ(rows(flat.out), rows(unwound.out));
  EXPECT_FALSE(rows(flat.out).empty());
}

TEST_F(UnwindTest, DebugFrameFromASeparateDebugFile) {
  // No .eh_frame for the workload's own code: its CFI is .debug_frame,
  // moved into a debug file found through .gnu_debuglink.
  const std::string binary = dir_ / "unwind-df";
  const std::string debug = dir_ / "unwind-df.debug";
  const std::string b = ShellQuote(binary), d = ShellQuote(debug);
  const std::string split =
      "cp " + ShellQuote(kDebugFrame) + " " + b + " && objcopy --only-keep-debug " + b + " " + d +
      " && strip --strip-debug " + b + " && objcopy --add-gnu-debuglink=" + d + " " + b;
  ASSERT_EQ(std::system(split.c_str()), 0) << split;
  auto complete_share = [&](const std::vector<Chain>& chains) {
    size_t leaves = 0, complete = 0;
    for (const Chain& chain : chains) {
      if (chain.empty() || chain[0].function != "hot_leaf") continue;
      ++leaves;
      complete +=
          NamesUpTo(chain, "main") ==
          std::vector<std::string>{"hot_leaf", "level_three", "level_two", "level_one", "main"};
    }
    EXPECT_GT(leaves, 200u);
    return leaves == 0 ? 0.0 : 100.0 * static_cast<double>(complete) / static_cast<double>(leaves);
  };
  EXPECT_GE(complete_share(RecordChains({binary, "chain", "0.4"}, "dwarf", "df")), 95.0) << stats_;
  // Without the debug file there is no CFI for those frames.
  ASSERT_EQ(std::rename(debug.c_str(), (debug + ".gone").c_str()), 0);
  const RunResult again = RunTool({kReport, "-i", dir_ / "df.data", "--script"}, dir_);
  EXPECT_LT(complete_share(ParseScript(again.out)), 5.0);
}

TEST_F(UnwindTest, VdsoFramesUnwindWithTheRecordedImagesCfi) {
  const auto chains = RecordChains({kVdsoClock, "0.3"}, "dwarf", "vdso");
  size_t in_vdso = 0, complete = 0;
  for (const Chain& chain : chains) {
    if (chain.empty() || chain[0].dso != "[vdso]") continue;
    ++in_vdso;
    complete += Has(chain, "read_clock_loop") && Has(chain, "main");
  }
  ASSERT_GT(in_vdso, 200u) << stats_;
  EXPECT_GE(complete * 100, in_vdso * 95) << complete << " of " << in_vdso;
  // Stepped by the vDSO's own CFI (cached rules), not libdw's frame-pointer
  // guess: libdw walks only a few samples outside it.
  const size_t at = stats_.find("walks, libdw:");
  ASSERT_NE(at, std::string::npos) << stats_;
  EXPECT_LT(std::stoul(stats_.substr(at + 13)) * 20, in_vdso) << stats_;
}

TEST_F(UnwindTest, DwarfCallersMatchTheFramePointerBuild) {
  // The frame-pointer build's own chains, from -g, against its DWARF chains
  // and the no-frame-pointer build's: the same callers in the same order.
  auto most_common = [](const std::vector<Chain>& chains) {
    std::map<std::vector<std::string>, size_t> counts;
    for (const Chain& chain : chains) {
      if (!chain.empty() && chain[0].function == "hot_leaf") ++counts[NamesUpTo(chain, "main")];
    }
    auto best = std::max_element(counts.begin(), counts.end(),
                                 [](const auto& a, const auto& b) { return a.second < b.second; });
    return best == counts.end() ? std::vector<std::string>{} : best->first;
  };
  const auto fp = most_common(RecordChains({kFp, "chain", "0.3"}, "fp", "fp"));
  const auto fp_dwarf = most_common(RecordChains({kFp, "chain", "0.3"}, "dwarf", "fp-dwarf"));
  const auto nofp_dwarf = most_common(RecordChains({kNoFp, "chain", "0.3"}, "dwarf", "nofp"));
  const std::vector<std::string> expected = {"hot_leaf", "level_three", "level_two", "level_one",
                                             "main"};
  EXPECT_EQ(fp, expected);
  EXPECT_EQ(fp_dwarf, fp);
  EXPECT_EQ(nofp_dwarf, fp);
}

TEST_F(UnwindTest, CallbackUnwindsThroughLibc) {
  const auto chains = RecordChains({kNoFp, "qsort", "0.5"}, "dwarf", "qsort");
  size_t callbacks = 0, through_libc = 0;
  for (const Chain& chain : chains) {
    if (chain.empty() || chain[0].function != "compare_items") continue;
    ++callbacks;
    // compare_items, then libc's sorting frames, then sort_many and main.
    const auto sort_many = std::find_if(chain.begin(), chain.end(),
                                        [](const Frame& f) { return f.function == "sort_many"; });
    const bool libc_between =
        sort_many != chain.end() && std::any_of(chain.begin() + 1, sort_many, [](const Frame& f) {
          return f.dso.find("libc.so") != std::string::npos;
        });
    if (libc_between && Has(chain, "main")) ++through_libc;
  }
  ASSERT_GT(callbacks, 200u) << stats_;
  EXPECT_GE(through_libc * 100, callbacks * 95) << through_libc << " of " << callbacks;
}

TEST_F(UnwindTest, EveryThreadUnwinds) {
  const auto chains = RecordChains({kNoFp, "threads", "0.4"}, "dwarf", "threads");
  size_t a = 0, b = 0, a_ok = 0, b_ok = 0;
  for (const Chain& chain : chains) {
    if (chain.empty()) continue;
    if (chain[0].function == "a_leaf") {
      ++a;
      a_ok +=
          chain.size() >= 2 && chain[1].function == "thread_a_work" && Has(chain, "start_thread");
    } else if (chain[0].function == "b_leaf") {
      ++b;
      b_ok +=
          chain.size() >= 2 && chain[1].function == "thread_b_work" && Has(chain, "start_thread");
    }
  }
  ASSERT_GT(a, 100u);
  ASSERT_GT(b, 100u);
  EXPECT_GE(a_ok * 100, a * 95) << a_ok << " of " << a;
  EXPECT_GE(b_ok * 100, b * 95) << b_ok << " of " << b;
}

// Shallow thread stacks read a few hundred bytes of 8 KiB copies: the
// report says so and names a smaller copy, and a recording with that copy
// unwinds as well.
TEST_F(UnwindTest, TheReportNamesAStackCopyThatSuffices) {
  auto complete_threads = [](const std::vector<Chain>& chains) {
    size_t leaves = 0, complete = 0;
    for (const Chain& chain : chains) {
      if (chain.empty() || (chain[0].function != "a_leaf" && chain[0].function != "b_leaf")) {
        continue;
      }
      ++leaves;
      complete += Has(chain, "start_thread");
    }
    EXPECT_GT(leaves, 200u);
    return complete * 100.0 / std::max<size_t>(leaves, 1);
  };
  EXPECT_GE(complete_threads(RecordChains({kNoFp, "threads", "0.6"}, "dwarf", "big-copy")), 95.0);
  EXPECT_NE(stats_.find("stack read, 99% of complete walks"), std::string::npos) << stats_;
  const RunResult header = RunTool({kReport, "-i", dir_ / "big-copy.data", "--header"}, dir_);
  const std::string advice = "sample-record --call-graph dwarf,";
  const size_t at = header.out.find(advice);
  ASSERT_NE(at, std::string::npos) << header.out << stats_;
  const size_t from = at + advice.size();
  const std::string size = header.out.substr(from, header.out.find(' ', from) - from);
  ASSERT_LE(std::stoul(size), 2048u) << header.out;
  EXPECT_GE(complete_threads(RecordChains({kNoFp, "threads", "0.6"}, "dwarf," + size, "small")),
            95.0)
      << stats_;
}

TEST_F(UnwindTest, StackDeeperThanTheCopyIsTruncatedAndCounted) {
  // 64 frames of 256+ bytes: deeper than 8 KiB, within 64 KiB.
  const auto small = RecordChains({kNoFp, "deep", "64", "0.3"}, "dwarf", "deep-small");
  const std::string small_stats = stats_;
  size_t leaves = 0, reached_main = 0;
  for (const Chain& chain : small) {
    if (chain.empty() || chain[0].function != "deep_leaf") continue;
    ++leaves;
    reached_main += Has(chain, "main");
    EXPECT_TRUE(chain.size() > 10) << "truncated chains keep the frames found:\n" << Show(chain);
  }
  ASSERT_GT(leaves, 100u);
  EXPECT_EQ(reached_main, 0u);
  EXPECT_NE(small_stats.find("ended: stack copy too small"), std::string::npos) << small_stats;

  const auto large = RecordChains({kNoFp, "deep", "64", "0.3"}, "dwarf,65528", "deep-large");
  leaves = reached_main = 0;
  for (const Chain& chain : large) {
    if (chain.empty() || chain[0].function != "deep_leaf") continue;
    ++leaves;
    reached_main += Has(chain, "main");
  }
  ASSERT_GT(leaves, 100u);
  EXPECT_GE(reached_main * 100, leaves * 95) << reached_main << " of " << leaves;
}

TEST_F(UnwindTest, LeafCheckPutsBackTheCallerAFramePointerChainSkips) {
  // Plain frame pointers: leaf_fn has no frame of its own, so its chain
  // goes straight to main.
  const auto plain = RecordChains({kLeaf, "0.3"}, "fp", "leaf-fp");
  size_t leaves = 0, skipped = 0;
  for (const Chain& chain : plain) {
    if (chain.empty() || chain[0].function != "leaf_fn") continue;
    ++leaves;
    skipped += chain.size() >= 2 && chain[1].function == "main";
  }
  ASSERT_GT(leaves, 200u);
  EXPECT_GE(skipped * 100, leaves * 95)
      << "gcc gave leaf_fn a frame? " << skipped << " of " << leaves;

  // With the leaf check, parent_fn is back between them.
  const auto fixed = RecordChains({kLeaf, "0.3"}, "fp,leaf", "leaf-fixed");
  leaves = 0;
  size_t restored = 0;
  for (const Chain& chain : fixed) {
    if (chain.empty() || chain[0].function != "leaf_fn") continue;
    ++leaves;
    restored +=
        NamesUpTo(chain, "main") == std::vector<std::string>{"leaf_fn", "parent_fn", "main"};
  }
  ASSERT_GT(leaves, 200u);
  EXPECT_GE(restored * 100, leaves * 95) << restored << " of " << leaves << "\n" << stats_;
  EXPECT_NE(stats_.find("callers inserted"), std::string::npos) << stats_;

  // Leaves that set up their frame keep their (correct) chains: nothing is
  // inserted into them.
  const auto framed = RecordChains({kFp, "chain", "0.3"}, "fp,leaf", "framed");
  leaves = 0;
  size_t unchanged = 0;
  for (const Chain& chain : framed) {
    if (chain.empty() || chain[0].function != "hot_leaf") continue;
    ++leaves;
    unchanged +=
        NamesUpTo(chain, "main") ==
        std::vector<std::string>{"hot_leaf", "level_three", "level_two", "level_one", "main"};
  }
  ASSERT_GT(leaves, 200u);
  // A sample in the leaf's own push/pop of rbp is rightly fixed; few are.
  EXPECT_GE(unchanged * 100, leaves * 95) << unchanged << " of " << leaves << "\n" << stats_;
}

TEST_F(UnwindTest, ABinaryOfAnotherBuildUsedUnderForceIsWarnedAboutOnce) {
  // Copies of the workload (sampled, so unwinding and symbolization both
  // read it) and of a library it maps but never runs (read by unwinding
  // alone), whose build-ids change after recording. Sampling starts 50 ms
  // in (-D): before that the loader runs the library's initializers, and a
  // sample there (seen once in a full suite) rightly warns about it.
  const std::string program = dir_ / "unwind-copy";
  const std::string library = dir_ / "libunused.so";
  ASSERT_EQ(std::system(("cp " + ShellQuote(kNoFp) + " " + ShellQuote(program) + " && cp " +
                         ShellQuote(kUnusedLib) + " " + ShellQuote(library))
                            .c_str()),
            0);
  const std::string data = dir_ / "force.data";
  const RunResult rec = RunTool(
      {kRecord, "-e", "cpu-clock", "-F", "2000", "-D", "50", "--call-graph", "dwarf", "--no-embed",
       "-o", data, "--", "/usr/bin/env", "LD_PRELOAD=" + library, program, "chain", "0.3"},
      dir_);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  ASSERT_TRUE(ChangeBuildId(program));
  ASSERT_TRUE(ChangeBuildId(library));

  const RunResult forced = RunTool({kReport, "-i", data, "--force"}, dir_);
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  const std::string used = "; used anyway (--force)";
  EXPECT_EQ(Occurrences(forced.err, program + " has build-id "), 1u) << forced.err;
  EXPECT_EQ(Occurrences(forced.err, library + " has build-id "), 1u) << forced.err;
  EXPECT_EQ(Occurrences(forced.err, used), 2u) << forced.err;
  EXPECT_NE(forced.out.find("level_three"), std::string::npos) << forced.out;

  // Not forced: only what loses frames is worth a word.
  const RunResult refused = RunTool({kReport, "-i", data}, dir_);
  ASSERT_EQ(refused.exit_code, 0) << refused.err;
  EXPECT_EQ(Occurrences(refused.err, program + " has build-id "), 1u) << refused.err;
  EXPECT_EQ(Occurrences(refused.err, used), 0u) << refused.err;
  // The library loses frames only when a sample ran in it: its
  // initializers run before main, and -D 50 is wall time, which a loaded
  // machine may spend before the loader is done. Whether one did is read
  // from the forced report's chains, which name it.
  const RunResult script = RunTool({kReport, "-i", data, "--force", "--script"}, dir_);
  ASSERT_EQ(script.exit_code, 0) << script.err;
  bool library_sampled = false;
  for (const Chain& chain : ParseScript(script.out)) {
    library_sampled |= std::any_of(chain.begin(), chain.end(), [](const Frame& f) {
      return f.dso.find("libunused.so") != std::string::npos;
    });
  }
  if (!library_sampled) {
    EXPECT_EQ(Occurrences(refused.err, library), 0u) << refused.err;
  }
}

}  // namespace
}  // namespace sample::e2e
