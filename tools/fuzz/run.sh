#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the wavesched fuzzer with clang + libFuzzer + ASan + UBSan straight
# from the library sources (no CMake), replays the committed seed corpus, then
# fuzzes for a bounded time. Exits non-zero on any crash, sanitizer report,
# model mismatch or hang.
#
#   tools/fuzz/run.sh [seconds]        # default 60; 0 = replay the corpus only
#
# Environment: CC (default clang), WS_FUZZ_BUILD (build folder, default
# build-rel-fuzz), WS_FUZZ_JOBS (parallel fuzzing jobs, default 1).
# New inputs found while fuzzing go to $WS_FUZZ_BUILD/corpus (not committed);
# a failing input is saved as $WS_FUZZ_BUILD/crash-* and can be replayed with
#   $WS_FUZZ_BUILD/fz_fuzz $WS_FUZZ_BUILD/crash-...   (or fz_replay, gcc build)
# and described with  WS_FUZZ_VERBOSE=1 $WS_FUZZ_BUILD/fz_fuzz FILE.
set -euo pipefail
secs=${1:-60}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${WS_FUZZ_BUILD:-$root/build-rel-fuzz}
cc=${CC:-clang}
mkdir -p "$out/corpus"

srcs=("$root"/src/core/*.c "$root/src/backend/registry.c" "$root"/src/backend/cpu/*.c
      "$root/src/backend/cuda/cuda_absent.c" "$root/src/backend/vulkan/vulkan_absent.c"
      "$here/fz_kernels_cpu.c" "$here/fz_harness.c" "$here/fz_loop.c" "$here/fz_libfuzzer.c")
flags=(-std=c11 -g -O1 -fopenmp -fno-omit-frame-pointer
       -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
       -Wall -Wextra -Wno-unknown-pragmas
       -I"$root/include" -iquote "$root/src/core" -I"$here")
echo "fuzz: building $out/fz_fuzz with $cc"
t0=$SECONDS
"$cc" "${flags[@]}" "${srcs[@]}" -o "$out/fz_fuzz" -lm
echo "fuzz: built in $((SECONDS - t0)) s"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
cd "$out"
# libFuzzer prints a line per new or reduced input: keep the rest (the
# library itself never prints)
quiet() { sed -u -e '/^#[0-9]*[[:space:]]*\(NEW\|REDUCE\) /d'; }
echo "fuzz: replaying the seed corpus ($(ls "$here/corpus" | wc -l) inputs)"
./fz_fuzz -runs=0 "$here/corpus" 2>&1 | quiet
if [ "$secs" -gt 0 ]; then
  jobs=${WS_FUZZ_JOBS:-1}
  par=()
  [ "$jobs" -gt 1 ] && par=(-jobs="$jobs" -workers="$jobs")
  echo "fuzz: fuzzing for $secs s"
  ./fz_fuzz -max_total_time="$secs" -timeout=20 -rss_limit_mb=4096 -max_len=256 \
    -print_final_stats=1 -artifact_prefix="$out/" "${par[@]}" "$out/corpus" "$here/corpus" \
    2>&1 | quiet
fi
echo "fuzz: ok"
