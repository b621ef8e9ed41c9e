#!/usr/bin/env python3
"""Prints report_bench.sh's raw timings as a markdown table.

Input rows (tab-separated): size view tool round wall rss_kb samples note.
Medians over rounds; ratios are perf/sample within a round, then their
median, so a ratio above 1 means sample-report is faster or smaller.
"""
import math
import statistics
import sys
from collections import defaultdict


def median(values):
    values = [v for v in values if not math.isnan(v)]
    return statistics.median(values) if values else math.nan


def fmt(value, spec, suffix=""):
    return "n/a" if math.isnan(value) else format(value, spec) + suffix


def size_key(size):
    """A number of samples, or a workload's name (CALL_GRAPH=cc1plus)."""
    return int(size) if size.isdigit() else size


def main(path, call_graph="fp"):
    rows = defaultdict(dict)  # (size, view) -> {(tool, round): (wall, rss)}
    samples = {}
    notes = {}
    order = []
    with open(path) as f:
        for line in f:
            size, view, tool, rnd, wall, rss, n, note = line.rstrip("\n").split("\t")
            key = (size_key(size), view)
            if key not in rows:
                order.append(key)
            rows[key][(tool, int(rnd))] = (float(wall), float(rss) / 1024)
            samples[(size_key(size), tool)] = int(n)
            if note:
                notes[key] = note

    if call_graph in ("dwarf", "cc1plus"):
        print("Recorded with --call-graph dwarf: every sample's user stack is unwound "
              "by the reporter.\n")
    print("| samples (perf / sample) | view | perf report s | sample-report s | speed-up "
          "(perf/sample) | sample-report ns per sample | sample-report samples/s | perf MB | "
          "sample MB | memory ratio (perf/sample) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for key in order:
        size, view = key
        runs = rows[key]
        rounds = sorted({r for (_, r) in runs})
        wall = {t: median([runs[(t, r)][0] for r in rounds if (t, r) in runs])
                for t in ("perf", "sample")}
        rss = {t: median([runs[(t, r)][1] for r in rounds if (t, r) in runs])
               for t in ("perf", "sample")}
        speed = median([runs[("perf", r)][0] / runs[("sample", r)][0] for r in rounds
                        if ("perf", r) in runs and ("sample", r) in runs
                        and runs[("sample", r)][0] > 0])
        memory = median([runs[("perf", r)][1] / runs[("sample", r)][1] for r in rounds
                         if ("perf", r) in runs and ("sample", r) in runs
                         and runs[("sample", r)][1] > 0])
        n_sample = samples.get((size, "sample"), 0)
        per_k = wall["sample"] / n_sample * 1e9 if n_sample else math.nan
        rate = n_sample / wall["sample"] if n_sample and wall["sample"] > 0 else math.nan
        print(f"| {samples.get((size, 'perf'), 0):,} / {n_sample:,} | {view} | "
              f"{fmt(wall['perf'], '.2f')} | {fmt(wall['sample'], '.2f')} | "
              f"{fmt(speed, '.1f', 'x')} | {fmt(per_k, '.0f')} | {fmt(rate, ',.0f')} | "
              f"{fmt(rss['perf'], '.0f')} | "
              f"{fmt(rss['sample'], '.0f')} | {fmt(memory, '.2f', 'x')} |")
    for key, note in notes.items():
        print(f"\n{key[1]} at {key[0]:,}: sample-report failed: {note}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
