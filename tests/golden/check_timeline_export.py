#!/usr/bin/env python3
"""Structural checks of sample-report's timeline exports.

  check_timeline_export.py speedscope|gecko FILE [--samples N] [--self-test]

speedscope: the fields speedscope's file-format-schema.json requires
($schema, shared.frames with names, profiles of type "sampled" with name,
unit, startValue <= endValue, samples and weights of equal length), frame
indexes in range, positive weights that fit between startValue and
endValue for time units, frames numbered in order of first use. Empty
stacks are gaps (time a thread did not run) and are not counted as samples.

gecko: meta (version, startTime, interval, categories with colours,
presymbolicated), and per thread the tables the Firefox Profiler reads:
rows as wide as their schema, stack prefixes pointing to earlier rows,
frames, strings and categories in range, sample times non-decreasing.

--samples N: the file holds N samples in all (the text report's count).
--self-test: also break the file in ways each check must catch and fail
if one is not caught (so the checks themselves can fail).
Exits 0 when every check passes, 1 with the first failure otherwise.
"""
import copy
import json
import sys

SPEEDSCOPE_SCHEMA = "https://www.speedscope.app/file-format-schema.json"
UNITS = {"none", "nanoseconds", "microseconds", "milliseconds", "seconds", "bytes"}
TIME_UNITS = UNITS - {"none", "bytes"}
# The colours the Firefox Profiler draws categories with.
COLOURS = {"transparent", "purple", "green", "orange", "yellow", "lightblue", "grey", "blue",
           "brown", "magenta", "red", "lightgreen", "darkgray"}


class Bad(Exception):
    pass


def need(ok, what):
    if not ok:
        raise Bad(what)


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def is_num(v):
    return (isinstance(v, (int, float))) and not isinstance(v, bool)


def check_speedscope(doc):
    need(isinstance(doc, dict), "the file is not an object")
    need(doc.get("$schema") == SPEEDSCOPE_SCHEMA, "$schema is not speedscope's")
    frames = doc.get("shared", {}).get("frames")
    need(isinstance(frames, list), "shared.frames is not a list")
    for i, f in enumerate(frames):
        need(isinstance(f, dict) and isinstance(f.get("name"), str), f"frame {i} has no name")
        need("file" not in f or isinstance(f["file"], str), f"frame {i}: file is not a string")
        need("line" not in f or (is_int(f["line"]) and f["line"] > 0), f"frame {i}: bad line")
    profiles = doc.get("profiles")
    need(isinstance(profiles, list) and profiles, "profiles is not a non-empty list")
    need(is_int(doc.get("activeProfileIndex")) and 0 <= doc["activeProfileIndex"] < len(profiles),
         "activeProfileIndex out of range")
    need(isinstance(doc.get("name"), str) and isinstance(doc.get("exporter"), str),
         "name or exporter missing")
    next_new = 0  # frames are numbered in order of first use
    total = 0
    for p in profiles:
        where = "profile %r" % p.get("name")
        need(p.get("type") == "sampled", f"{where}: type is not 'sampled'")
        need(isinstance(p.get("name"), str), f"{where}: no name")
        need(p.get("unit") in UNITS, f"{where}: unknown unit {p.get('unit')!r}")
        start, end = p.get("startValue"), p.get("endValue")
        need(is_num(start) and is_num(end), f"{where}: startValue/endValue not numbers")
        need(end >= start, f"{where}: endValue {end} < startValue {start}")
        samples, weights = p.get("samples"), p.get("weights")
        need(isinstance(samples, list) and isinstance(weights, list),
             f"{where}: samples or weights not lists")
        need(len(samples) == len(weights),
             f"{where}: {len(samples)} samples but {len(weights)} weights")
        for s in samples:
            need(isinstance(s, list), f"{where}: a sample is not a list")
            for index in s:
                need(is_int(index) and 0 <= index < len(frames),
                     f"{where}: frame index {index} out of range")
                need(index <= next_new, f"{where}: frame {index} used before frame {next_new}")
                next_new = max(next_new, index + 1)
        need(all(is_num(w) and w > 0 for w in weights), f"{where}: a weight is not positive")
        if p["unit"] in TIME_UNITS:
            need(sum(weights) <= end - start, f"{where}: weights exceed endValue - startValue")
        # Empty stacks are gaps (time the thread did not run), not samples.
        total += sum(1 for s in samples if s)
    need(next_new == len(frames), f"{len(frames) - next_new} frames are never used")
    return total


def table_rows(table, where, columns):
    need(isinstance(table, dict), f"{where} is not an object")
    schema = table.get("schema")
    need(isinstance(schema, dict), f"{where}: no schema")
    for c in columns:
        need(c in schema, f"{where}: schema has no {c!r}")
    need(sorted(schema.values()) == list(range(len(schema))),
         f"{where}: schema columns are not 0..{len(schema) - 1}")
    data = table.get("data")
    need(isinstance(data, list), f"{where}: data is not a list")
    for row in data:
        need(isinstance(row, list) and len(row) == len(schema),
             f"{where}: a row is not {len(schema)} wide")
    return schema, data


def check_gecko(doc):
    need(isinstance(doc, dict), "the file is not an object")
    meta = doc.get("meta")
    need(isinstance(meta, dict), "no meta")
    need(is_int(meta.get("version")), "meta.version is not an integer")
    need(is_num(meta.get("startTime")) and meta["startTime"] >= 0, "meta.startTime")
    need(is_num(meta.get("interval")) and meta["interval"] > 0, "meta.interval is not positive")
    need(isinstance(meta.get("product"), str), "meta.product")
    need(meta.get("stackwalk") in (0, 1), "meta.stackwalk is not 0 or 1")
    need(meta.get("presymbolicated") is True, "meta.presymbolicated is not true")
    categories = meta.get("categories")
    need(isinstance(categories, list) and categories, "meta.categories")
    for c in categories:
        need(isinstance(c.get("name"), str) and c.get("color") in COLOURS,
             f"category {c!r}: no name or an unknown colour")
        need(isinstance(c.get("subcategories"), list) and c["subcategories"],
             f"category {c.get('name')}: no subcategories")
    need(isinstance(doc.get("libs"), list), "libs is not a list")
    threads = doc.get("threads")
    need(isinstance(threads, list), "threads is not a list")
    total = 0
    for t in threads:
        where = "thread %r" % t.get("name")
        need(isinstance(t.get("name"), str), f"{where}: no name")
        need(is_int(t.get("pid")) and is_int(t.get("tid")), f"{where}: pid/tid")
        need(isinstance(t.get("processType"), str), f"{where}: processType")
        strings = t.get("stringTable")
        need(isinstance(strings, list) and all(isinstance(s, str) for s in strings),
             f"{where}: stringTable")
        fschema, frames = table_rows(t.get("frameTable"), f"{where} frameTable",
                                     ["location", "category"])
        for row in frames:
            loc, cat = row[fschema["location"]], row[fschema["category"]]
            need(is_int(loc) and 0 <= loc < len(strings), f"{where}: location {loc} out of range")
            need(is_int(cat) and 0 <= cat < len(categories), f"{where}: category {cat}")
            if "subcategory" in fschema:
                sub = row[fschema["subcategory"]]
                need(sub is None or (is_int(sub) and 0 <= sub < len(categories[cat]["subcategories"])),
                     f"{where}: subcategory {sub}")
        sschema, stacks = table_rows(t.get("stackTable"), f"{where} stackTable", ["prefix", "frame"])
        for i, row in enumerate(stacks):
            prefix, frame = row[sschema["prefix"]], row[sschema["frame"]]
            need(prefix is None or (is_int(prefix) and 0 <= prefix < i),
                 f"{where}: stack {i}'s prefix {prefix} is not an earlier stack")
            need(is_int(frame) and 0 <= frame < len(frames), f"{where}: frame {frame} out of range")
        mschema, samples = table_rows(t.get("samples"), f"{where} samples", ["stack", "time"])
        last = None
        for row in samples:
            stack, time = row[mschema["stack"]], row[mschema["time"]]
            need(is_int(stack) and 0 <= stack < len(stacks), f"{where}: stack {stack} out of range")
            need(is_num(time) and time >= 0, f"{where}: time {time}")
            need(last is None or time >= last, f"{where}: time {time} after {last}")
            last = time
        total += len(samples)
    return total


def check(kind, doc, samples):
    total = check_speedscope(doc) if kind == "speedscope" else check_gecko(doc)
    need(samples is None or total == samples, f"{total} samples, expected {samples}")


def breakages(kind, doc):
    """Copies of `doc`, each broken in one way a check must catch."""
    def broken(change):
        d = copy.deepcopy(doc)
        change(d)
        return d
    if kind == "speedscope":
        nframes = len(doc["shared"]["frames"])
        p = 0
        yield "frame out of range", broken(lambda d: d["profiles"][p]["samples"][0].append(nframes))
        yield "weights too short", broken(lambda d: d["profiles"][p]["weights"].pop())
        yield "end before start", broken(
            lambda d: d["profiles"][p].update(endValue=d["profiles"][p]["startValue"] - 1))
        yield "no $schema", broken(lambda d: d.pop("$schema"))
        yield "evented type", broken(lambda d: d["profiles"][p].update(type="evented"))
        yield "zero weight", broken(lambda d: d["profiles"][p]["weights"].__setitem__(0, 0))
        yield "unused frame", broken(lambda d: d["shared"]["frames"].append({"name": "x"}))
    else:
        t = max(range(len(doc["threads"])), key=lambda i: len(doc["threads"][i]["stackTable"]["data"]))
        def forward_prefix(d):
            rows = d["threads"][t]["stackTable"]["data"]
            rows[0][0] = len(rows) - 1
        def time_back(d):
            rows = d["threads"][t]["samples"]["data"]
            rows[-1][1] = rows[0][1] - 1
        def string_out(d):
            th = d["threads"][t]
            th["frameTable"]["data"][0][0] = len(th["stringTable"])
        def frame_out(d):
            th = d["threads"][t]
            th["stackTable"]["data"][0][1] = len(th["frameTable"]["data"])
        def narrow_row(d):
            d["threads"][t]["frameTable"]["data"][0].pop()
        def category_out(d):
            th = d["threads"][t]
            th["frameTable"]["data"][0][th["frameTable"]["schema"]["category"]] = 99
        yield "prefix points forward", broken(forward_prefix)
        yield "time goes back", broken(time_back)
        yield "string out of range", broken(string_out)
        yield "frame out of range", broken(frame_out)
        yield "row narrower than schema", broken(narrow_row)
        yield "category out of range", broken(category_out)
        yield "not presymbolicated", broken(lambda d: d["meta"].pop("presymbolicated"))


def main(argv):
    args = list(argv[1:])
    self_test = "--self-test" in args
    if self_test:
        args.remove("--self-test")
    samples = None
    if "--samples" in args:
        i = args.index("--samples")
        samples = int(args[i + 1])
        del args[i:i + 2]
    if len(args) != 2 or args[0] not in ("speedscope", "gecko"):
        print(__doc__, file=sys.stderr)
        return 2
    kind, path = args
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    try:
        check(kind, doc, samples)
    except Bad as e:
        print(f"{path}: {e}", file=sys.stderr)
        return 1
    if self_test:
        if samples is not None:
            try:
                check(kind, doc, samples + 1)
                print("a wrong sample count was not caught", file=sys.stderr)
                return 1
            except Bad:
                pass
        for what, bad in breakages(kind, doc):
            try:
                check(kind, bad, None)
            except Bad:
                continue
            print(f"{path}: the check missed a broken file ({what})", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
