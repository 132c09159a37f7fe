#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs wavesched-demo on the Vulkan backend and on the CPU backend for every
# scheduler configuration and compares them (docs/vulkan.md):
#   - the result line (items, continuation runs, checksum) must be identical;
#   - so must the statistics table (every count; the elapsed time is
#     and the device time are dropped): the scheduler's decisions depend only on queue counts, which
#     do not depend on slot order, so every backend takes the same path.
#
# usage: check-demo.sh [--demo PATH] [--items N] [--pool R] [--verify]
#   --demo    the wavesched-demo binary (default: build-vk/examples/wavesched-demo)
#   --items   logical items (default 20000: fast enough on lavapipe)
#   --pool    resident frames (default 512)
#   --verify  also pass --verify (queue verification every iteration)
# Exit status: 0 all equal, 1 a difference or a failed run, 77 no Vulkan
# device (the ctest skip code). Environment: WS_VULKAN_DEVICE picks the device.
set -u

demo=build-vk/examples/wavesched-demo
items=20000
pool=512
verify=
while [ $# -gt 0 ]; do
  case "$1" in
  --demo) demo=$2; shift 2 ;;
  --items) items=$2; shift 2 ;;
  --pool) pool=$2; shift 2 ;;
  --verify) verify=--verify; shift ;;
  -h | --help) sed -n '2,17p' "$0"; exit 0 ;;
  *) echo "check-demo.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
if [ ! -x "$demo" ]; then
  echo "check-demo.sh: no demo binary at $demo (build it, or pass --demo PATH)" >&2
  exit 2
fi

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

# The result line and the statistics without elapsed times (host, and the
# device time in parentheses where the backend measures one).
summarize() {
  grep -E '^(items |dispatch: |main |aux )' "$1" |
    sed -e 's/ (device [0-9.]* ms)$//' -e 's/, [0-9.]* ms$//'
}

# One configuration: $1 = label, the rest = demo options.
passed=0
failed=0
run() {
  label=$1
  shift
  if ! "$demo" --backend cpu --items "$items" --pool "$pool" $verify "$@" >"$tmp/cpu" 2>&1; then
    echo "FAIL $label: the cpu run failed:"; sed 's/^/  /' "$tmp/cpu"
    failed=$((failed + 1))
    return
  fi
  if ! "$demo" --backend vulkan --items "$items" --pool "$pool" $verify "$@" >"$tmp/vk" 2>&1; then
    echo "FAIL $label: the vulkan run failed:"; sed 's/^/  /' "$tmp/vk"
    failed=$((failed + 1))
    return
  fi
  summarize "$tmp/cpu" >"$tmp/cpu.s"
  summarize "$tmp/vk" >"$tmp/vk.s"
  if [ ! -s "$tmp/cpu.s" ] || ! cmp -s "$tmp/cpu.s" "$tmp/vk.s"; then
    echo "FAIL $label: cpu and vulkan differ:"
    diff "$tmp/cpu.s" "$tmp/vk.s" | sed 's/^/  /'
    failed=$((failed + 1))
    return
  fi
  printf 'ok   %-44s %s\n' "$label" "$(grep -o 'checksum [0-9a-f]*' "$tmp/vk")"
  passed=$((passed + 1))
}

# Is there a Vulkan device at all?
if ! "$demo" --backend vulkan --items 1 --pool 1 >"$tmp/probe" 2>&1; then
  if grep -q 'backend or device not available' "$tmp/probe"; then
    echo "check-demo.sh: no Vulkan device, skipped:"; sed 's/^/  /' "$tmp/probe"
    exit 77
  fi
fi
grep -m1 '^wavesched-demo:' "$tmp/probe" | sed 's/^wavesched-demo: 1 items on /vulkan device: /; s/, wavefront.*//'

for layout in aos soa; do
  for compaction in on off; do
    for accounting in materialized incremental fused; do
      run "$layout $accounting compaction=$compaction greedy" \
        --layout $layout --accounting $accounting --compaction $compaction --policy greedy
    done
    # the all-queues policy needs materialized accounting
    run "$layout materialized compaction=$compaction all" \
      --layout $layout --accounting materialized --compaction $compaction --policy all
  done
  run "$layout megakernel" --layout $layout --scheduler megakernel
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
