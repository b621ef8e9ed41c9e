#!/usr/bin/env python3
"""check_layout.py on a small tree with breaches planted: an include cycle
between two subfolders (and one through a top folder's own files), a member
function of 81 lines defined in its class in a header, an upward include,
a header without its opening comment, a throw and a mapping released
outside its owner; each must be reported, and the clean tree must pass.

Usage: check_layout_test.py PATH_TO_check_layout.py
"""
import os, subprocess, sys, tempfile

checker = sys.argv[1]


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        f.write(text)


def run(root):
    r = subprocess.run([sys.executable, checker, root], capture_output=True, text=True)
    return r.returncode, r.stdout


def clean_tree(root):
    write(root, 'libsample/base.h', '// Base.\n#pragma once\n')
    write(root, 'report/views/sort.h', '// Sort.\n#pragma once\n#include "libsample/base.h"\n')
    write(root, 'report/text/printer.h', '// Printer.\n#pragma once\n#include "report/views/sort.h"\n')
    write(root, 'report/runner.cc', '#include "report/text/printer.h"\n')
    body = ''.join(f'    x += {i};\n' for i in range(70))
    write(root, 'record/drain/short.h',
          '// Short.\n#pragma once\nclass Short {\n public:\n  int F(int x) {\n' + body + '    return x;\n  }\n};\n')


failures = []
with tempfile.TemporaryDirectory() as root:
    clean_tree(root)
    code, out = run(root)
    if code != 0:
        failures.append(f'the clean tree fails:\n{out}')
    # A cycle between two subfolders.
    write(root, 'report/views/sort.h', '// Sort.\n#pragma once\n#include "report/text/printer.h"\n')
    code, out = run(root)
    if code != 1 or 'include cycle between folders report/text/, report/views/' not in out:
        failures.append(f'a cycle between report/text and report/views is not reported:\n{out}')
    clean_tree(root)
    # A cycle through a top folder's own files.
    write(root, 'report/views/sort.h', '// Sort.\n#pragma once\n#include "report/runner.h"\n')
    write(root, 'report/runner.h', '// Runner.\n#pragma once\n#include "report/text/printer.h"\n')
    code, out = run(root)
    if code != 1 or 'include cycle between folders report/, ' not in out:
        failures.append(f'a cycle through report/ is not reported:\n{out}')
    os.remove(os.path.join(root, 'report/runner.h'))
    clean_tree(root)
    # A member function of 81 lines, defined in its class in a header.
    body = ''.join(f'    x += {i};\n' for i in range(78))
    write(root, 'record/drain/long.h',
          '// Long.\n#pragma once\nclass Long {\n public:\n  int F(int x) {\n' + body + '    return x;\n  }\n};\n')
    code, out = run(root)
    if code != 1 or 'record/drain/long.h:5: a function of 81 lines' not in out:
        failures.append(f'an 81-line member function is not reported:\n{out}')
    os.remove(os.path.join(root, 'record/drain/long.h'))
    # An upward include.
    write(root, 'libsample/up.h', '// Up.\n#pragma once\n#include "report/views/sort.h"\n')
    code, out = run(root)
    if code != 1 or 'libsample/up.h:3: includes report/views/sort.h' not in out:
        failures.append(f'an upward include is not reported:\n{out}')
    os.remove(os.path.join(root, 'libsample/up.h'))
    # A header without its opening comment, a throw, a mapping released
    # outside its owner.
    write(root, 'formats/bare.h', '#pragma once\nint F();\n')
    write(root, 'formats/thrower.cc', 'int F() {\n  throw 1;\n}\n')
    write(root, 'record/loose.cc', 'void G(void* p) {\n  munmap(p, 4096);\n}\n')
    code, out = run(root)
    for want in ('formats/bare.h:1: a header that does not open with a comment',
                 'formats/thrower.cc:2: throw', 'record/loose.cc:2: munmap outside'):
        if code != 1 or want not in out:
            failures.append(f'not reported: {want}\n{out}')

for f in failures:
    print(f)
print('every planted breach reported' if not failures else f'{len(failures)} not reported')
sys.exit(1 if failures else 0)
