#!/usr/bin/env python3
"""The controller's own cycle, without the machine around it: ``rne_controller`` (``trigger: state``,
1 kHz) in this process, fed joint states directly (one message every 1 ms of a 0.5 Hz sinusoid on every
controlled joint, built by the plant's ``sim_joint_states`` as ``rne_sim`` would), no executor, no
``rne_sim`` and no subscriber on its command topic. Prints, per robot, the node's compute time (cycle
entry to the hand-off of the command, its ``/diagnostics`` figure) and the whole state callback
(reading the serialised message and merging it, the cycle, the publish call, and every 10th cycle ``~/controller_state``).

Each robot runs twice: with warm caches (the states back to back), and with the caches evicted before
every state (``--evict`` MiB written, one byte per 64-byte line: by default 32 MiB, this machine's
last-level cache), as they are when other processes run between two states. Compare with ``make
bench-loop``: what that adds is the machine (DDS traffic, ``rne_sim`` and the baseline sharing 2 cores,
and so the caches).

Per robot whose plant has a momentum observer (a tree on a fixed base), also the observer's update as the
cycle calls it (``observer.update(t, q, qd, tau)`` on the plant's ``rigid_tree`` and its state views),
timed on its own right after each state's callback, warm caches; and what the observer adds to the cycle
(the observer with its collision test, and the bookkeeping of the commands it takes): the warm compute
p50 with ``observer.enabled`` true less that with it false, run one after the other. Goal: at most 2 µs
per cycle at 7 DOF.

Task space: the warm compute p50 of the arm (config/arm7_controller.yaml) and the Panda with its hand
(config/panda_controller.yaml, end_effector_frame panda_hand_tcp) in ``cartesian_impedance`` and
``operational_space`` against ``computed_torque``, the modes taking turns over 5 rounds, the sinusoid about
a working configuration (the elbow bent; the goal: a task-space cycle within 2x a computed-torque cycle at 7
DOF) and about the reference configuration q = 0, where both arms stand straight up, singular (for
information: the eigensolvers need more sweeps there). ``--task`` runs only this part.

Then what an uncontrolled part costs: the Panda with its hand uncontrolled (config/panda_controller.yaml,
urdf/panda.urdf) against the same URDF with the hand's links and joints removed, warm caches, one run
each; the goal is a compute p50 ratio of at most 1.10.

    .venv/bin/python bench/bench_cycle.py [--states 4000] [--evict 32] [--config config/arm7_controller.yaml ...]
                                          [--task]
"""
import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ["config/arm7_controller.yaml", "config/palletizer_controller.yaml",
           "config/gough_stewart_controller.yaml"]


def states(plant, n, dt=1e-3, amplitude=0.05, hz=0.5, center=None):
    """n JointState messages of a sinusoid about the plant's reference state (or about ``center``, the
    controlled joints' positions)."""
    from sensor_msgs.msg import JointState
    q0, _ = plant.sim_reference_state()
    if center is not None:
        q0[:plant.n] = center
    nc = plant.n
    out = []
    for k in range(n):
        w = 2 * np.pi * hz
        q, qd = q0.copy(), np.zeros_like(q0)
        q[:nc] += amplitude * np.sin(w * k * dt)
        qd[:nc] = amplitude * w * np.cos(w * k * dt)
        names, p, v = plant.sim_joint_states(q, qd)
        m = JointState()
        m.name, m.position, m.velocity = list(names), [float(x) for x in p], [float(x) for x in v]
        out.append(m)
    return out


PANDA_ARM = ["panda_joint%d" % i for i in range(1, 8)]
OBSERVER_GOAL_US = 2.0
TASK_GOAL = 2.0      # a task-space cycle's compute / a computed-torque cycle's, at 7 DOF
# (config, parameters, a working configuration of the controlled joints, rad): the elbow bent, away from the
# singularities of the reference configuration (both arms stretched straight up at q = 0)
TASK_CASES = (("config/arm7_controller.yaml", (), (0.1, -0.4, 0.1, -2.0, 0.1, 1.6, 0.5)),
              ("config/panda_controller.yaml", (("end_effector_frame", "panda_hand_tcp"),),
               (0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785)))


def task_space(n_states, warm, rounds=5):
    """Print the task-space modes' warm compute p50 against computed torque's (see the module docstring), about
    a working configuration (the goal) and about the singular q = 0 (for information). The modes take turns,
    ``rounds`` times, and each ratio is the median of the rounds' ratios: this machine's speed drifts by
    more than the modes differ over the minutes a mode's runs would take one after the other."""
    print("task space, warm compute p50 (µs, median of %d rounds, the modes in turn) and the median of the "
          "rounds' ratios to computed_torque:" % rounds)
    modes = ("computed_torque", "cartesian_impedance", "operational_space")
    for cfg, params, q_work in TASK_CASES:
        for where, center in (("working", q_work), ("singular q = 0", None)):
            p50 = {m: [] for m in modes}
            for _ in range(rounds):
                for mode in modes:
                    p50[mode].append(np.percentile(run(cfg, n_states, warm, None, params + (("mode", mode),),
                                                       center)[0], 50))
            ct = np.array(p50["computed_torque"])
            parts = []
            for m in modes[1:]:
                r = float(np.median(np.array(p50[m]) / ct))
                ok = (": ok" if r <= TASK_GOAL else ": MISS") if center is not None else ""
                parts.append(f"{m} {np.median(p50[m]):.1f} ({r:.2f}x{ok})")
            print(f"{Path(cfg).name:<28}{where:<16}computed_torque {np.median(ct):.1f}, " + ", ".join(parts)
                  + (f" (goal <= {TASK_GOAL:g}x)" if center is not None else ""))


def observer_for(plant):
    """(observer, q, qd, tau) as the cycle calls it: a MomentumObserver on the plant's ``rigid_tree`` (a
    tree plant's restricted dynamics model) fed the plant's state views, warmed up; None where the plant has
    no observer."""
    from rne_control.control.observer import MomentumObserver
    if plant.rigid_tree_unavailable:
        return None
    model, q, qd, _ = plant.rigid_tree()
    obs = MomentumObserver(model, 50.0)
    obs.warm_up()
    return obs, q, qd, np.zeros(model.n)


def observer_line(config, obs, times):
    p50 = np.percentile(times, 50)
    return (f"{Path(config).name:<36}observer.update ({obs.n} joints of {obs.model.name}): warm p50 "
            f"{p50:.2f} µs, p99 {np.percentile(times, 99):.2f} µs (goal ≤ {OBSERVER_GOAL_US:g} µs: "
            f"{'ok' if p50 <= OBSERVER_GOAL_US else 'MISS'})")


def without_uncontrolled(path, joints, out):
    """The URDF at ``path`` without what ``joints`` do not need, written to ``out``: every link below which
    no joint of ``joints`` lies is removed with the joint to it (the Panda's hand, Baxter's other arm and
    head), and the movable joints left that are not in ``joints`` become fixed (PR2's torso)."""
    import xml.etree.ElementTree as ET
    root = ET.parse(path).getroot()
    joints_to = {e.find("child").get("link"): e for e in root if e.tag == "joint"}
    below = {}                                   # link -> does a joint of ``joints`` lie below it
    for e in joints_to.values():
        link, hit = e.find("child").get("link"), e.get("name") in joints
        while True:
            below[link] = below.get(link, False) or hit
            parent = joints_to.get(link)
            if parent is None:
                break
            link, hit = parent.find("parent").get("link"), hit or parent.get("name") in joints
    for e in list(root):
        if e.tag == "link" and e.get("name") in joints_to and not below[e.get("name")]:
            root.remove(e)
        elif e.tag == "joint" and not below[e.find("child").get("link")]:
            root.remove(e)
        elif e.tag == "joint" and e.get("type") != "fixed" and e.get("name") not in joints:
            e.set("type", "fixed")
            for m in e.findall("mimic"):
                e.remove(m)
    ET.ElementTree(root).write(out)
    return out


def run(config, n_states, warm, evict=None, params=(), center=None):
    import rclpy
    from rclpy.serialization import serialize_message
    from rne_control.ros.controller.node import ControllerNode
    extra = [a for k, v in params for a in ("-p", f"{k}:={v}")]
    rclpy.init(args=["bench_cycle", "--ros-args", "--params-file", str(ROOT / config), "-p", "trigger:=state",
                     "-p", "rate:=1000.0", "-p", "sched_priority:=0", *extra, "--log-level", "warn"])
    try:
        node = ControllerNode()
        msgs = states(node.plant, n_states + warm, center=center)
        clock = node.get_clock()
        callback, observed = [], []
        obs = observer_for(node.plant) if evict is None else None
        for i, m in enumerate(msgs):
            if evict is not None:
                evict[::64] += 1
            m.header.stamp = clock.now().to_msg()
            raw = serialize_message(m)   # the node reads /joint_states serialised (rne_control.ros.wire)
            t0 = time.perf_counter_ns()
            node._on_state_trigger(raw)
            callback.append(time.perf_counter_ns() - t0)
            if obs is not None:   # timed on its own, after the cycle (whose caches it then finds warm)
                o, q, qd, tau = obs
                tau[:] = 0.01 * i
                t0 = time.perf_counter_ns()
                o.update(i * 1e-3, q, qd, tau)
                observed.append(time.perf_counter_ns() - t0)
        k = node.stats.k_publish
        compute = node.stats.computes[:min(k, node.stats.ring)][-n_states:] / 1e3
        callback = np.array(callback[warm:]) / 1e3
        line = None if obs is None else observer_line(config, obs[0], np.array(observed[warm:]) / 1e3)
        node.destroy_node()
    finally:
        rclpy.shutdown()
    return compute, callback, line


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--states", type=int, default=4000)
    ap.add_argument("--warm", type=int, default=300, help="states before the figures start")
    ap.add_argument("--evict", type=float, default=32.0, help="MiB to write before each state in the second run")
    ap.add_argument("--config", nargs="*", default=CONFIGS)
    ap.add_argument("--task", action="store_true", help="only the task-space comparison")
    args = ap.parse_args()
    os.environ.setdefault("ROS_DOMAIN_ID", str(170 + os.getpid() % 30))
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    if args.task:
        task_space(args.states, args.warm)
        return 0
    evict = np.zeros(int(args.evict * 2**20), np.uint8)
    print(f"rne_controller cycle in one process, {args.states} states at 1 kHz (trigger: state), µs; caches warm, "
          f"then evicted ({args.evict:g} MiB written) before each state")
    print(f"{'config':<36}{'caches':>8}{'compute p50':>13}{'p99':>8}{'callback p50':>14}{'p99':>8}")
    observer_lines = []
    for cfg in args.config:
        for label, buf in (("warm", None), ("evicted", evict)):
            compute, callback, line = run(cfg, args.states, args.warm, buf)
            print(f"{Path(cfg).name:<36}{label:>8}{np.percentile(compute, 50):>13.1f}"
                  f"{np.percentile(compute, 99):>8.1f}{np.percentile(callback, 50):>14.1f}"
                  f"{np.percentile(callback, 99):>8.1f}")
            if line:
                observer_lines.append(line)
    import tempfile
    bare = without_uncontrolled(ROOT / "urdf" / "panda.urdf", PANDA_ARM,
                                Path(tempfile.mkdtemp()) / "panda_without_hand.urdf")
    p50 = {}
    for label, params in (("hand uncontrolled", ()), ("hand removed", (("model_file", bare),))):
        compute, _, line = run("config/panda_controller.yaml", args.states, args.warm, None, params)
        p50[label] = np.percentile(compute, 50)
        if label == "hand uncontrolled":
            observer_lines.append(line)
    ratio = p50["hand uncontrolled"] / p50["hand removed"]
    print(f"Panda, warm caches, compute p50: hand uncontrolled {p50['hand uncontrolled']:.1f} us, hand removed "
          f"{p50['hand removed']:.1f} us: ratio {ratio:.3f} (goal <= 1.10: {'met' if ratio <= 1.10 else 'missed'})")
    print("momentum observer, one update per state, timed after the state's callback (µs, perf_counter_ns "
          "around the call included):")
    for line in observer_lines:
        print(line)
    print("what the observer adds to the cycle, warm compute p50 (µs), observer.enabled true - false, "
          "median of 3 pairs:")
    for cfg in ("config/arm7_controller.yaml", "config/panda_controller.yaml"):
        on, off = [], []
        for _ in range(3):
            off.append(np.percentile(run(cfg, args.states, args.warm, None, (("observer.enabled", "false"),))[0], 50))
            on.append(np.percentile(run(cfg, args.states, args.warm)[0], 50))
        added = float(np.median(np.array(on) - np.array(off)))
        print(f"{Path(cfg).name:<36}on {np.median(on):.2f}, off {np.median(off):.2f}: adds {added:.2f} "
              f"(goal <= {OBSERVER_GOAL_US:g}: {'ok' if added <= OBSERVER_GOAL_US else 'MISS'})")
    task_space(args.states, args.warm)
    return 0


if __name__ == "__main__":
    sys.exit(main())
