#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the path tracer with CUDA, runs its tests on the CUDA device and the
# CPU-vs-CUDA comparison, then times renders: wavefront (shadow pipeline at the
# default capacity, with partial admission on a quarter of it, inline NEE,
# incremental instead of CUDA's default fused accounting, other pool sizes) vs
# megakernel, on CUDA, on Vulkan when the build directory has it, and on the
# CPU. Logs go to $OUT (default
# out/pathtracer). For the GPU machine (device tool; carry [".debs"] so that
# cmocka, which tests/ needs at configure time, can be unpacked there).
#
#   bash examples/pathtracer/bench.sh [WIDTH HEIGHT SPP [TESTS]]  (default 1920 1080 64 1)
# TESTS=0 skips the tests and comparisons; EXTRA="flags" are added to every
# timed run but the first (e.g. EXTRA=--no-shadow-counters).
# The real scenes (engine + bunny) have their own command: bench-scenes.sh.
set -u -o pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-out/pathtracer}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
W=${1:-1920} H=${2:-1080} SPP=${3:-64} TESTS=${4:-1}
bd=${BUILD_DIR:-build-pt-gpu}
for f in .debs/libcmocka*.deb; do [ -f "$f" ] && dpkg -x "$f" / ; done
ldconfig 2>/dev/null
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1
  nvcc --version | tail -1
  nproc
} | tee "$OUT/env.log"
# A build directory configured already (scripts/gpu-final's) is used as is.
{ [ -f "$bd/build.ninja" ] || cmake -S . -B "$bd" -G Ninja -DWS_CUDA=ON -DCMAKE_CUDA_COMPILER=nvcc \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DWS_VULKAN=OFF -DWS_BUILD_BENCH=OFF \
  -DCMAKE_BUILD_TYPE=Release >"$OUT/build.log" 2>&1; } &&
  ninja -C "$bd" wavesched-pathtracer test_pathtracer >>"$OUT/build.log" 2>&1 ||
  { tail -40 "$OUT/build.log"; exit 1; }
pt=$bd/examples/pathtracer/wavesched-pathtracer
t=$bd/tests/pathtracer/test_pathtracer
tests() {
  local r=0
  echo "== test_pathtracer --backend cuda"; $t --backend cuda || r=1
  echo "== test_pathtracer --backend cpu"; $t --backend cpu || r=1
  echo "== test_pathtracer --compare-backends cpu,cuda"; $t --compare-backends cpu,cuda || r=1
  echo "== compare at 256x256, 16 spp"
  $t --compare-backends cpu,cuda --width 256 --height 256 --spp 16 || r=1
  return $r
}
rc=0
if [ "$TESTS" = 1 ]; then
  tests 2>&1 | tee "$OUT/tests.log"
  rc=${PIPESTATUS[0]}
fi
run() { # label args...
  local label=$1
  shift
  echo "== $label: $*"
  "$pt" --no-progress ${EXTRA:-} "$@" 2>&1 | grep -E "rendered|dispatch:|wavefront scheduler|megakernel scheduler|auxiliary:|shadow rays|failed"
}
{
  R=4194304 # the GPU default pool (pt_default_pool)
  echo "== gpu wavefront pipeline C=R (full output)"
  "$pt" --no-progress --backend cuda --width $W --height $H --spp $SPP \
    --output "$OUT/pathtracer-gpu.png" --stats-json "$OUT/gpu-wavefront.json"
  run "gpu wavefront partial admission C=R/4" --backend cuda --width $W --height $H --spp $SPP \
    --shadow-capacity $((R / 4)) --partial-admission --output -
  run "gpu wavefront inline NEE" --backend cuda --width $W --height $H --spp $SPP --nee inline --output -
  run "gpu wavefront pipeline C=R, incremental accounting" --backend cuda --width $W --height $H \
    --spp $SPP --accounting incremental --output -
  run "gpu megakernel" --backend cuda --width $W --height $H --spp $SPP --scheduler megakernel --output -
  run "gpu wavefront pool 1M (the default before session 5)" --backend cuda --width $W --height $H \
    --spp $SPP --pool 1048576 --output -
  run "gpu wavefront pool 256K (C=R)" --backend cuda --width $W --height $H --spp $SPP --pool 262144 --output -
  # Vulkan (NVIDIA driver) where this build has it
  if "$pt" --backend vulkan --width 8 --height 8 --spp 1 --no-progress --output - >/dev/null 2>&1; then
    run "vulkan wavefront pipeline C=R" --backend vulkan --width $W --height $H --spp $SPP --output -
    run "vulkan megakernel" --backend vulkan --width $W --height $H --spp $SPP \
      --scheduler megakernel --output -
  fi
  run "cpu wavefront (default run)" --output -
  run "cpu megakernel (default run)" --scheduler megakernel --output -
} 2>&1 | tee "$OUT/bench.log"
exit $rc
