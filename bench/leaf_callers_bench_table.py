#!/usr/bin/env python3
"""Turns the raw figures of bench/leaf_callers_bench.sh into a markdown table.

Input: a TSV of `round section config tool metric value` rows. Every figure is
the median over rounds of a per-round value; every ratio is the median over
rounds of the per-round ratio.
"""
import sys

from dwarf_record_bench_table import table
from record_bench_table import load


def main():
    d = load(sys.argv[1])
    rounds = sorted({r for series in d.values() for r in series})
    print("### `sample-record -g` (fp,leaf) vs `perf record -g`, `perf record -z -g` and "
          "`sample-record --call-graph fp`\n")
    table(d, "leaf", ("perf", "perfz", "g", "fp"),
          ("perf record -g", "perf record -z -g", "sample-record -g",
           "sample-record --call-graph fp"),
          (("g", "perf", "-g / perf"), ("g", "perfz", "-g / perf -z"),
           ("g", "fp", "-g / fp")))
    print(f"Rounds: {len(rounds)}. Figures are medians over rounds; ratios are medians of "
          "per-round ratios.")


if __name__ == "__main__":
    main()
