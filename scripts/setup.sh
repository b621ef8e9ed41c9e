#!/usr/bin/env bash
# Installs the Debian packages sample needs (only the missing ones), configures
# build/ once and builds it: everything, or only the ninja targets given as
# arguments (the demo builds the two programs and its workload, not the
# tests). Safe to run repeatedly and from any directory.
set -euo pipefail

cd "$(dirname "$0")/.."

# libbz2-dev and liblzma-dev: what libdw's archive, which meson.build links
# in, is built against.
packages=(
  meson ninja-build pkg-config g++
  libelf-dev libdw-dev libzstd-dev libbz2-dev liblzma-dev
  libboost-program-options-dev libgtest-dev libgmock-dev
  libfmt-dev libexpected-dev
  libiberty-dev libdebuginfod-dev debuginfod libcapstone-dev libncurses-dev
  python3 binutils lld
  libprotobuf-dev protobuf-compiler zlib1g-dev
)
# Readers the tests check our exports with (go tool pprof, a headless
# browser for the HTML report), and Linux perf, whose perf.data files and
# reports the perf.data tests compare ours with, gcc-multilib for a
# 32-bit workload (an i386 process), rustc (with golang-go) for the Rust
# and Go workloads, tmux, in which the terminal browser tests type their
# keys, man-db, whose man renders the installed pages for the install
# test, nodejs, whose --perf-prof jitdumps the JIT test records, and
# heaptrack, whose leaks and peak the --alloc test compares ours with, and
# libjemalloc2, an allocator --alloc must find in place of libc's. scripts/test.sh asks for them with
# SAMPLE_SETUP_TESTS=1; a failure to install them is not fatal, the tests
# that need them skip and say why.
test_packages=(golang-go chromium linux-perf gcc-multilib rustc nodejs tmux man-db heaptrack libjemalloc2)

missing=()
for pkg in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  if [[ "$status" != "install ok installed" ]]; then
    missing+=("$pkg")
  fi
done

# How to run apt-get: as root, through sudo, or not at all ("none").
if [[ $EUID -eq 0 ]]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  sudo=(none)
fi

if ((${#missing[@]} > 0)); then
  echo "setup: installing missing packages: ${missing[*]}"
  if [[ ${sudo[*]} == none ]]; then
    echo "setup: error: not root and sudo is not available; install as root:" >&2
    echo "  apt-get install ${missing[*]}" >&2
    exit 1
  fi
  ${sudo[@]+"${sudo[@]}"} apt-get update -qq
  ${sudo[@]+"${sudo[@]}"} env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [[ ${SAMPLE_SETUP_TESTS:-0} == 1 ]]; then
  missing_tests=()
  for pkg in "${test_packages[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    [[ "$status" == "install ok installed" ]] || missing_tests+=("$pkg")
  done
  if ((${#missing_tests[@]} > 0)); then
    echo "setup: installing test readers: ${missing_tests[*]}"
    if [[ ${sudo[*]} == none ]] || ! { ${sudo[@]+"${sudo[@]}"} apt-get update -qq &&
           ${sudo[@]+"${sudo[@]}"} env DEBIAN_FRONTEND=noninteractive \
             apt-get install -y -qq --no-install-recommends "${missing_tests[@]}" >/dev/null; }; then
      echo "setup: warning: could not install ${missing_tests[*]}; the tests that need them skip" >&2
    fi
  fi
fi

# Configure only once: later builds reuse build/ (ninja re-runs meson itself
# when a meson.build changes). A build/ that meson no longer recognises is
# wiped and set up again.
if [[ -f build/meson-private/coredata.dat ]]; then
  if [[ ! -f build/build.ninja ]] || ! meson introspect --projectinfo build >/dev/null 2>&1; then
    echo "setup: build/ is broken; reconfiguring it from scratch"
    meson setup --wipe build
  fi
else
  meson setup build
fi

if (($# > 0)); then
  ninja -C build "$@"
else
  meson compile -C build
fi
