// Differential tests: files recorded by Linux perf, reported by perf report
// and by sample-report, must give the same rows with the same sample
// counts. Skipped, with the reason, where perf is not installed or cannot
// record here.
//
// The rules where the two honestly differ:
// - A function with several names (an alias: perf prefers the versioned
//   .dynsym name, "clock_gettime@@GLIBC_2.17", we the .symtab's
//   "__clock_gettime") is one row in both with a different name; rows of
//   binaries other than the workload and the kernel are therefore compared
//   by their (command, shared object) sums, the workload's and the
//   kernel's row by row.
// - Addresses neither names ("[unknown]", "0x...") are compared by sums
//   the same way.
// - Caller chains are compared from main to the sampled function, for the
//   three hottest functions of the workload: below main, perf names libc's
//   start-up frames by their inlined functions ("__libc_start_main_impl
//   (inlined)") where we name the symbol that holds them
//   ("__libc_start_main@@GLIBC_2.34").
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "tests/e2e/e2e_util.h"

namespace sample::e2e {
namespace {

const std::string kReport = SAMPLE_REPORT_PATH;
const std::string kSplit = WORKLOAD_SPLIT_PATH;
const std::string kUnwindNofp = WORKLOAD_UNWIND_NOFP_PATH;
const std::string kSharedInline = WORKLOAD_SHARED_INLINE_PATH;
// Rows of a flat --stdio table: event -> key (the sort columns joined by
// '|', the [.]/[k] marker dropped) -> samples. Both tools print
// "# Samples: N of event 'NAME'" (perf with two spaces) above each table.
struct Table {
  std::map<std::string, uint64_t> totals;                           // event -> samples
  std::map<std::string, std::map<std::string, uint64_t>> rows;      // event -> key -> samples
  std::map<std::string, std::vector<std::string>> chains;           // symbol -> folded chains
};

Table ParseTable(const std::string& text, size_t key_columns) {
  Table table;
  static const std::regex kSection(R"(^# Samples: (\d+)\s+of event '(.*)'$)");
  std::string event, last_symbol;
  for (const std::string& line : Lines(text)) {
    std::smatch m;
    if (std::regex_match(line, m, kSection)) {
      event = m[2];
      table.totals[event] = std::stoull(m[1]);
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    std::vector<std::string> tokens;
    for (std::string t; in >> t;) tokens.push_back(t);
    if (tokens.empty()) continue;
    if (tokens[0].back() != '%' || line[0] != ' ') {
      // A folded chain under the last row: "58.33% a;b;c", from main on.
      const size_t main = line.find(";main;");
      if (!last_symbol.empty() && tokens[0].back() == '%' && main != std::string::npos) {
        table.chains[last_symbol].push_back(tokens[0] + " " + line.substr(main + 1));
      }
      continue;
    }
    if (tokens.size() < 2 + key_columns) continue;
    std::string key;
    size_t i = 2;
    for (size_t k = 0; k < key_columns && i < tokens.size(); ++k) {
      if (tokens[i] == "[.]" || tokens[i] == "[k]") ++i;
      std::string column = tokens[i++];
      // The last column takes the rest of the line (names with spaces).
      if (k + 1 == key_columns) {
        for (; i < tokens.size(); ++i) column += " " + tokens[i];
      }
      key += (key.empty() ? "" : "|") + column;
    }
    table.rows[event][key] += std::stoull(tokens[1]);
    last_symbol = key;
  }
  return table;
}

// perf's pid column is "PID:COMMAND"; ours the PID.
Table PidsOnly(Table table) {
  for (auto& [event, rows] : table.rows) {
    std::map<std::string, uint64_t> pids;
    for (const auto& [key, n] : rows) pids[key.substr(0, key.find(':'))] += n;
    rows = std::move(pids);
  }
  return table;
}

bool Named(const std::string& symbol) {
  return symbol != "[unknown]" && symbol.rfind("0x", 0) != 0 &&
         symbol.find("[unknown]") == std::string::npos;
}

// The comparison the file comment describes, for --sort comm,dso,sym.
// At least `workload_functions` of the rows compared one by one are the
// workload's own (kernel rows come and go with a few samples).
void ExpectSameRows(const Table& perf, const Table& ours, const std::string& workload_dso,
                    size_t workload_functions) {
  EXPECT_EQ(perf.totals, ours.totals);
  for (const auto& [event, perf_rows] : perf.rows) {
    ASSERT_TRUE(ours.rows.count(event)) << "no section for event " << event;
    const auto& our_rows = ours.rows.at(event);
    std::map<std::string, uint64_t> perf_sums, our_sums;
    size_t compared = 0;
    for (const auto& [key, n] : perf_rows) {
      const std::string dso = key.substr(key.find('|') + 1, key.rfind('|') - key.find('|') - 1);
      const std::string symbol = key.substr(key.rfind('|') + 1);
      if ((dso == workload_dso || dso == "[kernel.kallsyms]") && Named(symbol)) {
        const auto it = our_rows.find(key);
        EXPECT_TRUE(it != our_rows.end() && it->second == n)
            << event << ": " << key << ": perf " << n << ", ours "
            << (it == our_rows.end() ? std::string("none") : std::to_string(it->second));
        if (dso == workload_dso) ++compared;
      } else {
        perf_sums[key.substr(0, key.rfind('|'))] += n;
      }
    }
    for (const auto& [key, n] : our_rows) {
      const std::string dso = key.substr(key.find('|') + 1, key.rfind('|') - key.find('|') - 1);
      const std::string symbol = key.substr(key.rfind('|') + 1);
      if (!((dso == workload_dso || dso == "[kernel.kallsyms]") && Named(symbol))) {
        our_sums[key.substr(0, key.rfind('|'))] += n;
      }
    }
    EXPECT_EQ(perf_sums, our_sums) << event << ": rows of other binaries, by (comm, dso)";
    EXPECT_GE(compared, workload_functions) << event << ": the workload's hot functions";
  }
}

class PerfDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!PerfUnusable().empty()) GTEST_SKIP() << PerfUnusable();
  }

  // perf record's options (before "--") and the command.
  std::string Record(const std::vector<std::string>& options,
                     const std::vector<std::string>& command, const std::string& name) {
    const std::string data = dir_ / name;
    std::vector<std::string> argv = {kPerf, "record", "-q", "--no-buildid-cache", "-o", data};
    argv.insert(argv.end(), options.begin(), options.end());
    argv.push_back("--");
    argv.insert(argv.end(), command.begin(), command.end());
    const RunResult r = RunTool(argv, dir_);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return data;
  }

  Table PerfTable(const std::string& data, const std::vector<std::string>& options,
                  size_t key_columns) {
    std::vector<std::string> argv = {kPerf, "report", "--stdio", "-i", data, "--no-children", "-n"};
    argv.insert(argv.end(), options.begin(), options.end());
    const RunResult r = RunTool(argv, dir_);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return ParseTable(r.out, key_columns);
  }

  Table OurTable(const std::string& data, const std::vector<std::string>& options,
                 size_t key_columns) {
    std::vector<std::string> argv = {kReport, "-i", data, "--no-children", "-n"};
    argv.insert(argv.end(), options.begin(), options.end());
    const RunResult r = RunTool(argv, dir_);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return ParseTable(r.out, key_columns);
  }

  // Flat rows by comm,dso,sym and by pid, then the caller chains of the
  // three hottest symbols (ours with `our_chain_options` added).
  // split and shared_inline have three hot functions, unwind-nofp's chain
  // mode one (hot_leaf).
  void CompareWithPerf(const std::string& data, const std::string& workload_dso, bool chains,
                       const std::vector<std::string>& our_chain_options = {}) {
    const std::vector<std::string> flat = {"--sort", "comm,dso,sym", "-g", "none"};
    ExpectSameRows(PerfTable(data, flat, 3), OurTable(data, flat, 3), workload_dso,
                   workload_dso == "unwind-nofp" ? 1 : 3);
    const std::vector<std::string> pid = {"--sort", "pid", "-g", "none"};
    const Table perf_pids = PidsOnly(PerfTable(data, pid, 1));
    const Table our_pids = OurTable(data, pid, 1);
    EXPECT_EQ(perf_pids.rows, our_pids.rows);
    if (!chains) return;
    const std::vector<std::string> folded = {"--sort", "dso,sym", "-g", "folded,0,caller"};
    const Table perf = PerfTable(data, folded, 2);
    std::vector<std::string> our_folded = folded;
    our_folded.insert(our_folded.end(), our_chain_options.begin(), our_chain_options.end());
    const Table ours = OurTable(data, our_folded, 2);
    ASSERT_FALSE(perf.rows.empty());
    // The three hottest functions of the workload, in the first event, of
    // those with 5% of its samples at least: a function with a stray sample
    // or two (main, _start) may have no chain through main to compare.
    std::vector<std::pair<uint64_t, std::string>> hottest;
    const uint64_t total = perf.totals.at(perf.rows.begin()->first);
    for (const auto& [key, n] : perf.rows.begin()->second) {
      if (key.rfind(workload_dso + "|", 0) == 0 && n * 20 >= total) hottest.emplace_back(n, key);
    }
    std::sort(hottest.rbegin(), hottest.rend());
    ASSERT_FALSE(hottest.empty());
    for (size_t i = 0; i < 3 && i < hottest.size(); ++i) {
      const std::string& key = hottest[i].second;
      auto perf_chains = perf.chains.count(key) ? perf.chains.at(key) : std::vector<std::string>{};
      auto our_chains = ours.chains.count(key) ? ours.chains.at(key) : std::vector<std::string>{};
      std::sort(perf_chains.begin(), perf_chains.end());
      std::sort(our_chains.begin(), our_chains.end());
      EXPECT_FALSE(perf_chains.empty()) << key;
      EXPECT_EQ(perf_chains, our_chains) << "callers of " << key;
    }
  }

  ScratchDir dir_;
};

TEST_F(PerfDataTest, FramePointerCallGraphs) {
  const std::string data = Record({"-e", "cpu-clock", "-F", "999", "-g"}, {kSplit, "0.6"}, "g.data");
  CompareWithPerf(data, "split", /*chains=*/true);
}

// Three functions sharing an inlined helper: rows are the functions holding
// the code, as perf's, not the helper. perf 6.1 leaves the inlined call out
// of its chains, so ours are compared with --no-inline.
TEST_F(PerfDataTest, RowsOfInlinedCodeAreTheFunctionsHoldingIt) {
  const std::string data =
      Record({"-e", "cpu-clock", "-F", "999", "-g"}, {kSharedInline, "0.6"}, "inline.data");
  CompareWithPerf(data, "shared_inline", /*chains=*/true, {"--no-inline"});
}

TEST_F(PerfDataTest, DwarfCallGraphs) {
  const std::string data = Record({"-e", "cpu-clock", "-F", "499", "--call-graph", "dwarf"},
                                  {kUnwindNofp, "chain", "0.6"}, "dwarf.data");
  CompareWithPerf(data, "unwind-nofp", /*chains=*/true);
}

TEST_F(PerfDataTest, CompressedRecords) {
  const std::string data =
      Record({"-e", "cpu-clock", "-F", "999", "-g", "-z"}, {kSplit, "0.6"}, "z.data");
  CompareWithPerf(data, "split", /*chains=*/true);
}

// Kernel symbols of a file recorded on the running kernel, perf's build-id
// cache empty: this host's table, looked up for the sampled addresses (the
// first report reads /proc/kallsyms and keeps it sorted in the per-boot
// cache, the second bisects the cache), naming the kernel rows as perf
// report names them.
TEST_F(PerfDataTest, KernelRowsFromTheRunningKernelsTable) {
  const std::string data = Record({"-e", "cpu-clock", "-F", "999"}, {kSplit, "0.6"}, "k.data");
  const std::string cache = dir_ / "cache";
  const std::vector<std::string> flat = {"--sort", "comm,dso,sym", "-g", "none"};
  std::vector<std::string> argv = {"/usr/bin/env",
                                   "PERF_BUILDID_DIR=" + (dir_ / "no perf cache"),
                                   "XDG_CACHE_HOME=" + cache,
                                   kReport,
                                   "-i",
                                   data,
                                   "--no-children",
                                   "-n"};
  argv.insert(argv.end(), flat.begin(), flat.end());
  const RunResult first = RunTool(argv, dir_);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const Table ours = ParseTable(first.out, 3);
  ASSERT_FALSE(ours.rows.empty()) << first.out;
  ExpectSameRows(PerfTable(data, flat, 3), ours, "split", 3);
  bool kernel_named = false;
  for (const auto& [key, n] : ours.rows.begin()->second) {
    kernel_named |= key.find("|[kernel.kallsyms]|") != std::string::npos &&
                    key.find("[unknown]") == std::string::npos;
  }
  if (kernel_named) {
    bool cached = false;
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(cache + "/sample", error)) {
      cached |= entry.path().filename().string().rfind("sorted-kallsyms-", 0) == 0;
    }
    EXPECT_TRUE(cached) << "no sorted kallsyms cache in " << cache;
  }
  const RunResult second = RunTool(argv, dir_);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(second.out, first.out);
}

TEST_F(PerfDataTest, TwoEvents) {
  const std::string data =
      Record({"-e", "cpu-clock,task-clock", "-F", "999"}, {kSplit, "0.6"}, "two.data");
  CompareWithPerf(data, "split", /*chains=*/false);
  const RunResult ours = RunTool({kReport, "-i", data, "--header-only"}, dir_);
  EXPECT_NE(ours.out.find("name = task-clock"), std::string::npos) << ours.out;
}

TEST_F(PerfDataTest, PipeMode) {
  const std::string data = dir_ / "pipe.data";
  const RunResult r = RunTool({"/bin/sh", "-c",
                               std::string(kPerf) + " record -q -e cpu-clock -F 999 -g -o - -- " +
                                   ShellQuote(kSplit) + " 0.6 > " + ShellQuote(data)},
                              dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  CompareWithPerf(data, "split", /*chains=*/true);
  const RunResult header = RunTool({kReport, "-i", data, "--header-only"}, dir_);
  EXPECT_NE(header.out.find("format         : perf.data (pipe mode)"), std::string::npos)
      << header.out;
  // Straight from perf through a pipe, as perf report -i - reads it.
  const RunResult piped = RunTool(
      {"/bin/sh", "-c",
       std::string(kPerf) + " record -q -e cpu-clock -F 999 -o - -- " + ShellQuote(kSplit) +
           " 0.3 | " + ShellQuote(kReport) + " -i - --no-children --sort sym"},
      dir_);
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_TRUE(OverheadOf(piped.out, "compute_sixty").has_value()) << piped.out;
}

// The same profile in every export: perf.data feeds the same loader.
TEST_F(PerfDataTest, ExportsWork) {
  const std::string data = Record({"-e", "cpu-clock", "-F", "999", "-g"}, {kSplit, "0.3"}, "x.data");
  const RunResult folded = RunTool({kReport, "-i", data, "--format", "folded"}, dir_);
  ASSERT_EQ(folded.exit_code, 0) << folded.err;
  EXPECT_NE(folded.out.find("split;__libc_start_call_main;main;run_round;compute_sixty "),
            std::string::npos)
      << folded.out;
  const std::string pprof = dir_ / "x.pb.gz";
  const RunResult exported = RunTool({kReport, "-i", data, "--format", "pprof", "-o", pprof}, dir_);
  EXPECT_EQ(exported.exit_code, 0) << exported.err;
}

}  // namespace
}  // namespace sample::e2e
