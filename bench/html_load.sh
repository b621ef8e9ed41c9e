#!/usr/bin/env bash
# html_load.sh: how big the --format html page is and how fast it opens, at
# ~100k and ~1M samples. Records the bundled `threads` workload (2 threads,
# frame pointers, `-e cpu-clock -F FREQ -g`, SIZE / (2 x FREQ) CPU seconds
# per thread, as bench/report_bench.sh does), exports it with
# `sample-report -o X.html` (wall time, peak RSS), then opens the page
# ROUNDS times in headless Chromium with --dump-dom and reads the page's own
# measure: performance.now() when the first flame graph is drawn (#timing's
# data-rendered-ms: from navigation start, so HTML and JSON parsing count),
# beside the whole Chromium run's wall time (start-up included). Prints a
# table of medians. With STRESS_NODES=N (default 200000) a last row opens a
# synthetic page: the last export with its tree replaced by N random nodes
# over 20000 functions, for programs whose stacks are far more varied than
# `threads`' (the page's cost follows distinct stack nodes, not samples).
#
# Usage: bench/html_load.sh            (from any directory)
# Environment: SIZES="100000 1000000", FREQ=50000, ROUNDS=3,
#   STRESS_NODES=200000 (0: no synthetic row), BUILD=<repo>/build,
#   CHROMIUM=/usr/bin/chromium, KEEP=1 keeps the scratch
#   directory (recordings and pages).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
SIZES=${SIZES:-"100000 1000000"}
FREQ=${FREQ:-50000}
ROUNDS=${ROUNDS:-3}
STRESS_NODES=${STRESS_NODES:-200000}
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
TIME=/usr/bin/time
SREC=$BUILD/record/sample-record
SREP=$BUILD/report/sample-report
THREADS=$BUILD/tests/workloads/threads

# shellcheck source=bench/common.sh
source "$HERE/common.sh"
require_tools html_load "$TIME" "$SREC" "$SREP" "$THREADS" "$CHROMIUM"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/html_load.XXXXXX")
cp "$SREC" "$SREP" "$THREADS" "$TMP/"
SREC=$TMP/sample-record
SREP=$TMP/sample-report
THREADS=$TMP/threads
cleanup() {
  if [[ ${KEEP:-0} == 1 ]]; then echo "html_load: scratch kept in $TMP" >&2; else rm -rf "$TMP"; fi
}
trap cleanup EXIT

echo "html_load: $(date -u '+%F %H:%M UTC'), $(nproc) CPUs, $(uname -r), load $(cut -d' ' -f1-3 \
  /proc/loadavg), $("$CHROMIUM" --version 2>/dev/null), sample $(git -C "$ROOT" rev-parse \
  --short HEAD 2>/dev/null || echo '?')" >&2

# measure PAGE: opens it ROUNDS times; $TMP/render and $TMP/wall get one
# line a round (data-rendered-ms, the Chromium run's wall seconds).
measure() {
  : >"$TMP/render" && : >"$TMP/wall"
  for ((round = 1; round <= ROUNDS; round++)); do
    start=$(date +%s.%N)
    timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
      --user-data-dir="$TMP/profile" --window-size=1400,1000 --dump-dom "file://$1" \
      2>/dev/null >"$TMP/dom"
    end=$(date +%s.%N)
    sed -n 's/.*data-rendered-ms="\([0-9.]*\)".*/\1/p' "$TMP/dom" >>"$TMP/render"
    python3 -c "print($end - $start)" >>"$TMP/wall"
  done
  [[ -s $TMP/render ]] || { echo "html_load: no #timing in the dumped DOM of $1" >&2; exit 1; }
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf '%-10s %-8s %-10s %-10s %-12s %-10s %-12s %-12s\n' samples frames html_MB export_s \
  export_RSS_MB render_ms chromium_s json_MB
for size in $SIZES; do
  seconds=$(python3 -c "print(round($size / (2 * $FREQ), 2))")
  data=$TMP/threads-$size.data
  page=$TMP/threads-$size.html
  echo "html_load: recording ~$size samples ($seconds CPU s per thread)" >&2
  "$SREC" -q -e cpu-clock -F "$FREQ" -g -o "$data" -- "$THREADS" "$seconds" >/dev/null \
    2>"$TMP/record.err"
  samples=$("$SREP" -i "$data" --no-children 2>/dev/null |
    sed -n 's/^# Samples: \([0-9]*\).*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
  "$TIME" -o "$TMP/time" -f '%e %M' "$SREP" -i "$data" -o "$page" 2>/dev/null
  read -r export_s rss_kb < <(tail -n 1 "$TMP/time")
  frames=$(sed -n '/"nodes":\[/,/\]}/p' "$page" | grep -c '^-\?[0-9]')
  json_bytes=$(sed -n '/id="sample-data"/,/<\/script>/p' "$page" | wc -c)
  measure "$page"
  printf '%-10s %-8s %-10s %-10s %-12s %-10s %-12s %-12s\n' "$samples" "$frames" \
    "$(python3 -c "print(round($(stat -c %s "$page") / 1e6, 2))")" "$export_s" \
    "$((rss_kb / 1024))" "$(median <"$TMP/render")" \
    "$(median <"$TMP/wall" | xargs printf '%.2f')" \
    "$(python3 -c "print(round($json_bytes / 1e6, 2))")"
done

if ((STRESS_NODES > 0)); then
  stress=$TMP/stress.html
  python3 - "$page" "$stress" "$STRESS_NODES" <<'PY'
import json, random, re, sys
source, target, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
random.seed(1)
page = open(source).read()
block = re.compile(r'(id="sample-data">\n)(.*?)(</script>)', re.S)
data = json.loads(block.search(page).group(2))
funcs = 20000
data['funcs'] = [[f'fn_{i}<T>::run&', '/bin/x', 'user'] for i in range(funcs)]
# A random preorder tree up to 60 deep; totals summed from the selves.
nodes, path = [[-1, -1, 0, 0]], [0]
for i in range(1, count):
    while len(path) > 1 and (random.random() < 0.3 or len(path) > 60):
        path.pop()
    nodes.append([random.randrange(funcs), path[-1], 0, random.randint(1, 20)])
    path.append(i)
for i in range(count - 1, -1, -1):
    nodes[i][2] += nodes[i][3]
    if i > 0:
        nodes[nodes[i][1]][2] += nodes[i][2]
totals = {}
for n in nodes[1:]:
    totals[n[0]] = totals.get(n[0], 0) + n[2]
data['sections'] = [{'name': 'cpu-clock', 'samples': nodes[0][2], 'period': 0,
                     'table': sorted(([f, 0, t] for f, t in totals.items()), key=lambda r: -r[2]),
                     'nodes': [v for n in nodes for v in n]}]
text = json.dumps(data, separators=(',', ':'))
text = text.replace('<', '\\u003c').replace('>', '\\u003e').replace('&', '\\u0026')
open(target, 'w').write(block.sub(lambda m: m.group(1) + text + '\n' + m.group(3), page))
PY
  measure "$stress"
  printf '%-10s %-8s %-10s %-10s %-12s %-10s %-12s %-12s\n' synthetic "$STRESS_NODES" \
    "$(python3 -c "print(round($(stat -c %s "$stress") / 1e6, 2))")" - - \
    "$(median <"$TMP/render")" "$(median <"$TMP/wall" | xargs printf '%.2f')" -
fi
