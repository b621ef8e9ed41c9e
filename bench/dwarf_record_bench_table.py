#!/usr/bin/env python3
"""Turns the raw figures of bench/dwarf_record_bench.sh into markdown tables.

Input: a TSV of `round section config tool metric value` rows. Every figure is
the median over rounds of a per-round value; every ratio is the median over
rounds of the per-round ratio (so it can differ from the ratio of the medians).
"""
import sys

from record_bench_table import (fmt, load, lost_cell, lost_ratio_cell, med, per_round_ratio,
                                ratio_cell)


def figures(d, sec, cfg, tool):
    g = lambda m: d.get((sec, cfg, tool, m), {})  # noqa: E731
    samples, lost, bytes_, raw = g("samples"), g("lost"), g("bytes"), g("raw_bytes")
    outer_cpu, inner_cpu = g("outer_cpu"), g("inner_cpu")
    return {
        "samples": samples,
        "bps": {r: bytes_[r] / samples[r] for r in bytes_ if samples.get(r)},
        "raw": {r: raw[r] / samples[r] for r in raw if samples.get(r)},
        "cpu": {r: outer_cpu[r] - inner_cpu[r] for r in outer_cpu if r in inner_cpu},
        "cpu1k": {r: (outer_cpu[r] - inner_cpu[r]) / (samples[r] / 1000) * 1000
                  for r in outer_cpu if samples.get(r) and r in inner_cpu},
        "lost": lost,
    }


ROWS = (
    ("samples", "samples", 0),
    ("bps", "bytes / sample", 1),
    ("raw", "bytes / sample before compression", 1),
    ("cpu", "recorder CPU s (recorder tree - workload)", 4),
    ("cpu1k", "recorder CPU ms / 1k samples", 2),
    ("lost", "lost samples: median (sum over rounds; rounds with losses)", 0),
)


def configs(d, sec):
    out = []
    for (s, cfg, _tool, _metric) in d:
        if s == sec and cfg not in out:
            out.append(cfg)
    modes = ["chain", "threads", "qsort"]
    return sorted(out, key=lambda c: (modes.index(c.split("|")[0]) if c.split("|")[0] in modes
                                      else len(modes), c.split("|")[0], int(c.split()[-1])))


def table(d, sec, tools, names, ratios):
    """One row group per configuration; `ratios` are (tool, base tool, heading)."""
    print("| workload, options | figure | " + " | ".join(names) + " | "
          + " | ".join(h for _t, _b, h in ratios) + " |")
    print("|---|---|" + "---:|" * (len(tools) + len(ratios)))
    for cfg in configs(d, sec):
        wl, opts = cfg.split("|")
        per = {t: figures(d, sec, cfg, t) for t in tools}
        first = True
        for key, label, digits in ROWS:
            if key == "lost":
                cells = [lost_cell(per[t][key]) for t in tools]
                cells += [lost_ratio_cell(per[t][key], per[b][key]) for t, b, _h in ratios]
            else:
                cells = [fmt(med(per[t][key].values()), digits) for t in tools]
                cells += [ratio_cell(per_round_ratio(per[t][key], per[b][key]))
                          for t, b, _h in ratios]
            name = f"**{wl}** {opts}" if first else ""
            first = False
            print(f"| {name} | {label} | " + " | ".join(cells) + " |")
    print()


def main():
    d = load(sys.argv[1])
    rounds = sorted({r for series in d.values() for r in series})
    print("### `--call-graph dwarf` (8192-byte stacks): unwind-nofp, perf with "
          "--no-bpf-event\n")
    table(d, "dwarf", ("perf", "perfz", "sample"),
          ("perf record", "perf record -z", "sample-record"),
          (("sample", "perf", "sample / perf"), ("sample", "perfz", "sample / perf -z")))
    print("### sample-record `-g` vs `--call-graph fp,leaf` (512-byte stacks): unwind-fp\n")
    table(d, "leaf", ("g", "leaf"), ("-g", "--call-graph fp,leaf"),
          (("leaf", "g", "fp,leaf / -g"),))
    print(f"Rounds: {len(rounds)}. Figures are medians over rounds; ratios are medians "
          "of per-round ratios. CPU times come from wait4 (microseconds).")


if __name__ == "__main__":
    main()
