#!/usr/bin/env python3
"""Checks the rules docs/ARCHITECTURE.md states for the whole tree:

- files in record/, report/ and top/ under 450 lines;
- functions there under 80 lines: every function defined at namespace
  scope or inside a class (member functions defined in their class, in
  headers too), the three main.cc included;
- includes point down only between the top folders (libsample/ includes
  nothing of formats/, record/, report/ or top/; formats/ nothing of
  record/, report/ or top/; record/ and report/ nothing of each other or
  of top/);
- no include cycle between folders at any depth: a folder's files
  (record/events/*) are one node, the files directly in a top folder
  (record/*.cc) another, and the graph of their includes has no cycle;
- every header of the product opens with a comment (what it is for);
- no `throw` in the product's code: failures are Result<T>;
- mappings, ELF and DWARF handles and zstd contexts are released
  (munmap, elf_end, dwfl_end, ZSTD_free*) only in the files of their
  owning types (OWNERS below): everywhere else a move-only owner holds them.

A function is a brace block, at namespace or class scope, whose opening
text has a parameter list and is not a class, struct, enum, union or
initializer; comments, string literals and preprocessor lines are blanked
first so their braces do not count. Prints each breach and exits 1 when
there is any.

Usage: check_layout.py SOURCE_ROOT
"""
import collections, os, re, sys
root = sys.argv[1]
MAX_FILE, MAX_FN = 450, 80
TOPS = ('libsample', 'formats', 'record', 'report', 'top')
SIZED = ('record', 'report', 'top')


def strip(src):
    src = re.sub(r'R"(\w*)\((.|\n)*?\)\1"', lambda m: '""' + '\n' * m.group(0).count('\n'), src)
    src = re.sub(r'/\*(.|\n)*?\*/', lambda m: '\n' * m.group(0).count('\n'), src)
    src = re.sub(r'//[^\n]*', '', src)
    src = re.sub(r'"(\\.|[^"\\\n])*"', '""', src)
    src = re.sub(r"'(\\.|[^'\\\n])*'", "''", src)
    src = re.sub(r'^[ \t]*#[^\n]*', '', src, flags=re.M)
    return src


def kind_of(opener):
    """What a brace opened at namespace or class scope starts."""
    if re.match(r'(inline\s+)?namespace\b', opener) or re.match(r'extern\s*""', opener):
        return 'scope'
    if re.match(r'(template\s*<.*>\s*)?(class|struct|enum|union)\b', opener):
        return 'scope'
    if not opener.endswith('=') and '(' in opener:
        return 'function'
    return 'other'


def functions(path):
    """(first line, line count, signature) of each function defined at
    namespace scope or in a class."""
    src = strip(open(path).read())
    stack = []  # (kind, first line, opener) of each open brace
    head = ''
    for i, line in enumerate(src.split('\n')):
        for ch in line:
            in_scope = all(kind == 'scope' for kind, _, _ in stack)
            if ch not in '{}':
                if in_scope:
                    head += ch
                    if ch == ';':
                        head = ''
                continue
            if ch == '{':
                if in_scope:
                    opener = ' '.join(head.split())
                    # "public:" and the like end at their colon.
                    opener = re.sub(r'^(public|private|protected)\s*:\s*', '', opener)
                    stack.append((kind_of(opener), i, opener))
                    head = ''
                else:
                    stack.append(('inner', i, ''))
            else:
                if not stack:
                    head = ''
                    continue
                kind, start, opener = stack.pop()
                if kind == 'function':
                    yield start, i - start + 1, opener
                if all(k == 'scope' for k, _, _ in stack):
                    head = ''
        head += ' '


# What each top folder may not include.
FORBIDDEN = {
    'libsample': ('formats/', 'record/', 'report/', 'top/'),
    'formats': ('record/', 'report/', 'top/'),
    'record': ('report/', 'top/'),
    'report': ('record/', 'top/'),
}


def sources(top):
    for d, _, fs in sorted(os.walk(os.path.join(root, top))):
        for f in sorted(fs):
            if f.endswith(('.cc', '.h')):
                p = os.path.join(d, f)
                yield p, os.path.relpath(p, root)


def includes(path):
    for n, line in enumerate(open(path), 1):
        m = re.match(r'#include "([^"]+)"', line)
        if m:
            yield n, m.group(1)


def upward_includes(bad):
    for top, forbidden in FORBIDDEN.items():
        for p, rel in sources(top):
            for n, included in includes(p):
                if included.startswith(forbidden):
                    bad.append(f'{rel}:{n}: includes {included}, against the direction of dependencies')


def folder_cycles(bad):
    """Each cycle of folders that include each other, with one include of
    each edge on it."""
    edges = collections.defaultdict(set)
    example = {}
    for top in TOPS:
        for p, rel in sources(top):
            here = os.path.dirname(rel)
            for n, included in includes(p):
                there = os.path.dirname(included)
                if there != here and there.split('/')[0] in TOPS:
                    edges[here].add(there)
                    example.setdefault((here, there), f'{rel}:{n} includes {included}')
    # Tarjan's strongly connected components, iteratively.
    index, low, on, stack, comps, counter = {}, {}, set(), [], [], [0]
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter[0]; counter[0] += 1
        stack.append(start); on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]; counter[0] += 1
                    stack.append(w); on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop(); on.discard(w); comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    comps.append(sorted(comp))
    for comp in comps:
        links = [example[(a, b)] for a in comp for b in comp if (a, b) in example]
        bad.append(f'include cycle between folders {", ".join(n + "/" for n in comp)}: ' +
                   '; '.join(links))


# The files of the move-only types that own mappings, ELF and DWARF handles
# and zstd contexts: the only ones that release them.
OWNERS = {
    'libsample/mapped_file.cc', 'libsample/symbols/compressed_sections.cc',
    'libsample/symbols/elf_file.cc', 'libsample/symbols/inflated_debug.cc',
    'libsample/unwind/unwind_process.h', 'libsample/perf/perf_event.cc',
    'formats/sample_file_reader.cc', 'formats/perf_data_walker.h',
    'formats/sample_file_writer.cc',
}
RELEASE = re.compile(r'\b(munmap|elf_end|dwfl_end|ZSTD_free\w*)\s*\(')


def code_rules(bad):
    for top in TOPS:
        for p, rel in sources(top):
            text = open(p).read()
            if rel.endswith('.h') and not text.startswith('//'):
                bad.append(f'{rel}:1: a header that does not open with a comment saying what it is for')
            code = strip(text)
            for n, line in enumerate(code.split('\n'), 1):
                if re.search(r'\bthrow\b', line):
                    bad.append(f'{rel}:{n}: throw: fallible code returns Result<T>')
                m = RELEASE.search(line)
                if m and rel not in OWNERS:
                    bad.append(f'{rel}:{n}: {m.group(1)} outside the owning types (OWNERS)')


def main():
    bad = []
    upward_includes(bad)
    folder_cycles(bad)
    code_rules(bad)
    for top in SIZED:
        for p, rel in sources(top):
            n = open(p).read().count('\n')
            if n > MAX_FILE:
                bad.append(f'{rel}: {n} lines (over {MAX_FILE})')
            for s, n, o in functions(p):
                if n > MAX_FN:
                    bad.append(f'{rel}:{s+1}: a function of {n} lines (over {MAX_FN}): {o[-70:]}')
    for line in bad:
        print(line)
    if bad:
        print(f"{len(bad)} breaches of the layout rules (docs/ARCHITECTURE.md)")
    return 1 if bad else 0


sys.exit(main())
