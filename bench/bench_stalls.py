"""The machine's own interruptions of a real-time thread: what bounds the controller's compute p99.

Spins on one CPU with the controller's real-time settings (``cpu_affinity`` and ``sched_priority`` from
its config: ``[1]`` and 80 for the arm) reading ``time.perf_counter_ns()``, and counts the gaps between
two consecutive readings longer than 5 µs: time the thread did not run although it never yields (an
interrupt, the hypervisor running something else on this virtual CPU). Nothing of rne_control runs.

With ``--with-sim CONFIG``, ``rne_sim`` runs from that config meanwhile, integrating and publishing its
joint states at 1 kHz as in ``make bench-loop`` (without a controller, whose CPU this probe takes).

It then prints the share of windows of ``--window`` µs (by default 13, about the arm's compute p50 in
``make bench-loop``) that such a gap hits, and the share it stretches past ``--goal`` µs (30, the compute
p99 goal of issue 13): above 1 %, a cycle of that length cannot meet a p99 goal of that size on this
machine, whatever it computes.

    .venv/bin/python bench/bench_stalls.py [--seconds 10] [--cpu 1] [--priority 80] [--window 13] [--goal 30]
        [--with-sim config/arm7_controller.yaml]
"""
import argparse
import gc
import os
import tempfile
import time
from pathlib import Path

import yaml

from bench_loop import Proc, console, isolate_ros

REPO = Path(__file__).resolve().parent.parent

EDGES_US = (5, 10, 20, 30, 50, 100)


def spin(seconds):
    """Gaps (ns) longer than 5 µs between consecutive clock readings over ``seconds``, and the span (ns)."""
    clock = time.perf_counter_ns
    gaps = []
    start = last = clock()
    end = start + int(seconds * 1e9)
    while last < end:
        t = clock()
        if t - last > 5000:
            gaps.append(t - last)
        last = t
    return gaps, last - start


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--cpu", type=int, default=1, help="the controller's cpu_affinity")
    ap.add_argument("--priority", type=int, default=80, help="SCHED_FIFO priority (0: the default scheduler)")
    ap.add_argument("--window", type=float, default=13.0, help="µs: the cycle's length")
    ap.add_argument("--goal", type=float, default=30.0, help="µs: the compute p99 goal")
    ap.add_argument("--with-sim", metavar="CONFIG", help="run rne_sim from this config meanwhile")
    args = ap.parse_args()
    sim = start_sim(REPO / args.with_sim) if args.with_sim else None
    try:
        probe(args)
    finally:
        if sim is not None:
            sim.stop()


def start_sim(cfg_path):
    """rne_sim from ``cfg_path``, integrating and publishing at 1 kHz (bench_loop's load), once it publishes."""
    isolate_ros()
    tmp = Path(tempfile.mkdtemp(prefix="rne_bench_stalls_"))
    over = tmp / "override.yaml"
    sim = {"integrator": "semi_implicit", "sim_rate": 1000.0, "publish_rate": 1000.0}   # as bench_loop's
    over.write_text(yaml.safe_dump({"/**/rne_sim": {"ros__parameters": sim}}))
    sim = Proc("rne_sim", console("rne_sim") + ["--ros-args", "--params-file", str(cfg_path), "--params-file",
                                                 str(over)], tmp)
    time.sleep(8.0)   # its start-up (kernels from the cache, DDS discovery)
    if not sim.alive():
        raise SystemExit(f"rne_sim exited: {sim.tail()}")
    print(f"rne_sim running from {cfg_path.name} (log in {tmp})")
    return sim


def probe(args):
    os.sched_setaffinity(0, {args.cpu})
    if args.priority > 0:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(args.priority))
    gc.disable()
    gaps, span = spin(args.seconds)
    seconds = span * 1e-9
    print(f"CPU {args.cpu}, SCHED_FIFO {args.priority}, {seconds:.1f} s spinning: "
          f"{len(gaps) / seconds:.0f} interruptions/s longer than 5 µs")
    counts = [sum(1 for g in gaps if lo * 1e3 < g <= hi * 1e3) for lo, hi in zip(EDGES_US, EDGES_US[1:])]
    counts.append(sum(1 for g in gaps if g > EDGES_US[-1] * 1e3))
    labels = [f"{lo}-{hi} µs" for lo, hi in zip(EDGES_US, EDGES_US[1:])] + [f"> {EDGES_US[-1]} µs"]
    print("  per second: " + ", ".join(f"{lab} {c / seconds:.0f}" for lab, c in zip(labels, counts)))
    # a window of length w is hit by a gap if the gap starts inside it; stretched past the goal if, in
    # addition, w + gap > goal (the window's own time plus the gap)
    w = args.window * 1e3
    hit = len(gaps) / seconds * w * 1e-9
    past = sum(1 for g in gaps if w + g > args.goal * 1e3) / seconds * w * 1e-9
    print(f"  a {args.window:g} µs cycle: hit by one in {hit * 100:.2f} % of cycles, stretched past "
          f"{args.goal:g} µs in {past * 100:.2f} % (above 1 %: a p99 goal of {args.goal:g} µs is out of reach)")


if __name__ == "__main__":
    main()
