#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# kernel.h's register caps (WS_CONTINUATION_MAX_REGISTERS,
# WS_KERNEL_MAX_REGISTERS) from ptxas' own report, no GPU needed: the capped
# continuation and plain kernel are compiled within their cap, the same code
# uncapped takes more (so the check can fail), and no uncapped instance of a
# capped continuation is compiled.
#   register_caps.sh NVCC INCLUDE_DIR SOURCE ARCH
set -u -o pipefail
nvcc=$1 inc=$2 src=$3 arch=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$nvcc" -std=c++17 -arch="sm_$arch" -c -o "$tmp/rc.o" -I "$inc" -Xptxas -v "$src" \
  >"$tmp/log" 2>&1 || { cat "$tmp/log"; echo "register_caps: compile failed"; exit 1; }
# "REGS MANGLED-NAME" per entry function
grep -E "Compiling entry|Used [0-9]+ registers" "$tmp/log" | paste - - |
  sed -E "s/.*entry function '([^']*)'.*Used ([0-9]+) registers.*/\2 \1/" >"$tmp/regs"
fail=0
regs() { awk -v k="$1" '$2 ~ k { print $1; exit }' "$tmp/regs"; }
check() { # name regex, relation (le|gt|none), cap
  local r
  r=$(regs "$1")
  case $2 in
    none) [ -z "$r" ] && echo "ok   no kernel $1" && return
          echo "FAIL $1 compiled ($r registers): a capped kernel's uncapped twin" ;;
    le) [ -n "$r" ] && [ "$r" -le "$3" ] && echo "ok   $1: $r <= $3" && return
        echo "FAIL $1: '${r:-missing}' registers, cap $3" ;;
    gt) [ -n "$r" ] && [ "$r" -gt "$3" ] && echo "ok   $1: $r > $3 uncapped" && return
        echo "FAIL $1: '${r:-missing}' registers, expected more than $3 uncapped" ;;
  esac
  fail=1
}
check '^_Z21rc_ws_step_gpu_cappedILj1E' le 32
check '^_Z20rc_ws_dev_gpu_cappedILj1E' le 32
check '^_Z14rc_ws_step_gpuILj2E' gt 32
check '^_Z13rc_ws_dev_gpuILj2E' gt 32
check '^_Z14rc_ws_step_gpuILj1E' none
check '^_Z13rc_ws_dev_gpuILj1E' none
check 'rc_plain_capped_ws_launch_capped_gpuILj32E' le 32
check '^_Z22rc_plain_ws_launch_gpu' gt 32
check 'rc_plain_ws_launch_capped_gpu' none
[ $fail = 0 ] || { cat "$tmp/regs"; exit 1; }
echo "register_caps: ok"
