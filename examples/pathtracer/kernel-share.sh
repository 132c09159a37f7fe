#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Where a render's GPU time goes: Nsight Compute (ncu) times every kernel of
# one path tracer run (metric gpu__time_duration.sum, clocks left alone), and
# the kernels are summed by kind:
#   scheduler     the library's queue kernels: count/gather/select/offsets/
#                 publish/move (names ws_*), and anything else that is not
#                 a user kernel or a fill (CUB's, if WS_CUDA_QUEUES=cub);
#   fill          ws_buffer_fill_u32 (ws_cuda_fill_kernel): the scheduler's
#                 clears at a dispatch's start and the application's own
#                 (the path tracer clears its image and NEE buffers), which
#                 one kernel name cannot tell apart: the summary gives the
#                 share without fills and with all of them counted as the
#                 scheduler's;
#   continuation  the main path's continuations (<coroutine>_ws_step_gpu<j> in
#                 the host loop, <coroutine>_ws_dev_gpu<j> in the device loop,
#                 one kernel per continuation j: frame load, the user's code,
#                 frame store, token write); the tail (<coroutine>_ws_tail_gpu:
#                 the last frames run to their end) too, the coroutine's own work;
#   stage         plain user kernels (<name>_ws_launch_gpu: the auxiliary
#                 pipeline's stages, the image resolve);
#   megakernel    <coroutine>_ws_mega_launch_gpu.
# Copies (the per-iteration count readback) are not kernels and not counted;
# the time the GPU waits for the host shows up as device_ms (the dispatch's
# stream span, CUDA events) minus the kernels' sum in an unprofiled run.
#
#   kernel-share.sh profile OUTDIR PATHTRACER [pathtracer args...]
#   kernel-share.sh parse NCU_CSV       (summary of a CSV written by `profile`)
#
# `profile` writes OUTDIR/ncu.csv, run.log and summary.txt and prints the summary. ncu serializes the
# kernels, so run the timed renders separately (bench.sh).
set -u -o pipefail

parse() { # ncu --csv output: quoted fields, one row per kernel and metric
  awk -F'","' '
    function kind(n) {
      if (n ~ /_ws_mega_launch_gpu$/) return "megakernel"
      if (n ~ /_ws_(step_launch|step|dev|tail)_gpu(<[^>]*>)?$/) return "continuation"
      if (n ~ /_ws_launch_gpu$/ && n !~ /^ws_/) return "stage"
      if (n == "ws_cuda_fill_kernel") return "fill"
      return "scheduler"
    }
    /^"ID"/ {
      for (i = 1; i <= NF; ++i) {
        h = $i; gsub(/"/, "", h); col[h] = i
      }
      next
    }
    !("Metric Name" in col) { next }
    {
      m = $col["Metric Name"]; gsub(/"/, "", m)
      if (m != "gpu__time_duration.sum") next
      n = $col["Kernel Name"]; gsub(/"/, "", n); sub(/\(.*$/, "", n)
      # template arguments name the continuation: kept; any other dropped
      if (n !~ /_ws_(step|dev)_gpu</) sub(/<.*$/, "", n)
      u = $col["Metric Unit"]; gsub(/"/, "", u)
      v = $col["Metric Value"]; gsub(/[",]/, "", v)
      ns = v * (u == "usecond" ? 1e3 : u == "msecond" ? 1e6 : u == "second" ? 1e9 : 1)
      k = kind(n)
      t[k] += ns; c[k] += 1; total += ns; kernels += 1
      tn[n] += ns; cn[n] += 1
    }
    END {
      if (kernels == 0) { print "kernel-share: no gpu__time_duration.sum rows found"; exit 1 }
      printf "%-14s %9s %12s %8s\n", "kind", "kernels", "GPU ms", "share"
      split("scheduler fill continuation stage megakernel", order, " ")
      for (j = 1; j <= 5; ++j) {
        k = order[j]
        printf "%-14s %9d %12.3f %7.2f%%\n", k, c[k], t[k] / 1e6, 100 * t[k] / total
      }
      printf "%-14s %9d %12.3f %7.2f%%\n", "all kernels", kernels, total / 1e6, 100
      printf "scheduler share of kernel time: %.2f%% (queue kernels), %.2f%% with every fill\n",
        100 * t["scheduler"] / total, 100 * (t["scheduler"] + t["fill"]) / total
      print "by kernel (GPU ms, launches):"
      for (n in tn) printf "  %-44s %12.3f %7d\n", n, tn[n] / 1e6, cn[n] | "sort -k2 -n -r"
    }' "$1"
}

case "${1:-}" in
parse)
  [ $# -eq 2 ] || { echo "usage: $0 parse NCU_CSV" >&2; exit 2; }
  parse "$2"
  ;;
profile)
  [ $# -ge 3 ] || { echo "usage: $0 profile OUTDIR PATHTRACER [args...]" >&2; exit 2; }
  out=$2 pt=$3
  shift 3
  mkdir -p "$out"
  ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  [ -n "$ncu" ] || { echo "kernel-share: ncu (Nsight Compute) not found" >&2; exit 1; }
  # The same render unprofiled first: its dispatch line carries device_ms,
  # the stream's span, against which the kernels' sum shows the idle time.
  echo "+ $pt $* (unprofiled)"
  "$pt" "$@" 2>&1 | grep -E "rendered|dispatch:"
  echo "+ $ncu --clock-control none --metrics gpu__time_duration.sum --csv" \
    "--print-kernel-base function --log-file $out/ncu.csv $pt $*"
  "$ncu" --clock-control none --metrics gpu__time_duration.sum --csv \
    --print-kernel-base function --log-file "$out/ncu.csv" "$pt" "$@" >"$out/run.log" 2>&1
  rc=$?
  grep -E "rendered|dispatch:" "$out/run.log"
  [ $rc -eq 0 ] || { echo "kernel-share: ncu exited $rc"; tail -20 "$out/run.log"; exit $rc; }
  parse "$out/ncu.csv" | tee "$out/summary.txt"
  ;;
*)
  echo "usage: $0 profile OUTDIR PATHTRACER [args...] | parse NCU_CSV" >&2
  exit 2
  ;;
esac
