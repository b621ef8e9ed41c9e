#!/usr/bin/env python3
"""Turns the raw figures of bench/record_bench.sh into markdown tables.

Input: a TSV of `round section config tool metric value` rows and the number of
invocations in each fixed-cost loop. Every figure is the median over rounds of a
per-round value; every ratio is the median over rounds of the per-round ratio
sample / perf (so it can differ from the ratio of the two medians).
"""
import collections
import statistics
import sys


def load(path):
    data = collections.defaultdict(dict)  # (section, config, tool, metric) -> {round: value}
    with open(path) as f:
        for line in f:
            rnd, sec, cfg, tool, metric, value = line.rstrip("\n").split("\t")
            data[(sec, cfg, tool, metric)][int(rnd)] = float(value)
    return data


def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(v, digits):
    if v is None:
        return "n/a"
    return f"{v:,.{digits}f}"


def ratio_cell(rs):
    rs = [r for r in rs if r is not None]
    if not rs:
        return "n/a"
    return f"{statistics.median(rs):.2f}x"


def per_round_ratio(a, b):
    """sample/perf per round; None where perf's figure is 0 or missing."""
    out = []
    for r in a:
        if r in b and b[r] not in (None, 0) and a[r] is not None:
            out.append(a[r] / b[r])
    return out


def lost_cell(lost):
    """Median lost samples, then the total over rounds and how many rounds lost any."""
    if not lost:
        return "n/a"
    vals = [lost[r] for r in sorted(lost)]
    m = statistics.median(vals)
    hit = sum(1 for v in vals if v > 0)
    if hit == 0:
        return "0"
    return f"{m:,.0f} (sum {sum(vals):,.0f}; {hit}/{len(vals)} rounds)"


def lost_ratio_cell(sample, perf):
    """Lost samples, summed over rounds: sample's total / perf's total."""
    s_total, p_total = sum(sample.values()), sum(perf.values())
    if s_total == 0 and p_total == 0:
        return "both 0"
    if p_total == 0:
        return "perf 0, sample >0"
    if s_total == 0:
        return "sample 0"
    return f"{s_total / p_total:.2f}x (sums)"


def max_ratio_cell(sample, perf):
    """Worst round against worst round."""
    s_max, p_max = max(sample.values(), default=0), max(perf.values(), default=0)
    if s_max == 0 and p_max == 0:
        return "both 0"
    if p_max == 0:
        return "perf 0, sample >0"
    if s_max == 0:
        return "sample 0"
    return f"{s_max / p_max:.2f}x (worst)"


def main():
    raw, reps = sys.argv[1], int(sys.argv[2])
    d = load(raw)
    rounds = sorted({r for series in d.values() for r in series})

    def series(sec, cfg, tool, metric):
        return d.get((sec, cfg, tool, metric), {})

    # ---- fixed cost and machine-wide synthesis -------------------------------
    def fixed_table(sec, cfg, title, perf_name, nobpf_name, sample_name):
        print(f"### {title}\n")
        print(f"| per invocation | {perf_name} | {nobpf_name} | {sample_name} "
              f"| sample / perf | sample / perf --no-bpf-event |")
        print("|---|---:|---:|---:|---:|---:|")
        for metric, label in (("loop_cpu", "CPU s (user+sys)"), ("loop_wall", "wall s")):
            base = series(sec, cfg, "base", metric)
            vals = {}
            for tool in ("perf", "perfnobpf", "sample"):
                s = series(sec, cfg, tool, metric)
                vals[tool] = {r: (s[r] - base.get(r, 0.0)) / reps for r in s}
            cells = [fmt(med(vals[t].values()), 4) for t in ("perf", "perfnobpf", "sample")]
            r1 = ratio_cell(per_round_ratio(vals["sample"], vals["perf"]))
            r2 = ratio_cell(per_round_ratio(vals["sample"], vals["perfnobpf"]))
            print(f"| {label} | " + " | ".join(cells) + f" | {r1} | {r2} |")
        print()

    fixed_table("fixed", "true", "Fixed cost: `-e cpu-clock -o X -- /bin/true`",
                "perf record", "perf record --no-bpf-event", "sample-record")
    print("Loop of the command minus a loop of `/bin/true` alone, divided by the "
          "number of invocations.\n")
    fixed_table("synth", "a", "Machine-wide start-up + /proc synthesis: "
                "perf `-a -e cpu-clock -- sleep 0.01`, sample `-a -e cpu-clock --duration 0.01`",
                "perf record -a", "perf record -a --no-bpf-event", "sample-record -a")
    print("Minus a loop of `sleep 0.01` alone (for sample-record this subtracts "
          "the 0.01 s it waits itself).\n")

    # ---- workloads ----------------------------------------------------------
    configs = []
    for (sec, cfg, tool, metric) in d:
        if sec == "wl" and "|" in cfg and cfg not in configs:
            configs.append(cfg)

    def cfg_key(c):
        wl, opts = c.split("|")
        f = int(opts.split()[1])
        return (wl != "split", "-m" in opts, f)

    configs.sort(key=cfg_key)
    tools = ("perf", "perfz", "sample")
    print("### Workloads (perf with --no-bpf-event; -e cpu-clock everywhere)\n")
    print("| workload, options | figure | perf record | perf record -z | sample-record "
          "| sample / perf | sample / perf -z |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for cfg in configs:
        wl, opts = cfg.split("|")
        alone_cpu = series("wl", wl, "alone", "cpu")
        alone_wall = series("wl", wl, "alone", "wall")
        alone_work = series("wl", wl, "alone", "work")
        per = {}
        for tool in tools:
            g = lambda m: series("wl", cfg, tool, m)  # noqa: E731
            samples, lost, bytes_ = g("samples"), g("lost"), g("bytes")
            outer_cpu, inner_cpu, inner_wall = g("outer_cpu"), g("inner_cpu"), g("inner_wall")
            work = g("work")
            per[tool] = {
                "samples": samples,
                "slowdown": {r: inner_wall[r] / alone_wall[r] for r in inner_wall
                             if alone_wall.get(r)},
                "workslow": {r: (inner_wall[r] / work[r]) / (alone_wall[r] / alone_work[r])
                             for r in work if work[r] and alone_work.get(r) and alone_wall.get(r)},
                "cpu": {r: outer_cpu[r] - alone_cpu[r] for r in outer_cpu if r in alone_cpu},
                "cpu1k": {r: (outer_cpu[r] - alone_cpu[r]) / (samples[r] / 1000) * 1000
                          for r in outer_cpu if samples.get(r) and r in alone_cpu},
                "proc1k": {r: (outer_cpu[r] - inner_cpu[r]) / (samples[r] / 1000) * 1000
                           for r in outer_cpu if samples.get(r)},
                "bps": {r: bytes_[r] / samples[r] for r in bytes_ if samples.get(r)},
                "lost": lost,
                "lostmax": {r: 100.0 * lost[r] / (samples[r] + lost[r]) for r in lost
                            if samples.get(r, 0) + lost[r] > 0},
            }
        rows = (
            ("samples", "samples", 0),
            ("slowdown", "target slowdown (wall under recorder / alone)", 3),
            ("workslow", "target slowdown (wall per unit of work, under recorder / alone)", 3),
            ("cpu", "recorder CPU s (total - workload alone)", 3),
            ("cpu1k", "recorder CPU ms / 1k samples (total - workload alone)", 2),
            ("proc1k", "recorder process CPU ms / 1k samples (total - workload under it)", 2),
            ("bps", "bytes / sample", 1),
            ("lost", "lost samples: median (sum over rounds; rounds with losses)", 0),
            ("lostmax", "lost %, worst round", 3),
        )
        first = True
        for key, label, digits in rows:
            if not any(per[t][key] for t in tools):
                continue
            if key == "lost":
                cells = [lost_cell(per[t][key]) for t in tools]
            elif key == "lostmax":
                cells = [fmt(max(per[t][key].values()) if per[t][key] else None, digits)
                         for t in tools]
            else:
                cells = [fmt(med(per[t][key].values()), digits) for t in tools]
            if key == "lost":
                r1 = lost_ratio_cell(per["sample"][key], per["perf"][key])
                r2 = lost_ratio_cell(per["sample"][key], per["perfz"][key])
            elif key == "lostmax":
                r1 = max_ratio_cell(per["sample"][key], per["perf"][key])
                r2 = max_ratio_cell(per["sample"][key], per["perfz"][key])
            else:
                r1 = ratio_cell(per_round_ratio(per["sample"][key], per["perf"][key]))
                r2 = ratio_cell(per_round_ratio(per["sample"][key], per["perfz"][key]))
            name = f"**{wl}** {opts}" if first else ""
            first = False
            print(f"| {name} | {label} | " + " | ".join(cells) + f" | {r1} | {r2} |")
    print()
    for wl in ("split", "threads"):
        w = series("wl", wl, "alone", "wall")
        c = series("wl", wl, "alone", "cpu")
        if w:
            print(f"- `{wl}` alone: wall {fmt(med(w.values()), 2)} s, "
                  f"CPU {fmt(med(c.values()), 2)} s (medians)")
    print()

    # ---- machine-wide -------------------------------------------------------
    sys_cfgs = sorted({cfg for (sec, cfg, _t, _m) in d if sec == "sys"})
    for cfg in sys_cfgs:
        print(f"### Machine-wide: `{cfg}` (perf `-- sleep N`, sample `--duration N`)\n")
        print("| figure | perf record | perf record -z | sample-record "
              "| sample / perf | sample / perf -z |")
        print("|---|---:|---:|---:|---:|---:|")
        per = {}
        for tool in tools:
            g = lambda m: series("sys", cfg, tool, m)  # noqa: E731
            samples, lost, bytes_, cpu, wall = (g("samples"), g("lost"), g("bytes"),
                                                g("outer_cpu"), g("outer_wall"))
            per[tool] = {
                "samples": samples,
                "bps": {r: bytes_[r] / samples[r] for r in bytes_ if samples.get(r)},
                "lost": lost,
                "cpu": cpu,
                "cpu1k": {r: cpu[r] / (samples[r] / 1000) * 1000 for r in cpu if samples.get(r)},
                "wall": wall,
            }
        for key, label, digits in (
            ("samples", "samples", 0),
            ("bps", "bytes / sample", 1),
            ("lost", "lost samples", 0),
            ("cpu", "recorder CPU s (whole command)", 3),
            ("cpu1k", "recorder CPU ms / 1k samples", 2),
            ("wall", "recorder wall s", 2),
        ):
            if key == "lost":
                cells = [lost_cell(per[t][key]) for t in tools]
            else:
                cells = [fmt(med(per[t][key].values()), digits) for t in tools]
            if key == "lost":
                r1 = lost_ratio_cell(per["sample"][key], per["perf"][key])
                r2 = lost_ratio_cell(per["sample"][key], per["perfz"][key])
            else:
                r1 = ratio_cell(per_round_ratio(per["sample"][key], per["perf"][key]))
                r2 = ratio_cell(per_round_ratio(per["sample"][key], per["perfz"][key]))
            print(f"| {label} | " + " | ".join(cells) + f" | {r1} | {r2} |")
        print()
    print(f"Rounds: {len(rounds)}. Figures are medians over rounds; ratios are medians "
          "of per-round ratios. CPU times come from /usr/bin/time (10 ms resolution).")


if __name__ == "__main__":
    main()
