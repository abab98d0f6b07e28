#!/usr/bin/python3
"""How far apart a multi-rank zrun's ranks reach each collective, from its measured traces.

Usage: bench/collective_skew.py RUN_DIR [--top N]

RUN_DIR is a zrun --out directory of a run with several ranks: trace.json (rank 0) and
trace-rank1.json ... (the others). Each rank's trace counts time from its own start, so the
ranks' clocks are aligned first: a collective ends on every rank at about the same moment (the
last round's barrier releases them together), so a rank's offset is the median over all
collectives of (its end - rank 0's end). Then, per collective kind (allgather or
reduce-scatter) and parameter group (layer index dropped):
  skew       the last rank's arrival (its lane starting the collective) - the first's;
  after_last the collective's end - the last arrival: its own time once every rank is in it.
A collective that takes long on one rank's network lane mostly waits in `skew`, not in its
copies; the simulator charges a collective its shm curve time plus node.coupling_curve*.
"""
import argparse
import collections
import glob
import json
import os
import re
import statistics
import sys


def collectives(path):
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    out = collections.defaultdict(list)
    for e in events:
        if e.get("ph") == "X" and (e["name"].endswith(" allgather") or e["name"].endswith(" reduce-scatter")):
            out[e["name"]].append(e)
    return out


def skew(run_dir):
    """(offsets, skew, after) of a run: rank clock offsets (us, against rank 0), and per
    (kind, group) the arrival skews and the times after the last arrival (us). Raises
    ValueError when the directory has no usable multi-rank traces."""
    paths = [os.path.join(run_dir, "trace.json")] + sorted(
        glob.glob(os.path.join(run_dir, "trace-rank*.json")), key=lambda p: int(re.search(r"rank(\d+)", p).group(1)))
    if len(paths) < 2 or not os.path.exists(paths[0]):
        raise ValueError(f"{run_dir}: needs trace.json and trace-rank1.json ... (a zrun run with several ranks)")
    ranks = [collectives(p) for p in paths]
    if not ranks[0]:
        raise ValueError(f"{paths[0]}: no allgather or reduce-scatter events (was --trace-steps 0?)")
    offsets = [0.0]
    for r in ranks[1:]:
        diffs = [b["ts"] + b["dur"] - x["ts"] - x["dur"] for name, evs in ranks[0].items() for x, b in zip(evs, r.get(name, []))]
        if not diffs:
            raise ValueError(f"{run_dir}: a rank's trace shares no collective with rank 0's")
        offsets.append(statistics.median(diffs))
    skews = collections.defaultdict(list)
    after = collections.defaultdict(list)
    for name, evs in ranks[0].items():
        kind = "reduce-scatter" if name.endswith("reduce-scatter") else "allgather"
        group = re.sub(r"^h\d+\.", "", name.rsplit(" ", 1)[0])
        for i in range(len(evs)):
            if any(i >= len(r.get(name, [])) for r in ranks):
                break
            starts = [r[name][i]["ts"] - offsets[q] for q, r in enumerate(ranks)]
            ends = [r[name][i]["ts"] + r[name][i]["dur"] - offsets[q] for q, r in enumerate(ranks)]
            skews[(kind, group)].append(max(starts) - min(starts))
            after[(kind, group)].append(max(0.0, statistics.median(ends) - max(starts)))
    return offsets, skews, after


def median_skew_ms(run_dir):
    """The median arrival skew over every collective of a run, in ms; None without traces."""
    try:
        _, skews, _ = skew(run_dir)
    except (ValueError, OSError, KeyError, json.JSONDecodeError):
        return None
    every = [x for v in skews.values() for x in v]
    return statistics.median(every) / 1e3 if every else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("run_dir")
    ap.add_argument("--top", type=int, default=0, help="print only the N groups with the largest median skew")
    a = ap.parse_args()
    try:
        offsets, skew_us, after = skew(a.run_dir)
    except ValueError as e:
        sys.exit(f"collective_skew: {e}")
    print(f"{len(offsets)} ranks; clock offsets against rank 0 (ms): " + ", ".join(f"{o / 1e3:.2f}" for o in offsets[1:]))
    keys = sorted(skew_us, key=lambda k: -statistics.median(skew_us[k]))
    if a.top > 0:
        keys = keys[: a.top]
    print(f"{'collective':16s} {'group':12s} {'count':>5s} {'skew median':>12s} {'mean':>8s} {'after_last median':>18s}")
    for k in keys:
        print(f"{k[0]:16s} {k[1]:12s} {len(skew_us[k]):5d} {statistics.median(skew_us[k]) / 1e3:9.2f} ms {statistics.mean(skew_us[k]) / 1e3:5.2f} ms"
              f" {statistics.median(after[k]) / 1e3:15.2f} ms")
    every = [x for v in skew_us.values() for x in v]
    print(f"all {len(every)} collectives: skew median {statistics.median(every) / 1e3:.2f} ms, mean {statistics.mean(every) / 1e3:.2f} ms")


if __name__ == "__main__":
    main()
