#!/usr/bin/python3
"""How well any prediction made before a run can match it on this machine: a model-free floor.

Usage: bench/noise_floor.py RUN_DIR|METRICS_CSV ... [--calibrate-s 1.5,5] [--run-s 10,20,40]
                            [--gap-s 1] [--skip 5] [--bin-s 2]
       bench/noise_floor.py --plan PLAN --data TEXT --steps N [--zrun BIN] [--out DIR] ...
       (exit 2: a file missing or not a zrun metrics.csv; 1: zrun failed)

A zrun run's metrics.csv holds every step's wall time. One long run of one plan is a trace of
the machine's speed: the plan does not change, so every change in its step time is the
machine's. This script slides two windows along it: a calibration window of C seconds (the
mean step in it is the "prediction", as if a perfect model had been calibrated there), then,
G seconds later, a run window of R seconds (its mean step is the "measurement"). The
|measured / predicted - 1| over all placements (every --bin-s seconds) is the error a model
with no error of its own would still show, calibrated C seconds' worth just before a run of R
seconds. It also prints the error of predicting every R-second window from the whole trace's
mean step (a profile that somehow knew the machine's long-run average).

The floor is the plan's as much as the machine's. On the 2-core VM this project is validated
on (2026-12-07), two 200 s runs of the small plan (4000 steps) moved between 44-46 ms and
58-62 ms steps, in states of 10-60 s: calibrated 1.5 s before a 20 s run, that floor was
7.7% and 6.3% mean, 20% and 18% at the 90th percentile. A 200 s run of cpu-medium's
medium-none-tile2-ck-r1 plan between them held its step within a few percent: 1.5% mean.
The matrix odds draw every configuration's runs from all the traces given, pooled; with the
small plan's traces alone a perfect model met bench/validate.py's targets (mean under 5%,
max under 10%) in 18-39% of 3-repeat matrices; drawing five configurations from the small
traces and five from the medium one (as validate.py's matrix is made), in 55% (mean 2.3%,
max 9.5% in the median matrix) (docs/performance-model.md, the seventeenth session).

With --plan, runs zrun first (one rank, no speed checks: they are not steps but they pass
time between them), writing to --out (default: a temporary directory), then reads its
metrics.csv. --skip drops the first steps (warm-up).
"""
import argparse
import bisect
import csv
import os
import random
import statistics
import subprocess
import sys
import tempfile


def read_steps(path):
    """Step wall times (seconds) from a zrun metrics.csv or a directory holding one."""
    if os.path.isdir(path):
        path = os.path.join(path, "metrics.csv")
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        raise ValueError(f"{path}: {e.strerror}")
    if not rows or "step_s" not in rows[0]:
        raise ValueError(f"{path}: not a zrun metrics.csv (no step_s column)")
    try:
        return [float(r["step_s"]) for r in rows]
    except ValueError as e:
        raise ValueError(f"{path}: step_s: {e}")


class Trace:
    """Steps laid end to end: the mean step over any window of time."""

    def __init__(self, steps):
        self.cum = [0.0]
        for s in steps:
            self.cum.append(self.cum[-1] + s)

    @property
    def length(self):
        return self.cum[-1]

    def window_mean(self, start, length):
        """Mean step of the steps that start in [start, start + length); None past the end."""
        if start + length > self.cum[-1]:
            return None
        i = bisect.bisect_left(self.cum, start)
        j = bisect.bisect_left(self.cum, start + length)
        j = min(max(j, i + 1), len(self.cum) - 1)
        return (self.cum[j] - self.cum[i]) / (j - i)


def errors(traces, calibrate_s, gap_s, run_s, step_s):
    """|run window / calibration window - 1| in percent, at every step_s along every trace."""
    return [abs(e) for e in signed_errors(traces, calibrate_s, gap_s, run_s, step_s)]


def long_run_errors(traces, run_s, step_s):
    out = []
    for t in traces:
        mean = t.length / (len(t.cum) - 1)
        start = 0.0
        while True:
            b = t.window_mean(start, run_s)
            if b is None:
                break
            out.append(100.0 * abs(b / mean - 1.0))
            start += step_s
    return out


def signed_errors(traces, calibrate_s, gap_s, run_s, step_s):
    """As errors(), signed: run window / calibration window - 1, percent."""
    out = []
    for t in traces:
        start = 0.0
        while True:
            a = t.window_mean(start, calibrate_s)
            b = t.window_mean(start + calibrate_s + gap_s, run_s)
            if a is None or b is None:
                break
            out.append(100.0 * (b / a - 1.0))
            start += step_s
    return out


def matrix_odds(signed, configs, repeats, trials, seed=1):
    """A perfect model's matrix drawn from the floor: each configuration's error the median of
    `repeats` runs' errors drawn (independently) from `signed`; returns the mean over trials of
    the matrix's mean |error|, the median of its max, and the share of matrices within the
    targets (mean < 5%, max < 10%)."""
    rng = random.Random(seed)
    means, maxes, within = [], [], 0
    for _ in range(trials):
        e = [abs(statistics.median(rng.choice(signed) for _ in range(repeats))) for _ in range(configs)]
        means.append(statistics.mean(e))
        maxes.append(max(e))
        within += statistics.mean(e) < 5.0 and max(e) < 10.0
    return statistics.mean(means), statistics.median(maxes), within / trials


def summarize(errs):
    s = sorted(errs)
    return (f"mean {statistics.mean(s):5.1f}%  median {statistics.median(s):5.1f}%  "
            f"p90 {s[min(len(s) - 1, int(0.9 * len(s)))]:5.1f}%  max {s[-1]:5.1f}%  ({len(s)} placements)")


def binned(steps, bin_s):
    """Mean step (ms) of consecutive bin_s-second stretches."""
    out, acc = [], []
    for s in steps:
        acc.append(s)
        if sum(acc) >= bin_s:
            out.append(1e3 * statistics.mean(acc))
            acc = []
    return out


def floats(text):
    try:
        v = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a comma-separated list of seconds: {text}")
    if not v or any(x <= 0 for x in v):
        raise argparse.ArgumentTypeError(f"seconds must be positive: {text}")
    return v


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("runs", nargs="*", help="zrun output directories or metrics.csv files (one plan each, long runs)")
    ap.add_argument("--calibrate-s", type=floats, default=[1.5, 5.0], help="calibration windows, seconds (1.5,5)")
    ap.add_argument("--run-s", type=floats, default=[10.0, 20.0, 40.0], help="run windows, seconds (10,20,40)")
    ap.add_argument("--gap-s", type=float, default=1.0, help="seconds from calibration to run (1: planning and start)")
    ap.add_argument("--bin-s", type=float, default=2.0, help="seconds between placements, and the timeline's bins (2)")
    ap.add_argument("--skip", type=int, default=5, help="first steps of each run left out (warm-up; 5)")
    ap.add_argument("--matrix", type=int, default=10, help="configurations in a matrix for the odds below (10)")
    ap.add_argument("--repeats", default="1,3,5", help="runs a configuration (their median error), for the odds (1,3,5)")
    ap.add_argument("--plan", help="run this plan first with zrun (one rank)")
    ap.add_argument("--data", help="with --plan: zrun's --data")
    ap.add_argument("--steps", type=int, default=4000, help="with --plan: steps (4000)")
    ap.add_argument("--zrun", default="build/executor/zrun/zrun", help="with --plan: the zrun binary")
    ap.add_argument("--out", help="with --plan: zrun's output directory (default: a temporary one)")
    args = ap.parse_args()
    if args.gap_s < 0 or args.bin_s <= 0 or args.skip < 0:
        ap.error("--gap-s must be >= 0, --bin-s > 0, --skip >= 0")
    runs = list(args.runs)
    if args.plan:
        if not args.data:
            ap.error("--plan needs --data")
        out = args.out or tempfile.mkdtemp(prefix="zinf-noise.")
        cmd = [args.zrun, "--plan", args.plan, "--data", args.data, "--steps", str(args.steps), "--out", out,
               "--speed-checks", "0", "--trace-steps", "0"]
        print("noise_floor: " + " ".join(cmd), file=sys.stderr)
        if subprocess.run(cmd).returncode != 0:
            print("noise_floor: zrun failed", file=sys.stderr)
            return 1
        runs.append(out)
    if not runs:
        ap.error("give zrun run directories (or metrics.csv files), or --plan to run one")
    traces = []
    for r in runs:
        try:
            steps = read_steps(r)[args.skip:]
        except ValueError as e:
            print(f"noise_floor: {e}", file=sys.stderr)
            return 2
        if len(steps) < 2:
            print(f"noise_floor: {r}: fewer than 2 steps after --skip {args.skip}", file=sys.stderr)
            return 2
        t = Trace(steps)
        traces.append(t)
        b = binned(steps, args.bin_s)
        print(f"{r}: {len(steps)} steps over {t.length:.1f} s, mean step {1e3 * t.length / len(steps):.2f} ms; "
              f"{args.bin_s:g} s bins {min(b, default=0):.1f}..{max(b, default=0):.1f} ms")
        print("  " + " ".join(f"{v:.0f}" for v in b))
    print(f"a perfect model calibrated just before each run ({args.gap_s:g} s gap), against the run's mean step:")
    for c in args.calibrate_s:
        for r in args.run_s:
            e = errors(traces, c, args.gap_s, r, args.bin_s)
            print(f"  calibrated {c:4g} s, run {r:4g} s: " + (summarize(e) if e else "traces too short"))
    try:
        repeats = [int(x) for x in args.repeats.split(",") if x.strip()]
    except ValueError:
        ap.error(f"--repeats: not a comma-separated list of counts: {args.repeats}")
    c, r = args.calibrate_s[0], args.run_s[min(1, len(args.run_s) - 1)]
    signed = signed_errors(traces, c, args.gap_s, r, args.bin_s / 4)
    if signed and args.matrix > 0:
        print(f"a perfect model's matrix of {args.matrix} configurations (calibrated {c:g} s, runs of {r:g} s, runs "
              f"drawn independently from the placements above; 2000 matrices):")
        for n in repeats:
            if n <= 0:
                continue
            mean, mx, share = matrix_odds(signed, args.matrix, n, 2000)
            print(f"  {n} run(s) a configuration (median error): mean |error| {mean:.1f}%, max {mx:.1f}% (median "
                  f"matrix); within mean < 5% and max < 10%: {100 * share:.0f}% of matrices")
    print("the whole trace's mean step, against each run window's:")
    for r in args.run_s:
        e = long_run_errors(traces, r, args.bin_s)
        print(f"  run {r:4g} s: " + (summarize(e) if e else "traces too short"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
