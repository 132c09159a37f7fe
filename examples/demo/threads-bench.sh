#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# CPU backend threads: the speed of a build without any environment variable
# against another build with and without OMP_WAIT_POLICY=passive (the
# measurement behind docs/decisions.md "CPU kernel threads").
#
#   examples/demo/threads-bench.sh NEW_BUILD OLD_BUILD [reps]
#
# Each build folder must hold examples/wavesched-demo and bench/bench_divergent.
# Runs are interleaved (new, old, old+passive, ...) so that a change in the
# machine's load hits all three alike. Prints, per workload, the median and
# the spread of each configuration and the median over the repetitions of
# the ratios new/old+passive and new/old (< 1: the new build is faster), with
# the load average before and after.
set -euo pipefail
new=${1:?new build folder}
old=${2:?old build folder}
reps=${3:-7}

demo_ms() { # build env... -> dispatch milliseconds of one demo run
  local b=$1
  shift
  env "$@" "$b/examples/wavesched-demo" --items 200000 --pool 65536 |
    sed -n 's/^dispatch: .*, \([0-9.]*\) ms.*/\1/p'
}
bench_ms() { # build env... -> median ms of the R=4096 wavefront row
  local b=$1
  shift
  env "$@" "$b/bench/bench_divergent" --backend cpu --quick --reps 3 |
    awk '$1 == "wavefront" && $2 == 4096 { print $3 }'
}

load0=$(cut -d' ' -f1-3 /proc/loadavg)
rows=()
for i in $(seq "$reps"); do
  rows+=("demo $(demo_ms "$new") $(demo_ms "$old") $(demo_ms "$old" OMP_WAIT_POLICY=passive)")
  rows+=("bench $(bench_ms "$new") $(bench_ms "$old") $(bench_ms "$old" OMP_WAIT_POLICY=passive)")
done
echo "load average $load0 before, $(cut -d' ' -f1-3 /proc/loadavg) after; $(nproc) CPUs; $reps runs each"
printf '%s\n' "${rows[@]}" | python3 -c '
import statistics as st, sys
rows = {}
for line in sys.stdin:
    w, *v = line.split()
    rows.setdefault(w, []).append([float(x) for x in v])
names = {"demo": "demo --items 200000 --pool 65536 (dispatch ms)",
         "bench": "bench_divergent --quick, wavefront R=4096 (median ms)"}
for w, v in rows.items():
    cols = list(zip(*v))
    med = lambda c: "%.1f (%.1f..%.1f)" % (st.median(c), min(c), max(c))
    print(names[w])
    print("  new, no variable:        " + med(cols[0]))
    print("  OpenMP, no variable:     " + med(cols[1]))
    print("  OpenMP, passive:         " + med(cols[2]))
    print("  new / OpenMP passive:    %.3f (median of the paired ratios)" %
          st.median([a / c for a, b, c in v]))
    print("  new / OpenMP:            %.3f" % st.median([a / b for a, b, c in v]))
'
