"""The parameter vector pi of a model, its names, and the model that a given pi describes.

Per link (``model.link_names`` order): [m, mcx, mcy, mcz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz] about the
link-frame origin in link-frame axes (the frame of the model file: URDF link frame, DH link frame);
then per joint (``model.joint_names`` order): [Ia, Fv, Fs]. This is Pinocchio's order of the ten
"dynamic parameters" per body. Inside rne_control a body's parameters are [m, h, Ixx, Iyy, Izz, Ixy,
Ixz, Iyz] (rne_control.model.spatial); ``TO_INTERNAL`` permutes one into the other.
"""
import numpy as np

from ..model.errors import InputError
from .regressor import NPJ, NPL, num_parameters

LINK_PARAMS = ("m", "mcx", "mcy", "mcz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")
JOINT_PARAMS = ("Ia", "Fv", "Fs")
# internal [m, hx, hy, hz, Ixx, Iyy, Izz, Ixy, Ixz, Iyz] = public[TO_INTERNAL]
TO_INTERNAL = np.array([0, 1, 2, 3, 4, 6, 9, 5, 7, 8])
TO_PUBLIC = np.argsort(TO_INTERNAL)


def parameter_names(model):
    """Names of pi's entries: ``'<param>:<link>'`` then ``'<param>:<joint>'``, e.g. ``'m:link3'``, ``'Fv:joint2'``."""
    names = [f"{p}:{link}" for link in model.link_names for p in LINK_PARAMS]
    return names + [f"{p}:{j}" for j in model.joint_names for p in JOINT_PARAMS]


def parameter_vector(model):
    """pi of the model as loaded (no run-time payload): see the module docstring for the order and frames."""
    pi = np.empty(num_parameters(model))
    for li, name in enumerate(model.link_names):
        pi[NPL * li:NPL * (li + 1)] = np.asarray(model.link_params[name])[TO_PUBLIC]
    base = NPL * len(model.link_names)
    for i in range(model.nb):
        k = int(model.tree[i, 17])
        pi[base + NPJ * k:base + NPJ * (k + 1)] = model.tree[i, 12:15]
    return pi


def split_vector(model, pi):
    """(link_params {link: internal 10-vector}, Ia, Fv, Fs) of a parameter vector."""
    pi = np.asarray(pi, float)
    if pi.shape != (num_parameters(model),):
        raise InputError(f"'pi' must have {num_parameters(model)} entries for model '{model.name}', got {pi.shape}")
    links = {name: pi[NPL * li:NPL * (li + 1)][TO_INTERNAL] for li, name in enumerate(model.link_names)}
    J = pi[NPL * len(model.link_names):].reshape(-1, NPJ)
    return links, J[:, 0].copy(), J[:, 1].copy(), J[:, 2].copy()


def model_with_parameters(model, pi):
    """A copy of ``model`` whose parameters are ``pi`` (same kinematics, limits, gravity; no payload)."""
    links, Ia, Fv, Fs = split_vector(model, pi)
    return model.with_parameters(links, Ia, Fv, Fs)


def pseudo_inertia(p10):
    """The 4x4 pseudo-inertia J = [[Sigma, h], [h^T, m]], Sigma = tr(I_o)/2 1 - I_o, of one link's
    public 10-vector (Wensing, Kim & Slotine 2017): the link is physically consistent iff J >= 0."""
    m, h = p10[0], p10[1:4]
    I = np.array([[p10[4], p10[5], p10[7]], [p10[5], p10[6], p10[8]], [p10[7], p10[8], p10[9]]])
    J = np.empty((4, 4))
    J[:3, :3] = 0.5 * np.trace(I) * np.eye(3) - I
    J[:3, 3] = J[3, :3] = h
    J[3, 3] = m
    return J


def consistency_problems(model, pi, tol=1e-9):
    """A list of readable problems ('link3: pseudo-inertia not PSD (min eigenvalue -0.2)', 'Fv of joint2 < 0'),
    empty when pi is physically consistent (each pseudo-inertia PSD, Ia, Fv, Fs >= 0), to ``tol``
    relative to each link's largest eigenvalue."""
    problems = []
    for li, name in enumerate(model.link_names):
        ev = np.linalg.eigvalsh(pseudo_inertia(pi[NPL * li:NPL * (li + 1)]))
        if ev[0] < -tol * max(1e-12, abs(ev[-1])):
            problems.append(f"link '{name}': pseudo-inertia not positive semidefinite (min eigenvalue {ev[0]:.3g})")
    J = np.asarray(pi)[NPL * len(model.link_names):].reshape(-1, NPJ)
    for k, j in enumerate(model.joint_names):
        for c, what in enumerate(JOINT_PARAMS):
            if J[k, c] < -tol * max(1.0, np.abs(J[k]).max()):
                problems.append(f"joint '{j}': {what} = {J[k, c]:.3g} < 0")
    return problems
