"""URDF loading through urdf_parser_py (ROS's own parser, PyPI ``urdfdom-py``)."""
import os
import contextlib
import io

import numpy as np

from .errors import ModelError
from .model import Link, build_model
from .spatial import inertia_matrix, rpy_matrix, transform


def _pose(origin):
    if origin is None:
        return np.eye(4)
    xyz = origin.xyz if origin.xyz is not None else [0.0, 0.0, 0.0]
    rpy = origin.rpy if origin.rpy is not None else [0.0, 0.0, 0.0]
    return transform(rpy_matrix(rpy), xyz)


def _parse(source):
    from urdf_parser_py.urdf import URDF
    text = source
    if not (isinstance(source, str) and source.lstrip().startswith("<")):
        path = os.fspath(source)
        if not os.path.isfile(path):
            raise ModelError(f"URDF file not found: '{path}'")
        with open(path, "rb") as fh:
            text = fh.read().decode("utf-8")
    # urdf_parser_py prints unknown-tag notes (gazebo, transmission, ...) on stderr: keep them quiet.
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            robot = URDF.from_xml_string(text.encode("utf-8") if isinstance(text, str) else text)
    except Exception as exc:  # the parser raises assorted types on malformed XML
        raise ModelError(f"cannot parse URDF: {exc}") from exc
    return robot


def load_urdf(source, joints=None, locked=None, friction=True, gravity=None, floating_base=False, elastic=None,
              joint_dynamics=None):
    """Load a URDF (file path, or XML string as in ROS's ``robot_description``) into a :class:`Model`.

    Revolute, continuous (one angle), prismatic and fixed joints; fixed joints are folded into their parent
    body. ``joints`` selects and orders the controlled joints (default: movable joints in document order);
    other movable joints are locked at ``locked.get(name, 0.0)`` (rad or m). With ``friction=True``,
    ``<dynamics damping friction>`` become viscous Fv (N m s/rad) and Coulomb Fs (N m) friction.
    ``gravity`` (m/s^2, world frame) defaults to (0, 0, -9.81). ``floating_base=True`` adds a free 6-DOF
    root whose body is the URDF root link (and whatever is fixed to it). URDF has no stiffness:
    ``elastic={joint: {"stiffness": K, "rest_position": q0, "damping": D}}`` makes those joints elastic
    (Khalil §6; N m/rad, rad, N m s/rad or N/m, m, N s/m; see :mod:`rne_control.model.elastic`). A
    ``<mimic joint multiplier offset>`` joint becomes a passive joint tied to its leader, q = multiplier
    q_leader + offset (``model.passive_joint_names``; the closed-loop functions treat it as a loop with
    constant G).
    """
    robot = _parse(source)
    by_child, children = {}, {}
    for j in robot.joints:
        if j.child in by_child:
            raise ModelError(f"link '{j.child}' is the child of two joints ('{by_child[j.child].name}', '{j.name}')")
        by_child[j.child] = j
        children.setdefault(j.parent, []).append(j)
    link_names = [lk.name for lk in robot.links]
    for j in robot.joints:
        for ln in (j.parent, j.child):
            if ln not in link_names:
                raise ModelError(f"joint '{j.name}' refers to unknown link '{ln}'")
    roots = [ln for ln in link_names if ln not in by_child]
    if len(roots) != 1:
        raise ModelError(f"URDF must have exactly one root link, found {roots}")
    urdf_links = {lk.name: lk for lk in robot.links}

    def make_link(name, joint):
        ul = urdf_links[name]
        inertial = None
        if ul.inertial is not None:
            T_in = _pose(ul.inertial.origin)
            I = ul.inertial.inertia
            I_c = np.zeros((3, 3)) if I is None else inertia_matrix(I.ixx, I.iyy, I.izz, I.ixy, I.ixz, I.iyz)
            mass = 0.0 if ul.inertial.mass is None else float(ul.inertial.mass)
            inertial = (mass, T_in[:3, 3], T_in[:3, :3] @ I_c @ T_in[:3, :3].T)
        if joint is None:
            return Link(name, inertial=inertial)
        jt = joint.type
        if jt not in ("fixed", "revolute", "continuous", "prismatic"):
            raise ModelError(f"joint '{joint.name}': unsupported joint type '{jt}' "
                             "(revolute, continuous, prismatic and fixed are supported)")
        kw = {}
        lim = joint.limit
        if lim is not None:
            for key, attr in (("effort", "effort"), ("velocity", "velocity")):
                val = getattr(lim, attr, None)
                if val is not None and float(val) > 0:
                    kw[key] = float(val)
            if jt != "continuous":
                if getattr(lim, "lower", None) is not None:
                    kw["lower"] = float(lim.lower)
                if getattr(lim, "upper", None) is not None:
                    kw["upper"] = float(lim.upper)
                if kw.get("lower", -np.inf) >= kw.get("upper", np.inf):
                    kw.pop("lower", None), kw.pop("upper", None)  # URDF uses lower=upper=0 for "unset"
        if friction and joint.dynamics is not None:
            kw["viscous"] = float(joint.dynamics.damping or 0.0)
            kw["coulomb"] = float(joint.dynamics.friction or 0.0)
        extra = (joint_dynamics or {}).get(joint.name, {})
        for key, field in (("rotor", "rotor_inertia"), ("viscous", "viscous"), ("coulomb", "coulomb")):
            if field in extra:
                kw[key] = float(extra[field])
        axis = joint.axis if joint.axis is not None else [1.0, 0.0, 0.0]
        return Link(name, parent=joint.parent, joint_name=joint.name, joint_type=jt, T_joint=_pose(joint.origin),
                    axis=axis, inertial=inertial, **kw)

    links, stack = [], [(roots[0], None)]
    while stack:  # depth-first, children in document order
        name, joint = stack.pop()
        links.append(make_link(name, joint))
        for j in reversed(children.get(name, [])):
            stack.append((j.child, j))
    order = [j.name for j in robot.joints if j.type != "fixed"]
    mimic = {}
    movable = {j.name for j in robot.joints if j.type != "fixed"}
    for j in robot.joints:
        if j.mimic is not None and j.type != "fixed":
            if j.mimic.joint not in movable:
                raise ModelError(f"mimic joint '{j.name}': its leader '{j.mimic.joint}' is not a movable joint of "
                                 f"the URDF")
            mult = 1.0 if j.mimic.multiplier is None else float(j.mimic.multiplier)
            off = 0.0 if j.mimic.offset is None else float(j.mimic.offset)
            mimic[j.name] = (j.mimic.joint, mult, off)
    if elastic is not None and not isinstance(elastic, dict):
        raise ModelError("'elastic' must map joint names to {stiffness, rest_position, damping}")
    for j in joint_dynamics or {}:
        if j not in order:
            raise ModelError(f"joint_dynamics: unknown or fixed joint '{j}' (movable joints: {order})")
    model = build_model(robot.name, links, joints=joints, locked=locked, gravity=gravity,
                        floating_base=floating_base, default_order=order, elastic=elastic, mimic=mimic)
    model.source = ("urdf", source, dict(joints=joints, locked=locked, friction=friction, gravity=gravity,
                                         floating_base=floating_base, joint_dynamics=joint_dynamics,
                                         elastic=elastic))
    return model
