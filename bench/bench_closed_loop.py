"""make bench: closed_loop_inverse_dynamics with a warm start against one tree inverse_dynamics call on
the same equivalent tree (the goal: at most 3x), on the four-bar and the palletiser.

Two warm starts: "same q_a" passes the closed q of the same active configuration (one residual
evaluation, no Newton step); "next 1 ms cycle" passes the previous cycle's solution while the active
joints move on by qd * 1 ms, as a controller's loop does (one or two Newton steps). Medians of
alternating blocks; the ratios are the figures to read, the absolute times vary with the machine's load.
"""
import argparse
import itertools
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import rne_control as rc

ROOT = Path(__file__).resolve().parents[1]
ROBOTS = [("four-bar (1 active, 3 tree joints)", ROOT / "config" / "fourbar.yaml", [0.7], [2.0], [1.0]),
          ("palletiser (3 active, 5 tree joints)", ROOT / "config" / "palletizer.yaml", [0.3, 0.2, -0.3],
           [0.5, -0.4, 0.6], [1.0, 0.5, -0.5])]


def timed(fn, number):
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t0) / number * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = ap.parse_args()
    number, blocks = (2000, 5) if args.quick else (5000, 15)
    print(f"rne_control {rc.__version__}: closed_loop_inverse_dynamics vs tree inverse_dynamics, median µs per call")
    print(f"{'robot':38s} {'warm start':16s} {'closed µs':>9s} {'tree µs':>8s} {'ratio':>6s}")
    for label, path, qa, qda, qdda in ROBOTS:
        model = rc.load_dh(path)
        qa, qda, qdda = (np.array(x, float) for x in (qa, qda, qdda))
        q = rc.solve_loops(model, qa)
        G = rc.loop_jacobian(model, q)
        qd, qdd = G @ qda, G @ qdda
        tree = lambda: rc.inverse_dynamics(model, q, qd, qdd)  # noqa: E731
        same = lambda: rc.closed_loop_inverse_dynamics(model, qa, qda, qdda, q)  # noqa: E731
        # back and forth by qd * 1 ms, so a long block stays near qa
        step = itertools.cycle([qa + qda * 1e-3, qa.copy()]).__next__
        warm = q.copy()
        cycle = lambda: rc.closed_loop_inverse_dynamics(model, step(), qda, qdda, warm, q_out=warm)  # noqa: E731

        for fn in (tree, same, cycle):
            fn()
        for name, fn in (("same q_a", same), ("next 1 ms cycle", cycle)):
            ta, tb = [], []
            for _ in range(blocks):
                warm[:] = q
                ta.append(timed(fn, number))
                tb.append(timed(tree, number))
            a, b = statistics.median(ta), statistics.median(tb)
            print(f"{label:38s} {name:16s} {a:9.2f} {b:8.2f} {a / b:6.2f}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
