"""Computed torque on an arm with elastic joints, with and without the elasticity in the controller's model.

    python -m rne_control.examples.elastic_tracking [--robot arm7_sea] [--duration S]

No ROS: the controller runs at 1 kHz with a zero-order hold and the arm (config/<robot>.yaml, every joint,
springs and dampers) is integrated by RK4 at 2 kHz on :func:`rne_control.elastic_forward_dynamics`
(``ElasticPlant.sim_acceleration``). The rigid joints (the gear outputs) follow
q0 + A (1 - cos(2 pi t / T)) / 2 from the ready pose, starting at rest at the static deflection, with
q_cmd'' = q_d'' + kd (q_d' - q') + kp (q_d - q), kp = 100, kd = 20, twice:

- ``rigid``: tau = inverse_dynamics of the rigid model (the same file without ``elastic``, the
  deflections locked at 0: the arm plus its rotor inertia), from the rigid joints' state;
- ``elastic``: tau = ElasticPlant.inverse_dynamics, one :func:`rne_control.elastic_inverse_dynamics`
  call with the measured deflections and their velocities.

It prints the rigid joints' RMS and largest tracking error and the largest deflection for each.
"""
import argparse
import copy

import numpy as np
import yaml

import rne_control as rc
from rne_control.control.plants.elastic import ElasticPlant
from rne_control.dynamics.integrate import State, rk4_step

Q_READY = np.array([0.0, -0.7854, 0.0, -2.3562, 0.0, 1.5708, 0.7854])   # rad
AMPLITUDE = np.array([0.4, 0.3, 0.4, 0.3, 0.5, 0.4, 0.5])              # rad
KP, KD = 100.0, 20.0


def config_path(robot):
    from rne_control.ros.paths import resolve_model_file  # no rclpy: only the path lookup (as in ffsr.py)
    return str(resolve_model_file(f"config/{robot}.yaml"))


def models(robot):
    """(the elastic model, its rigid twin restricted to the rigid joints)."""
    with open(config_path(robot)) as fh:
        doc = yaml.safe_load(fh)
    model = rc.load_dh(doc)
    rigid_doc = copy.deepcopy(doc)
    for e in rigid_doc["links"]:
        e.pop("elastic", None)
    return model, rc.load_dh(rigid_doc, joints=list(model.rigid_joint_names))


def track(model, law, T=4.5, h_ctl=1e-3, substeps=2):
    """Run ``law(state, qdd_cmd) -> tau_rigid``; returns (RMS error, largest error, largest deflection)."""
    r, e = model.rigid_index, model.elastic_index
    w = 2 * np.pi / T
    q = np.zeros(model.n)
    q[r] = Q_READY
    for _ in range(5):   # the static deflection, by fixed-point iteration
        q[e] = -rc.inverse_dynamics(model, q, np.zeros(model.n), np.zeros(model.n))[e] / model.elastic_stiffness
    s, t, err, defl = State(q, np.zeros(model.n)), 0.0, [], []
    accel = ElasticPlant(model).sim_acceleration
    for _ in range(int(round(T / h_ctl))):
        q_d = Q_READY + AMPLITUDE * (1 - np.cos(w * t)) / 2
        qd_d, qdd_d = AMPLITUDE * w * np.sin(w * t) / 2, AMPLITUDE * w * w * np.cos(w * t) / 2
        tau = law(s, qdd_d + KD * (qd_d - s.qd[r]) + KP * (q_d - s.q[r]))
        for _ in range(substeps):
            s = rk4_step(model, s, t, h_ctl / substeps, lambda t_, x: tau, acceleration=accel)
            t += h_ctl / substeps
        err.append(Q_READY + AMPLITUDE * (1 - np.cos(w * t)) / 2 - s.q[r])
        defl.append(s.q[e])
    err = np.array(err)
    return float(np.sqrt(np.mean(err ** 2))), float(np.abs(err).max()), float(np.abs(defl).max())


def compare(robot="arm7_sea", T=4.5):
    """{"rigid": (rms, max, deflection), "elastic": (...)} for the two controllers."""
    model, rigid = models(robot)
    r, e = model.rigid_index, model.elastic_index
    plant, out = ElasticPlant(model), np.empty(len(r))

    def elastic_law(s, a):
        plant.set_state(np.concatenate([s.q[r], s.q[e]]), np.concatenate([s.qd[r], s.qd[e]]))
        return plant.inverse_dynamics(a, True, out).copy()

    return {"rigid": track(model, lambda s, a: rc.inverse_dynamics(rigid, s.q[r], s.qd[r], a), T),
            "elastic": track(model, elastic_law, T)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--robot", default="arm7_sea", help="a config/<robot>.yaml with elastic joints")
    ap.add_argument("--duration", type=float, default=4.5, help="period T of the motion, s")
    args = ap.parse_args(argv)
    res = compare(args.robot, args.duration)
    print(f"{args.robot}, T = {args.duration} s: rigid joints' tracking error [mrad], largest deflection [mrad]")
    print(f"{'controller model':18s} {'RMS':>8s} {'max':>8s} {'deflection':>11s}")
    for name, (rms, mx, d) in res.items():
        print(f"{name:18s} {rms * 1e3:8.4f} {mx * 1e3:8.4f} {d * 1e3:11.3f}")
    print(f"elastic-aware / rigid-model RMS: 1 : {res['rigid'][0] / res['elastic'][0]:.1f}")


if __name__ == "__main__":
    main()
