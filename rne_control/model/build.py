"""Building a :class:`~rne_control.model.model.Model` from the links a loader reads: fixing the joint
order, folding fixed and locked joints into their parent body, and packing the kernel arrays."""
import warnings

import numpy as np

from .elastic import elastic_columns
from .errors import ModelError
from .layout import PRISMATIC, REVOLUTE
from .loops import build_loops, mimic_roots
from .model import DEFAULT_GRAVITY, Model, readonly
from .spatial import (align_z, body_params, check_inertia, clip_negligible_inertia, transform, transform_params)


class Link:
    """One link as a loader sees it, before folding. Poses are 4x4 transforms.

    ``T_joint``: pose of the joint frame in the parent link's frame; ``axis``: unit joint axis in the
    joint frame; ``T_post``: pose of the link frame in the moved joint frame (identity for URDF and
    modified DH, Tx(a)Rx(alpha) for standard DH). ``inertial``: (mass, com, I_com) in the link frame.
    """

    __slots__ = ("name", "parent", "joint_name", "joint_type", "T_joint", "axis", "T_post", "inertial",
                 "rotor", "viscous", "coulomb", "effort", "velocity", "lower", "upper")

    def __init__(self, name, parent=None, joint_name=None, joint_type="fixed", T_joint=None, axis=(0, 0, 1),
                 T_post=None, inertial=None, rotor=0.0, viscous=0.0, coulomb=0.0, effort=np.inf,
                 velocity=np.inf, lower=-np.inf, upper=np.inf):
        self.name, self.parent, self.joint_name, self.joint_type = name, parent, joint_name, joint_type
        self.T_joint = np.eye(4) if T_joint is None else T_joint
        self.axis = np.asarray(axis, float)
        self.T_post = np.eye(4) if T_post is None else T_post
        self.inertial = inertial
        self.rotor, self.viscous, self.coulomb = rotor, viscous, coulomb
        self.effort, self.velocity, self.lower, self.upper = effort, velocity, lower, upper


def _joint_motion(kind, axis, q):
    from .spatial import axis_angle
    if kind == "prismatic":
        return transform(p=np.asarray(axis) * q)
    return transform(R=axis_angle(axis, q))


def build_model(name, links, joints=None, locked=None, gravity=None, floating_base=False, default_order=None,
                elastic=None, actuated=None, cut_joints=(), mimic=None):
    """Fold and pack a list of :class:`Link` (parents listed before children, root first) into a Model.

    ``joints`` selects and orders the kept joints (default: movable joints in list order); every other
    movable joint is locked at ``locked.get(name, 0.0)`` and folded like a fixed joint. A mimic joint
    follows its leader: it is kept (after ``joints``) where its leader is kept, and locked at its rule's
    value of the leader's locked position where the leader is locked, unless ``locked`` names it.
    ``default_order`` is the joint order when ``joints`` is None (URDF: document order).
    ``elastic`` {joint: {stiffness, rest_position, damping}} and ``actuated`` {joint: bool}: lumped
    elasticity and passive joints, see elastic.py.
    ``actuated``, ``cut_joints``, ``mimic``: the closed-loop description, see
    :func:`rne_control.model.loops.build_loops`.
    """
    locked = dict(locked or {})
    movable = [lk.joint_name for lk in links if lk.parent is not None and lk.joint_type != "fixed"]
    if len(set(movable)) != len(movable):
        raise ModelError(f"model '{name}': duplicate joint names")
    if joints is None:
        joints = [j for j in default_order if j in movable] if default_order is not None else list(movable)
    else:
        joints = list(joints)
        for j in joints:
            if j not in movable:
                raise ModelError(f"unknown or non-movable joint '{j}' in 'joints' (movable: {movable})")
        if len(set(joints)) != len(joints):
            raise ModelError("'joints' lists a joint twice")
    for j in locked:
        if j not in movable:
            raise ModelError(f"unknown joint '{j}' in 'locked'")
    # a mimic joint follows its leader: kept (passive) where its leader is, folded at the leader's locked
    # value through its rule where the leader is locked (unless 'locked' names it)
    roots = mimic_roots(mimic or {})
    for f in [j for j in (default_order or movable) if j in roots and j in movable]:
        root, mult, off = roots[f]
        if f not in joints and root in joints:
            joints.append(f)
        elif f not in joints and root in movable and f not in locked:
            locked[f] = mult * float(locked.get(root, 0.0)) + off
    qindex = {j: i for i, j in enumerate(joints)}

    frames = {}          # link name -> (body, T_link_in_body)
    link_params = {}     # link name -> its own parameters in its link frame
    topo, kin, params = [], [], []
    base_params = np.zeros(10)
    n = len(joints)
    effort, velocity, plims = np.full(n, np.inf), np.full(n, np.inf), np.tile([-np.inf, np.inf], (n, 1))
    for lk in links:
        if lk.parent is None:
            if frames:
                raise ModelError(f"model '{name}': more than one root link ('{lk.name}')")
            body, T = -1, np.eye(4)
        else:
            if lk.parent not in frames:
                raise ModelError(f"link '{lk.name}': parent link '{lk.parent}' is unknown or listed after it")
            pbody, T_pb = frames[lk.parent]
            T_bJ = T_pb @ lk.T_joint
            if lk.joint_type not in ("fixed", "revolute", "continuous", "prismatic"):
                raise ModelError(f"joint '{lk.joint_name}': unsupported joint type '{lk.joint_type}'")
            axis = lk.axis
            if lk.joint_type != "fixed":
                norm = np.linalg.norm(axis)
                if not np.isfinite(norm) or norm < 1e-12:
                    raise ModelError(f"joint '{lk.joint_name}': axis {axis.tolist()} is zero or not finite")
                axis = axis / norm
            kind = "prismatic" if lk.joint_type == "prismatic" else "revolute"
            if lk.joint_type == "fixed" or lk.joint_name not in qindex:
                q0 = float(locked.get(lk.joint_name, 0.0)) if lk.joint_type != "fixed" else 0.0
                M = _joint_motion(kind, axis, q0) if lk.joint_type != "fixed" else np.eye(4)
                body, T = pbody, T_bJ @ M @ lk.T_post
            else:
                R_align = align_z(axis)
                T_pre = T_bJ @ transform(R=R_align)
                body = len(topo)
                k = qindex[lk.joint_name]
                topo.append((pbody, PRISMATIC if kind == "prismatic" else REVOLUTE, k))
                kin.append(np.concatenate([T_pre[:3, :3].T.ravel(), T_pre[:3, 3],
                                           [lk.rotor, lk.viscous, lk.coulomb]]))
                params.append(np.zeros(10))
                T = transform(R=R_align.T) @ lk.T_post
                for field, val in (("rotor_inertia", lk.rotor), ("viscous", lk.viscous), ("coulomb", lk.coulomb)):
                    if not np.isfinite(val) or val < 0:
                        raise ModelError(f"joint '{lk.joint_name}': {field} must be finite and >= 0, got {val}")
                for field, val in (("effort limit", lk.effort), ("velocity limit", lk.velocity)):
                    if np.isnan(val) or val <= 0:
                        raise ModelError(f"joint '{lk.joint_name}': {field} must be > 0, got {val}")
                effort[k], velocity[k] = lk.effort, lk.velocity
                plims[k] = (lk.lower, lk.upper)
        if lk.name in frames:
            raise ModelError(f"model '{name}': duplicate link name '{lk.name}'")
        frames[lk.name] = (body, T)
        if lk.inertial is not None:
            mass, com, I_com = lk.inertial
            I_com, note = clip_negligible_inertia(I_com, f"link '{lk.name}'")
            for msg in (note, check_inertia(float(mass), I_com, f"link '{lk.name}'")):
                if msg:
                    warnings.warn(msg, stacklevel=3)
            link_params[lk.name] = body_params(float(mass), com, I_com)
            p = transform_params(link_params[lk.name], T)
            if body < 0:
                base_params += p
            else:
                params[body] += p
    if not topo:
        raise ModelError(f"model '{name}' has no movable joint to control")
    g = np.asarray(DEFAULT_GRAVITY if gravity is None else gravity, float).reshape(-1)
    if g.shape != (3,) or not np.isfinite(g).all():
        raise ModelError(f"gravity must be 3 finite numbers, got {g.tolist()}")
    root = links[0].name
    cols = elastic_columns(name, joints, movable, elastic, actuated)
    # a folded mimic joint is a fixed one: its coupling is dropped
    mimic = {f: c for f, c in (mimic or {}).items() if f in qindex}
    for f, (leader, _, _) in mimic.items():
        if leader in movable and leader not in qindex:
            raise ModelError(f"mimic joint '{f}' is kept but its leader '{leader}' is locked (it follows its "
                             "leader): keep both or lock both")
    # a model with cut joints or mimic couplings is a closed-loop one: its passive joints (actuated: false,
    # mimic) are the loops'; without them, actuated: false makes a free passive joint (elastic.py)
    loops = (build_loops(name, joints, plims, frames, topo, actuated, cut_joints, mimic, kin)
             if cut_joints or mimic else None)
    model = Model(name, joints, [lk.name for lk in links], topo, kin, params + [base_params], frames, g,
                  effort, velocity, floating_base, root, plims, cols, loops)
    model.link_params = {lk.name: readonly(link_params.get(lk.name, np.zeros(10))) for lk in links}
    return model


__all__ = ["Link", "build_model"]
