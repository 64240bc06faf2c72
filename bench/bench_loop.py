#!/usr/bin/env python3
"""Real-time loop benchmark (``make bench-loop``): rne_controller at 1 kHz computed torque on the
7-DOF arm against rne_sim, beside a bare rclpy timer publishing the same message type at 1 kHz as
this machine's baseline.

Reports
  * period p50/p99/max and late fraction (period > 1.5 ms), for the controller's commands and for
    the baseline, both measured the same way (arrival times at a monitor node), plus the
    publisher-side figures (controller: /diagnostics; baseline: its own timer);
  * compute time per cycle p50/p99 (from the controller's /diagnostics);
  * latency from joint-state arrival to command publication (monitor side: command arrival minus the
    arrival of the latest joint state before it; and the controller's own state age if it reports it);
  * CPU use and RSS of each process at the start and end of the window;
  * the ratios against the baseline and the issue's goals.

    bench/bench_loop.py [--duration 30] [--config config/arm7_controller.yaml] [--rate 1000]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
LATE = 1.5e-3


# ----------------------------------------------------------------------------- baseline node
def baseline_main(rate, topic, n, out_json, duration):
    """A bare rclpy timer publishing Float64MultiArray at `rate`; records its own callback periods."""
    import rclpy
    from std_msgs.msg import Float64MultiArray

    rclpy.init()
    node = rclpy.create_node("bench_baseline")
    pub = node.create_publisher(Float64MultiArray, topic, 10)
    msg = Float64MultiArray()
    data = [0.0] * n
    stamps = np.zeros(int(rate * (duration + 60)) + 10, dtype=np.int64)
    pubs = np.zeros_like(stamps)
    count = [0]

    def tick():
        i = count[0]
        t0 = time.perf_counter_ns()
        if i < len(stamps):
            stamps[i] = t0
        count[0] = i + 1
        msg.data = data
        t1 = time.perf_counter_ns()
        pub.publish(msg)
        if i < len(pubs):
            pubs[i] = time.perf_counter_ns() - t1

    node.create_timer(1.0 / rate, tick)
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, Exception):
        pass
    finally:
        k = min(count[0], len(stamps))
        Path(out_json).write_text(json.dumps({"stamps_ns": stamps[:k].tolist(), "publish_ns": pubs[:k].tolist()}))
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


# ----------------------------------------------------------------------------- helpers
def proc_stat(pid):
    """(cpu seconds, rss bytes) of a process."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            parts = f.read().rsplit(")", 1)[1].split()
        cpu = (int(parts[11]) + int(parts[12])) / CLK_TCK
        rss = int(parts[21]) * PAGE
        return cpu, rss
    except (OSError, IndexError, ValueError):
        return float("nan"), float("nan")


def period_stats(t_sec):
    t = np.asarray(t_sec, dtype=float)
    if len(t) < 3:
        return None
    d = np.diff(t)
    return dict(n=len(d), rate=len(d) / (t[-1] - t[0]), p50=float(np.percentile(d, 50)),
                p99=float(np.percentile(d, 99)), max=float(d.max()), late=float(np.mean(d > LATE)))


def fmt_us(x):
    return "n/a" if x is None or not np.isfinite(x) else f"{x * 1e6:8.1f} us"


def console(exe):
    cand = Path(sys.executable).parent / exe
    if cand.exists():
        return [str(cand)]
    return [sys.executable, "-m", {"rne_sim": "rne_control.ros.sim_node",
                                   "rne_controller": "rne_control.ros.controller_node"}[exe]]


class Proc:
    def __init__(self, name, argv, logdir):
        self.name = name
        self.log = Path(logdir) / f"{name}.log"
        self._f = open(self.log, "wb")
        self.p = subprocess.Popen(argv, stdout=self._f, stderr=subprocess.STDOUT, start_new_session=True)

    def alive(self):
        return self.p.poll() is None

    def stop(self):
        if self.p.poll() is None:
            try:
                os.killpg(self.p.pid, signal.SIGINT)
                self.p.wait(timeout=10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(self.p.pid, signal.SIGKILL)
                    self.p.wait(timeout=5)
                except (ProcessLookupError, subprocess.TimeoutExpired):
                    pass
        self._f.close()
        return self.p.returncode


def _num(s):
    m = re.search(r"[-+]?\d*\.?\d+(?:[eE][-+]?\d+)?", str(s))
    return float(m.group(0)) if m else None


def find_diag(values, *words):
    """The first diagnostics value whose key contains all `words` (case-insensitive): (key, value)."""
    for k, v in values.items():
        kl = k.lower()
        if all(w in kl for w in words):
            return k, v
    return None, None


# ----------------------------------------------------------------------------- benchmark
def run(args):
    os.environ.setdefault("ROS_DOMAIN_ID", str(201 + os.getpid() % 30))
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    os.environ.pop("ROS_LOCALHOST_ONLY", None)

    import yaml
    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    cfg_path = Path(args.config)
    if not cfg_path.is_absolute():
        cfg_path = REPO / cfg_path
    cfg = yaml.safe_load(cfg_path.read_text())
    n = len(cfg["/**/rne_controller"]["ros__parameters"]["joints"])
    tmp = Path(tempfile.mkdtemp(prefix="rne_bench_loop_"))
    over = tmp / "override.yaml"
    ctl = {"rate": float(args.rate), "mode": "computed_torque"}
    for kv in args.ctl_param or []:
        k, v = kv.split(":=", 1)
        ctl[k] = yaml.safe_load(v)
    # a light plant, so that the simulator takes as little of the machine as possible from the
    # controller under test: semi-implicit Euler at 1 kHz (default; --sim-integrator rk4 for RK4)
    sim = {"integrator": args.sim_integrator, "sim_rate": float(args.sim_rate)}
    over.write_text(yaml.safe_dump({"/**/rne_controller": {"ros__parameters": ctl},
                                    "/**/rne_sim": {"ros__parameters": sim}}))
    base_json = tmp / "baseline.json"

    procs = {}
    print(f"[bench-loop] {cfg_path.name}: {n} joints, controller at {args.rate:.0f} Hz, "
          f"{args.duration:.0f} s window; ROS_DOMAIN_ID={os.environ['ROS_DOMAIN_ID']}; logs in {tmp}", flush=True)
    procs["rne_sim"] = Proc("rne_sim", console("rne_sim") + [
        "--ros-args", "--params-file", str(cfg_path), "--params-file", str(over)], tmp)
    procs["rne_controller"] = Proc("rne_controller", console("rne_controller") + [
        "--ros-args", "--params-file", str(cfg_path), "--params-file", str(over)], tmp)
    if not args.no_baseline:
        procs["baseline"] = Proc("baseline", [sys.executable, str(Path(__file__).resolve()), "--baseline-node",
                                              "--rate", str(args.rate), "--n", str(n), "--out", str(base_json),
                                              "--duration", str(args.duration)], tmp)

    rclpy.init()
    node = rclpy.create_node("bench_monitor")
    lock = threading.Lock()
    rec = {"cmd": [], "base": [], "js": [], "lat": []}
    recording = [False]
    last_js = [None]
    diag = {}

    def on_cmd(_m):
        t = time.perf_counter()
        if recording[0]:
            with lock:
                rec["cmd"].append(t)
                if last_js[0] is not None:
                    rec["lat"].append(t - last_js[0])

    def on_base(_m):
        if recording[0]:
            rec["base"].append(time.perf_counter())

    def on_js(_m):
        t = time.perf_counter()
        last_js[0] = t
        if recording[0]:
            rec["js"].append(t)

    def on_diag(m):
        for st in m.status:
            if "rne_controller" in st.name or "rne_controller" in st.hardware_id:
                diag.clear()
                diag.update({kv.key: kv.value for kv in st.values})
                diag["__message__"] = st.message

    cmd_topic = cfg["/**/rne_controller"]["ros__parameters"].get("command_topic", "/effort_controller/commands")
    node.create_subscription(Float64MultiArray, cmd_topic, on_cmd, 100)
    node.create_subscription(Float64MultiArray, "/bench/baseline", on_base, 100)
    node.create_subscription(JointState, "/joint_states", on_js, 100)
    node.create_subscription(DiagnosticArray, "/diagnostics", on_diag, 10)
    from rclpy.executors import SingleThreadedExecutor

    ex = SingleThreadedExecutor()
    ex.add_node(node)
    stop = [False]

    def spin():
        while not stop[0]:
            try:
                ex.spin_once(timeout_sec=0.05)
            except Exception:
                break

    th = threading.Thread(target=spin, daemon=True)
    th.start()
    code = 0
    try:
        # wait for the loop, then warm up
        t0 = time.monotonic()
        recording[0] = True
        while len(rec["cmd"]) < 200:
            for p in procs.values():
                if not p.alive():
                    raise RuntimeError(f"{p.name} exited: {p.log.read_text()[-2000:]}")
            if time.monotonic() - t0 > 60:
                raise RuntimeError("controller did not start publishing within 60 s")
            time.sleep(0.05)
        print(f"[bench-loop] loop running after {time.monotonic() - t0:.1f} s; warming up {args.warmup:.0f} s", flush=True)
        time.sleep(args.warmup)
        with lock:
            for v in rec.values():
                v.clear()
        start = {k: proc_stat(p.p.pid) for k, p in procs.items()}
        t_start = time.monotonic()
        while time.monotonic() - t_start < args.duration:
            time.sleep(0.2)
            for p in procs.values():
                if not p.alive():
                    raise RuntimeError(f"{p.name} exited during the run: {p.log.read_text()[-2000:]}")
        recording[0] = False
        wall = time.monotonic() - t_start
        end = {k: proc_stat(p.p.pid) for k, p in procs.items()}
        time.sleep(1.2)  # one more /diagnostics
        diag_end = dict(diag)
    except Exception as e:
        print(f"[bench-loop] error: {e}", file=sys.stderr)
        code = 1
        wall, start, end, diag_end = 0, {}, {}, {}
    finally:
        stop[0] = True
        th.join(timeout=2)
        rcs = {k: p.stop() for k, p in reversed(list(procs.items()))}
        node.destroy_node()
        rclpy.try_shutdown()
    if code:
        return code

    # ------------------------------------------------------------------ report
    ctl_rx = period_stats(rec["cmd"])
    base_rx = period_stats(rec["base"])
    base_self, base_pub = None, None
    if base_json.exists():
        bj = json.loads(base_json.read_text())
        skip = int(args.warmup * args.rate) + 200  # skip start-up like the others
        st = np.array(bj["stamps_ns"], dtype=float) * 1e-9
        base_self = period_stats(st[skip:])
        base_pub = np.array(bj.get("publish_ns", []), dtype=float)[skip:] * 1e-3
    print()
    print(f"=== rne_controller {args.rate:.0f} Hz computed torque, {n} DOF, {wall:.1f} s ===")
    print(f"{'period (arrival at monitor)':<34}{'p50':>12}{'p99':>12}{'max':>12}{'late>1.5ms':>12}{'rate':>10}")
    for name, s in (("rne_controller commands", ctl_rx), ("baseline rclpy timer", base_rx),
                    ("baseline (own timer callbacks)", base_self)):
        if s:
            print(f"{name:<34}{fmt_us(s['p50']):>12}{fmt_us(s['p99']):>12}{fmt_us(s['max']):>12}"
                  f"{100 * s['late']:>11.2f}%{s['rate']:>9.1f}Hz")
    print()
    print("controller /diagnostics (end of run):")
    for k, v in diag_end.items():
        if k != "__message__":
            print(f"  {k:<32} {v}")
    ck50, cv50 = find_diag(diag_end, "compute", "p50")
    ck99, cv99 = find_diag(diag_end, "compute", "p99")
    print()
    print(f"compute per cycle, timer entry to command hand-off: p50 {cv50 if cv50 is not None else 'n/a'} ({ck50}), "
          f"p99 {cv99 if cv99 is not None else 'n/a'} ({ck99})")
    pk50, pv50 = find_diag(diag_end, "publish_time", "p50")
    pk99, pv99 = find_diag(diag_end, "publish_time", "p99")
    print(f"the publish call itself (DDS write): p50 {pv50} us, p99 {pv99} us", end="")
    if base_pub is not None and base_pub.size:
        print(f"; the baseline's: p50 {np.percentile(base_pub, 50):.1f} us, p99 {np.percentile(base_pub, 99):.1f} us")
    else:
        print()
    if rec["lat"]:
        lat = np.array(rec["lat"])
        print(f"joint-state arrival -> command arrival (monitor): p50 {fmt_us(np.percentile(lat, 50))}, "
              f"p99 {fmt_us(np.percentile(lat, 99))}, max {fmt_us(lat.max())}")
    ak, av = find_diag(diag_end, "state", "age")
    if ak:
        print(f"controller-reported {ak}: {av}")
    print()
    print(f"{'process':<16}{'CPU %':>8}{'RSS start':>12}{'RSS end':>12}{'growth':>10}{'exit':>6}")
    for k in procs:
        c0, r0 = start.get(k, (np.nan, np.nan))
        c1, r1 = end.get(k, (np.nan, np.nan))
        cpu = 100 * (c1 - c0) / wall if wall else np.nan
        print(f"{k:<16}{cpu:>7.1f}%{r0 / 2**20:>10.1f}MB{r1 / 2**20:>10.1f}MB{(r1 - r0) / 2**20:>8.2f}MB{rcs.get(k)!s:>6}")
    print()
    if ctl_rx and base_rx:
        r99 = ctl_rx["p99"] / base_rx["p99"]
        rl = ctl_rx["late"] / base_rx["late"] if base_rx["late"] > 0 else (np.inf if ctl_rx["late"] > 0 else 1.0)
        print(f"ratios vs baseline: period p99 {r99:.2f}x, late fraction {rl:.2f}x")
        goals = [("period p99 within 10% of baseline", r99 <= 1.10),
                 ("late cycles <= 2x baseline", ctl_rx["late"] <= 2 * base_rx["late"])]
        p50 = _num(cv50) if cv50 is not None else None
        p99 = _num(cv99) if cv99 is not None else None
        unit = 1.0
        if ck50 and ("ms" in ck50.lower() or "ms" in str(cv50)):
            unit = 1e3
        if p50 is not None:
            goals.append(("compute p50 <= 30 us", p50 * unit <= 30.0))
        if p99 is not None:
            goals.append(("compute p99 <= 100 us", p99 * unit <= 100.0))
        c0, r0 = start.get("rne_controller", (0, 0))
        c1, r1 = end.get("rne_controller", (0, 0))
        goals.append(("no memory growth (< 1 MB)", (r1 - r0) < 2**20))
        print("goals:")
        for g, ok in goals:
            print(f"  [{'ok' if ok else 'MISS'}] {g}")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=float, default=30.0)
    ap.add_argument("--warmup", type=float, default=3.0)
    ap.add_argument("--rate", type=float, default=1000.0)
    ap.add_argument("--config", default="config/arm7_controller.yaml")
    ap.add_argument("--no-baseline", action="store_true")
    ap.add_argument("--sim-integrator", default="semi_implicit", choices=["semi_implicit", "rk4"])
    ap.add_argument("--sim-rate", type=float, default=1000.0, help="rne_sim integration rate, Hz")
    ap.add_argument("--ctl-param", action="append", metavar="KEY:=VALUE", help="extra controller parameter")
    ap.add_argument("--baseline-node", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--n", type=int, default=7, help=argparse.SUPPRESS)
    ap.add_argument("--out", default="", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.baseline_node:
        return baseline_main(args.rate, "/bench/baseline", args.n, args.out, args.duration)
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
