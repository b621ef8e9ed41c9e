#!/usr/bin/env python3
"""Checks the rules docs/ARCHITECTURE.md states for the whole tree: files
in record/ and report/ under 450 lines, functions there (outside the two
main.cc) under 80 lines, and includes that point down only (libsample/
includes nothing of formats/, record/ or report/; formats/ nothing of
record/ or report/; record/ and report/ nothing of each other).

A function is a brace block at namespace scope whose opening text has a
parameter list and is not a class, struct, enum or initializer; comments,
string literals and preprocessor lines are blanked first so their braces
do not count. Prints each breach and exits 1 when there is any.

Usage: check_layout.py SOURCE_ROOT
"""
import os, re, sys
root = sys.argv[1]
MAX_FILE, MAX_FN = 450, 80
def strip(src):
    src = re.sub(r'R"(\w*)\((.|\n)*?\)\1"', lambda m: '""' + '\n' * m.group(0).count('\n'), src)
    src = re.sub(r'/\*(.|\n)*?\*/', lambda m: '\n' * m.group(0).count('\n'), src)
    src = re.sub(r'//[^\n]*', '', src)
    src = re.sub(r'"(\\.|[^"\\\n])*"', '""', src)
    src = re.sub(r"'(\\.|[^'\\\n])*'", "''", src)
    src = re.sub(r'^\s*#[^\n]*', '', src, flags=re.M)
    return src
def functions(path):
    """(first line, line count, signature) of each function defined at namespace scope."""
    src = strip(open(path).read())
    depth = 0; start = None; head = ''; opener = ''
    for i, line in enumerate(src.split('\n')):
        for ch in line:
            if depth == 0 and ch not in '{}':
                head += ch
                if ch == ';': head = ''
                continue
            if ch == '{':
                if depth == 0:
                    if re.match(r'\s*(inline\s+)?namespace\b', head):
                        head = ''; continue
                    start, opener = i, head.strip()
                depth += 1
            elif ch == '}':
                if depth == 0: head = ''; continue
                depth -= 1
                if depth == 0:
                    if not re.match(r'(template\s*<.*>\s*)?(class|struct|enum|union)\b', opener) and not opener.endswith('=') and '(' in opener:
                        yield start, i - start + 1, ' '.join(opener.split())
                    head = ''
        if depth == 0: head += ' '
# What each top folder may not include.
FORBIDDEN = {
    'libsample': ('formats/', 'record/', 'report/'),
    'formats': ('record/', 'report/'),
    'record': ('report/',),
    'report': ('record/',),
}


def upward_includes(bad):
    for top, forbidden in FORBIDDEN.items():
        for d, _, fs in sorted(os.walk(os.path.join(root, top))):
            for f in sorted(fs):
                if not f.endswith(('.cc', '.h')): continue
                p = os.path.join(d, f); rel = os.path.relpath(p, root)
                for n, line in enumerate(open(p), 1):
                    m = re.match(r'#include "([^"]+)"', line)
                    if m and m.group(1).startswith(forbidden):
                        bad.append(f'{rel}:{n}: includes {m.group(1)}, against the direction of dependencies')


def main():
    bad = []
    upward_includes(bad)
    for top in ('record', 'report'):
        for d, _, fs in sorted(os.walk(os.path.join(root, top))):
            for f in sorted(fs):
                if not f.endswith(('.cc', '.h')): continue
                p = os.path.join(d, f); rel = os.path.relpath(p, root)
                n = open(p).read().count('\n')
                if n > MAX_FILE: bad.append(f'{rel}: {n} lines (over {MAX_FILE})')
                if not f.endswith('.cc') or rel in ('record/main.cc', 'report/main.cc'): continue
                for s, n, o in functions(p):
                    if n > MAX_FN: bad.append(f'{rel}:{s+1}: a function of {n} lines (over {MAX_FN}): {o[-70:]}')
    for line in bad:
        print(line)
    if bad:
        print(f"{len(bad)} breaches of the layout rules (docs/ARCHITECTURE.md)")
    return 1 if bad else 0
sys.exit(main())
