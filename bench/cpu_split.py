#!/usr/bin/python3
"""Where a rank's CPU goes a step: the simulator's charge on the cores against a zrun run's.

Usage: bench/cpu_split.py SIM_TRACE RUN_SUMMARY --share S [--run-trace TRACE]
       (exit 2: a file missing or not of its kind)

SIM_TRACE is `zplan simulate PLAN --trace T` of the run's plan (at the run's compute speed,
as bench/validate.py simulates it); RUN_SUMMARY is the run's summary.yaml (its
cpu_s_per_step: rank 0's threads' CPU a step). S is how many ranks share a core: ranks per
node / cores where ranks outnumber cores (each rank then runs one thread, and the simulator
costs its work on the cores at S times its time alone). Only those plans are split: with one
rank per core or fewer a kernel runs on several threads whose CPU zrun does not report apart.

The simulator's tasks on the cores, per step, at one core's speed (duration / S):
  kernels      the compute stream's ops (recompute, the device Adam included)
  nvme         the NVMe requests' CPU (completion, CRC) the simulator puts on the cores
  copies       host<->device copies and gradient hand-offs (memcpy on the cores)
  adam         the CPU optimizer (the node's Adam rate shared by its ranks)
  collectives  the collectives' time on the rank's queue (their shm-curve wall, waiting
               included): what the representative rank is charged, not CPU
  collectives_cpu  their network lane's CPU (the shm _cpu_ curves back to back plus the
               _cpu_beside_ extra: the trace's args.cpu_us; 0 with a profile without them)
  idle         the step less everything on the rank's queue
and zrun's threads, per step: compute, nvme_read (the NVMe lane), h2d (the copy lane),
network (the collectives' lane). With several ranks to a core, a run whose waits the other
ranks fill takes about S x its CPU a step (docs/performance-model.md, a fourteenth session):
`core_work_ms` is that figure, beside the measured step.
"""
import argparse
import json
import re
import sys

# Compute-stream task names that are CPU for NVMe requests or copies, not kernels.
NVME_SUFFIXES = (" nvme cpu", " read cpu", " write cpu")
COPY_SUFFIXES = (" hand-off",)
WAITS = ("drain",)  # the compute queue waiting for outstanding transfers: no work


def model_split(trace_path, share):
    """The simulator's per-step charge on a rank's cores, in ms at one core's speed (see the
    module's doc); collectives and idle in ms of the rank's queue."""
    with open(trace_path) as f:
        events = json.load(f)["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"}
    out = dict(kernels=0.0, nvme=0.0, copies=0.0, adam=0.0, collectives=0.0)
    lane_cpu = 0.0
    end = 0.0
    for e in events:
        if e.get("ph") != "X":
            continue
        end = max(end, e["ts"] + e["dur"])
        res, name, ms = names.get(e["tid"], ""), e["name"], e["dur"] / 1e3
        if res == "compute":
            if name in WAITS:
                continue
            kind = "nvme" if name.endswith(NVME_SUFFIXES) else "copies" if name.endswith(COPY_SUFFIXES) else "kernels"
            out[kind] += ms
        elif res in ("h2d", "d2h"):
            out["copies"] += ms
        elif res == "network":
            out["collectives"] += ms
            lane_cpu += e.get("args", {}).get("cpu_us", 0.0) / 1e3
        elif res == "cpu_optimizer":
            out["adam"] += ms
    queue = sum(v for k, v in out.items() if k != "adam")  # Adam has its own threads' queue
    for k in ("kernels", "nvme", "copies", "adam"):
        out[k] /= share
    out["idle"] = max(0.0, end / 1e3 - queue)
    out["collectives_cpu"] = lane_cpu
    out["step"] = end / 1e3
    return out


def run_split(summary_text):
    """Rank 0's threads' CPU a step from a zrun summary.yaml, in ms; {} without it."""
    m = re.search(r"^cpu_s_per_step:\n((?:  .*\n)+)", summary_text, re.M)
    if not m:
        return {}
    vals = {k: float(v) * 1e3 for k, v in re.findall(r"^  (\w+): ([-0-9.eE+]+)$", m.group(1), re.M)}
    return {k: vals.get(k, 0.0) for k in ("compute", "nvme_read", "h2d", "network")}


def run_trace_split(trace_path):
    """From a zrun trace (rank 0's trace.json, whose events carry their thread's CPU as
    args.cpu_us), per step after the first, in ms: the compute thread's CPU and time in its
    ops and kernels (ops_cpu, ops_wall; they do not nest), in Adam (adam_cpu), and each lane's
    CPU and time in its jobs (<lane>_cpu, <lane>_wall for nvme_read, h2d, network). None where
    the trace has no CPU figures (a zrun before they were recorded) or fewer than two steps."""
    with open(trace_path) as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    steps = sorted((e["ts"], e["ts"] + e["dur"]) for e in events if e["tid"] == 5)
    if len(steps) < 2 or not any("cpu_us" in e.get("args", {}) for e in events):
        return None
    lo, hi = steps[0][1], steps[-1][1]  # from the end of the first step to the end of the last
    lanes = {1: "nvme_read", 2: "h2d", 3: "network"}
    out = dict(ops_cpu=0.0, ops_wall=0.0, adam_cpu=0.0)
    for lane in lanes.values():
        out[f"{lane}_cpu"] = out[f"{lane}_wall"] = 0.0
    for e in events:
        if not lo <= e["ts"] < hi:
            continue
        cpu = e.get("args", {}).get("cpu_us", 0.0) / 1e3
        if e["tid"] == 0:
            out["ops_cpu"] += cpu
            out["ops_wall"] += e["dur"] / 1e3
        elif e["tid"] == 4:
            out["adam_cpu"] += cpu
        elif e["tid"] in lanes:
            out[f"{lanes[e['tid']]}_cpu"] += cpu
            out[f"{lanes[e['tid']]}_wall"] += e["dur"] / 1e3
    n = len(steps) - 1
    return {k: v / n for k, v in out.items()}


def core_work_ms(run, share):
    """S x the rank's measured CPU a step: the step of ranks that take turns on their cores."""
    return share * sum(run.values())


def describe(model, run, share, measured_ms):
    """One line: the model's charge beside the run's CPU."""
    return (f"cpu/step at one core: model kernels {model['kernels']:.1f}, adam {model['adam']:.1f}, nvme {model['nvme']:.1f}, "
            f"copies {model['copies']:.1f} ms "
            f"(+ collectives {model['collectives']:.1f} ms on the queue, {model['collectives_cpu']:.1f} of their lane's CPU; "
            f"idle {model['idle']:.1f}); run compute {run['compute']:.1f}, "
            f"nvme {run['nvme_read']:.1f}, copies {run['h2d']:.1f}, collectives {run['network']:.1f} ms; "
            f"{share:g} x run CPU {core_work_ms(run, share):.1f} ms against the step's {measured_ms:.1f}")


def fail(msg):
    print(f"cpu_split: {msg}", file=sys.stderr)
    sys.exit(2)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sim_trace")
    ap.add_argument("run_summary")
    ap.add_argument("--share", type=float, required=True, help="ranks per core (ranks per node / cores, above 1)")
    ap.add_argument("--run-trace", default="", help="the run's trace.json (rank 0): its threads' CPU in ops and jobs")
    args = ap.parse_args()
    if args.share <= 1:
        fail("--share must be above 1 (more ranks than cores)")
    try:
        model = model_split(args.sim_trace, args.share)
    except (OSError, ValueError, KeyError) as e:
        fail(f"{args.sim_trace}: not a zplan simulate trace ({e})")
    try:
        text = open(args.run_summary).read()
    except OSError as e:
        fail(f"{args.run_summary}: {e.strerror}")
    run = run_split(text)
    if not run:
        fail(f"{args.run_summary}: no cpu_s_per_step section (not a zrun summary.yaml)")
    m = re.search(r"^step_time_s:\n  measured: ([-0-9.eE+]+)", text, re.M)
    print(describe(model, run, args.share, float(m.group(1)) * 1e3 if m else float("nan")))
    if args.run_trace:
        try:
            tr = run_trace_split(args.run_trace)
        except (OSError, ValueError, KeyError) as e:
            fail(f"{args.run_trace}: not a zrun trace ({e})")
        if tr is None:
            print(f"{args.run_trace}: no CPU figures in its events (or under two steps)")
        else:
            print(f"run's trace, a step: compute thread in ops and kernels {tr['ops_cpu']:.1f} ms CPU in {tr['ops_wall']:.1f} ms, "
                  f"Adam {tr['adam_cpu']:.1f} ms CPU; lanes' jobs (CPU in time): nvme {tr['nvme_read_cpu']:.1f} in "
                  f"{tr['nvme_read_wall']:.1f}, copies {tr['h2d_cpu']:.1f} in {tr['h2d_wall']:.1f}, collectives "
                  f"{tr['network_cpu']:.1f} in {tr['network_wall']:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
