#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# No local memory in the CUDA queue kernels, from ptxas' own report (no GPU
# needed): a per-thread array indexed at run time, a parameter the kernel
# writes to, or a spill, puts loads and stores to local memory in the loop
# over every tile. Session 8 found a two-pointer array of the sorted gather
# there with Nsight Compute; session 9 a run-time cursor stride that made
# its K > 7 form spill, and the compaction move copying its whole 616-byte
# parameter block to every thread's stack (it advanced one of the
# parameters in place). Every entry function of cuda_queue.cu must have a
# 0-byte stack frame and no spill.
#   local_memory.sh NVCC INCLUDE_DIR SOURCE ARCH
set -u -o pipefail
nvcc=$1 inc=$2 src=$3 arch=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$nvcc" -std=c++17 -O2 -arch="sm_$arch" -c -o "$tmp/q.o" -I "$inc" -Xptxas -v "$src" \
  >"$tmp/log" 2>&1 || { cat "$tmp/log"; echo "local_memory: compile failed"; exit 1; }
# "MANGLED-NAME STACK SPILL-STORES SPILL-LOADS" per entry function
grep -E "Compiling entry|bytes stack frame" "$tmp/log" | paste - - |
  sed -E "s/.*entry function '([^']*)'.* ([0-9]+) bytes stack frame, ([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads.*/\1 \2 \3 \4/" \
  >"$tmp/frames"
n=$(wc -l <"$tmp/frames")
[ "$n" -ge 5 ] || { cat "$tmp/log"; echo "local_memory: found $n entry functions, expected the queue kernels"; exit 1; }
fail=0
while read -r name stack st ld; do
  if [ "$stack" -ne 0 ] || [ "$st" -ne 0 ] || [ "$ld" -ne 0 ]; then
    echo "FAIL $name: $stack-byte stack frame, $st bytes spill stores, $ld bytes spill loads"
    fail=1
  else
    echo "ok   $name"
  fi
done <"$tmp/frames"
[ $fail = 0 ] || exit 1
echo "local_memory: ok ($n entry functions)"
