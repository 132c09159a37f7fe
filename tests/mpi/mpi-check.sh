#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The path tracer under MPI (issue 17, docs/mpi.md), for ctest (label mpi):
#   mpi-check.sh SINGLE MPI identical [BACKEND]
#       mpirun -np 2 (interleaved rows, then blocks) and -np 3 give the image
#       of the single-process render bit for bit (PFM compared with cmp),
#       and the same path and shadow-ray totals in the statistics JSON;
#       skipped (77) when the single process cannot open BACKEND's device
#   mpi-check.sh SINGLE MPI fail-rank
#       --fail-rank 1 makes every rank stop: mpirun exits non-zero within the
#       time limit, rank 1 names its device failure, rank 0 names rank 1
#   mpi-check.sh DEMO DEMO_MPI demo-identical [BACKEND]
#       wavesched-demo-mpi -np 2 and 3 (blocks of 5000 items), and -np 3 over
#       2 items: the single-process checksum and continuation runs
#   mpi-check.sh DEMO DEMO_MPI demo-fail-rank
#       --fail-rank 2 of 3: every rank stops, non-zero, with messages
# Exit 77 (skipped) without mpirun. Environment: MPIRUN (default mpirun),
# MPI_CHECK_TIMEOUT (seconds a run may take, default 120).
set -uo pipefail
single=$1 mpi=$2 case=$3 backend=${4:-cpu}
mpirun=${MPIRUN:-mpirun}
limit=${MPI_CHECK_TIMEOUT:-120}
command -v "$mpirun" >/dev/null 2>&1 || { echo "SKIP: no $mpirun"; exit 77; }
[ -x "$mpi" ] || { echo "SKIP: $mpi was not built"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Open MPI in a container, as root, on a shared-memory transport only:
# --allow-run-as-root (CI runs as root), --oversubscribe (more ranks than
# cores), --bind-to none (no pinning on a shared machine), pml ob1 over btl
# self,vader (not UCX, whatever the host has) with the single-copy mechanism
# off (no CMA/ptrace between container processes).
export OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_rmaps_base_oversubscribe=1
# No PCI discovery in hwloc: the ranks are not bound, and under the
# sanitizers libpciaccess's reading of pci.ids alone takes minutes.
export HWLOC_COMPONENTS=-pci
run_mpi() {
  local np=$1
  shift
  # Under ASan (scripts/test's asan step) the ranks run without LeakSanitizer:
  # Open MPI leaks at MPI_Finalize from components it has unloaded by then,
  # whose stacks no suppression can name. Every other ASan/UBSan check stays
  # on, and the single-process runs keep the leak check.
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" timeout "$limit" "$mpirun" --allow-run-as-root --oversubscribe --bind-to none \
    --mca pml ob1 --mca btl self,vader -np "$np" "$mpi" "$@"
}

# small but not tiny: rows not divisible by the ranks, two dispatches
opts=(--backend "$backend" --width 40 --height 37 --spp 4 --batch-spp 2 --pool 512 --no-progress)
[ "$backend" = cpu ] && opts+=(--threads 1)

fail=0
expect() { # expect <description> <command...>
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; else echo "FAILED: $what"; fail=1; fi
}
total() { # total <json> <key>: the key's value in "totals" / "shadow_rays"
  grep -o "\"$2\": [0-9.]*" "$1" | head -1 | awk '{print $2}'
}

case $case in
identical)
  if ! "$single" "${opts[@]}" --output "$work/single.pfm" --stats-json "$work/single.json" \
    >"$work/single.log" 2>&1; then
    cat "$work/single.log"
    if grep -q "cannot open the $backend backend" "$work/single.log"; then
      echo "SKIP: no $backend device"
      exit 77
    fi
    echo "FAILED: the single-process render"
    exit 1
  fi
  for v in "2 interleaved" "2 blocks" "3 interleaved"; do
    set -- $v
    np=$1 share=$2 tag=$1-$2
    if ! run_mpi "$np" "${opts[@]}" --share "$share" --output "$work/$tag.pfm" \
      --stats-json "$work/$tag.json" >"$work/$tag.log" 2>&1; then
      cat "$work/$tag.log"
      echo "FAILED: mpirun -np $np --share $share exited non-zero"
      fail=1
      continue
    fi
    cat "$work/$tag.log"
    expect "-np $np, $share rows: the image is the single-process one bit for bit" \
      cmp "$work/single.pfm" "$work/$tag.pfm"
    for key in paths generated_count occluded unoccluded; do
      a=$(total "$work/single.json" $key) b=$(total "$work/$tag.json" $key)
      expect "-np $np, $share rows: $key $b = single-process $a" test -n "$a" -a "$a" = "$b"
    done
    expect "-np $np, $share rows: the per-rank table and the spread" \
      grep -q "^spread over $np ranks with rows" "$work/$tag.log"
  done
  ;;
fail-rank)
  start=$SECONDS
  run_mpi 2 "${opts[@]}" --output "$work/fail.pfm" --fail-rank 1 >"$work/fail.log" 2>&1
  rc=$?
  cat "$work/fail.log"
  expect "mpirun exits non-zero (exit $rc), not by the time limit (124)" \
    test "$rc" -ne 0 -a "$rc" -ne 124 -a "$rc" -ne 137
  expect "within ${limit} s ($((SECONDS - start)) s)" test $((SECONDS - start)) -lt "$limit"
  expect "rank 1 names its device failure" \
    grep -q "\[1/2\]: cannot open the $backend backend: .*(--fail-rank 1)" "$work/fail.log"
  expect "rank 0 names the failed rank" \
    grep -q "\[0/2\]: opening the devices: rank 1 of 2 failed; stopping" "$work/fail.log"
  ;;
demo-identical)
  # the demo: blocks of items; the checksum folds every item in order
  dopts=(--backend "$backend" --items 5000 --pool 256)
  [ "$backend" = cpu ] && dopts+=(--cpu-threads 1)
  if ! "$single" "${dopts[@]}" >"$work/demo.log" 2>&1; then
    cat "$work/demo.log"
    grep -q "cannot open the $backend backend" "$work/demo.log" && { echo "SKIP: no $backend device"; exit 77; }
    echo "FAILED: the single-process demo"
    exit 1
  fi
  want=$(grep -o 'items .*, checksum [0-9a-f]*' "$work/demo.log")
  for np in 2 3; do
    run_mpi "$np" "${dopts[@]}" >"$work/demo-$np.log" 2>&1
    rc=$?
    cat "$work/demo-$np.log"
    got=$(grep -o 'items .*, checksum [0-9a-f]*' "$work/demo-$np.log")
    expect "demo -np $np (exit $rc): '$got' = single-process '$want'" \
      test "$rc" -eq 0 -a -n "$want" -a "$got" = "$want"
    expect "demo -np $np: the per-rank table and the spread" \
      grep -q "^spread over $np ranks with items" "$work/demo-$np.log"
  done
  # more ranks than items: the empty ranks join in and change nothing
  "$single" --backend "$backend" --items 2 >"$work/demo2.log" 2>&1
  run_mpi 3 --backend "$backend" --items 2 >"$work/demo2-3.log" 2>&1
  want=$(grep -o 'items .*, checksum [0-9a-f]*' "$work/demo2.log")
  got=$(grep -o 'items .*, checksum [0-9a-f]*' "$work/demo2-3.log")
  expect "demo -np 3 over 2 items: '$got' = '$want'" test -n "$want" -a "$got" = "$want"
  ;;
demo-fail-rank)
  start=$SECONDS
  run_mpi 3 --backend "$backend" --items 3000 --fail-rank 2 >"$work/fail.log" 2>&1
  rc=$?
  cat "$work/fail.log"
  expect "mpirun exits non-zero (exit $rc), not by the time limit (124)" \
    test "$rc" -ne 0 -a "$rc" -ne 124 -a "$rc" -ne 137
  expect "within ${limit} s ($((SECONDS - start)) s)" test $((SECONDS - start)) -lt "$limit"
  expect "rank 2 names its device failure" grep -q "rank 2: --fail-rank 2" "$work/fail.log"
  expect "the other ranks name rank 2" \
    test "$(grep -c 'running the shares: rank 2 of 3 failed; stopping' "$work/fail.log")" -eq 2
  ;;
*)
  echo "usage: mpi-check.sh SINGLE MPI identical|fail-rank|demo-identical|demo-fail-rank [BACKEND]" >&2
  exit 2
  ;;
esac
exit $fail
