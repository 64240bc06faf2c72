"""A second measurement of the single-call ratios, independent of bench_dynamics.py's method.

bench_dynamics.py reads the wall clock (perf_counter) around alternating blocks and takes each side's
median. Here every block is timed on the thread's own CPU clock (CLOCK_THREAD_CPUTIME_ID: the time the
scheduler gives to someone else is not counted), each rne_control block is paired with the Pinocchio
block right after it, and the figure is the median of the per-pair ratios with its interquartile range.
The calls are plain function calls from one Python frame (no lambda), positional arguments, fresh
outputs: what a user's loop does.

    .venv/bin/python bench/bench_single_call.py [--pairs 41] [--number 3000]
"""
import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pinocchio as pin

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test"))
import rne_control as rc  # noqa: E402
from bench_dynamics import GOALS, PANDA_ARM, pin_reduced  # noqa: E402
from oracle import erd  # noqa: E402

ROBOTS = [("UR5 (6)", "ur_description/urdf/ur5_robot.urdf", None),
          ("Panda arm (7)", "panda_description/urdf/panda.urdf", PANDA_ARM)]
clock = time.thread_time


def block(fn, args, number):
    r = range(number)
    t0 = clock()
    for _ in r:
        fn(*args)
    return clock() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=41)
    ap.add_argument("--number", type=int, default=3000, help="calls per block")
    args = ap.parse_args()
    print(f"thread CPU time per call, median of {args.pairs} paired blocks of {args.number} calls; "
          "ratio = median of the per-pair ratios rne/pin [quartiles]")
    for label, rel, joints in ROBOTS:
        path = erd(rel)
        if joints is None:
            joints = list(pin.buildModelFromUrdf(path).names[1:])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = rc.load_urdf(path, joints=joints, friction=False)
        pm = pin_reduced(path, m)
        pd = pm.createData()
        q, qd, qdd = np.random.default_rng(0).uniform(-1, 1, (3, m.n))
        tau = rc.inverse_dynamics(m, q, qd, qdd)
        rows = [("inverse_dynamics", rc.inverse_dynamics, (m, q, qd, qdd), pin.rnea, (pm, pd, q, qd, qdd)),
                ("gravity_torques", rc.gravity_torques, (m, q), pin.computeGeneralizedGravity, (pm, pd, q)),
                ("mass_matrix", rc.mass_matrix, (m, q), pin.crba, (pm, pd, q)),
                ("forward_dynamics", rc.forward_dynamics, (m, q, qd, tau), pin.aba, (pm, pd, q, qd, tau))]
        for name, f, fa, g, ga in rows:
            f(*fa), g(*ga)
            ta, tb = [], []
            for _ in range(args.pairs):
                ta.append(block(f, fa, args.number))
                tb.append(block(g, ga, args.number))
            ratios = sorted(a / b for a, b in zip(ta, tb))
            q1, med, q3 = statistics.quantiles(ratios, n=4)
            goal = GOALS[name]
            print(f"{label:14s} {name:17s} rne {statistics.median(ta) / args.number * 1e6:5.2f} µs  "
                  f"pin {statistics.median(tb) / args.number * 1e6:5.2f} µs  ratio {med:4.2f} [{q1:4.2f}-{q3:4.2f}]  "
                  f"goal ≤ {goal:.1f}  {'ok' if med <= goal else 'MISSED'}")


if __name__ == "__main__":
    main()
