#!/usr/bin/env python3
"""Writes the fuzzer's seed corpus (tools/fuzz/corpus/) from readable case
descriptions, in the byte format fz_harness.c decodes. Rerun after changing
the format:   python3 tools/fuzz/make_corpus.py
Check what a seed means:   <build>/fz_replay --describe tools/fuzz/corpus"""
import os
import struct

ACC = {"mat": 0, "inc": 1, "fused": 2}


LIMIT = {"backstop": 0, "exact": 1, "short": 2, "default": 3}
MB = {"none": 0, "rise": 1, "over-capacity": 2, "stage-sum": 3, "stage-count": 4,
      "bad-drain": 5, "fail": 6}
CALLS = {"reset": 0, "enqueue_count_readback": 1, "host_count": 2, "stage_host_count": 3,
         "admission_stage": 4, "dispatch_stage": 5, "prepare_for_producer": 6}


def case(N, R, K, maxlen=6, seed=0x1234567, layout="aos", acc="inc", compaction=True,
         allq=False, partial=False, verify=False, mega=False, reuse=False, threshold=None,
         align=0, legacy=False, raw=False, fault=None, entry=(1, 1), nxt=None, works=(),
         block=32, limit="backstop", short=0, mb=None):
    """mb: (kind, work, at, amount) for the lies, ("fail", work, call name, nth call).
    A work with "append": True gets an append-allocated pool (issue 18)."""
    f0 = (layout == "soa") | ACC[acc] << 1 | compaction << 3 | allq << 4 | partial << 5 \
        | verify << 6 | mega << 7
    tmode, tval = 0, 0
    if threshold == 1:
        tmode = 1
    elif threshold == "huge":
        tmode = 3
    elif threshold is not None:
        tmode, tval = 2, threshold
    fkind, fn = 0, 1
    if fault:
        fkind = {"alloc": 1, "backend": 2}[fault[0]]
        fn = fault[1] - 1
    f1 = reuse | tmode << 1 | (align != 0) << 3 | legacy << 4 | raw << 5 | fkind << 6
    b = bytes([f0, f1, K - 1, R - 1]) + struct.pack("<H", N) + bytes([maxlen - 1])
    b += struct.pack("<I", seed)
    b += bytes(entry)
    nxt = nxt or [(k % K + 1, 0) for k in range(1, K + 1)]
    assert len(nxt) == K
    for pair in nxt:
        b += bytes(pair)
    b += bytes([len(works)])
    for w in works:
        S = len(w["stages"])
        b += bytes([S - 1, w["C"] - 1, w.get("amax", 3) - 1, w.get("drain", 0)])
        bounds = [0] * K
        stages = [0] * K
        for k, (bound, stage) in w["producers"].items():
            bounds[k - 1] = bound
            stages[k - 1] = stage
        b += bytes(bounds) + bytes(stages)
        for pair in w["stages"]:
            b += bytes(pair)
    b += bytes([tval, align, block // 32 - 1]) + struct.pack("<H", fn)
    kind, work, at, amount, call = "none", 0, 0, 0, 0
    if mb and mb[0] == "fail":
        kind, work, call, nth = mb
        at, call = nth - 1, CALLS[call]
    elif mb:
        kind, work, at, amount = mb
    b += bytes([LIMIT[limit], short, MB[kind], work]) + struct.pack("<H", at)
    b += bytes([amount, call])
    append = sum(1 << i for i, w in enumerate(works) if w.get("append"))
    if append:  # older seeds end before this byte: it reads as 0
        b += bytes([append])
    return b


# SPEC §6 shape: entry -> sparse(c1) -> dense(c2) -> after(c3); stages
# prepare(0) -> {iterate(1), finish(2)}, iterate -> {iterate, finish}, finish -> release
SPEC6_NEXT = [(2, 2), (3, 3), (0, 0)]
SPEC6_WORK = {"C": 8, "amax": 4, "producers": {1: (1, 2), 2: (1, 0)},
              "stages": [(1, 2), (1, 2), (3, 3)]}

seeds = {}
for layout in ("aos", "soa"):
    for acc in ("mat", "inc", "fused"):
        seeds[f"spec6_{layout}_{acc}"] = case(67, 8, 3, maxlen=3, layout=layout, acc=acc,
                                              reuse=True, nxt=SPEC6_NEXT, works=[SPEC6_WORK])
seeds["spec6_nocompact_verify"] = case(67, 8, 3, maxlen=3, compaction=False, verify=True,
                                       acc="mat", nxt=SPEC6_NEXT, works=[SPEC6_WORK])
seeds["spec6_drain_last"] = case(67, 8, 3, maxlen=3, nxt=SPEC6_NEXT,
                                 works=[dict(SPEC6_WORK, drain=1)])
seeds["spec6_drain_largest"] = case(67, 8, 3, maxlen=3, nxt=SPEC6_NEXT,
                                    works=[dict(SPEC6_WORK, drain=2)])
seeds["spec6_partial_small_pool"] = case(67, 8, 3, maxlen=3, partial=True, nxt=SPEC6_NEXT,
                                         works=[dict(SPEC6_WORK, C=3)])
# divergent main graph with self-loops and early termination
LOOPY = [(1, 2), (3, 1), (2, 0), (4, 4), (5, 1), (6, 6)]
for acc in ("mat", "inc", "fused"):
    seeds[f"loopy_k6_{acc}"] = case(200, 32, 6, maxlen=12, acc=acc, entry=(1, 4), nxt=LOOPY,
                                    layout="soa", seed=0xBADC0DE)
seeds["loopy_k6_allqueues"] = case(200, 32, 6, maxlen=12, acc="mat", allq=True, entry=(1, 4),
                                   nxt=LOOPY)
seeds["loopy_k6_allqueues_nocompact"] = case(150, 17, 6, maxlen=12, acc="mat", allq=True,
                                             compaction=False, entry=(2, 5), nxt=LOOPY)
seeds["loopy_k6_megakernel"] = case(250, 16, 6, maxlen=12, mega=True, entry=(1, 4), nxt=LOOPY)
seeds["loopy_threshold_align"] = case(180, 24, 6, maxlen=10, threshold=5, align=0b100101,
                                      entry=(3, 1), nxt=LOOPY, verify=True)
seeds["loopy_threshold_huge"] = case(180, 24, 6, maxlen=10, threshold="huge", entry=(3, 1),
                                     nxt=LOOPY, compaction=False)
# two works sharing producer continuations, small capacities: forced drains
TWO = [{"C": 12, "amax": 5, "drain": 0, "producers": {1: (1, 0), 2: (2, 1), 4: (1, 2)},
        "stages": [(1, 0), (2, 1), (0, 3)]},
       {"C": 24, "amax": 3, "drain": 2, "producers": {2: (3, 1), 3: (1, 0)},
        "stages": [(1, 2), (0, 2)]}]
K4 = [(2, 3), (3, 4), (1, 4), (4, 0)]
seeds["two_works_inc"] = case(120, 4, 4, maxlen=8, nxt=K4, works=TWO, reuse=True)
seeds["two_works_mat_soa"] = case(120, 4, 4, maxlen=8, acc="mat", layout="soa", nxt=K4,
                                  works=TWO)
seeds["two_works_fused_verify"] = case(120, 4, 4, maxlen=8, acc="fused", verify=True, nxt=K4,
                                       works=TWO)
seeds["two_works_partial"] = case(120, 8, 4, maxlen=8, partial=True, nxt=K4,
                                  works=[dict(TWO[0], C=3), dict(TWO[1], C=5)])
seeds["legacy_single_stage"] = case(90, 8, 3, maxlen=4, legacy=True, nxt=SPEC6_NEXT,
                                    works=[{"C": 16, "amax": 2, "producers": {1: (1, 0),
                                                                              2: (2, 0)},
                                            "stages": [(0, 1)]}])
seeds["stage_self_loops"] = case(64, 16, 2, maxlen=5, nxt=[(2, 1), (1, 0)],
                                 works=[{"C": 48, "amax": 6, "producers": {1: (3, 0)},
                                         "stages": [(0, 1), (1, 1), (2, 3)]}])
# edges
seeds["n_zero"] = case(0, 8, 2, works=[SPEC6_WORK | {"producers": {1: (1, 0)}}])
seeds["n_one_pool_one"] = case(1, 1, 3, maxlen=6, nxt=SPEC6_NEXT, works=[SPEC6_WORK])
seeds["pool_one_many_items"] = case(40, 1, 2, maxlen=4, nxt=[(2, 1), (0, 2)],
                                    works=[{"C": 1, "producers": {2: (1, 0)},
                                            "stages": [(0, 1)]}])
seeds["large_n_r64"] = case(300, 64, 5, maxlen=12, acc="fused", layout="soa",
                            nxt=[(2, 3), (3, 4), (4, 5), (5, 1), (1, 0)], works=TWO[:1])
seeds["entry_terminates"] = case(50, 8, 1, entry=(0, 1), nxt=[(1, 0)])
# configurations the library must reject (raw: the model predicts the code)
seeds["raw_pool_bound"] = case(20, 8, 2, raw=True, works=[{"C": 7, "producers": {1: (1, 0)},
                                                          "stages": [(1, 1)]}])
seeds["raw_no_producer"] = case(20, 8, 2, raw=True, works=[{"C": 8, "producers": {},
                                                           "stages": [(1, 1)]}])
seeds["raw_aux_allqueues"] = case(20, 8, 2, raw=True, allq=True, acc="mat",
                                  works=[{"C": 8, "producers": {1: (1, 0)}, "stages": [(1, 1)]}])
seeds["raw_aux_megakernel"] = case(20, 8, 2, raw=True, mega=True,
                                   works=[{"C": 8, "producers": {1: (1, 0)}, "stages": [(1, 1)]}])
seeds["raw_incremental_allqueues"] = case(20, 8, 2, raw=True, allq=True, acc="inc")
seeds["raw_partial_bound_over_capacity"] = case(20, 8, 2, raw=True, partial=True,
                                                works=[{"C": 2, "producers": {1: (3, 0)},
                                                        "stages": [(1, 1)]}])
# injected faults (host allocation / backend call number n)
for n in (1, 4, 9, 17, 33, 70):
    seeds[f"fault_alloc_{n:03d}"] = case(67, 8, 3, maxlen=3, nxt=SPEC6_NEXT, verify=(n % 2 == 1),
                                         acc="mat" if n % 2 else "inc", works=[SPEC6_WORK],
                                         fault=("alloc", n))
for n in (1, 12, 40, 95, 180, 400, 900):
    seeds[f"fault_backend_{n:03d}"] = case(67, 8, 3, maxlen=3, nxt=SPEC6_NEXT,
                                           acc=("mat", "inc", "fused")[n % 3], works=[SPEC6_WORK],
                                           reuse=True, fault=("backend", n))

# iteration limits from the reference loop (fz_loop.c): exactly what the
# dispatch needs (must succeed), fewer (WS_EITERATION_LIMIT at the limit), the
# default; the megakernel counts each item's runs
for name, kw in {"limit_exact_spec6": dict(limit="exact", reuse=True),
                 "limit_short_spec6": dict(limit="short"),
                 "limit_short6_spec6": dict(limit="short", short=6, acc="fused"),
                 "limit_default_spec6": dict(limit="default", acc="mat")}.items():
    seeds[name] = case(67, 8, 3, maxlen=3, nxt=SPEC6_NEXT, works=[SPEC6_WORK], **kw)
seeds["limit_exact_megakernel"] = case(250, 16, 6, maxlen=12, mega=True, entry=(1, 4), nxt=LOOPY,
                                       limit="exact")
seeds["limit_short_megakernel"] = case(250, 16, 6, maxlen=12, mega=True, entry=(1, 4), nxt=LOOPY,
                                       limit="short", short=2)
seeds["limit_short_allqueues"] = case(150, 17, 6, maxlen=12, acc="mat", allq=True, entry=(2, 5),
                                      nxt=LOOPY, limit="short", short=3)
# raw clients that misbehave; the reference loop predicts the status and the
# iteration: a stage that clones (its own work, or into another), a producer
# over its bound, lying counts, a changed stage count, a bad drain stage
seeds["mb_rise_spec6_early"] = case(67, 8, 3, maxlen=3, nxt=SPEC6_NEXT, works=[SPEC6_WORK],
                                    mb=("rise", 0, 1, 0))
for at in (2, 5, 9, 14, 30):
    seeds[f"mb_rise_spec6_at{at:02d}"] = case(67, 8, 3, maxlen=3, nxt=SPEC6_NEXT,
                                              works=[SPEC6_WORK], mb=("rise", 0, at, at))
for at in (3, 8, 17):
    seeds[f"mb_rise_two_works_w1_at{at:02d}"] = case(120, 4, 4, maxlen=8, nxt=K4, works=TWO,
                                                     mb=("rise", 1, at, 1))
    seeds[f"mb_rise_two_works_w0_at{at:02d}"] = case(120, 4, 4, maxlen=8, nxt=K4, works=TWO,
                                                     acc="fused", mb=("rise", 0, at, 2))
seeds["mb_over_capacity_first_pass"] = case(67, 8, 3, maxlen=3, nxt=SPEC6_NEXT,
                                            works=[SPEC6_WORK], mb=("over-capacity", 0, 0, 0))
seeds["mb_over_capacity_w1"] = case(120, 4, 4, maxlen=8, nxt=K4, works=TWO,
                                    mb=("over-capacity", 1, 6, 3))
seeds["mb_stage_sum"] = case(67, 8, 3, maxlen=3, nxt=SPEC6_NEXT, works=[SPEC6_WORK],
                             mb=("stage-sum", 0, 4, 5))
seeds["mb_stage_sum_w1"] = case(120, 4, 4, maxlen=8, nxt=K4, works=TWO, acc="mat",
                                mb=("stage-sum", 1, 11, 1))
seeds["mb_stage_count"] = case(67, 8, 3, maxlen=3, nxt=SPEC6_NEXT, works=[SPEC6_WORK],
                               mb=("stage-count", 0, 7, 1))
seeds["mb_bad_drain_last"] = case(67, 8, 3, maxlen=3, nxt=SPEC6_NEXT,
                                  works=[dict(SPEC6_WORK, drain=1)], mb=("bad-drain", 0, 0, 0))
seeds["mb_bad_drain_largest"] = case(67, 8, 3, maxlen=3, nxt=SPEC6_NEXT,
                                     works=[dict(SPEC6_WORK, drain=2)], mb=("bad-drain", 0, 10, 2))
seeds["mb_legacy_rise"] = case(90, 8, 3, maxlen=4, legacy=True, nxt=SPEC6_NEXT,
                               works=[{"C": 16, "amax": 2, "producers": {1: (1, 0), 2: (2, 0)},
                                       "stages": [(0, 1)]}], mb=("rise", 0, 3, 1))
# failing callbacks at a chosen call
for call, nth in (("reset", 1), ("enqueue_count_readback", 1), ("enqueue_count_readback", 12),
                  ("host_count", 7), ("stage_host_count", 20), ("admission_stage", 2),
                  ("dispatch_stage", 3), ("prepare_for_producer", 5)):
    drain = 1 if call == "admission_stage" else 0
    seeds[f"mb_fail_{call}_{nth:02d}"] = case(67, 8, 3, maxlen=3, nxt=SPEC6_NEXT, reuse=True,
                                              works=[dict(SPEC6_WORK, drain=drain)],
                                              mb=("fail", 0, call, nth))
seeds["mb_fail_w1_host_count"] = case(120, 4, 4, maxlen=8, nxt=K4, works=TWO,
                                      mb=("fail", 1, "host_count", 4))
# the single-stage protocol over a client with only dispatch_stage: the
# error names dispatch_stage(), the call the client wrote (found by fuzzing)
seeds["mb_fail_legacy_dispatch_stage"] = case(
    90, 8, 3, maxlen=4, legacy=True, nxt=SPEC6_NEXT,
    works=[{"C": 24, "amax": 2, "producers": {1: (3, 0), 2: (1, 0), 3: (3, 0)},
            "stages": [(1, 1)]}], mb=("fail", 0, "dispatch_stage", 3))
# issue 18: append-allocated pools (available slots C - extent < C - L while
# releases leave holes; reclaim when empty, compaction from extent 32 on)
APPEND6 = dict(SPEC6_WORK, append=True)
for layout in ("aos", "soa"):
    for acc in ("mat", "inc", "fused"):
        seeds[f"append_spec6_{layout}_{acc}"] = case(67, 8, 3, maxlen=3, layout=layout, acc=acc,
                                                     reuse=True, nxt=SPEC6_NEXT, works=[APPEND6])
seeds["append_spec6_drain_largest"] = case(67, 8, 3, maxlen=3, nxt=SPEC6_NEXT,
                                           works=[dict(APPEND6, drain=2)])
seeds["append_two_works"] = case(120, 4, 4, maxlen=8, nxt=K4, reuse=True,
                                 works=[dict(TWO[0], append=True), dict(TWO[1], append=True)])
seeds["append_two_works_w1"] = case(120, 4, 4, maxlen=8, acc="mat", layout="soa", nxt=K4,
                                    works=[TWO[0], dict(TWO[1], append=True)])
seeds["append_two_works_partial"] = case(120, 8, 4, maxlen=8, partial=True, nxt=K4,
                                         works=[dict(TWO[0], C=3, append=True),
                                                dict(TWO[1], C=5, append=True)])
seeds["append_stage_self_loops"] = case(64, 16, 2, maxlen=5, nxt=[(2, 1), (1, 0)],
                                        works=[{"C": 48, "amax": 6, "producers": {1: (3, 0)},
                                                "stages": [(0, 1), (1, 1), (2, 3)],
                                                "append": True}])
seeds["append_large_n_r64"] = case(300, 64, 5, maxlen=12, acc="fused", layout="soa",
                                   nxt=[(2, 3), (3, 4), (4, 5), (5, 1), (1, 0)],
                                   works=[dict(TWO[0], append=True)])
seeds["append_limit_exact"] = case(120, 4, 4, maxlen=8, nxt=K4, limit="exact",
                                   works=[dict(TWO[0], append=True), TWO[1]])
seeds["append_mb_rise"] = case(120, 4, 4, maxlen=8, nxt=K4, mb=("rise", 0, 9, 1),
                               works=[dict(TWO[0], append=True), TWO[1]])
seeds["append_fault_backend"] = case(67, 8, 3, maxlen=3, nxt=SPEC6_NEXT, works=[APPEND6],
                                     reuse=True, fault=("backend", 60))

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
os.makedirs(out, exist_ok=True)
for name in os.listdir(out):
    os.remove(os.path.join(out, name))
for name, data in sorted(seeds.items()):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
print(f"{len(seeds)} seeds written to {out}")
