"""Parameters that change how both nodes load the model: lumped elasticity for URDF models
(``elastic.<joint>.stiffness|rest_position|damping|rotor_inertia``) and ``ignore_elasticity``.

URDF has no stiffness, so an elastic URDF robot names its elastic joints in parameters, the same map
as ``load_urdf(..., elastic=...)``:

.. code-block:: yaml

    elastic.wrist_flex.stiffness: 870.0      # N m/rad (N/m)
    elastic.wrist_flex.rest_position: 0.0    # rad (m), default 0
    elastic.wrist_flex.damping: 1.6          # N m s/rad (N s/m), default 0
    elastic.wrist_flex.rotor_inertia: 0.3    # kg m^2 (kg): a series-elastic drive, see model/series.py

Without ``rotor_inertia`` the joint is a spring without a motor (passive); with it, a series-elastic drive:
the controlled gear output ``wrist_flex`` and the spring ``wrist_flex_deflection`` (link minus gear output,
measured in ``/joint_states``).

``ignore_elasticity: true`` loads an elastic robot as the rigid tree it would be with every elastic joint
fixed at its rest position (a series-elastic drive: its URDF joint with the rotor inertia, the link following
the gear output): the model a controller that does not know about the springs would use.
"""
from __future__ import annotations

import warnings

import yaml

import rne_control as rc

from .. import control as ctl

from ..model.series import DRIVE_KEY, URDF_ELASTIC_KEYS, deflection_name
from .params import Spec, T

PREFIX = "elastic."
SPECS = [Spec("ignore_elasticity", T.BOOL, False, "control an elastic robot with its rigid model (elastic joints "
              "fixed at their rest positions)", read_only=True)]


def elastic_overrides(node) -> dict:
    """{joint: {key: value}} from the node's ``elastic.<joint>.<key>`` parameter overrides, declared here
    (read-only, any number type) so that they are listed. ValueError names a bad key or value."""
    from rcl_interfaces.msg import ParameterDescriptor

    out = {}
    for name in sorted(getattr(node, "_parameter_overrides", {})):
        if not name.startswith(PREFIX):
            continue
        joint, _, key = name[len(PREFIX):].rpartition(".")
        if not joint or key not in URDF_ELASTIC_KEYS:
            raise ValueError("parameter %r: expected elastic.<joint>.<%s>" % (name, "|".join(URDF_ELASTIC_KEYS)))
        desc = ParameterDescriptor(description="lumped elasticity of URDF joint %s" % joint, read_only=True,
                                   dynamic_typing=True)
        value = node.declare_parameter(name, None, desc).value
        try:
            out.setdefault(joint, {})[key] = float(value)
        except (TypeError, ValueError):
            raise ValueError("parameter %r must be a number (got %r)" % (name, value)) from None
    return out


def load(source: str, elastic: dict, ignore_elasticity: bool, warn=None, **kw):
    """The model of ``source`` (URDF XML, or a model file path) with the URDF ``elastic`` map; with
    ``ignore_elasticity``, its rigid version. ValueError (ModelError) on a bad model. ``warn(text)``, if
    given, receives the loader's warnings (a mimic joint without its leader, an inertia set right) instead
    of Python's warning machinery, once each."""
    if warn is None:
        return _load(source, elastic, ignore_elasticity, **kw)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = _load(source, elastic, ignore_elasticity, **kw)
    for text in dict.fromkeys(str(w.message) for w in caught):
        warn(text)
    return model


def make_plant(params, model, joints, loop_tolerance, read_only=False):
    """The model's Plant for ``joints`` (None: the actuated joints), with a ``locked.<joint>`` parameter
    declared on ``params`` (a :class:`~rne_control.ros.params.TypedParameters`) for each uncontrolled joint
    that has a default position (the plant's: 0 for a tree, mid-range for a loop's active joint, the home
    length of a leg). ValueError names what the mechanics refuses."""
    plant = ctl.make_plant(model, joints, loop_tolerance=loop_tolerance)
    defaults = dict(zip(plant.state_names, plant.initial_state))
    params.declare([Spec("locked." + j, T.DOUBLE, float(defaults[j]), "position of uncontrolled joint %s while "
                         "/joint_states lacks it, rad or m" % j, read_only=read_only) for j in plant.lockable_names])
    locked = {j: float(params.get("locked." + j)) for j in plant.lockable_names}
    if any(locked[j] != defaults[j] for j in locked):
        plant = ctl.make_plant(model, joints, locked, loop_tolerance)
    return plant


def _load(source: str, elastic: dict, ignore_elasticity: bool, **kw):
    is_urdf = source.lstrip().startswith("<") or source.lower().endswith((".urdf", ".xml"))
    if elastic and not is_urdf:
        raise ValueError("elastic.<joint>.* parameters apply to URDF models; a DH YAML file gives a link's "
                         "'elastic:' key")
    if elastic:
        kw["elastic"] = elastic
    model = rc.load_model(source, **kw)
    springs = tuple(getattr(model, "elastic_joint_names", ()))
    if ignore_elasticity and springs:
        rest = dict(zip(springs, model.elastic_rest_position))
        kw.pop("elastic", None)
        # a series-elastic drive: its URDF joint with the rotor inertia, no deflection (the link follows the gear)
        drives = {j: float(v[DRIVE_KEY]) for j, v in (elastic or {}).items() if DRIVE_KEY in v}
        deflections = {deflection_name(j) for j in drives}
        for j in drives:
            if rest.pop(deflection_name(j), 0.0) != 0.0:
                warnings.warn(f"ignore_elasticity: the rest position of drive {j}'s spring is dropped: the rigid "
                              "model's link follows the gear output", stacklevel=2)
        if drives:
            kw["joint_dynamics"] = {j: {DRIVE_KEY: Ia} for j, Ia in drives.items()}
        kw["joints"] = [j for j in model.joint_names if j not in rest and j not in deflections]
        kw["locked"] = dict(kw.get("locked") or {}, **rest)
        if is_urdf:
            return rc.load_model(source, **kw)
        with open(source) as f:         # a DH YAML file: the same links without their springs
            doc = yaml.safe_load(f)
        for link in doc.get("links", []):
            link.pop("elastic", None)
        return rc.load_dh(doc, **kw)
    return model
