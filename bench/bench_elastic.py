"""make bench: the elastic-joint inverse dynamics (Khalil §6.3) against one rigid inverse_dynamics call, and
its time against the number of joints.

1. On the shipped arm7_elastic (14 joints: 7 rigid, 7 elastic) and on the Panda URDF with joints 2, 4, 6
   elastic: median µs per single-sample call of elastic_inverse_dynamics and elastic_forward_dynamics,
   over alternating blocks with inverse_dynamics and forward_dynamics on the same model. Goal: the
   elastic inverse dynamics within 2.5x one inverse_dynamics call.
2. Chains of n = 6 ... 60 revolute joints (random modified-DH geometry and inertia, every other joint
   elastic): µs per call of elastic_inverse_dynamics, inverse_dynamics, and the partitioned solve of
   eq. (68) (mass_matrix + inverse_dynamics + numpy), with the least-squares line through the elastic
   times: O(n) shows as a constant µs per joint.

Times are the fastest block of calls (``--stat min``, the default: the least disturbed by the other
processes of a shared machine) or the median block (``--stat median``, as in bench_dynamics.py).
"""
import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "test"))
import rne_control as rc  # noqa: E402
from oracle import erd  # noqa: E402


def timed(fn, number):
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t0) / number * 1e6


STAT = {"min": min, "median": statistics.median}
stat = min


def compare(fns, number, blocks):
    """µs per call of each function (the minimum, or the median, over blocks alternating between them)."""
    times = [[] for _ in fns]
    for _ in range(blocks):
        for t, fn in zip(times, fns):
            t.append(timed(fn, number))
    return [stat(t) for t in times]


def chain(n, rng):
    """A modified-DH chain of n revolute joints, every other one elastic."""
    links = []
    for i in range(n):
        m = rng.uniform(0.5, 3.0)
        e = {"joint": "revolute", "alpha": float(rng.choice([-1.5707963, 0.0, 1.5707963])),
             "d": float(rng.uniform(0, 0.3)), "r": float(rng.uniform(0, 0.3)), "mass": m,
             "com": rng.uniform(-0.1, 0.1, 3).tolist(),
             "inertia": {"ixx": 0.02 * m, "iyy": 0.02 * m, "izz": 0.015 * m}, "rotor_inertia": 0.05}
        if i % 2:
            e["elastic"] = {"stiffness": 5000.0, "damping": 2.0}
        links.append(e)
    return rc.load_dh({"name": f"chain{n}", "convention": "modified", "links": links})


def arm_rows(number, blocks, rng):
    print(f"elastic_inverse_dynamics vs inverse_dynamics on the same model (single samples, {stat.__name__} µs "
          "per call over blocks)")
    print(f"{'robot':28s} {'elastic ID':>10s} {'ID':>7s} {'ratio':>6s} {'elastic FD':>10s} {'FD':>7s} {'ratio':>6s}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        panda = rc.load_urdf(erd("panda_description/urdf/panda.urdf"), joints=[f"panda_joint{i}" for i in range(1, 8)],
                             elastic={f"panda_joint{i}": {"stiffness": 3000.0} for i in (2, 4, 6)})
    for label, model in (("arm7_elastic (7 rigid + 7 el.)", rc.load_dh(ROOT / "config/arm7_elastic.yaml")),
                         ("Panda, joints 2 4 6 elastic", panda)):
        n, nr = model.n, len(model.rigid_joint_names)
        q, qd, qdd = rng.uniform(-1, 1, (3, n))
        qdd_r = qdd[:nr].copy()
        tau_r = rc.elastic_inverse_dynamics(model, q, qd, qdd_r)[0]
        tau = rc.inverse_dynamics(model, q, qd, qdd)
        fns = [lambda: rc.elastic_inverse_dynamics(model, q, qd, qdd_r), lambda: rc.inverse_dynamics(model, q, qd, qdd),
               lambda: rc.elastic_forward_dynamics(model, q, qd, tau_r), lambda: rc.forward_dynamics(model, q, qd, tau)]
        for f in fns:
            f()
        eid, rid, efd, rfd = compare(fns, number, blocks)
        print(f"{label:28s} {eid:10.2f} {rid:7.2f} {eid / rid:6.2f} {efd:10.2f} {rfd:7.2f} {efd / rfd:6.2f}")


def scaling_rows(number, blocks, rng):
    print(f"\nchains of n revolute joints, every other one elastic: {stat.__name__} µs per call over blocks")
    print(f"{'n':>4s} {'elastic ID':>10s} {'per joint':>9s} {'ID':>7s} {'ratio':>6s} {'partitioned (68)':>17s}")
    ns, ts = [], []
    for n in (6, 12, 24, 36, 48, 60):
        model = chain(n, rng)
        r, u = model.rigid_index, model.unactuated_index
        q, qd = rng.uniform(-1, 1, (2, n))
        qdd = np.zeros(n)
        qdd_r = rng.uniform(-1, 1, len(r))

        def partitioned():
            A = rc.mass_matrix(model, q)
            h = rc.inverse_dynamics(model, q, qd, qdd)
            A12 = A[np.ix_(r, u)]
            f = np.linalg.solve(A[np.ix_(u, u)], -h[u] - A12.T @ qdd_r)
            return A[np.ix_(r, r)] @ qdd_r + A12 @ f + h[r]
        fns = [lambda: rc.elastic_inverse_dynamics(model, q, qd, qdd_r), lambda: rc.inverse_dynamics(model, q, qd, qdd),
               partitioned]
        for f in fns:
            f()
        eid, rid, part = compare(fns, max(number // (n // 6), 20), blocks)
        ns.append(n)
        ts.append(eid)
        print(f"{n:4d} {eid:10.2f} {eid / n:9.3f} {rid:7.2f} {eid / rid:6.2f} {part:17.2f}")
    slope, icpt = np.polyfit(ns, ts, 1)
    resid = np.array(ts) - (slope * np.array(ns) + icpt)
    print(f"least squares: t = {icpt:.2f} µs + {slope:.3f} µs x n (largest residual {np.abs(resid).max():.2f} µs)")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    ap.add_argument("--stat", choices=sorted(STAT), default="min", help="statistic over the blocks of calls")
    args = ap.parse_args()
    global stat
    stat = STAT[args.stat]
    # short blocks, many of them: on a shared machine the fastest of many short blocks is the stable figure
    number, blocks = (200, 15) if args.quick else (200, 80)
    rng = np.random.default_rng(0)
    arm_rows(number, blocks, rng)
    scaling_rows(number, blocks, rng)


if __name__ == "__main__":
    main()
