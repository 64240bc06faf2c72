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
  controller's model, before and after ``rne_identify`` (rne_control.ros.demo.identify);
* ``--collision`` (arm7): the arm tracks a trajectory into a contact plane without and with a collision
  reaction (``damp``), in lockstep; the detection delays, contact forces and the observer's residual
  against the true external torque (rne_control.ros.demo.collision; plot ``rne_demo_collision.png``);
* ``--cartesian`` (arm7): rne_controller's ``cartesian_impedance`` mode, in lockstep: the stiffness measured
  from the deflection under a constant wrench, a step of the target by 0.3 m and 90 deg along the shaped
  path (settling time, peak tool speed against ``max_cartesian_velocity``, sigma_min), pressing with 10 N
  into a contact plane (rne_control.ros.demo.cartesian; plot ``rne_demo_cartesian.png``).

It prints progress, a table of RMS and max tracking error per joint, the controller's loop
statistics (from /diagnostics), and writes a PNG plot of desired vs actual (``rne_demo.png`` in the
current directory by default).  ``--no-spawn`` drives already running nodes (demo.launch.py).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ..paths import resolve_model_file
from .motions import TASK_LABELS, TASK_UNITS, out_and_back, platform_sines
from .node import DemoNode, spawn, wait_running
from .report import percent_of_limit, plot, print_report
from .robots import ROBOTS, config_plant, mass_diagonal
from .session import Session, log, phase_once_fresh

TIME_BUDGET = 55.0


def main(argv=None):
    ap = argparse.ArgumentParser(prog="rne_demo", description=__doc__.split("\n\n")[0])
    ap.add_argument("--robot", choices=sorted(ROBOTS), default=None,
                    help="default: puma560 (arm7 with --collision or --cartesian)")
    ap.add_argument("--output", default=None,
                    help="plot file (default: rne_demo.png; rne_demo_collision.png with --collision, "
                         "rne_demo_cartesian.png with --cartesian)")
    ap.add_argument("--no-spawn", action="store_true", help="drive running rne_sim/rne_controller nodes")
    ap.add_argument("--identify", action="store_true",
                    help="computed torque on a mismatched robot before and after rne_identify (puma560)")
    ap.add_argument("--lockstep", action="store_true", help="with --identify: rne_sim in lockstep (sim time)")
    ap.add_argument("--collision", action="store_true",
                    help="arm7 pressing into a contact plane without and with a collision reaction (lockstep)")
    ap.add_argument("--cartesian", action="store_true",
                    help="arm7 in cartesian_impedance: stiffness, a shaped 0.3 m / 90 deg step, pressing with "
                         "10 N (lockstep)")
    # ROS arguments (when started by launch) are ignored
    args, _unknown = ap.parse_known_args(argv if argv is not None else sys.argv[1:])
    chosen = [f"--{k}" for k in ("identify", "collision", "cartesian") if getattr(args, k)]
    if len(chosen) > 1:
        raise SystemExit(f"rne_demo: {' and '.join(chosen)} are different demos: pick one")
    args.robot = args.robot or ("arm7" if args.collision or args.cartesian else "puma560")
    args.output = args.output or ("rne_demo_collision.png" if args.collision else
                                  "rne_demo_cartesian.png" if args.cartesian else "rne_demo.png")
    t_begin = time.monotonic()
    spec = ROBOTS[args.robot]
    cfg_path = resolve_model_file(spec["config"])
    import yaml

    cfg = yaml.safe_load(cfg_path.read_text())
    if args.identify:
        from .identify import run
        return run(args, spec, cfg_path, cfg)
    if args.collision:
        from .collision import run
        return run(args, spec, cfg_path, cfg)
    if args.cartesian:
        from .cartesian import run
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

    model = rc.load_model(str(resolve_model_file(ctl_cfg["model_file"])))
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
            log(f"robot {args.robot}: starting rne_sim and rne_controller ({cfg_path})")
            procs.append(spawn("rne_sim", cfg_path, tmp))
            procs.append(spawn("rne_controller", cfg_path, tmp, phases[0][1]))
        dn = session.dn = DemoNode(joints, springs)

        wait_running(dn, procs)
        log(f"loop running ({time.monotonic() - t_begin:.1f} s after start)")
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
                log(f"restarted rne_controller with {params}")
                time.sleep(1.0)
            elif i > 0:
                dn.set_params(params)
                log(f"switched rne_controller to {params} (ramp)")
                time.sleep(1.0)
            results.append(phase_once_fresh(dn, label, f, spec["T"], q0, task))
            if time.monotonic() - t_begin > TIME_BUDGET - 8:
                log("time budget nearly used: stopping early")
                break

        labels, units = (TASK_LABELS, TASK_UNITS) if task else (joints, None)
        print_report(results, labels, units, springs, dn.diag)
        if dn.r_peak is not None:
            limits = np.asarray(ctl_cfg.get("effort_limits") or config_plant(model, ctl_cfg).effort_limits, float)
            print("External torque estimate in free motion (momentum observer, /diagnostics): largest |r| "
                  "per joint, % of the effort limit: " + ", ".join(
                      f"{j} {percent_of_limit(x, lim)}" for j, x, lim in zip(joints, dn.r_peak, limits)))
            print()
        title = {"ffsr": "FFSR: computed torque with a free-floating vs a fixed-base model",
                 "gough_stewart": "Gough-Stewart platform: pose error, gravity + PD vs computed torque",
                 "arm7_sea": "arm7_sea: computed torque with a rigid vs the elastic model"}.get(
            args.robot, f"{args.robot}: gravity + PD vs computed torque")
        out = Path(args.output).resolve()
        plot(results, labels, out, title, units)
        log(f"plot written to {out}")
        log(f"done in {time.monotonic() - t_begin:.1f} s")
    return session.code


if __name__ == "__main__":
    sys.exit(main())
