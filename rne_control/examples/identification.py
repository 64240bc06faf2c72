"""Offline identification records of a simulated "true" robot, to try ``rne_identify fit`` without ROS.

    python -m rne_control.examples.identification --model urdf/arm7.urdf --out DIR [--seed 0]

The true robot is the nominal model with each link's inertial parameters scaled by a factor in
[0.7, 1.3] (which keeps them physically consistent), rotor inertia 0.05, viscous 0.5, Coulomb 0.8
(each times a factor in [0.5, 1.5]) on every joint. It follows an optimised exciting trajectory
(``rc.excitation_trajectory``, 10 s period, 5 harmonics) for 30 s, and another trajectory for 8 s; the
records have non-uniform ~1 kHz stamps, 0.1 mrad encoder quantisation and torque noise of 1 % of each
joint's RMS torque. Writes ``DIR/fit.npz``, ``DIR/check.npz`` (rne_control.identification.record) and
``DIR/true_parameters.npy`` (pi of the true robot, ``rc.parameter_names`` order).
"""
import argparse
import os
import warnings

import numpy as np

import rne_control as rc
from rne_control.identification.mismatch import mismatched_parameters  # noqa: F401 (the README names it here)
from rne_control.identification.parameters import model_with_parameters
from rne_control.identification.record import save_record


def true_parameters(model, seed=0):
    rng = np.random.default_rng(seed)
    pi = rc.parameter_vector(model).copy()
    nl = len(model.link_names)
    for li in range(nl):
        pi[10 * li:10 * li + 10] *= rng.uniform(0.7, 1.3)
    pi[10 * nl:] = np.tile([0.05, 0.5, 0.8], model.n) * rng.uniform(0.5, 1.5, 3 * model.n)
    return pi


def simulate(path, truth, ex, duration, seed, model_file=""):
    rng = np.random.default_rng(seed)
    t = np.cumsum(rng.uniform(0.8e-3, 1.2e-3, int(duration / 1e-3)))
    q, qd, qdd = ex(t)
    tau = rc.inverse_dynamics(truth, q, qd, qdd)
    tau_meas = tau + 0.01 * np.sqrt((tau ** 2).mean(axis=0)) * rng.standard_normal(tau.shape)
    save_record(path, t, truth.joint_names, np.round(q / 1e-4) * 1e-4, tau_meas, "measured",
                qd=qd, tau_measured=tau_meas, model=model_file)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="urdf/arm7.urdf")
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = rc.load_model(args.model)
    pi = true_parameters(model, args.seed)
    truth = model_with_parameters(model, pi)
    bp = rc.base_parameters(model)
    ex = rc.excitation_trajectory(model, 10.0, 5, seed=args.seed, base=bp)
    ex2 = rc.excitation_trajectory(model, 8.0, 4, seed=args.seed + 7, base=bp, maxiter=0, restarts=1)
    simulate(os.path.join(args.out, "fit.npz"), truth, ex, 30.0, args.seed + 1, args.model)
    simulate(os.path.join(args.out, "check.npz"), truth, ex2, 8.0, args.seed + 2, args.model)
    np.save(os.path.join(args.out, "true_parameters.npy"), pi)
    print(f"excitation: cond(Y_b) = {ex.cond:.3g}; wrote {args.out}/fit.npz, check.npz, true_parameters.npy")


if __name__ == "__main__":
    main()
