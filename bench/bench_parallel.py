#!/usr/bin/env python3
"""Gough-Stewart benchmark (``make bench``): µs per call of the parallel-platform functions on
config/gough_stewart.yaml, as a 1 kHz controller calls them: each call at the next sample of a 6-DOF
trajectory (heave, surge, yaw sines), the forward kinematics warm-started from the previous call's pose.

    bench/bench_parallel.py [--calls 20] [--batches 500]

Goal (issue 8): parallel_joint_inverse_dynamics with a warm-started forward kinematics <= 20 µs per call.
Reported: the median over batches of the mean time per call, wall clock and thread CPU time; short
batches, so that most run without being preempted on a shared machine.
"""
import argparse
import os
import time
from pathlib import Path

import numpy as np

import rne_control as rc

REPO = Path(__file__).resolve().parent.parent
GOAL_US = 20.0


def trajectory(model, n, dt=1e-3):
    """Leg positions, rates and accelerations of n samples of a heave/surge/yaw motion at 1 kHz."""
    t = np.arange(n + 2) * dt
    yaw = 0.2 * np.sin(2.0 * t)
    pose = np.column_stack([0.2 * np.sin(1.5 * t), np.zeros_like(t), 2.0 + 0.15 * np.sin(3.0 * t),
                            np.zeros_like(t), np.zeros_like(t), np.sin(yaw / 2), np.cos(yaw / 2)])
    q = rc.platform_inverse_kinematics(model, pose)
    qd = np.gradient(q, dt, axis=0)
    qdd = np.gradient(qd, dt, axis=0)
    return pose[1:-1], q[1:-1], qd[1:-1], qdd[1:-1]


def per_call_us(make_call, n, calls, batches):
    """(wall, cpu): medians over batches of the mean wall-clock and thread-CPU time per call (µs). On a
    shared machine the CPU time excludes the time the process waits for a core."""
    wall, cpu = np.empty(batches), np.empty(batches)
    for b in range(batches):
        call = make_call()
        t0, c0 = time.perf_counter(), time.thread_time()
        for k in range(calls):
            call(k % n)
        wall[b], cpu[b] = (time.perf_counter() - t0) / calls, (time.thread_time() - c0) / calls
    return 1e6 * float(np.median(wall)), 1e6 * float(np.median(cpu))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--batches", type=int, default=500)
    args = ap.parse_args(argv)
    model = rc.load_parallel(REPO / "config" / "gough_stewart.yaml")
    n = 1000
    pose, q, qd, qdd = trajectory(model, n)
    twist = np.array([rc.platform_jacobian(model, p) @ v for p, v in zip(pose, qd)])
    accel = np.zeros_like(twist)

    def joint_id():
        guess = np.array(pose[0])

        def call(k):
            return rc.parallel_joint_inverse_dynamics(model, q[k], qd[k], qdd[k], guess, pose_out=guess)
        return call

    def fk():
        guess = np.array(pose[0])

        def call(k):
            guess[:] = rc.platform_forward_kinematics(model, q[k], guess)
        return call

    def joint_fd():
        guess = np.array(pose[0])
        tau = rc.parallel_joint_inverse_dynamics(model, q[0], qd[0], qdd[0], guess)

        def call(k):
            return rc.parallel_joint_forward_dynamics(model, q[k], qd[k], tau, guess, pose_out=guess)
        return call

    def cart_id():
        return lambda k: rc.parallel_inverse_dynamics(model, pose[k], twist[k], accel[k])

    for f in (joint_id, fk, joint_fd, cart_id):  # compile (or load the cache) outside the timing
        f()(0)
    rows = [("parallel_joint_inverse_dynamics (warm FK)", joint_id),
            ("platform_forward_kinematics (warm)", fk),
            ("parallel_inverse_dynamics (pose given)", cart_id),
            ("parallel_joint_forward_dynamics (warm FK)", joint_fd)]
    print(f"{'gough_stewart, 1 kHz trajectory':44} {'wall us':>8} {'cpu us':>8}")
    result = {}
    for label, f in rows:
        result[label] = per_call_us(f, n, args.calls, args.batches)
        print(f"{label:44} {result[label][0]:8.2f} {result[label][1]:8.2f}")
    t = result[rows[0][0]][0]
    print(f"goal parallel_joint_inverse_dynamics <= {GOAL_US:.0f} us (wall): {'met' if t <= GOAL_US else 'NOT met'} "
          f"({t:.2f} us; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
