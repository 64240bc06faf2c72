#!/usr/bin/env python3
"""One measurement of ``rne_controller``'s cycle for ``bench_ab.py``, run inside the checkout it measures.

``bench_ab.py`` runs this file (from the working tree) with ``PYTHONPATH`` and the working directory set to
the checkout under test, which may be an older commit: so it uses only what every version of the node has
had since 2026-11-26 (the node class, its plant's ``sim_joint_states``, ``stats.computes``). As
``bench_cycle.py`` does: the node in this process (``trigger: state``, 1 kHz), fed ``--states`` joint states
of a 0.5 Hz sinusoid directly, no executor, warm caches. Prints one JSON line: the compute and callback
percentiles (µs).

    python bench/ab_probe.py --config config/arm7_controller.yaml [--param observer.enabled:=false]
"""
import argparse
import importlib
import json
import os
import sys
import time

import numpy as np


def node_class():
    for mod in ("rne_control.ros.controller.node", "rne_control.ros.controller_node"):
        try:
            return importlib.import_module(mod).ControllerNode
        except ImportError:
            continue
    raise ImportError("no ControllerNode in this checkout")


def takes_serialized() -> bool:
    """The node reads /joint_states serialised (rne_control.ros.wire, since 2026-11-26's loop work)."""
    try:
        importlib.import_module("rne_control.ros.wire")
        return True
    except ImportError:
        return False


def states(plant, n, dt=1e-3, amplitude=0.05, hz=0.5):
    from sensor_msgs.msg import JointState
    q0, _ = plant.sim_reference_state()
    nc = plant.n
    w = 2 * np.pi * hz
    out = []
    for k in range(n):
        q, qd = q0.copy(), np.zeros_like(q0)
        q[:nc] += amplitude * np.sin(w * k * dt)
        qd[:nc] = amplitude * w * np.cos(w * k * dt)
        names, p, v = plant.sim_joint_states(q, qd)
        m = JointState()
        m.name, m.position, m.velocity = list(names), [float(x) for x in p], [float(x) for x in v]
        out.append(m)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", required=True)
    ap.add_argument("--param", action="append", default=[], help="name:=value, after the config")
    ap.add_argument("--states", type=int, default=3000)
    ap.add_argument("--warm", type=int, default=300)
    a = ap.parse_args()
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    import rclpy
    from rclpy.serialization import serialize_message
    extra = [x for p in a.param for x in ("-p", p)]
    rclpy.init(args=["ab_probe", "--ros-args", "--params-file", a.config, "-p", "trigger:=state", "-p", "rate:=1000.0",
                     "-p", "sched_priority:=0", *extra, "--log-level", "warn"])
    serialized = takes_serialized()
    try:
        node = node_class()()
        msgs = states(node.plant, a.states + a.warm)
        clock = node.get_clock()
        callback = []
        for m in msgs:
            m.header.stamp = clock.now().to_msg()
            arg = serialize_message(m) if serialized else m
            t0 = time.perf_counter_ns()
            node._on_state_trigger(arg)
            callback.append(time.perf_counter_ns() - t0)
        st = node.stats
        compute = st.computes[:min(st.k_publish, st.ring)][-a.states:] / 1e3
        callback = np.array(callback[a.warm:]) / 1e3
        if len(compute) < a.states // 2:
            raise RuntimeError("only %d commands for %d states" % (len(compute), a.states))
        node.destroy_node()
    finally:
        rclpy.shutdown()
    print(json.dumps({"compute_p50": float(np.percentile(compute, 50)), "compute_p99": float(np.percentile(compute, 99)),
                      "callback_p50": float(np.percentile(callback, 50)),
                      "callback_p99": float(np.percentile(callback, 99))}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
