#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tools/model/check.sh -- model-check the shared-capacity auxiliary protocol
# (SPEC 3.3/3.4) with spin, over every small configuration, and check that the
# entry-only admission of SPEC 3.6 is caught overflowing.
#
#   tools/model/check.sh            # all checks, $JOBS (default: nproc) at once
#   JOBS=1 tools/model/check.sh
#   EXTRA_DEFS="-DBROKEN_ADMIT=1" tools/model/check.sh   # must FAIL (sanity)
#
# Exit 0 iff every check gave the expected verdict.  Needs spin and gcc.
set -u -o pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MODEL="$HERE/aux_protocol.pml"
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
EXTRA_DEFS=${EXTRA_DEFS:-}
PAN_DEPTH=${PAN_DEPTH:-2000000}

for tool in spin gcc; do
	command -v "$tool" >/dev/null 2>&1 || { echo "check.sh: $tool not found" >&2; exit 1; }
done
[ -r "$MODEL" ] || { echo "check.sh: missing $MODEL" >&2; exit 1; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/wavesched-model.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

# One check: $1 = id, $2 = expectation (pass|violation), $3 = label, rest = -D flags.
# Writes "$WORK/$id.res": one summary line, first word PASS or FAIL.
check_one() {
	local id=$1 expect=$2 label=$3; shift 3
	local dir="$WORK/$id" res="$WORK/$id.res" t0 t1 out errors verdict why=""
	if ! { mkdir -p "$dir" && cp "$MODEL" "$dir/model.pml" && cd "$dir"; }; then
		echo "FAIL  $label  (setup)" >"$res"; return
	fi
	t0=$(date +%s.%N)
	# shellcheck disable=SC2086
	if ! spin -a "$@" $EXTRA_DEFS model.pml >spin.log 2>&1; then
		echo "FAIL  $label  (spin -a: $(head -c 200 spin.log | tr '\n' ' '))" >"$res"; return
	fi
	# Plain pan: assertions and invalid end states are both checked (no -E,
	# no -A); -DNOREDUCE: a single process, partial-order reduction buys nothing.
	if ! gcc -O0 -w -DNOREDUCE -DVECTORSZ=256 -o pan pan.c >gcc.log 2>&1; then
		echo "FAIL  $label  (gcc: $(head -c 200 gcc.log | tr '\n' ' '))" >"$res"; return
	fi
	./pan -m"$PAN_DEPTH" -w20 >pan.out 2>&1
	t1=$(date +%s.%N)
	out=pan.out
	errors=$(sed -n 's/.*errors: \([0-9][0-9]*\).*/\1/p' "$out" | tail -1)
	local states depth trans first
	states=$(awk '/states, stored/ {print $1; exit}' "$out")
	trans=$(awk '/transitions \(= stored\+matched\)/ {print $1; exit}' "$out")
	depth=$(sed -n 's/.*depth reached \([0-9][0-9]*\).*/\1/p' "$out" | tail -1)
	first=$(grep -m1 -E 'assertion violated|invalid end state|error:' "$out" | sed 's/^pan:[0-9]*: *//')
	if [ -z "$errors" ]; then
		verdict=FAIL; why="no 'errors:' line in pan output"
	elif grep -q 'max search depth too small' "$out"; then
		verdict=FAIL; why="search truncated (max search depth too small)"
	elif [ "$expect" = pass ]; then
		if [ "$errors" = 0 ]; then verdict=PASS; why="errors: 0"
		else verdict=FAIL; why="errors: $errors, $first"; fi
	elif [ "$expect" = storage ]; then
		if [ "$errors" -ge 1 ] && grep -q 'assertion violated (E<=' "$out"; then
			verdict=PASS; why="storage overflow found as expected: $first"
		else
			verdict=FAIL; why="expected a storage overflow, got errors: $errors ${first:+($first)}"
		fi
	else
		if [ "$errors" -ge 1 ] && grep -q 'assertion violated (L<=' "$out"; then
			verdict=PASS; why="overflow found as expected: $first"
		else
			verdict=FAIL; why="expected an overflow, got errors: $errors ${first:+($first)}"
		fi
	fi
	printf '%s  %-34s %s; states=%s transitions=%s depth=%s time=%.2fs\n' \
		"$verdict" "$label" "$why" "${states:-?}" "${trans:-?}" "${depth:-?}" \
		"$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" >"$res"
	if [ "$verdict" = FAIL ]; then cp "$out" "$WORK/$id.pan.out"; fi
}
export -f check_one
export WORK MODEL EXTRA_DEFS PAN_DEPTH

# ---- the list of checks ------------------------------------------------------
LIST="$WORK/list"
: >"$LIST"
n=0
# one line per check: id|expectation|label|-D flags
add() { local e=$1 l=$2; shift 2; n=$((n + 1)); printf '%03d|%s|%s|%s\n' "$n" "$e" "$l" "$*" >>"$LIST"; }

# The grouped protocol over every C 1..4, S 1..3, P 1..2, every bound
# b_p in 1..C (each admits a pool of R = 1; queued counts n in 1..floor(C/b_p)
# cover every pool size R with R*b_p <= C).  Default RUNS=4, K=3.
for C in 1 2 3 4; do
	for S in 1 2 3; do
		for b1 in $(seq 1 "$C"); do
			add pass "grouped C=$C S=$S P=1 b=($b1)" "-DC=$C" "-DS=$S" -DP=1 "-DB1=$b1"
		done
		for b1 in $(seq 1 "$C"); do
			for b2 in $(seq 1 "$C"); do
				add pass "grouped C=$C S=$S P=2 b=($b1,$b2)" "-DC=$C" "-DS=$S" -DP=2 "-DB1=$b1" "-DB2=$b2"
			done
		done
	done
done
# SPEC 3.6 numbers (C=8, two stages, b=1), grouped: must hold.
add pass "grouped C=8 S=2 P=1 b=(1) [3.6]" -DC=8 -DS=2 -DP=1 -DB1=1
# Entry-only admission (stages as separate works): spin must find L > C,
# on the smallest configuration and on the 3.6 numbers.
add violation "entry-only C=1 S=2 P=1 b=(1)" -DENTRY_ONLY -DC=1 -DS=2 -DP=1 -DB1=1
add violation "entry-only C=8 S=2 P=1 b=(1) [3.6]" -DENTRY_ONLY -DC=8 -DS=2 -DP=1 -DB1=1

# Issue 18: append-allocated storage (holes below the extent), every client
# policy of prepare_for_admission; admission against the available slots must
# hold, and today's protocol (availability ignored) must overflow the storage.
for C in 1 2 3 4; do
	for S in 1 2; do
		for b1 in $(seq 1 "$C"); do
			add pass "append C=$C S=$S P=1 b=($b1)" -DAPPEND "-DC=$C" "-DS=$S" -DP=1 "-DB1=$b1"
		done
	done
done
add pass "append C=4 S=2 P=2 b=(1,2)" -DAPPEND -DC=4 -DS=2 -DP=2 -DB1=1 -DB2=2
add storage "append, availability ignored C=2 S=1" -DAPPEND -DIGNORE_AVAIL -DC=2 -DS=1 -DP=1 -DB1=1
add storage "append, availability ignored C=4 S=1" -DAPPEND -DIGNORE_AVAIL -DC=4 -DS=1 -DP=1 -DB1=1

# ---- run ---------------------------------------------------------------------
start=$(date +%s)
# shellcheck disable=SC2016
xargs -d '\n' -n 1 -P "$JOBS" bash -c \
	'IFS="|" read -r id e l d <<<"$1"; check_one "$id" "$e" "$l" $d' _ <"$LIST"

pass=0 fail=0
while IFS='|' read -r id _; do
	line=$(cat "$WORK/$id.res" 2>/dev/null || echo "FAIL  check $id  (no result)")
	echo "$line"
	case $line in PASS*) pass=$((pass + 1)) ;; *) fail=$((fail + 1)) ;; esac
done <"$LIST"
for f in "$WORK"/*.pan.out; do
	[ -e "$f" ] || break
	echo "--- first failing pan output ($(basename "$f" .pan.out)):"
	head -40 "$f"
	break
done
echo "total time: $(( $(date +%s) - start ))s with $JOBS parallel jobs${EXTRA_DEFS:+, EXTRA_DEFS=$EXTRA_DEFS}"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
