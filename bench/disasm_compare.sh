#!/usr/bin/env bash
# disasm_compare.sh: the Disassembler (libsample/disasm/) beside objdump -d,
# on the .text of an ELF file: where instructions start, and how many read
# exactly as objdump prints them (objdump's "# comment" and "<symbol>" are
# left out: the annotate view adds its own). Prints the counts and the
# commonest differences.
#
# Usage: bench/disasm_compare.sh ELF [intel] [i386]   (from any directory)
#   e.g. bench/disasm_compare.sh /lib/x86_64-linux-gnu/libc.so.6
#        bench/disasm_compare.sh /usr/lib32/libc.so.6 intel i386
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
build=${BUILD:-$repo/build}
ninja -C "$build" bench/disasm_compare >/dev/null
elf=$1
shift
intel=0
for arg in "$@"; do [[ $arg == intel ]] && intel=1; done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
vma=$(readelf -SW "$elf" | awk '$2 == ".text" { print $4 } $3 == ".text" { print $5 }' | head -1)
objcopy -O binary --only-section=.text "$elf" "$tmp/text"
"$build/bench/disasm_compare" "$tmp/text" "$vma" "$@" >"$tmp/ours"
options=(-d --no-show-raw-insn -j .text)
((intel)) && options+=(-M intel)
objdump "${options[@]}" "$elf" | grep -P '^\s+[0-9a-f]+:\t' >"$tmp/objdump"
python3 - "$tmp/ours" "$tmp/objdump" <<'PY'
import collections, re, sys
ours = {}
for line in open(sys.argv[1]):
    address, _, text = line.rstrip('\n').split('\t', 2)
    ours[int(address, 16)] = re.sub(r'\s+', ' ', text).strip()
theirs = {}
for line in open(sys.argv[2]):
    m = re.match(r'\s+([0-9a-f]+):\t(.*)$', line.rstrip('\n'))
    text = re.sub(r'\s+#.*$', '', m.group(2))
    text = re.sub(r' <[^>]*>$', '', text)
    theirs[int(m.group(1), 16)] = re.sub(r'\s+', ' ', text).strip()
both = set(ours) & set(theirs)
same = sum(1 for a in both if ours[a] == theirs[a])
print(f'objdump instructions: {len(theirs)}, ours: {len(ours)}')
print(f'starts only objdump has: {len(set(theirs) - set(ours))}, only ours: {len(set(ours) - set(theirs))}')
print(f'same text: {same} of {len(theirs)} ({100.0 * same / max(len(theirs), 1):.2f}%)')
kinds = collections.Counter()
example = {}
for a in sorted(both):
    if ours[a] != theirs[a]:
        key = (theirs[a].split(' ')[0], ours[a].split(' ')[0])
        kinds[key] += 1
        example.setdefault(key, (theirs[a], ours[a]))
for key, n in kinds.most_common(15):
    print(f'{n:8d}  objdump: {example[key][0]!r:50}  ours: {example[key][1]!r}')
PY
