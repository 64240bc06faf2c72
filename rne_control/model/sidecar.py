"""A URDF plus a sidecar YAML for what URDF cannot hold (written by rne_control identification).

The sidecar is a YAML mapping::

    urdf: robot_identified.urdf   # path of the URDF, relative to the sidecar file (or absolute)
    joints:                       # optional; per movable joint, any of:
      joint1: {rotor_inertia: 0.8, viscous: 1.2, coulomb: 0.9}   # kg m^2 (kg), N m s/rad (N s/m), N m (N)
    base: fixed                   # optional: fixed | floating

``load_model('robot_identified.yaml')`` recognises it by its ``urdf`` key. The joint values replace the
URDF's ``<dynamics damping friction>`` and add the rotor inertia, which URDF has no element for.
"""
import os

from .errors import ModelError

KEYS = {"urdf", "joints", "base"}
JOINT_KEYS = {"rotor_inertia", "viscous", "coulomb"}


def load_sidecar(path, doc, joints=None, locked=None, floating_base=None):
    """Load the model a sidecar mapping ``doc`` (read from ``path``) describes."""
    from .urdf import load_urdf
    bad = set(doc) - KEYS
    if bad:
        raise ModelError(f"{path}: unknown key(s) {sorted(bad)} in a URDF sidecar (allowed: {sorted(KEYS)})")
    urdf = doc["urdf"]
    if not isinstance(urdf, str):
        raise ModelError(f"{path}: 'urdf' must be a file path")
    urdf = urdf if os.path.isabs(urdf) else os.path.join(os.path.dirname(os.path.abspath(path)), urdf)
    jd = doc.get("joints") or {}
    if not isinstance(jd, dict):
        raise ModelError(f"{path}: 'joints' must map joint names to {sorted(JOINT_KEYS)}")
    for j, vals in jd.items():
        if not isinstance(vals, dict) or set(vals) - JOINT_KEYS:
            raise ModelError(f"{path}: joints['{j}'] must be a mapping with keys among {sorted(JOINT_KEYS)}")
        for k, v in vals.items():
            if not isinstance(v, (int, float)):
                raise ModelError(f"{path}: joints['{j}'].{k} must be a number, got {v!r}")
    base = doc.get("base", "fixed")
    if base not in ("fixed", "floating"):
        raise ModelError(f"{path}: 'base' must be 'fixed' or 'floating', got {base!r}")
    fb = (base == "floating") if floating_base is None else bool(floating_base)
    return load_urdf(urdf, joints=joints, locked=locked, floating_base=fb, joint_dynamics=jd)
