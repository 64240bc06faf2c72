#!/usr/bin/env python3
"""Real robot descriptions, the tests' five (test/real_descriptions.py: the Panda with its hand, Baxter,
PR2, Talos and a UR5 with a Robotiq 2F-85), each with its arm as ``joints``. Per description: the
joints it has and how many are controlled; whether it loads; whether ``rne_controller`` starts from it
(``robot_description`` as a parameter, in this process); the largest error of the controller's law
against Pinocchio's RNE on the whole description over 20 random states (relative to the largest torque:
``gravity`` mode, and ``computed_torque`` with every joint's q and qd, the gripper's included); and the
node's compute p50 (``trigger: state`` at 1 kHz, warm caches, as bench/bench_cycle.py measures it) with
the rest of the robot uncontrolled against the same URDF with that rest removed
(``bench_cycle.without_uncontrolled``): the median over ``--runs`` runs of each, alternating, and the
ratio of the medians. Needs the ``[test]`` extra (Pinocchio, example-robot-data).

    .venv/bin/python bench/bench_descriptions.py [--states 2000] [--runs 3]
"""
import argparse
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "test"))

from bench_cycle import run, without_uncontrolled  # noqa: E402


def law_errors(name, model, trials=20):
    """Largest relative errors (gravity, computed torque) of the law against Pinocchio."""
    from oracle import rel_err
    from real_descriptions import ARM_Q, DESCRIPTIONS, full_state, oracle
    from rne_control.control import ControlLaw, make_plant

    _, arm, gripper, (lo, hi) = DESCRIPTIONS[name]
    pin_ = oracle(name, model)
    plant = make_plant(model, arm)
    law = ControlLaw(plant)
    idx = [model.joint_names.index(j) for j in arm]
    names = plant.state_names
    rng = np.random.default_rng(0)
    worst = [0.0, 0.0]
    for _ in range(trials):
        q_arm = np.array(ARM_Q[name]) + rng.normal(size=len(arm)) * 0.2
        qd_arm = rng.normal(size=len(arm)) * 0.5
        q, qd = full_state(model, arm, q_arm, qd_arm, {gripper: rng.uniform(lo, hi)}, {gripper: rng.normal() * 0.1})
        sq = np.array([q[model.joint_names.index(j)] for j in names])
        sqd = np.array([qd[model.joint_names.index(j)] for j in names])
        z = np.zeros(len(arm))
        law.set_mode("gravity")
        worst[0] = max(worst[0], rel_err(law.compute(sq, sqd, q_arm, z, z), pin_.gravity(q)[idx]))
        law.set_mode("computed_torque")
        q_d, qd_d, qdd_d = q_arm + 0.05, qd_arm * 0.5, rng.normal(size=len(arm))
        tau = law.compute(sq, sqd, q_d, qd_d, qdd_d).copy()
        qdd = np.zeros(model.n)
        qdd[idx] = qdd_d + law.kd * (qd_d - qd_arm) + law.kp * (q_d - q_arm)
        worst[1] = max(worst[1], rel_err(tau, pin_.rnea(q, qd, qdd)[idx]))
    return worst


def params_file(folder, name, arm, description=None, model_file=None):
    p = {"joints": list(arm), "mode": "computed_torque", "gc_freeze": False}
    if description is not None:
        p["robot_description"] = description
    if model_file is not None:
        p["model_file"] = str(model_file)
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"/**/rne_controller": {"ros__parameters": p}}))
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--states", type=int, default=2000)
    ap.add_argument("--warm", type=int, default=300)
    ap.add_argument("--runs", type=int, default=3, help="runs of each variant, alternating; medians printed")
    args = ap.parse_args()
    os.environ.setdefault("ROS_DOMAIN_ID", str(140 + os.getpid() % 30))
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    import rne_control as rc
    from real_descriptions import DESCRIPTIONS

    tmp = Path(tempfile.mkdtemp(prefix="rne_descriptions_"))
    print(f"real descriptions, the arm controlled; compute p50 at 1 kHz (trigger: state), warm caches, "
          f"{args.states} states, median of {args.runs} runs, µs")
    print(f"{'description':<11}{'joints':>8}{'loads':>7}{'node':>6}{'gravity err':>13}{'CT err':>10}"
          f"{'p50 whole':>11}{'p50 arm':>9}{'ratio':>7}")
    for name, (path, arm, _, _) in DESCRIPTIONS.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                model = rc.load_urdf(path, friction=False)
                loads = "yes"
            except ValueError as e:
                print(f"{name:<11} does not load: {e}")
                continue
        errs = law_errors(name, model)
        bare = without_uncontrolled(path, arm, tmp / f"{name}_arm.urdf")
        cfgs = (params_file(tmp, name, arm, description=Path(path).read_text()),
                params_file(tmp, name + "_arm", arm, model_file=bare))
        runs = [[], []]
        for _ in range(args.runs):
            for k, cfg in enumerate(cfgs):
                try:
                    compute, _ = run(str(cfg), args.states, args.warm)
                    runs[k].append(np.percentile(compute, 50))
                except Exception as e:   # the node did not start: say why
                    print(f"{name:<11} rne_controller did not start from {cfg.name}: {e}")
                    runs[k].append(float("nan"))
        p50 = [float(np.median(r)) for r in runs]
        node = "yes" if np.isfinite(p50[0]) else "no"
        print(f"{name:<11}{f'{len(arm)}/{model.n}':>8}{loads:>7}{node:>6}{errs[0]:>13.1e}{errs[1]:>10.1e}"
              f"{p50[0]:>11.1f}{p50[1]:>9.1f}{p50[0] / p50[1]:>7.2f}", flush=True)
        time.sleep(0.2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
