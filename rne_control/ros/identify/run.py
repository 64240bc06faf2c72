"""``rne_identify run``: record an exciting trajectory tracked by the running ``rne_controller``.

    rne_identify run --out data.npz [--period 10 --harmonics 5 --periods 3] --ros-args --params-file <controller config>

It reads the controller's section (``rne_controller``) of the parameter file for ``model_file``,
``joints`` and ``command_topic``; computes an excitation trajectory for that model
(``rc.excitation_trajectory``); sends the controller (``<controller>/joint_trajectory``) a min-jerk move
to the trajectory's start, then ``periods`` periods of it, which the controller tracks (in
computed-torque mode with the nominal model, as the configuration says); and records ``/joint_states``
(positions, velocities, efforts) and the commands during the excitation, with a progress bar. It writes
the record (rne_control.identification.record): the effort is the measured one when every joint state
in the window carries efforts, else the commanded one, and ``effort_source`` says which.
Time is the stamps of ``/joint_states`` (sim time when ``rne_sim`` runs in lockstep).
"""
from __future__ import annotations

import sys
import threading
import time
import warnings

import numpy as np

from ...control.profiles import min_jerk
from ..conversions import joint_trajectory_message, stamp_to_sec
from ..paths import resolve_model_file
from ..runner import spin_in_background

TRAJ_DT = 0.02  # s between trajectory points (the controller interpolates quintically)


def start_move_duration(velocity_limits, q_now, q_start) -> float:
    """The duration (s) of the min-jerk move from ``q_now`` to the excitation's start ``q_start``: at least 2 s,
    its peak speed (15/8 of the mean) at most half of each joint's velocity limit, or of 1 rad/s (m/s) where
    a joint has none."""
    v = np.asarray(velocity_limits, dtype=float)
    vmax = np.where(np.isfinite(v) & (v > 0), v, 1.0)
    return max(2.0, float(np.max(1.875 * np.abs(np.asarray(q_start) - np.asarray(q_now)) / (0.5 * vmax))))


def controller_section(params_file, node="rne_controller"):
    """The ``ros__parameters`` of ``node`` in a ROS 2 parameter file (``/**/node``, ``node`` or ``/node``)."""
    import yaml
    with open(params_file) as fh:
        doc = yaml.safe_load(fh) or {}
    for key, val in doc.items():
        if str(key).split("/")[-1] == node and isinstance(val, dict):
            return val.get("ros__parameters", {}) or {}
    raise ValueError(f"{params_file}: no '{node}' section")


def _progress(frac, t, T):
    bar = "#" * int(40 * frac)
    sys.stderr.write(f"\r[rne_identify] [{bar:<40}] {100 * frac:5.1f} %  {t:6.1f} / {T:.1f} s")
    sys.stderr.flush()


class Recorder:
    """The rclpy side: joint states and commands in, the trajectory out."""

    def __init__(self, node, joints, command_topic, controller):
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray
        from trajectory_msgs.msg import JointTrajectory
        self.node, self.joints = node, list(joints)
        self.lock = threading.Lock()
        self.rows = []          # (stamp, q, qd, effort or None, last command or None)
        self.last_cmd = None
        self.pub = node.create_publisher(JointTrajectory, f"{controller}/joint_trajectory", 10)
        node.create_subscription(JointState, "/joint_states", self._on_state, 10000)   # lockstep outruns callbacks
        node.create_subscription(Float64MultiArray, command_topic, self._on_cmd, 1000)

    def _on_cmd(self, msg):
        if len(msg.data) == len(self.joints):
            self.last_cmd = np.array(msg.data, float)

    def _on_state(self, msg):
        idx = {n: i for i, n in enumerate(msg.name)}
        if any(j not in idx for j in self.joints):
            return
        cols = [idx[j] for j in self.joints]
        pick = (lambda a: np.array([a[c] for c in cols], float) if len(a) == len(msg.name) else None)
        row = (stamp_to_sec(msg.header.stamp), pick(msg.position), pick(msg.velocity), pick(msg.effort), self.last_cmd)
        with self.lock:
            self.rows.append(row)

    def now(self):
        with self.lock:
            return self.rows[-1][0] if self.rows else None

    def send(self, t0, pieces):
        """Publish one trajectory starting at stamp t0 (s): pieces = [(f, duration)] back to back."""
        self.pub.publish(joint_trajectory_message(self.joints, int(round(t0 * 1e9)), pieces, TRAJ_DT,
                                                  from_zero=True))


def _report_tracking(joints, q, q_des):
    """Print each joint's RMS deviation from the excitation; warn about a joint that did not follow it (the
    data then do not excite that joint's parameters, for example a light wrist held by friction)."""
    err, span = np.sqrt(np.mean((q - q_des) ** 2, axis=0)), np.ptp(q_des, axis=0)
    print("[rne_identify] excitation tracking RMS error [rad or m]: "
          + ", ".join(f"{j} {e:.3g}" for j, e in zip(joints, err)), file=sys.stderr)
    for j, e, s in zip(joints, err, span):
        if e > 0.25 * s:
            print(f"[rne_identify] warning: joint '{j}' did not follow the excitation (RMS error {e:.3g} for a "
                  f"range of {s:.3g}): its parameters will be poorly identified; raise the controller's gains or "
                  f"compensate its friction", file=sys.stderr)


def record(args, ros_args):
    import rclpy

    import rne_control as rc
    from rne_control.identification.record import save_record

    files = [ros_args[i + 1] for i, a in enumerate(ros_args[:-1]) if a == "--params-file"]
    if not files:
        raise ValueError("give the controller's parameter file: --ros-args --params-file <config.yaml>")
    cfg = {}
    for f in files:
        try:
            cfg.update(controller_section(f))
        except ValueError:
            pass
    if "model_file" not in cfg:
        raise ValueError(f"no rne_controller model_file in {files}")
    if cfg.get("mode", "computed_torque") != "computed_torque":
        print(f"[rne_identify] note: the controller's mode is '{cfg['mode']}', not computed_torque", file=sys.stderr)
    model_file = str(resolve_model_file(cfg["model_file"]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = rc.load_model(model_file, joints=cfg.get("joints") or None)
    print(f"[rne_identify] {model_file}: computing an excitation trajectory "
          f"({args.harmonics} harmonics, period {args.period:g} s)", file=sys.stderr)
    ex = rc.excitation_trajectory(model, args.period, args.harmonics, seed=args.seed, maxiter=args.maxiter)
    print(f"[rne_identify] condition number of Y_b: {ex.cond:.3g}", file=sys.stderr)

    rclpy.init(args=["--ros-args", *ros_args])
    node = rclpy.create_node("rne_identify")
    rec = Recorder(node, model.joint_names, cfg.get("command_topic", "/effort_controller/commands"),
                   args.controller)
    halt = spin_in_background(node)
    try:
        deadline = time.monotonic() + args.timeout
        while rec.now() is None or rec.last_cmd is None or rec.pub.get_subscription_count() == 0:
            if time.monotonic() > deadline:
                raise RuntimeError("no /joint_states, commands or trajectory subscriber: is rne_controller running?")
            time.sleep(0.05)
        with rec.lock:
            q_now = rec.rows[-1][1]
        q_start = ex(0.0)[0]
        T_move = start_move_duration(model.velocity_limits, q_now, q_start)
        T_exc = args.periods * args.period
        t0 = rec.now() + args.lead
        rec.send(t0, [(lambda t: min_jerk(t, T_move, q_now, q_start), T_move), (ex, T_exc)])
        t1, t2 = t0 + T_move, t0 + T_move + T_exc
        deadline = time.monotonic() + args.timeout + 5.0 * (T_move + T_exc)
        while (rec.now() or 0.0) < t2:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the recording stalled at {rec.now() - t1:.1f} of {T_exc:.1f} s")
            _progress(min(1.0, max(0.0, (rec.now() - t1) / T_exc)), max(0.0, rec.now() - t1), T_exc)
            time.sleep(0.1)
        _progress(1.0, T_exc, T_exc)
        sys.stderr.write("\n")
    finally:
        halt()
        node.destroy_node()
        rclpy.try_shutdown()
    with rec.lock:
        rows = [r for r in rec.rows if t1 <= r[0] <= t2]
    if len(rows) < 10:
        raise RuntimeError(f"only {len(rows)} joint states in the excitation window")
    t = np.array([r[0] for r in rows]) - t1
    q = np.array([r[1] for r in rows])
    qd = np.array([r[2] if r[2] is not None else np.full(model.n, np.nan) for r in rows])
    measured = all(r[3] is not None and np.all(np.isfinite(r[3])) for r in rows)
    tau_m = np.array([r[3] if r[3] is not None else np.full(model.n, np.nan) for r in rows])
    tau_c = np.array([r[4] if r[4] is not None else np.full(model.n, np.nan) for r in rows])
    _report_tracking(model.joint_names, q, ex(t)[0])
    keep = np.concatenate([[True], np.diff(t) > 0])  # duplicate stamps (a republished state)
    source = "measured" if measured else "commanded"
    save_record(args.out, t[keep], model.joint_names, q[keep], (tau_m if measured else tau_c)[keep], source,
                qd=qd[keep], tau_measured=tau_m[keep], tau_commanded=tau_c[keep], model=model_file)
    print(f"[rne_identify] wrote {args.out}: {int(keep.sum())} samples over {t[-1]:.1f} s, effort '{source}'",
          file=sys.stderr)
    return 0


def parser(sub):
    r = sub.add_parser("run", help="record an excitation trajectory tracked by the running rne_controller")
    r.add_argument("--out", required=True, help="the record to write (.npz)")
    r.add_argument("--period", type=float, default=10.0, help="excitation period, s (default 10)")
    r.add_argument("--harmonics", type=int, default=5, help="Fourier harmonics (default 5)")
    r.add_argument("--periods", type=int, default=3, help="periods to record (default 3)")
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--maxiter", type=int, default=300, help="optimiser steps of the excitation (default 300)")
    r.add_argument("--controller", default="/rne_controller", help="the controller node (default /rne_controller)")
    r.add_argument("--lead", type=float, default=0.3, help="s between sending and the trajectory start")
    r.add_argument("--timeout", type=float, default=60.0, help="s to wait for the controller")
    return r
