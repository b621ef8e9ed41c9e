# Sourced by the benchmarks: checks for the tools they run, and sample and
# lost-sample counts as each tool reports them (needs $PERF).

# require_tools NAME FILE...: exits unless every FILE is executable (and
# python3 is there), naming the benchmark NAME in the message.
require_tools() {
  local name=$1 f
  shift
  for f in "$@"; do
    if [[ ! -x $f ]]; then
      echo "$name: $f is missing (build first: ninja -C $BUILD)" >&2
      exit 1
    fi
  done
  command -v python3 >/dev/null || { echo "$name: python3 is needed" >&2; exit 1; }
}

# perf's sample and lost-sample counts from the per-event section of --stats
# (the kernel's lost count arrives as LOST_SAMPLES; summed if there are several).
perf_counts() { # FILE -> "samples lost"
  "$PERF" report -i "$1" --stats 2>/dev/null | awk '
    / stats:$/ && !/^Aggregated/ { inev = 1 }
    inev && /SAMPLE events:/ && !/LOST/ { s += $3 }
    inev && /LOST_SAMPLES events:/ { l += $3 }
    END { printf "%d %d\n", s, l }'
}
# sample-record's summary line: "[ sample-record: N samples, M lost, ...]".
sample_counts() { # STDERR_FILE -> "samples lost"
  sed -n 's/.*\[ sample-record: \([0-9]*\) samples, \([0-9]*\) lost.*/\1 \2/p' "$1" | tail -n 1
}

# The machine and tools a run measured (needs $PERF and $SREC_BUILT).
machine_info() {
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "nproc: $(nproc); kernel: $(uname -r); perf: $("$PERF" --version 2>/dev/null)"
  echo "sample-record: $SREC_BUILT ($(stat -c '%y' "$SREC_BUILT" | cut -d. -f1))"
  echo "cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
  echo "perf_event_max_sample_rate: $(cat /proc/sys/kernel/perf_event_max_sample_rate);" \
       "perf_event_mlock_kb: $(cat /proc/sys/kernel/perf_event_mlock_kb);" \
       "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
}
