#!/usr/bin/env python3
"""Mutation testing of one source file: does the test suite notice when the
code is wrong?

Each mutant changes one operator or removes one statement of FILE, is built
in BUILD (ninja), and runs the tests (ctest, stopping at the first failure).
A mutant is *killed* when a test fails or times out, *stillborn* when it does
not build, and *survives* when every test passes: a survivor is either a
change nobody can observe (an equivalent mutant, to be argued in the report)
or a hole in the tests. FILE is restored after every mutant, also when the
run is interrupted.

    python3 tools/mutate/mutate.py --build build-mut --file include/wavesched/detail/decide.h \
        [--lines 250-946] [--tests REGEX] [--timeout 120] [--list] [--only 12,40] \
        [--report out.tsv] [--logs DIR]

Run it on a copy of the tree (it edits FILE in place): docs/reliability.md,
"Mutation testing". Mutant numbers depend only on FILE and on the operators
below; the recorded campaigns (docs/results/2026-12-07-mutation) name
mutants by them, so change the operators only with a new campaign.

Operators, each applied at one place per mutant, outside comments, strings
and preprocessor lines:
  rel   <= <, < <=, >= >, > >=, == !=, != ==
  log   && ||, || &&
  neg   !( -> (
  acc   += -> =, -= -> =
  arith ' + ' -> ' - ', ' - ' -> ' + '
  ret   return 0 <-> return 1
  del   a statement line that assigns, increments or calls, removed
"""
import argparse
import os
import re
import signal
import subprocess
import sys
import time

REL = [
    (re.compile(r"<="), "<"),
    (re.compile(r"(?<![<-])<(?![<=])"), "<="),
    (re.compile(r">="), ">"),
    (re.compile(r"(?<![>-])>(?![>=])"), ">="),
    (re.compile(r"=="), "!="),
    (re.compile(r"!="), "=="),
]
OPS = [("rel", r, s) for r, s in REL] + [
    ("log", re.compile(r"&&"), "||"),
    ("log", re.compile(r"\|\|"), "&&"),
    ("neg", re.compile(r"!\("), "("),
    ("acc", re.compile(r"\+="), "="),
    ("acc", re.compile(r"-="), "="),
    ("arith", re.compile(r" \+ "), " - "),
    ("arith", re.compile(r" - "), " + "),
    ("ret", re.compile(r"\breturn 0(u?);"), r"return 1\1;"),
    ("ret", re.compile(r"\breturn 1(u?);"), r"return 0\1;"),
]
DECL = re.compile(
    r"^\s*(const\s+|static\s+)*(unsigned|uint\d+_t|int\d+_t|int|bool|size_t|char|float|double|"
    r"ws_\w+|struct\s+\w+|WS_DEC\b)[\s*]+\w+"
)
# `return` alone: a return of a value (a string's characters are masked out)
STMT = re.compile(r"^\s*(\w[\w\[\]\.\->*() ]*(=|\+=|-=|\+\+|--)[^=].*|\w+\(.*\)|\+\+\w.*|return)\s*;\s*$")


def code_mask(lines):
    """Per line, the set of character positions that are code (not comment,
    string or preprocessor)."""
    masks = []
    in_block = False
    for line in lines:
        keep = set()
        if not in_block and line.lstrip().startswith("#"):
            masks.append(keep)
            continue
        i = 0
        in_str = None
        while i < len(line):
            c = line[i]
            if in_block:
                if line.startswith("*/", i):
                    in_block = False
                    i += 2
                    continue
                i += 1
                continue
            if in_str:
                if c == "\\":
                    i += 2
                    continue
                if c == in_str:
                    in_str = None
                i += 1
                continue
            if line.startswith("/*", i):
                in_block = True
                i += 2
                continue
            if line.startswith("//", i):
                break
            if c in "\"'":
                in_str = c
                i += 1
                continue
            keep.add(i)
            i += 1
        masks.append(keep)
    return masks


def mutants(lines, lo, hi):
    masks = code_mask(lines)
    out = []
    in_assert = False
    for n in range(lo, hi + 1):
        line = lines[n - 1]
        mask = masks[n - 1]
        if "_Static_assert" in line:
            in_assert = True
        if in_assert:
            if ";" in line:
                in_assert = False
            continue
        if not mask:
            continue
        for kind, rx, sub in OPS:
            for m in rx.finditer(line):
                if not all(p in mask for p in range(m.start(), m.end())):
                    continue
                new = line[: m.start()] + m.expand(sub) + line[m.end():]
                out.append((n, kind, line, new))
        code = "".join(ch for i, ch in enumerate(line) if i in mask)
        if STMT.match(code) and not DECL.match(code) and code.strip() != "return;":
            out.append((n, "del", line, re.sub(r"\S.*", "/* removed */", line, count=1)))
    return out


def run(cmd, cwd, timeout):
    """rc and output; rc None when the whole command ran past `timeout`
    seconds (tests carry their own ctest TIMEOUT property, which overrides
    ctest --timeout, so a mutant that hangs a test is stopped here: the
    process group, test programs included, is killed)."""
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, errors="replace", start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        return p.returncode, out
    except subprocess.TimeoutExpired:
        kill_group(p.pid)
        out, _ = p.communicate()
        return None, out
    except BaseException:
        # interrupted (SIGTERM, ^C): no build or test of a mutant outlives the run
        kill_group(p.pid)
        raise


def kill_group(pid):
    """Kills the process group of a command, which may have ended already."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def first_failures(log):
    """The failed tests ctest lists at its end (with --stop-on-failure, the first)."""
    fails = re.findall(r"\d+ - (\S+) \((?:Failed|Timeout|SEGFAULT|Subprocess aborted|Exception)", log)
    return ",".join(sorted(set(fails)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True, help="a configured ninja build directory")
    ap.add_argument("--file", required=True)
    ap.add_argument("--lines", help="LO-HI: mutate only these lines (1-based, inclusive)")
    ap.add_argument("--tests", help="ctest -R regex (default: every test)")
    ap.add_argument("--timeout", type=int, default=120,
                    help="seconds for one mutant's whole test run (killed past it: killed)")
    ap.add_argument("--list", action="store_true", help="print the mutants and stop")
    ap.add_argument("--only", help="comma-separated mutant numbers")
    ap.add_argument("--report", help="TSV file to write, one row per mutant")
    ap.add_argument("--logs", help="directory for each killed mutant's test output "
                    "(mutant-N.log): tells a real kill from a flaky test")
    a = ap.parse_args()

    with open(a.file) as f:
        text = f.read()
    lines = text.split("\n")
    lo, hi = 1, len(lines)
    if a.lines:
        lo, hi = (int(x) for x in a.lines.split("-"))
    ms = mutants(lines, lo, hi)
    if a.list:
        for i, (n, kind, old, new) in enumerate(ms):
            print(f"{i}\t{n}\t{kind}\t{old.strip()}\t=>\t{new.strip()}")
        return 0
    pick = set(int(x) for x in a.only.split(",")) if a.only else None

    ctest = ["ctest", "--test-dir", a.build, "-j", str(os.cpu_count() or 1), "--stop-on-failure",
             "--output-on-failure"]
    if a.tests:
        ctest += ["-R", a.tests]
    rc, log = run(["ninja", "-C", a.build], ".", 1800)
    if rc != 0:
        print("the unmutated tree does not build:\n" + log[-3000:], file=sys.stderr)
        return 2
    rc, log = run(ctest, ".", 3600)
    if rc != 0:
        print("the unmutated tree fails its tests:\n" + log[-3000:], file=sys.stderr)
        return 2

    # a kill (SIGTERM) unwinds through the `finally` below, which restores FILE
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    tally = {"killed": 0, "survived": 0, "stillborn": 0}
    report = open(a.report, "w") if a.report else None
    if report:
        report.write("mutant\tline\tkind\tverdict\tfirst failing tests\toriginal\tmutant\n")
    try:
        for i, (n, kind, old, new) in enumerate(ms):
            if pick is not None and i not in pick:
                continue
            mutated = lines[:]
            mutated[n - 1] = new
            with open(a.file, "w") as f:
                f.write("\n".join(mutated))
            t0 = time.time()
            rc, log = run(["ninja", "-C", a.build], ".", 1800)
            if rc != 0:
                verdict, why = "stillborn", "build"
            else:
                rc, log = run(ctest, ".", a.timeout)
                if rc is None:
                    verdict, why = "killed", "ctest timeout"
                elif rc != 0:
                    verdict, why = "killed", first_failures(log) or "ctest rc %d" % rc
                else:
                    verdict, why = "survived", ""
            if a.logs and verdict == "killed":
                os.makedirs(a.logs, exist_ok=True)
                with open(os.path.join(a.logs, f"mutant-{i}.log"), "w") as f:
                    f.write(log)
            tally[verdict] += 1
            row = (i, n, kind, verdict, why, old.strip(), new.strip())
            if report:
                # one row per mutant as it ends: an interrupted run keeps its results
                report.write("\t".join(str(x) for x in row) + "\n")
                report.flush()
            print(f"[{i}/{len(ms)}] {a.file}:{n} {kind} {verdict} {why} ({time.time() - t0:.0f} s)"
                  f"\n    {old.strip()}\n => {new.strip()}", flush=True)
    finally:
        with open(a.file, "w") as f:
            f.write(text)
        run(["ninja", "-C", a.build], ".", 1800)
        if report:
            report.close()
    counted = tally["killed"] + tally["survived"]
    print(f"mutants: {sum(tally.values())}; killed {tally['killed']}, survived {tally['survived']}, "
          f"stillborn {tally['stillborn']}; score {100.0 * tally['killed'] / max(counted, 1):.1f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
