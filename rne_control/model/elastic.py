"""Lumped elasticity (Khalil 2010, §6): which joints are elastic or passive, and their spring and damper.

A joint is one of three kinds (its *role*, stored per body in the kernel description, model.py):

- ``RIGID_JOINT``: actuated; its torque is an input of forward dynamics and an output of inverse dynamics;
- ``ELASTIC_JOINT``: passive, with torque Gamma_j = -K_j (q_j - q0_j) - D_j qd_j (eqs. 69-70 and a damper);
- ``FREE_JOINT``: passive with zero torque (``actuated: false`` without ``elastic``; Khalil §6.2, remark).

Joint friction (Fs sign(qd) + Fv qd) acts at every joint, passive ones included; the damper D is part
of the joint, not friction. Units: K in N m/rad (N/m), q0 in rad (m), D in N m s/rad (N s/m).
"""
import math

import numpy as np

from .errors import ModelError
from .layout import ELASTIC_JOINT, FREE_JOINT, RIGID_JOINT

ELASTIC_KEYS = ("stiffness", "rest_position", "damping")


def elastic_spec(value, where):
    """A YAML ``elastic:`` mapping or a ``load_urdf(elastic={joint: ...})`` entry -> (K, q0, D).

    ``stiffness`` is required; ``rest_position`` and ``damping`` default to 0."""
    if not isinstance(value, dict):
        raise ModelError(f"{where}: 'elastic' must be a mapping with keys {list(ELASTIC_KEYS)}, got {value!r}")
    bad = set(value) - set(ELASTIC_KEYS)
    if "rotor_inertia" in bad:
        raise ModelError(f"{where}: 'rotor_inertia' in 'elastic' makes a URDF joint a series-elastic drive "
                         "(load_urdf); in a DH/MDH file write the drive as two links, the rigid gear output with "
                         "the link's rotor_inertia and no mass, then the elastic deflection with zero geometry "
                         "carrying the link (as config/arm7_elastic.yaml does)")
    if bad:
        raise ModelError(f"{where}: unknown key(s) {sorted(bad)} in 'elastic' (allowed: {list(ELASTIC_KEYS)})")
    if "stiffness" not in value:
        raise ModelError(f"{where}: 'elastic' needs 'stiffness' (N m/rad or N/m)")
    out = []
    for key in ELASTIC_KEYS:
        val = value.get(key, 0.0)
        try:
            val = float(val)
        except (TypeError, ValueError):
            raise ModelError(f"{where}: elastic '{key}' must be a number, got {val!r}") from None
        if not math.isfinite(val):
            raise ModelError(f"{where}: elastic '{key}' must be finite, got {val}")
        if key != "rest_position" and val < 0:
            raise ModelError(f"{where}: elastic '{key}' must be >= 0, got {val}")
        out.append(val)
    return tuple(out)


def actuated_flag(value, where):
    """A YAML link's ``actuated:`` value (true | false), for elastic and free joints and for the passive
    joints of closed loops (model/loops.py)."""
    if not isinstance(value, bool):
        raise ModelError(f"{where}: 'actuated' must be true or false, got {value!r}")
    return value


def elastic_columns(model_name, joints, movable, elastic=None, actuated=None):
    """Per joint (``joints`` order) the row [role, K, q0, D, index in its output vector] of the kernel
    description, where the index counts rigid joints for RIGID_JOINT and the other joints for ELASTIC_JOINT/FREE_JOINT.

    ``elastic``: {joint: (K, q0, D)} or {joint: {stiffness, rest_position, damping}}; ``actuated``:
    {joint: bool} (missing: True). Raises ModelError for an unknown or locked elastic joint, an elastic
    joint declared actuated, and bad values.
    """
    elastic, actuated = dict(elastic or {}), dict(actuated or {})
    for kind, names in (("elastic", elastic), ("passive (actuated: false)", actuated)):
        for j in names:
            if j not in movable:
                raise ModelError(f"model '{model_name}': {kind} joint '{j}' does not exist or is fixed "
                                 f"(movable joints: {list(movable)})")
            if j not in joints and (kind == "elastic" or not actuated[j]):
                raise ModelError(f"model '{model_name}': {kind} joint '{j}' is locked; it must be one of the "
                                 f"model's joints {list(joints)}")
    cols = np.zeros((len(joints), 5))
    n_rigid = n_passive = 0
    for k, j in enumerate(joints):
        if j in elastic:
            if actuated.get(j, False):
                raise ModelError(f"model '{model_name}': joint '{j}' is elastic and also named as actuated; an "
                                 "elastic joint is passive")
            spec = elastic[j]
            spec = elastic_spec(spec, f"joint '{j}'") if isinstance(spec, dict) else \
                elastic_spec(dict(zip(ELASTIC_KEYS, spec)), f"joint '{j}'")
            cols[k, 0:4] = (ELASTIC_JOINT, *spec)
        elif not actuated.get(j, True):
            cols[k, 0] = FREE_JOINT
        if cols[k, 0] == RIGID_JOINT:
            cols[k, 4], n_rigid = n_rigid, n_rigid + 1
        else:
            cols[k, 4], n_passive = n_passive, n_passive + 1
    return cols
