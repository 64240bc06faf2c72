"""Series-elastic drives of URDF joints: a motor driving the link through a spring, two coordinates per drive.

``load_urdf(..., elastic={J: {"stiffness": K, "damping": D, "rotor_inertia": Ia, "rest_position": q0}})``:
the key ``rotor_inertia`` (Ia = Jm G^2, the motor rotor reflected through the gear: kg m^2, or kg for a
prismatic joint; 0 allowed) makes J a series-elastic drive. The URDF joint J is split, as
config/arm7_elastic.yaml writes a drive in DH (Khalil 2010 §6, Spong's flexible-joint model):

- ``J`` (rigid, actuated): the gear output. Same name, origin, axis, type, position, effort and velocity
  limits and friction as in the URDF; its rotor inertia is Ia plus any it had (``joint_dynamics``); its
  child is a new massless body ``<J>_gear``;
- ``<J>_deflection`` (elastic, passive): the twist of the transmission, link side minus gear output, from
  ``<J>_gear`` to J's URDF child link, about the same axis with zero origin, no limits and no friction
  (continuous for a revolute or continuous J, prismatic for a prismatic one), with the spring K, the damper
  D and the rest position q0 (default 0: the spring is unloaded when the link follows the gear output).

The deflection comes right after J in the joint order. With ``joints=``, a kept J keeps its deflection
(inserted after J unless ``joints`` places it); a locked J's deflection is locked too, at
``locked.get("<J>_deflection", 0.0)``, unless ``joints`` keeps it. Without ``rotor_inertia`` an ``elastic``
entry is a passive elastic joint (elastic.py).
"""
import math

import numpy as np

from .build import Link
from .elastic import ELASTIC_KEYS, elastic_spec
from .errors import ModelError

DRIVE_KEY = "rotor_inertia"
URDF_ELASTIC_KEYS = ELASTIC_KEYS + (DRIVE_KEY,)     # the keys of a load_urdf ``elastic`` entry


def gear_name(joint):
    """The massless body between a drive's gear output ``joint`` and its spring."""
    return joint + "_gear"


def deflection_name(joint):
    """The elastic joint of drive ``joint``: link side minus gear output (rad or m)."""
    return joint + "_deflection"


def drives_of(elastic):
    """``elastic`` (load_urdf's map) as (the passive entries, {J: (Ia, (K, q0, D))} of the series drives).
    ModelError names the joint and the field of a bad entry."""
    passive, drives = {}, {}
    for j, spec in (elastic or {}).items():
        if not (isinstance(spec, dict) and DRIVE_KEY in spec):
            passive[j] = spec
            continue
        where = f"joint '{j}'"
        Ia = spec[DRIVE_KEY]
        try:
            Ia = float(Ia)
        except (TypeError, ValueError):
            raise ModelError(f"{where}: elastic '{DRIVE_KEY}' must be a number (kg m^2 or kg), got {Ia!r}") from None
        if not math.isfinite(Ia) or Ia < 0:
            raise ModelError(f"{where}: elastic '{DRIVE_KEY}' must be finite and >= 0 (kg m^2 or kg), got {Ia}")
        bad = set(spec) - set(URDF_ELASTIC_KEYS)
        if bad:
            raise ModelError(f"{where}: unknown key(s) {sorted(bad)} in 'elastic' (allowed: {list(URDF_ELASTIC_KEYS)})")
        drives[j] = (Ia, elastic_spec({k: v for k, v in spec.items() if k != DRIVE_KEY}, where))
    return passive, drives


def split_drives(model_name, links, order, drives, joints, mimic, passive=()):
    """The URDF's :class:`Link` list, joint order and ``joints`` with each drive of ``drives`` (drives_of)
    split as the module docstring says, and the deflections' {joint: (K, q0, D)} for build_model's
    ``elastic`` map (the kept deflections only). ModelError for a drive on an unknown, fixed or mimic joint,
    for a gear body or deflection joint whose name the URDF already uses, and for a deflection named among
    the ``passive`` elastic joints."""
    if not drives:
        return links, order, joints, {}
    link_names = {lk.name for lk in links}
    joint_names = {lk.joint_name for lk in links if lk.parent is not None}
    for j in drives:
        if j not in order:
            raise ModelError(f"model '{model_name}': series-elastic joint '{j}' (elastic '{DRIVE_KEY}') does not "
                             f"exist or is fixed (movable joints: {list(order)})")
        if j in mimic:
            raise ModelError(f"model '{model_name}': joint '{j}' is a <mimic> joint: it cannot be a series-elastic "
                             f"drive (elastic '{DRIVE_KEY}')")
        for kind, name, taken in (("link", gear_name(j), link_names), ("joint", deflection_name(j), joint_names)):
            if name in taken:
                raise ModelError(f"model '{model_name}': the series-elastic drive '{j}' needs a {kind} named "
                                 f"'{name}', which the URDF already has: rename it")
        if deflection_name(j) in passive:
            raise ModelError(f"model '{model_name}': joint '{deflection_name(j)}' is the spring of the series-elastic "
                             f"drive '{j}': give its stiffness, damping and rest position in '{j}' only")
    out = []
    for lk in links:
        if lk.parent is None or lk.joint_name not in drives:
            out.append(lk)
            continue
        j, Ia = lk.joint_name, drives[lk.joint_name][0]
        out.append(Link(gear_name(j), parent=lk.parent, joint_name=j, joint_type=lk.joint_type, T_joint=lk.T_joint,
                        axis=lk.axis, rotor=lk.rotor + Ia, viscous=lk.viscous, coulomb=lk.coulomb,
                        effort=lk.effort, velocity=lk.velocity, lower=lk.lower, upper=lk.upper))
        out.append(Link(lk.name, parent=gear_name(j), joint_name=deflection_name(j),
                        joint_type="prismatic" if lk.joint_type == "prismatic" else "continuous", T_joint=np.eye(4),
                        axis=lk.axis, T_post=lk.T_post, inertial=lk.inertial))
    order = [d for j in order for d in ((j, deflection_name(j)) if j in drives else (j,))]
    if joints is not None:
        joints = list(joints)
        for j in drives:
            if j in joints and deflection_name(j) not in joints:
                joints.insert(joints.index(j) + 1, deflection_name(j))
    kept = order if joints is None else joints
    springs = {deflection_name(j): spec for j, (_, spec) in drives.items() if deflection_name(j) in kept}
    return out, order, joints, springs


__all__ = ["DRIVE_KEY", "URDF_ELASTIC_KEYS", "deflection_name", "drives_of", "gear_name", "split_drives"]
