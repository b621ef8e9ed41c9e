// -d: page faults of the faults workload (tests/workloads/faults.c), whose
// data addresses are known by construction: 3000 in anonymous memory
// (write_anon), 2000 in a mapped file (read_file), 1000 in the global
// fault_table of its own data segment (write_table). Rows by data object
// and symbol as perf's --mem-mode report gives them, on perf's own file and
// on ours.
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/e2e/e2e_util.h"

namespace sample::e2e {
namespace {

const std::string kRecord = SAMPLE_RECORD_PATH;
const std::string kReport = SAMPLE_REPORT_PATH;
const std::string kFaults = WORKLOAD_FAULTS_PATH;

// "DATA_OBJECT|SYMBOL" -> samples, from a --stdio table printed with -n
// and --sort dso_daddr,sym ("  49.59%  3000  anon  [.] write_anon").
// perf abbreviates its "# Samples:" line ("6K"): the total is the rows' sum.
struct Rows {
  uint64_t total = 0;
  std::map<std::string, uint64_t> rows;
};

Rows ParseRows(const std::string& text) {
  Rows out;
  for (const std::string& line : Lines(text)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    std::string share, samples, object, level, symbol;
    if (!(in >> share >> samples >> object >> level >> symbol) || share.back() != '%') continue;
    out.rows[object + "|" + symbol] += std::stoull(samples);
    out.total += std::stoull(samples);
  }
  return out;
}

// The workload's three rows and what they must hold, with a margin for the
// faults the C library's start-up makes in the same pages.
struct Expected {
  const char* key;
  uint64_t low, high;
};
constexpr Expected kWorkloadRows[] = {{"anon|write_anon", 3000, 3010},
                                      {"mapped|read_file", 2000, 2005},
                                      {"faults|write_table", 990, 1001}};

void ExpectWorkloadRows(const Rows& rows) {
  for (const Expected& e : kWorkloadRows) {
    const auto it = rows.rows.find(e.key);
    ASSERT_NE(it, rows.rows.end()) << e.key;
    EXPECT_GE(it->second, e.low) << e.key;
    EXPECT_LE(it->second, e.high) << e.key;
  }
}

class DataAddressTest : public ::testing::Test {
 protected:
  std::string Report(const std::string& data, std::vector<std::string> args) {
    args.insert(args.begin(), {kReport, "-i", data});
    const RunResult r = RunTool(args, dir_);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  }
  std::string RecordOurs(const std::vector<std::string>& options = {}) {
    const std::string data = dir_ / "ours.data";
    std::vector<std::string> argv = {kRecord, "-q", "-e", "page-faults", "-c", "1", "-d",
                                     "-o", data};
    argv.insert(argv.end(), options.begin(), options.end());
    argv.insert(argv.end(), {"--", kFaults, dir_ / "mapped"});
    const RunResult r = RunTool(argv, dir_);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return data;
  }
  ScratchDir dir_;
};

TEST_F(DataAddressTest, RowsByDataObjectAsConstructed) {
  const std::string data = RecordOurs();
  const Rows rows = ParseRows(Report(data, {"--stdio", "--sort", "dso_daddr,sym", "-n"}));
  ExpectWorkloadRows(rows);
  // Every fault has a data address: the three rows are 99% of them.
  uint64_t workload = 0;
  for (const Expected& e : kWorkloadRows) workload += rows.rows.count(e.key) ? rows.rows.at(e.key) : 0;
  EXPECT_GE(workload * 100, rows.total * 98) << "of " << rows.total;
}

TEST_F(DataAddressTest, SymbolsOfDataAddresses) {
  const std::string data = RecordOurs();
  // One row per address, as perf's: fault_table's pages, each at its offset.
  const std::string text = Report(data, {"--stdio", "--sort", "symbol_daddr", "-n"});
  uint64_t table = 0;
  for (const std::string& line : Lines(text)) {
    std::smatch m;
    if (std::regex_search(line, m, std::regex(R"(^\s+\S+%\s+(\d+)\s+\[\.\] fault_table\+0x[0-9a-f]+000$)"))) {
      table += std::stoull(m[1]);
    }
  }
  EXPECT_GE(table, 990u) << text.substr(0, 2000);
  EXPECT_LE(table, 1001u);
  // JSON names the variable, its offset, the address and its mapping.
  const std::string json = Report(data, {"--format", "json", "--sort", "dso_daddr,symbol_daddr"});
  EXPECT_NE(json.find("\"data_symbol\": \"fault_table\""), std::string::npos)
      << json.substr(0, 2000);
  EXPECT_NE(json.find("\"data_dso\": \"" + kFaults + "\""), std::string::npos);
  EXPECT_NE(json.find("\"data_dso\": \"//anon\""), std::string::npos);
  // pprof: the data object and the variable as sample labels (their keys
  // and values are in the string table only when a label uses them).
  Report(data, {"--format", "pprof", "-o", dir_ / "p.pb.gz"});
  const RunResult pprof = RunTool({"/bin/sh", "-c", "gzip -dc " + ShellQuote(dir_ / "p.pb.gz")}, dir_);
  ASSERT_EQ(pprof.exit_code, 0) << pprof.err;
  for (const char* text : {"data_object", "data_symbol", "fault_table", "//anon"}) {
    EXPECT_NE(pprof.out.find(text), std::string::npos) << text;
  }
}

TEST_F(DataAddressTest, PhysicalAddressesAndPageSizesAreRecorded) {
  const std::string data = RecordOurs({"--phys-data", "--data-page-size"});
  const std::string header = Report(data, {"--header-only"});
  EXPECT_NE(header.find("ADDR|"), std::string::npos) << header;
  EXPECT_NE(header.find("PHYS_ADDR"), std::string::npos) << header;
  EXPECT_NE(header.find("DATA_PAGE_SIZE"), std::string::npos) << header;
  EXPECT_NE(header.find("mmap_data = 1"), std::string::npos) << header;
  ExpectWorkloadRows(ParseRows(Report(data, {"--stdio", "--sort", "dso_daddr,sym", "-n"})));
}

// -c 20 keeps every 20th fault, each standing for 20 (the kernel writes
// every hit of a page-fault event whose samples carry the period: they
// leave it out, as perf's do).
TEST_F(DataAddressTest, EveryNthFaultStandsForN) {
  const std::string data = dir_ / "c20.data";
  const RunResult rec = RunTool({kRecord, "-q", "-e", "page-faults", "-c", "20", "-d", "-o", data,
                                 "--", kFaults, dir_ / "mapped"},
                                dir_);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  const std::string text = Report(data, {"--stdio", "--sort", "dso_daddr,sym", "-n"});
  const Rows rows = ParseRows(text);
  EXPECT_GE(rows.total, 295u) << text.substr(0, 1500);
  EXPECT_LE(rows.total, 310u);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(text, m, std::regex(R"(# Event count \(approx\.\): (\d+))")));
  EXPECT_EQ(std::stoull(m[1]), rows.total * 20);
  ASSERT_TRUE(rows.rows.count("anon|write_anon") && rows.rows.count("mapped|read_file"));
  EXPECT_NEAR(100.0 * rows.rows.at("anon|write_anon") / rows.total, 49.6, 2.0);
  EXPECT_NEAR(100.0 * rows.rows.at("mapped|read_file") / rows.total, 33.1, 2.0);
}

TEST_F(DataAddressTest, RefusedWithoutDataAddresses) {
  const std::string data = dir_ / "plain.data";
  ASSERT_EQ(RunTool({kRecord, "-q", "-e", "page-faults", "-c", "1", "-o", data, "--", kFaults,
                     dir_ / "mapped"},
                    dir_)
                .exit_code,
            0);
  for (const char* key : {"dso_daddr", "symbol_daddr"}) {
    const RunResult r = RunTool({kReport, "-i", data, "--sort", key}, dir_);
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.err.find(std::string("--sort ") + key), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("-d"), std::string::npos) << r.err;
  }
  const RunResult phys = RunTool({kRecord, "--phys-data", "--", kFaults, dir_ / "mapped"}, dir_);
  EXPECT_EQ(phys.exit_code, 2);
  EXPECT_NE(phys.err.find("--phys-data is an option of -d"), std::string::npos) << phys.err;
}

TEST_F(DataAddressTest, DiffByDataObject) {
  const std::string data = RecordOurs();
  const RunResult r = RunTool(
      {kReport, "--diff", data, data, "--sort", "dso_daddr,dso,sym", "--format", "json"}, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"data_dso\": \"mapped\""), std::string::npos) << r.out.substr(0, 2000);
}

// perf's own -d recording reported by perf report --mem-mode and by us:
// the same rows with the same counts; and our recording's rows have the
// same shares as perf's.
TEST_F(DataAddressTest, SameRowsAsPerf) {
  if (!PerfUnusable().empty()) GTEST_SKIP() << PerfUnusable();
  const std::string perf_data = dir_ / "perf.data";
  const RunResult rec = RunTool({kPerf, "record", "-q", "--no-buildid-cache", "-e", "page-faults",
                                 "-c", "1", "-d", "-o", perf_data, "--", kFaults, dir_ / "mapped"},
                                dir_);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  const RunResult perf = RunTool({kPerf, "report", "--stdio", "-i", perf_data, "--mem-mode",
                                  "--sort", "dso_daddr,sym", "-n", "--no-children"},
                                 dir_);
  ASSERT_EQ(perf.exit_code, 0) << perf.err;
  const Rows perf_rows = ParseRows(perf.out);
  const Rows ours_on_perf =
      ParseRows(Report(perf_data, {"--stdio", "--sort", "dso_daddr,sym", "-n"}));
  EXPECT_EQ(perf_rows.total, ours_on_perf.total);
  ExpectWorkloadRows(perf_rows);
  for (const Expected& e : kWorkloadRows) {
    EXPECT_EQ(perf_rows.rows.count(e.key) ? perf_rows.rows.at(e.key) : 0,
              ours_on_perf.rows.count(e.key) ? ours_on_perf.rows.at(e.key) : 0)
        << e.key << "\nperf:\n"
        << perf.out.substr(0, 1500);
  }
  // Every row of perf's with 1% of the faults or more is ours, as large.
  for (const auto& [key, n] : perf_rows.rows) {
    if (n * 100 < perf_rows.total) continue;
    EXPECT_EQ(ours_on_perf.rows.count(key) ? ours_on_perf.rows.at(key) : 0, n) << key;
  }
  const Rows ours = ParseRows(Report(RecordOurs(), {"--stdio", "--sort", "dso_daddr,sym", "-n"}));
  for (const Expected& e : kWorkloadRows) {
    const double perf_share = 100.0 * perf_rows.rows.at(e.key) / perf_rows.total;
    const double our_share = 100.0 * ours.rows.at(e.key) / ours.total;
    EXPECT_NEAR(perf_share, our_share, 0.5) << e.key;
  }
}

}  // namespace
}  // namespace sample::e2e
