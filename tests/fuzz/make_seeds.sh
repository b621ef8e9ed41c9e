#!/usr/bin/env bash
# Rewrites the seeds of the fuzz corpus (tests/fuzz/corpus/NAME/seed-*):
# synthetic inputs from fuzz_make_seeds, the ELF fixtures, and a short
# recording of the split workload made here. Crash reproducers
# (corpus/NAME/crash-*) are never touched. Review `git status` afterwards.
set -euo pipefail
cd "$(dirname "$0")/../.."
corpus=tests/fuzz/corpus
ninja -C build tests/fuzz/fuzz_make_seeds record/sample-record tests/workloads/split \
  tests/workloads/hits tests/workloads/alloc tests/workloads/faults \
  tests/workloads/unwind-nofp tests/workloads/jitdump \
  tests/fixtures/fixture_prog tests/fixtures/fixture_elf32 tests/fixtures/libfixture_lib.so \
  tests/fixtures/fixture_symbolizer tests/fixtures/fixture_symbolizer.debug \
  tests/fixtures/fixture_symbolizer_stripped_all >/dev/null
# sample_file's and report's seeds are remade whole (fuzz_make_seeds adds some).
rm -f "$corpus"/sample_file/seed-* "$corpus"/report/seed-*
build/tests/fuzz/fuzz_make_seeds "$corpus"

fixtures=build/tests/fixtures
byte() { printf "\\$(printf '%03o' "$1")"; }
mkdir -p "$corpus/elf" "$corpus/dwarf" "$corpus/sample_file" "$corpus/report" "$corpus/perf_data"
for f in fixture_prog fixture_elf32 libfixture_lib.so fixture_symbolizer.debug \
  fixture_symbolizer_stripped_all; do
  cp "$fixtures/$f" "$corpus/elf/seed-$f"
done
# dwarf's input starts with four u64 addresses to look up.
for f in fixture_symbolizer fixture_symbolizer.debug; do
  { head -c 32 /dev/zero; cat "$fixtures/$f"; } >"$corpus/dwarf/seed-$f"
done

# disasm's input: u8 flags (bit 0: i386), u64 address (here 0), the code:
# the fixtures' compiled .text.
for f in fixture_prog:0 fixture_elf32:1; do
  objcopy -O binary --only-section=.text "$fixtures/${f%:*}" "$corpus/disasm/text.tmp"
  { byte "${f#*:}"; head -c 8 /dev/zero; cat "$corpus/disasm/text.tmp"; } \
    >"$corpus/disasm/seed-${f%:*}-text"
  rm "$corpus/disasm/text.tmp"
done

# A short recording with call chains (zstd, and stored uncompressed so that
# mutations reach the records), and the golden recording cut short.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
build/record/sample-record -q -g -e cpu-clock -F 500 -o "$tmp/split" -- \
  build/tests/workloads/split 0.04
build/record/sample-record -q -g -z 0 -e cpu-clock -F 500 -o "$tmp/split-raw" -- \
  build/tests/workloads/split 0.02
# With user stack copies, so the reporter's unwinding gets fuzzed too.
build/record/sample-record -q --call-graph dwarf,1024 -z 0 -e cpu-clock -F 500 \
  -o "$tmp/unwind-raw" -- build/tests/workloads/unwind-nofp chain 0.02
# A counting run's file: events, metadata and a kCounts chunk with intervals.
build/record/sample-record --stat -x , -I 20 -e task-clock,page-faults -o "$tmp/counts" -- \
  build/tests/workloads/split 0.05 2>/dev/null
# Sampling switched on after 10 ms: kControl chunks (-D writes its switches).
build/record/sample-record -q -D 10 -e cpu-clock -F 500 -o "$tmp/delayed" -- \
  build/tests/workloads/split 0.05
# Tracepoint samples with raw payloads, a kTraceFormats chunk and a filter
# (skipped where the tracepoint cannot be recorded).
trace=
if build/record/sample-record -q -z 0 -e syscalls:sys_enter_write --filter 'count >= 100' \
  -o "$tmp/trace" -- build/tests/workloads/hits sizes 3 2 2>/dev/null; then
  trace=trace
fi
# --alloc's calls (alloc: tracepoints paired into the alloc pseudo-events;
# skipped where uprobes cannot be defined).
alloc=
if build/record/sample-record -q --alloc --no-embed -z 0 -o "$tmp/alloc" -- \
  build/tests/workloads/alloc 5 2>/dev/null; then
  alloc=alloc
fi
# Page faults with their data addresses (-d): data mappings in the sideband,
# each sample's address placed and named for --sort dso_daddr,symbol_daddr.
build/record/sample-record -q -d --no-embed -z 0 -e page-faults -c 20 -o "$tmp/data" -- \
  build/tests/workloads/faults "$tmp/mapped"
# A fake JIT's jitdump (kJitDump chunks: code loads, a move, debug info).
build/record/sample-record -q -g -z 0 -e cpu-clock -F 500 -o "$tmp/jitdump" -- \
  build/tests/workloads/jitdump 0.04 "$tmp" >/dev/null
cp tests/golden/truncated.data "$tmp/truncated"
# sample_file's input starts with flags (bit 0: fix checksums), report's
# with a view selector (see report_fuzz.cc).
for f in split split-raw truncated counts delayed $trace; do
  for flags in 0 1; do
    { byte "$flags"; cat "$tmp/$f"; } >"$corpus/sample_file/seed-$f-$flags"
  done
done
for selector in 1 130; do
  { byte "$selector"; cat "$tmp/counts"; } >"$corpus/report/seed-counts-view$selector"
done
# Header and --script (selectors 1, 3: the windows and the switch lines).
for selector in 1 3 130; do
  { byte "$selector"; cat "$tmp/delayed"; } >"$corpus/report/seed-delayed-view$selector"
done
for selector in 0 1 2 3 4 5 6 7 68 131 196; do
  { byte "$selector"; cat "$tmp/split"; } >"$corpus/report/seed-split-view$selector"
done
# Exports: folded, svg, html; pprof, speedscope, gecko (bit 7), icicle and
# period weights on some.
for selector in 8 16 24 25 136 144 146 152; do
  { byte "$selector"; cat "$tmp/split"; } >"$corpus/report/seed-split-export$selector"
done
for selector in 32 35 36; do
  { byte "$selector"; cat "$tmp/split-raw"; } >"$corpus/report/seed-split-raw-view$selector"
done
for selector in 0 8 64 96; do
  { byte "$selector"; cat "$tmp/jitdump"; } >"$corpus/report/seed-jitdump-view$selector"
done
if [ -n "$alloc" ]; then
  # Text and pprof.
  for selector in 0 136; do
    { byte "$selector"; cat "$tmp/alloc"; } >"$corpus/report/seed-alloc-view$selector"
  done
fi
# Rows by data object and address (6; 38 with checksums fixed, 134 in JSON),
# pprof's labels (136).
for selector in 6 38 134 136; do
  { byte "$selector"; cat "$tmp/data"; } >"$corpus/report/seed-data-view$selector"
done
for selector in 32 34 36; do
  { byte "$selector"; cat "$tmp/unwind-raw"; } >"$corpus/report/seed-unwind-raw-view$selector"
done
if [ -n "$trace" ]; then
  # Header, script in text and JSON, with and without checksum fixing.
  for selector in 1 3 35 131 163; do
    { byte "$selector"; cat "$tmp/trace"; } >"$corpus/report/seed-trace-view$selector"
  done
fi
# perf.data written by Linux perf itself, when it is installed: file mode
# with call chains, -z, and pipe mode; for the perf_data target and, after
# a view selector, the report target.
if command -v perf >/dev/null && perf record -q -o "$tmp/perf-g" -e cpu-clock -g -F 500 -- \
  build/tests/workloads/split 0.03 2>/dev/null; then
  perf record -q -o "$tmp/perf-z" -z -e cpu-clock -F 500 -- build/tests/workloads/split 0.03 2>/dev/null
  perf record -q -o - -e cpu-clock -g -F 500 -- build/tests/workloads/split 0.03 \
    >"$tmp/perf-pipe" 2>/dev/null
  for f in perf-g perf-z perf-pipe; do
    cp "$tmp/$f" "$corpus/perf_data/seed-$f"
    for selector in 0 1 4; do
      { byte "$selector"; cat "$tmp/$f"; } >"$corpus/report/seed-$f-view$selector"
    done
  done
fi
chmod 644 "$corpus"/*/seed-*
echo "seeds written under $corpus"
