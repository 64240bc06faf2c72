#!/usr/bin/env python3
"""Floating-base benchmark (``make bench``): free_floating_inverse_dynamics, µs per call, against the
Pinocchio computation that gives the same result in the same process: crba + nonLinearEffects + a 6x6
solve for the base acceleration + rnea for the torques. Pinocchio is only needed here and in the tests.

    bench/bench_floating.py [--calls 200] [--batches 200]

Robots: the FFSR (urdf/ffsr.urdf, 6 joints) and the solo12 quadruped (12 joints) of example-robot-data.
Reported: the median over batches of the mean time per call, and the ratio ours / Pinocchio (goal <= 1.0).
"""
import argparse
import time
import warnings
from pathlib import Path

import numpy as np

import rne_control as rc

REPO = Path(__file__).resolve().parent.parent


def robots():
    import pinocchio as pin
    erd = next((p for p in Path(pin.__file__).parents if p.name == "cmeel.prefix"), None)
    out = [("ffsr", REPO / "urdf" / "ffsr.urdf")]
    if erd is not None:
        out.append(("solo12", erd / "share" / "example-robot-data" / "robots" / "solo_description" / "robots" /
                    "solo12.urdf"))
    return [(name, path) for name, path in out if path.is_file()]


def per_call_us(f, calls, batches):
    f()
    times = np.empty(batches)
    for b in range(batches):
        t0 = time.perf_counter()
        for _ in range(calls):
            f()
        times[b] = (time.perf_counter() - t0) / calls
    return 1e6 * float(np.median(times))


def main(argv=None):
    import pinocchio as pin

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--batches", type=int, default=200)
    args = ap.parse_args(argv)
    print(f"{'robot':8} {'dof':>4} {'rne_control us':>15} {'pinocchio us':>13} {'ratio':>6}")
    worst = 0.0
    for name, path in robots():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = rc.load_urdf(str(path), floating_base=True, friction=False)
        pm = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
        pd = pm.createData()
        pm.gravity.linear[:] = model.gravity
        n = model.n
        idx = np.array([pm.joints[pm.getJointId(j)].idx_v for j in model.joint_names])
        rng = np.random.default_rng(0)
        q, qd, qdd = rng.uniform(-1, 1, n), rng.standard_normal(n), rng.standard_normal(n)
        twist = rng.standard_normal(6)
        quat = rng.standard_normal(4)
        quat /= np.linalg.norm(quat)
        Q = np.zeros(pm.nq)
        Q[3:7], Q[idx + 1] = quat, q
        V = np.zeros(pm.nv)
        V[:6], V[idx] = twist, qd
        A = np.zeros(pm.nv)
        A[idx] = qdd
        qdd_pin = A[6:].copy()

        def ours():
            return rc.free_floating_inverse_dynamics(model, q, qd, qdd, twist, quat)

        def pinocchio():
            M = pin.crba(pm, pd, Q)  # upper triangle filled: M[:6, 6:] is the base-joint block
            nle = pin.nonLinearEffects(pm, pd, Q, V)
            A[:6] = np.linalg.solve(M[:6, :6], -nle[:6] - M[:6, 6:] @ qdd_pin)
            return pin.rnea(pm, pd, Q, V, A)[6:], A[:6]

        tau, acc = ours()
        tau_p, acc_p = pinocchio()
        err = max(np.abs(tau - tau_p[idx - 6]).max(), np.abs(acc - acc_p).max()) / max(1.0, np.abs(tau_p).max())
        assert err < 1e-8, f"{name}: results differ from Pinocchio ({err:.2e})"
        t_ours = per_call_us(ours, args.calls, args.batches)
        t_pin = per_call_us(pinocchio, args.calls, args.batches)
        worst = max(worst, t_ours / t_pin)
        print(f"{name:8} {n:4d} {t_ours:15.2f} {t_pin:13.2f} {t_ours / t_pin:6.2f}x")
    print(f"goal <= 1.0x: {'met' if worst <= 1.0 else 'NOT met'} (worst {worst:.2f}x)")


if __name__ == "__main__":
    main()
