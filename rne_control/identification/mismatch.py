"""A simulated "true" robot that differs from its nominal model as a real robot differs from its vendor's
file: the robot that ``rne_demo --identify`` simulates and identifies (numpy, no ROS).

``rne_control.examples.identification.mismatched_parameters`` is this function too.
"""
import numpy as np

from .parameters import parameter_vector, pseudo_inertia


def mismatched_parameters(model, seed=0, payload=2.0, payload_com=(0.0, 0.0, 0.1), payload_radius=0.05,
                          viscous=1.0, coulomb=1.0):
    """pi of a "true" robot that differs from ``model`` as real ones differ from their vendor's file: each
    link's inertial parameters scaled by 1 +/- [0.2, 0.4] (random sign; a scaling keeps them physically
    consistent), a solid sphere of ``payload`` kg and ``payload_radius`` m at ``payload_com`` (m, last link's
    frame) on the last link (``model.link_names[-1]``), and viscous (N m s/rad) and Coulomb (N m) friction
    on every joint, each ``viscous`` and ``coulomb`` times a factor in [0.5, 1.5]; rotor inertias as in
    ``model``. The true robot is a real body: a link whose published inertia is physically inconsistent
    (the PUMA 560's link3 breaks the triangle inequality) gets its three principal moments about the COM
    raised equally by the least amount that makes its pseudo-inertia positive semidefinite."""
    rng = np.random.default_rng(seed)
    pi = parameter_vector(model).copy()
    nl = len(model.link_names)
    for li in range(nl):
        p = pi[10 * li:10 * li + 10]
        p *= 1.0 + rng.choice([-1.0, 1.0]) * rng.uniform(0.2, 0.4)
        if p[0] > 0:
            J = pseudo_inertia(p)
            lam = np.linalg.eigvalsh(J[:3, :3] - np.outer(J[:3, 3], J[:3, 3]) / p[0])[0]  # Sigma about the COM
            if lam < 0:   # I_c + delta 1 raises Sigma_c by delta / 2
                p[[4, 6, 9]] += -2.02 * lam
    c = np.asarray(payload_com, float)
    I_o = payload * (0.4 * payload_radius ** 2 * np.eye(3) + c @ c * np.eye(3) - np.outer(c, c))
    pi[10 * (nl - 1):10 * nl] += np.r_[payload, payload * c, I_o[0, 0], I_o[0, 1], I_o[1, 1], I_o[0, 2],
                                      I_o[1, 2], I_o[2, 2]]
    J = pi[10 * nl:].reshape(-1, 3)
    J[:, 1] = viscous * rng.uniform(0.5, 1.5, model.n)
    J[:, 2] = coulomb * rng.uniform(0.5, 1.5, model.n)
    return pi
