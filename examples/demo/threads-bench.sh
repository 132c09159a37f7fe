#!/usr/bin/env bash
# CPU backend threads: the speed of a build without any environment variable
# against another build with and without OMP_WAIT_POLICY=passive (the
# measurement behind docs/decisions.md "CPU kernel threads").
#
#   examples/demo/threads-bench.sh NEW_BUILD OLD_BUILD [reps]
#
# Each build folder must hold examples/wavesched-demo and bench/bench_divergent.
# Runs are interleaved (new, old, old+passive, ...) so that a change in the
# machine's load hits all three alike; prints the median and the spread of the
# demo's dispatch time and of bench_divergent's wavefront time, and the load.
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
median() { sort -n | awk '{ v[NR] = $1 } END { printf "%.1f (%.1f..%.1f)", v[int((NR + 1) / 2)], v[1], v[NR] }'; }

declare -A d b
for i in $(seq "$reps"); do
  d[new]+="$(demo_ms "$new")"$'\n'
  d[old]+="$(demo_ms "$old")"$'\n'
  d[passive]+="$(demo_ms "$old" OMP_WAIT_POLICY=passive)"$'\n'
  b[new]+="$(bench_ms "$new")"$'\n'
  b[old]+="$(bench_ms "$old")"$'\n'
  b[passive]+="$(bench_ms "$old" OMP_WAIT_POLICY=passive)"$'\n'
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs, $reps runs each, median (min..max) ms"
for k in new old passive; do
  printf '%-8s demo 200000 items pool 65536: %-28s bench_divergent quick R=4096: %s\n' "$k" \
    "$(printf '%s' "${d[$k]}" | grep . | median)" "$(printf '%s' "${b[$k]}" | grep . | median)"
done
