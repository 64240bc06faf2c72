"""The demo's robots: their configurations and motions (``ROBOTS``), and the controller's plant from a
configuration with its mass-matrix diagonal (the PD gains equal to computed torque's; ``bench/soak.py``
uses them too). No ROS."""
from __future__ import annotations

import math

import numpy as np

# config: the parameter file (/**/rne_controller and /**/rne_sim sections); amp: the out-and-back amplitude
# per controlled joint (rad or m), or for a platform (task_space) motion: the amplitudes of surge, sway,
# heave (m) and rotations about x, y, z (rad); T: the motion's duration, s; compare: "elasticity" runs the
# rigid against the elastic model instead of gravity + PD against computed torque
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


def demo_setup(args, cfg, flag, robots, why):
    """What a demo that starts its own ``rne_sim`` opens with: ``args.robot`` must be one of ``robots`` and
    ``--no-spawn`` is refused (``why``: what its rne_sim does), each with SystemExit naming ``flag``; then
    (controller parameters, simulator parameters, controlled joints, the model) of the configuration
    ``cfg``, the model loaded quietly (published inertias that break the triangle inequality)."""
    import warnings

    import rne_control as rc
    from ..paths import resolve_model_file

    if args.robot not in robots:
        raise SystemExit(f"rne_demo {flag} runs on {', '.join(robots)}, not '{args.robot}'")
    if args.no_spawn:
        raise SystemExit(f"rne_demo {flag} starts its own rne_sim ({why}): drop --no-spawn")
    ctl_cfg = cfg["/**/rne_controller"]["ros__parameters"]
    sim_cfg = cfg.get("/**/rne_sim", {}).get("ros__parameters", {})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = rc.load_model(str(resolve_model_file(ctl_cfg["model_file"])))
    return ctl_cfg, sim_cfg, list(ctl_cfg["joints"]), model
