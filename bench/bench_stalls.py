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

Where ``perf`` can record the kernel's tracepoints (root, or a permissive ``perf_event_paranoid``), it
records the interrupts of that CPU meanwhile and names what each gap contains: the scheduler tick, the
timer of a thread that sleeps (queued on this CPU when the thread last slept here), another timer, a
device interrupt, an inter-processor interrupt, a page fault, or nothing the guest kernel sees (the
hypervisor). ``--no-trace`` skips that.

    .venv/bin/python bench/bench_stalls.py [--seconds 10] [--cpu 1] [--priority 80] [--window 13] [--goal 30]
        [--with-sim config/arm7_controller.yaml] [--no-trace]
"""
import argparse
import array
import bisect
import gc
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import yaml

from bench_loop import Proc, console, isolate_ros

REPO = Path(__file__).resolve().parent.parent

EDGES_US = (5, 10, 20, 30, 50, 100)


# the tracepoints recorded (unless --no-trace), and what a gap that contains one is put down to (first match)
TRACEPOINTS = ("timer:hrtimer_expire_entry", "irq_vectors:local_timer_entry", "irq:irq_handler_entry",
               "irq_vectors:reschedule_entry", "irq_vectors:call_function_entry",
               "irq_vectors:call_function_single_entry", "exceptions:page_fault_user",
               "exceptions:page_fault_kernel")
CAUSES = (("the scheduler tick", lambda ev, fn: fn in ("tick_nohz_handler", "tick_sched_timer")),
          ("a sleeping thread's timer", lambda ev, fn: fn == "hrtimer_wakeup"),
          ("another timer", lambda ev, fn: ev in ("timer:hrtimer_expire_entry", "irq_vectors:local_timer_entry")),
          ("a device interrupt", lambda ev, fn: ev == "irq:irq_handler_entry"),
          ("an inter-processor interrupt", lambda ev, fn: ev.startswith(("irq_vectors:resched", "irq_vectors:call"))),
          ("a page fault", lambda ev, fn: ev.startswith("exceptions:")))
HOST = "nothing in the guest (the hypervisor)"
THROTTLED, THROTTLE_NS = "real-time throttling (sched_rt_runtime_us)", 10_000_000   # a gap this long


def spin(seconds, capacity=1 << 18):
    """Gaps longer than 5 µs between consecutive clock readings over ``seconds``, as (start, length) in ns
    (time.perf_counter_ns, i.e. CLOCK_MONOTONIC), and the span (ns). The gaps go into arrays allocated and
    touched beforehand, so that the probe itself takes no page fault while it spins."""
    clock = time.perf_counter_ns
    starts, lengths = array.array("q", bytes(8 * capacity)), array.array("q", bytes(8 * capacity))
    n = 0
    start = last = clock()
    end = start + int(seconds * 1e9)
    while last < end:
        t = clock()
        if t - last > 5000 and n < capacity:
            starts[n], lengths[n] = last, t - last
            n += 1
        last = t
    return list(zip(starts[:n], lengths[:n])), last - start


def start_trace(cpu, seconds):
    """``perf record`` of TRACEPOINTS on ``cpu`` (CLOCK_MONOTONIC time stamps) for ``seconds``; the Popen and
    its data file (in a directory of its own, which :func:`trace_events` removes), or None and the reason it
    cannot run."""
    if shutil.which("perf") is None:
        return None, "perf is not installed"
    data = Path(tempfile.mkdtemp(prefix="rne_bench_stalls_trace_")) / "perf.data"
    cmd = ["perf", "record", "-q", "-k", "mono", "-C", str(cpu), "-o", str(data)]
    for tp in TRACEPOINTS:
        cmd += ["-e", tp]
    p = subprocess.Popen(cmd + ["--", "sleep", str(seconds)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True)
    time.sleep(1.0)   # perf's own start-up, before the probe takes the CPU
    if p.poll() is not None:
        shutil.rmtree(data.parent, ignore_errors=True)
        return None, f"perf record failed: {p.stderr.read().strip()[:200]}"
    return (p, data), None


def trace_events(trace):
    """The recorded events as sorted (time ns, event, hrtimer function or '')."""
    p, data = trace
    p.wait()
    out = subprocess.run(["perf", "script", "-i", str(data), "-F", "time,event,trace"], capture_output=True,
                         text=True).stdout
    shutil.rmtree(data.parent, ignore_errors=True)
    events = []
    for line in out.splitlines():
        m = re.match(r"\s*(\d+\.\d+):\s+(\S+):\s*(.*)", line)
        if m:
            fn = re.search(r"function=(\S+)", m.group(3))
            events.append((round(float(m.group(1)) * 1e9), m.group(2), fn.group(1) if fn else ""))
    return sorted(events)


def attribute(gaps, events):
    """{cause: [gap lengths (ns)]}: each gap put down to the first cause in CAUSES that an event inside it
    (1 µs either side: perf prints µs) matches, else HOST; a gap of 10 ms or more to the kernel's
    throttling of real-time threads (by default 50 ms in every second for a thread that never sleeps,
    which this probe is and a controller is not)."""
    times = [e[0] for e in events]
    by_cause = {}
    for start, length in gaps:
        i, j = bisect.bisect_left(times, start - 1000), bisect.bisect_right(times, start + length + 1000)
        inside = events[i:j]
        cause = THROTTLED if length >= THROTTLE_NS else next(
            (name for name, match in CAUSES if any(match(ev, fn) for _, ev, fn in inside)), HOST)
        by_cause.setdefault(cause, []).append(length)
    return by_cause


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--cpu", type=int, default=1, help="the controller's cpu_affinity")
    ap.add_argument("--priority", type=int, default=80, help="SCHED_FIFO priority (0: the default scheduler)")
    ap.add_argument("--window", type=float, default=13.0, help="µs: the cycle's length")
    ap.add_argument("--goal", type=float, default=30.0, help="µs: the compute p99 goal")
    ap.add_argument("--with-sim", metavar="CONFIG", help="run rne_sim from this config meanwhile")
    ap.add_argument("--no-trace", action="store_true", help="do not record the CPU's interrupts with perf")
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
    trace, why = (None, "--no-trace") if args.no_trace else start_trace(args.cpu, args.seconds + 2.0)
    gaps, span = spin(args.seconds)
    seconds = span * 1e-9
    print(f"CPU {args.cpu}, SCHED_FIFO {args.priority}, {seconds:.1f} s spinning: "
          f"{len(gaps) / seconds:.0f} interruptions/s longer than 5 µs")
    lengths = [g for _, g in gaps]
    counts = [sum(1 for g in lengths if lo * 1e3 < g <= hi * 1e3) for lo, hi in zip(EDGES_US, EDGES_US[1:])]
    counts.append(sum(1 for g in lengths if g > EDGES_US[-1] * 1e3))
    labels = [f"{lo}-{hi} µs" for lo, hi in zip(EDGES_US, EDGES_US[1:])] + [f"> {EDGES_US[-1]} µs"]
    print("  per second: " + ", ".join(f"{lab} {c / seconds:.0f}" for lab, c in zip(labels, counts)))
    # a window of length w is hit by a gap if the gap starts inside it; stretched past the goal if, in
    # addition, w + gap > goal (the window's own time plus the gap)
    w = args.window * 1e3
    hit = len(gaps) / seconds * w * 1e-9
    past = sum(1 for g in lengths if w + g > args.goal * 1e3) / seconds * w * 1e-9
    print(f"  a {args.window:g} µs cycle: hit by one in {hit * 100:.2f} % of cycles, stretched past "
          f"{args.goal:g} µs in {past * 100:.2f} % (above 1 %: a p99 goal of {args.goal:g} µs is out of reach)")
    if trace is None:
        print(f"  what the gaps contain: not recorded ({why})")
        return
    events = trace_events(trace)
    if not events:
        print("  what the gaps contain: perf recorded no event (tracepoints not readable?)")
        return
    print(f"  what the gaps contain (perf, CPU {args.cpu}): per second, median / longest µs")
    for cause, g in sorted(attribute(gaps, events).items(), key=lambda kv: -len(kv[1])):
        print(f"    {cause:44s} {len(g) / seconds:6.0f}   {statistics.median(g) / 1e3:6.1f} / {max(g) / 1e3:7.1f}")


if __name__ == "__main__":
    main()
