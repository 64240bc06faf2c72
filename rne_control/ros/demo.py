"""``rne_demo``: the rne_control demo, in real time over ROS 2.

Starts ``rne_sim`` (the simulated robot) and ``rne_controller`` as subprocesses, drives the robot
through a demo trajectory twice and compares the two control laws:

* PUMA 560 (default): ``gravity`` compensation plus a PD of equal stiffness
  (hold_kp = diag M(q0) kp, hold_kd = diag M(q0) kd), then ``computed_torque``;
* ``--robot ffsr`` (free-flying space robot): computed torque with ``base: fixed`` (ignoring that
  the satellite floats), then ``base: free_floating``; the base drift is reported;
* ``--robot arm7``: like the PUMA, on the 7-DOF arm;
* ``--robot panda``: like the PUMA, on the Franka Panda's arm as franka_description publishes it, its hand
  (and the hand's mimic joint) uncontrolled: rne_sim holds it and publishes it, as its driver would;
* ``--robot palletizer``: like the PUMA, on the palletiser whose elbow is driven through a
  parallelogram (a closed loop: the controller works in the three motor coordinates);
* ``--robot gough_stewart``: the platform flies surge, heave and yaw sines given as a platform trajectory
  (``~/platform_trajectory``); the platform pose error (from the forward kinematics of the measured
  legs) of gravity + PD against computed torque;
* ``--robot arm7_sea`` (the 7-DOF arm on series-elastic actuators): computed torque with the rigid
  model (``ignore_elasticity``: the controller is restarted between the runs), then with the elastic
  model; the springs' deflections are reported;
* ``--identify`` (puma560): computed torque on a simulated robot whose parameters differ from the
  controller's model, before and after ``rne_identify`` (rne_control.ros.demo_identify).

It prints progress, a table of RMS and max tracking error per joint, the controller's loop
statistics (from /diagnostics), and writes a PNG plot of desired vs actual (``rne_demo.png`` in the
current directory by default).  ``--no-spawn`` drives already running nodes (demo.launch.py).
"""
from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from .demo_node import DemoNode, find, spawn, wait_running
from .demo_report import plot, print_report

ROBOTS = {
    "puma560": dict(config="config/puma560_controller.yaml",
                    amp=[0.6, -0.5, 0.5, 0.8, 0.6, 1.0], T=4.0),
    "arm7": dict(config="config/arm7_controller.yaml",
                 amp=[0.6, 0.5, -0.5, 0.6, 0.8, 0.5, 1.0], T=4.0),
    "panda": dict(config="config/panda_controller.yaml",
                  amp=[0.6, 0.5, -0.5, 0.6, 0.8, 0.5, 1.0], T=4.0),
    "palletizer": dict(config="config/palletizer_controller.yaml", amp=[0.8, 0.3, -0.35], T=4.0),
    "gough_stewart": dict(config="config/gough_stewart_controller.yaml", T=4.0, task_space=True,
                          motion=[0.15, 0.0, 0.1, 0.0, 0.0, 0.12]),   # surge (m), heave (m), yaw (rad)
    "arm7_sea": dict(config="config/arm7_sea_controller.yaml", amp=[0.3, 0.25, -0.3, 0.3, 0.4, -0.3, 0.4],
                     T=3.0, compare="elasticity"),
    "ffsr": dict(config="config/ffsr_controller.yaml",
                 amp=[0.3, -0.3, 0.3, 0.4, 0.4, 0.4], T=6.0),
}
TIME_BUDGET = 55.0


def _log(msg):
    print(f"[rne_demo] {msg}", flush=True)


class Session:
    """A demo run's processes (``procs``, newest last) and node (``dn``): ``with Session() as s:`` turns
    Ctrl-C into exit code 130 and an error into a logged 1 (``s.code``), and on leaving shuts the node down
    and stops the processes, logging one that exits non-zero after an otherwise clean run."""

    def __init__(self):
        self.procs, self.dn, self.code = [], None, 0

    def __enter__(self):
        return self

    def __exit__(self, typ, exc, tb):
        handled = typ is not None and issubclass(typ, (KeyboardInterrupt, Exception))
        if typ is KeyboardInterrupt:
            self.code = 130
        elif handled:
            _log(f"error: {exc}")
            self.code = 1
        if self.dn is not None:
            self.dn.shutdown()
        for p in reversed(self.procs):
            rc_ = p.stop()
            if rc_ not in (0, None) and self.code == 0:
                _log(f"{p.name} exited with {rc_}")
        return handled


def out_and_back(q0, amp, T):
    """q_d(t): min-jerk to q0 + amp in T/2, back to q0 in T/2 (positions, velocities, accelerations)."""
    q0, amp, h = np.asarray(q0, float), np.asarray(amp, float), T / 2.0

    def mj(t):
        if t <= 0:
            return 0.0, 0.0, 0.0
        if t >= h:
            return 1.0, 0.0, 0.0
        x = t / h
        return (10 * x**3 - 15 * x**4 + 6 * x**5, (30 * x**2 - 60 * x**3 + 30 * x**4) / h,
                (60 * x - 180 * x**2 + 120 * x**3) / h**2)

    def f(t):
        if t <= h:
            s, sd, sdd = mj(t)
        else:
            s, sd, sdd = mj(t - h)
            s, sd, sdd = 1.0 - s, -sd, -sdd
        return q0 + amp * s, amp * sd, amp * sdd

    return f


TASK_LABELS = ["x", "y", "z", "rot x", "rot y", "rot z"]
TASK_UNITS = ["m", "m", "m", "rad", "rad", "rad"]


def platform_sines(home, motion, T):
    """Platform motion from the pose ``home`` [p; quat]: surge, sway, heave (m) and rotations about x, y, z
    (rad) of amplitudes ``motion``, along sin(2 pi s) for surge, sway and yaw, (1 - cos(2 pi s)) / 2 for
    heave, with s a min-jerk 0 -> 1 over T (the motion starts and ends at rest). f(t) -> pose, twist,
    acceleration (base frame)."""
    from rne_control.dynamics.integrate import quat_exp, quat_mul

    A = np.asarray(motion, float)
    mj = out_and_back(np.zeros(1), np.ones(1), 2 * T)       # its first half: min-jerk 0 -> 1 over T

    def f(t):
        s, sd, sdd = (float(x[0]) for x in mj(min(max(t, 0.0), T)))
        w = 2 * math.pi
        g = np.array([math.sin(w * s), math.sin(w * s), (1 - math.cos(w * s)) / 2, 0.0, 0.0, math.sin(w * s)])
        dg = np.array([w * math.cos(w * s), w * math.cos(w * s), w * math.sin(w * s) / 2, 0, 0, w * math.cos(w * s)])
        ddg = np.array([-w * w * math.sin(w * s), -w * w * math.sin(w * s), w * w * math.cos(w * s) / 2, 0, 0,
                        -w * w * math.sin(w * s)])
        x, v, a = A * g, A * dg * sd, A * (ddg * sd * sd + dg * sdd)
        n = np.linalg.norm(x[3:])
        rot = quat_exp(x[3:] / n, n) if n > 0 else np.array([0.0, 0.0, 0.0, 1.0])
        return np.r_[home[:3] + x[:3], quat_mul(rot, home[3:])], v, a   # the rotations: constant axis

    return f


def _rotvec(quat):
    v, w = np.asarray(quat[:3], float), float(quat[3])
    n = np.linalg.norm(v)
    return np.zeros(3) if n < 1e-15 else 2 * math.atan2(n, w) * v / n


def pose_coordinates(home, poses):
    """Rows [p - p_home, rotation vector from home (base frame)] (6,) of platform poses [p; quat]."""
    from rne_control.dynamics.integrate import quat_mul

    inv_home = np.r_[-home[3:6], home[6]]
    return np.array([np.r_[p[:3] - home[:3], _rotvec(quat_mul(p[3:], inv_home))] for p in poses])


def task_coordinates(model, home, legs):
    """The platform pose coordinates (see pose_coordinates) of each row of measured leg lengths."""
    import rne_control as rc

    return pose_coordinates(home, rc.platform_forward_kinematics(model, np.asarray(legs, float), home))


def _phase(dn, label, f, T, lead=0.3, tail=0.5, task=None):
    """One run: send the motion f (joint space; with ``task`` = (model, home): a platform motion), record
    it, and return the measured and desired coordinates (joints, or the platform pose) and the error."""
    with dn.lock:
        dn.states, dn.odom = [], []
        dn.recording = True
    start = dn.now() + lead
    if task:
        dn.send_platform(f, T, start)
    else:
        dn.send(f, T, start)
    _log(f"{label}: trajectory of {T:.1f} s sent")
    end = start + T + tail
    while dn.now() < end:
        time.sleep(0.05)
    with dn.lock:
        dn.recording = False
        states, odom = list(dn.states), list(dn.odom)
    states = [s for s in states if start <= s[0] <= end]
    if len(states) < 10:
        raise RuntimeError(f"{label}: only {len(states)} joint states recorded")
    t = np.array([s[0] for s in states]) - start
    q = np.array([s[1] for s in states])
    if task:
        model, home = task
        q = task_coordinates(model, home, q)
        qdes = pose_coordinates(home, [f(x)[0] for x in t])
    else:
        qdes = np.array([f(x)[0] for x in t])
    res = dict(label=label, t=t, q=q, qd=qdes, err=q - qdes, extra=np.array([s[3] for s in states]),
               tau=np.array([s[4] for s in states]), t_stamp=t + start)
    if odom:
        p = np.array([o[1] for o in odom if start <= o[0] <= end] or [odom[0][1]])
        quat = np.array([o[2] for o in odom if start <= o[0] <= end] or [odom[0][2]])
        dots = np.minimum(1.0, np.abs(quat @ quat[0]))
        ang = 2.0 * np.arccos(dots)
        dist = np.linalg.norm(p - p[0], axis=1)
        # (end drift, max excursion) of position and attitude: an out-and-back joint path retraced
        # exactly returns a zero-momentum base to its start pose, so the excursion matters too
        res["base_drift"] = (float(dist[-1]), float(ang[-1]), float(dist.max()), float(ang.max()))
    return res


def _phase_once_fresh(dn, label, f, T, q0, task):
    """_phase, run again once if a joint state came late during it: the controller then went stale, held
    the measured position and dropped the trajectory (a hiccup of the machine the demo shares, not of the
    law under test), so the run says nothing about tracking. The robot is brought back to ``q0`` first."""
    before = dn.stale_events()
    res = _phase(dn, label, f, T, task=task)
    after = dn.stale_events()
    if before is None or after is None or after == before:
        return res
    _log(f"{label}: {after - before} stale joint state(s) during the run (a late state from the machine, not "
         "the law): returning to the start and running it again")
    here = dn.last_state[1]
    dn.send(out_and_back(here, np.asarray(q0, float) - here, 3.0), 1.5, dn.now() + 0.3)
    time.sleep(2.5)
    return _phase(dn, label, f, T, task=task)


def config_plant(model, params):
    """The controller's plant from its parameters as a config file gives them (``joints``,
    ``locked.<joint>``)."""
    from rne_control.control import make_plant

    locked = {k[len("locked."):]: float(v) for k, v in params.items() if k.startswith("locked.")}
    return make_plant(model, list(params["joints"]), locked)


def mass_diagonal(plant, q_sim):
    """Diagonal of ``plant``'s mass matrix in its controlled coordinates at a simulator's start state
    (``initial_positions``: every simulated joint, or the controlled ones), the uncontrolled joints at their
    locked positions, for any kind of model."""
    q_sim = plant.sim_initial_positions(np.asarray(q_sim, float))
    names, q, _ = plant.sim_joint_states(q_sim, np.zeros_like(q_sim))
    at = dict(zip(names, q))
    q_state = np.array([at.get(j, math.nan) for j in plant.state_names])
    plant.set_state(q_state, np.zeros_like(q_state))
    return np.diag(plant.mass_matrix())


def main(argv=None):
    ap = argparse.ArgumentParser(prog="rne_demo", description=__doc__.split("\n\n")[0])
    ap.add_argument("--robot", choices=sorted(ROBOTS), default="puma560")
    ap.add_argument("--output", default="rne_demo.png", help="plot file (default: rne_demo.png)")
    ap.add_argument("--no-spawn", action="store_true", help="drive running rne_sim/rne_controller nodes")
    ap.add_argument("--identify", action="store_true",
                    help="computed torque on a mismatched robot before and after rne_identify (puma560)")
    ap.add_argument("--lockstep", action="store_true", help="with --identify: rne_sim in lockstep (sim time)")
    # ROS arguments (when started by launch) are ignored
    args, _unknown = ap.parse_known_args(argv if argv is not None else sys.argv[1:])
    t_begin = time.monotonic()
    spec = ROBOTS[args.robot]
    cfg_path = find(spec["config"])
    import yaml

    cfg = yaml.safe_load(cfg_path.read_text())
    if args.identify:
        from .demo_identify import run
        return run(args, spec, cfg_path, cfg)
    ctl_cfg = cfg["/**/rne_controller"]["ros__parameters"]
    sim_cfg = cfg["/**/rne_sim"]["ros__parameters"]
    joints = list(ctl_cfg["joints"])
    n = len(joints)
    kp = np.asarray(ctl_cfg.get("kp", [100.0] * n), float)
    kd = np.asarray(ctl_cfg.get("kd", [20.0] * n), float)
    floating = args.robot == "ffsr"
    compare = spec.get("compare", "gravity_pd")

    import rne_control as rc

    model = rc.load_model(str(find(ctl_cfg["model_file"])))
    q0 = np.asarray(sim_cfg.get("initial_positions", [0.0] * n), float)
    mdiag = mass_diagonal(config_plant(model, ctl_cfg), q0) if compare == "gravity_pd" else None
    springs = list(getattr(model, "elastic_joint_names", ()))

    if floating:
        # free-floating first: the fixed-base model drives this robot into saturation and leaves it
        # far from the start, which would spoil the phase after it
        phases = [("base free_floating", {"mode": "computed_torque", "base": "free_floating"}),
                  ("base fixed", {"base": "fixed"})]
    elif compare == "elasticity":   # a static parameter: the controller restarts between the runs
        phases = [("rigid model", {"mode": "computed_torque", "ignore_elasticity": True}),
                  ("elastic model", {"mode": "computed_torque", "ignore_elasticity": False})]
        if args.no_spawn:
            raise SystemExit("rne_demo --robot %s restarts rne_controller between its runs: drop --no-spawn"
                             % args.robot)
    else:
        phases = [("gravity + PD", {"mode": "gravity", "hold_kp": mdiag * kp, "hold_kd": mdiag * kd}),
                  ("computed_torque", {"mode": "computed_torque"})]

    tmp = tempfile.mkdtemp(prefix="rne_demo_")
    with Session() as session:
        procs = session.procs
        if not args.no_spawn:
            _log(f"robot {args.robot}: starting rne_sim and rne_controller ({cfg_path})")
            procs.append(spawn("rne_sim", cfg_path, tmp))
            procs.append(spawn("rne_controller", cfg_path, tmp, phases[0][1]))
        dn = session.dn = DemoNode(joints, springs)

        wait_running(dn, procs)
        _log(f"loop running ({time.monotonic() - t_begin:.1f} s after start)")
        if args.no_spawn:
            dn.set_params(phases[0][1])
            time.sleep(0.6)
        q0 = dn.last_state[1].copy()
        task = None
        if spec.get("task_space"):   # a platform: the motion and its error in the platform's pose
            home = rc.platform_forward_kinematics(model, q0)
            task = (model, home)
            f = platform_sines(home, spec["motion"], spec["T"])
        else:
            f = out_and_back(q0, np.asarray(spec["amp"], float), spec["T"])
        results = []
        for i, (label, params) in enumerate(phases):
            if i > 0 and compare == "elasticity":
                procs.pop().stop()
                procs.append(spawn("rne_controller", cfg_path, tmp, params, i))
                wait_running(dn, procs, dn.ncmd)
                _log(f"restarted rne_controller with {params}")
                time.sleep(1.0)
            elif i > 0:
                dn.set_params(params)
                _log(f"switched rne_controller to {params} (ramp)")
                time.sleep(1.0)
            results.append(_phase_once_fresh(dn, label, f, spec["T"], q0, task))
            if time.monotonic() - t_begin > TIME_BUDGET - 8:
                _log("time budget nearly used: stopping early")
                break

        labels, units = (TASK_LABELS, TASK_UNITS) if task else (joints, None)
        print_report(results, labels, units, springs, dn.diag)
        title = {"ffsr": "FFSR: computed torque with a free-floating vs a fixed-base model",
                 "gough_stewart": "Gough-Stewart platform: pose error, gravity + PD vs computed torque",
                 "arm7_sea": "arm7_sea: computed torque with a rigid vs the elastic model"}.get(
            args.robot, f"{args.robot}: gravity + PD vs computed torque")
        out = Path(args.output).resolve()
        plot(results, labels, out, title, units)
        _log(f"plot written to {out}")
        _log(f"done in {time.monotonic() - t_begin:.1f} s")
    return session.code


if __name__ == "__main__":
    sys.exit(main())
