"""make bench: µs per call of each dynamics function against Pinocchio in the same process.

Medians over repeated blocks of calls; rne_control and Pinocchio blocks alternate so machine noise
hits both. Ratios (rne_control / Pinocchio) are the figures to compare; absolute times vary.
The goals (issue 13) apply to UR5 and the Panda arm: a single inverse_dynamics or gravity_torques call at
most 0.8x Pinocchio's time, mass_matrix and forward_dynamics at most 1.0x. bench_single_call.py measures
the same ratios on the thread's CPU clock. A last line per robot: coriolis_transpose_torques against
inverse_dynamics in the same run (goal: at most 1.2x at 7 DOF).
"""
import argparse
import gc
import resource
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pinocchio as pin

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test"))
import rne_control as rc  # noqa: E402
from oracle import erd  # noqa: E402

PANDA_ARM = [f"panda_joint{i}" for i in range(1, 8)]
GOALS = {"inverse_dynamics": 0.8, "gravity_torques": 0.8, "mass_matrix": 1.0, "forward_dynamics": 1.0}
GOAL_ROBOTS = ("UR5 (6)", "Panda arm (7)")
CTQ_GOAL = 1.2  # coriolis_transpose_torques at most 1.2x inverse_dynamics (issue 25)
ROBOTS = [
    ("UR5 (6)", "ur_description/urdf/ur5_robot.urdf", None),
    ("Panda arm (7)", "panda_description/urdf/panda.urdf", PANDA_ARM),
    ("baxter tree (19)", "baxter_description/urdf/baxter.urdf", None),
]


def pin_reduced(path, model):
    """Pinocchio model with exactly our joints (others locked at 0)."""
    full = pin.buildModelFromUrdf(path)
    keep = set(model.joint_names)
    lock = [full.getJointId(n) for n in full.names[1:] if n not in keep]
    pm = pin.buildReducedModel(full, lock, pin.neutral(full)) if lock else full
    return pm


def timed(fn, number, blocks):
    out = []
    for _ in range(blocks):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        out.append((time.perf_counter() - t0) / number * 1e6)
    return out


def compare(a, b, number=2000, blocks=15):
    ta, tb = [], []
    for _ in range(blocks):  # alternate blocks
        ta += timed(a, number, 1)
        tb += timed(b, number, 1)
    return statistics.median(ta), statistics.median(tb)


def ctq_cost(model, q, qd, qdd, number, blocks):
    """Median µs of coriolis_transpose_torques and of inverse_dynamics on the same model, alternating blocks."""
    a = lambda: rc.coriolis_transpose_torques(model, q, qd)  # noqa: E731
    b = lambda: rc.inverse_dynamics(model, q, qd, qdd)  # noqa: E731
    a(), b()
    return compare(a, b, number, blocks)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = ap.parse_args()
    number, blocks = (300, 5) if args.quick else (2000, 15)
    print(f"rne_control {rc.__version__} vs Pinocchio {pin.__version__}: median µs per call (ratio = rne/pin)")
    print(f"{'robot':18s} {'function':22s} {'rne µs':>8s} {'pin µs':>8s} {'ratio':>6s}  {'goal':10s} pinocchio call")
    rng = np.random.default_rng(0)
    for label, rel, joints in ROBOTS:
        path = erd(rel)
        if joints is None:  # Pinocchio's depth-first joint order, so both take the same vectors
            joints = list(pin.buildModelFromUrdf(path).names[1:])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = rc.load_urdf(path, joints=joints, friction=False)
        pm = pin_reduced(path, model)
        pd = pm.createData()
        q, qd, qdd = rng.uniform(-1, 1, (3, model.n))
        order = [pm.joints[pm.getJointId(n)].idx_v for n in model.joint_names]
        assert order == sorted(order) and pm.nq == pm.nv == model.n, "joint orders must agree for a fair timing"
        tau = rc.inverse_dynamics(model, q, qd, qdd)
        rows = [
            ("inverse_dynamics", lambda: rc.inverse_dynamics(model, q, qd, qdd), lambda: pin.rnea(pm, pd, q, qd, qdd), "rnea"),
            ("gravity_torques", lambda: rc.gravity_torques(model, q), lambda: pin.computeGeneralizedGravity(pm, pd, q),
             "computeGeneralizedGravity"),
            ("coriolis_torques", lambda: rc.coriolis_torques(model, q, qd), lambda: pin.nonLinearEffects(pm, pd, q, qd),
             "nonLinearEffects (C+g)"),
            ("mass_matrix", lambda: rc.mass_matrix(model, q), lambda: pin.crba(pm, pd, q), "crba"),
            ("forward_dynamics", lambda: rc.forward_dynamics(model, q, qd, tau), lambda: pin.aba(pm, pd, q, qd, tau), "aba"),
        ]
        for name, a, b, pname in rows:
            a(), b()
            ta, tb = compare(a, b, number, blocks)
            goal = GOALS.get(name) if label in GOAL_ROBOTS else None
            verdict = "" if goal is None else f"≤{goal:.1f} {'ok' if ta / tb <= goal else 'MISSED'}"
            print(f"{label:18s} {name:22s} {ta:8.2f} {tb:8.2f} {ta / tb:6.2f}  {verdict:10s} {pname}")
        ta, tb = ctq_cost(model, q, qd, qdd, number, blocks)
        print(f"{label:18s} {'coriolis_transpose':22s} {ta:8.2f} µs vs inverse_dynamics {tb:.2f} µs: "
              f"ratio {ta / tb:.2f} (goal ≤ {CTQ_GOAL:.1f}×: {'ok' if ta / tb <= CTQ_GOAL else 'MISSED'})")
        # stacked throughput
        N = 10000
        Q, QD, QDD = rng.uniform(-1, 1, (3, N, model.n))
        rc.inverse_dynamics(model, Q[:2], QD[:2], QDD[:2])
        ts = []
        for _ in range(3 if args.quick else 7):
            t0 = time.perf_counter()
            rc.inverse_dynamics(model, Q, QD, QDD)
            ts.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        for i in range(2000):
            pin.rnea(pm, pd, Q[i], QD[i], QDD[i])
        tp = (time.perf_counter() - t0) / 2000
        print(f"{label:18s} {'stacked N=10000':22s} {N / statistics.median(ts):14,.0f} samples/s "
              f"(Pinocchio loop from Python: {1 / tp:,.0f} samples/s)")
    # steady-state memory: resident set before and after a long run of calls
    gc.collect()
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for _ in range(200000):
        rc.inverse_dynamics(model, q, qd, qdd)
        rc.forward_dynamics(model, q, qd, tau)
    gc.collect()
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"peak RSS {rss1 / 1024:.1f} MiB; growth over 400,000 further calls: {(rss1 - rss0) / 1024:.2f} MiB")


if __name__ == "__main__":
    main()
