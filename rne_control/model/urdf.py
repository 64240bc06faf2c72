"""URDF loading through urdf_parser_py (ROS's own parser, PyPI ``urdfdom-py``)."""
import contextlib
import io
import os
import warnings

import numpy as np

from .errors import ModelError
from .build import Link, build_model
from .series import drives_of, split_drives
from .spatial import inertia_matrix, rpy_matrix, transform


def _pose(origin):
    if origin is None:
        return np.eye(4)
    xyz = origin.xyz if origin.xyz is not None else [0.0, 0.0, 0.0]
    rpy = origin.rpy if origin.rpy is not None else [0.0, 0.0, 0.0]
    return transform(rpy_matrix(rpy), xyz)


# What the dynamics read of a URDF: the robot, its links' <inertial> and its joints' kinematics, limits,
# dynamics and mimic. Everything else (<visual>, <collision>, <material>, <transmission> in its PR2-era and
# current forms, <gazebo>, <ros2_control>, <sensor>, ...) is dropped before urdf_parser_py sees it: some of it
# is valid for ROS's C++ parser but not for urdf_parser_py (an old-style transmission, a texture without a
# file), and none of it matters here.
_LINK_KEEP = ("inertial",)
_JOINT_KEEP = ("origin", "parent", "child", "axis", "limit", "dynamics", "mimic")


def _dynamics_xml(text):
    """The URDF document ``text`` (bytes) reduced to the elements the dynamics read, as bytes."""
    import xml.etree.ElementTree as ET
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise ModelError(f"cannot parse URDF: not well-formed XML ({exc})") from None
    if root.tag != "robot":
        raise ModelError(f"cannot parse URDF: the root element is <{root.tag}>, not <robot>")
    if not root.get("name"):
        raise ModelError("cannot parse URDF: the <robot> element has no 'name' attribute")
    for child in list(root):
        keep = {"link": _LINK_KEEP, "joint": _JOINT_KEEP}.get(child.tag)
        if keep is None:
            root.remove(child)
            continue
        for sub in list(child):
            if sub.tag not in keep:
                child.remove(sub)
    return ET.tostring(root)


def _parse(source):
    from urdf_parser_py.urdf import URDF
    text = source
    if not (isinstance(source, str) and source.lstrip().startswith("<")):
        path = os.fspath(source)
        if not os.path.isfile(path):
            raise ModelError(f"URDF file not found: '{path}'")
        with open(path, "rb") as fh:
            text = fh.read()
    text = _dynamics_xml(text.encode("utf-8") if isinstance(text, str) else text)
    # urdf_parser_py prints notes on unknown tags (calibration, safety_controller) on stderr: keep them quiet.
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            robot = URDF.from_xml_string(text)
    except Exception as exc:  # the parser raises assorted types on malformed elements
        raise ModelError(f"cannot parse URDF: {exc}") from exc
    return robot


def _mimic_couplings(robot):
    """{follower: (leader, multiplier, offset)} of the URDF's movable ``<mimic>`` joints. A ``<mimic>`` on a
    fixed joint means nothing and is ignored; one whose leader is not a movable joint of the document (some
    published descriptions carry such joints) is warned about and its joint treated as an independent joint,
    as MoveIt does. A cycle of mimic joints is a ModelError."""
    movable = {j.name for j in robot.joints if j.type != "fixed"}
    mimic = {}
    for j in robot.joints:
        if j.mimic is None or j.type == "fixed":
            continue
        if j.mimic.joint not in movable:
            warnings.warn(f"mimic joint '{j.name}': its leader '{j.mimic.joint}' is not a movable joint of the URDF; "
                          f"'{j.name}' is treated as an independent joint", stacklevel=3)
            continue
        mult = 1.0 if j.mimic.multiplier is None else float(j.mimic.multiplier)
        off = 0.0 if j.mimic.offset is None else float(j.mimic.offset)
        mimic[j.name] = (j.mimic.joint, mult, off)
    for f in mimic:
        seen, j = [f], mimic[f][0]
        while j in mimic:
            if j in seen:
                raise ModelError(f"mimic joints {seen} follow each other in a cycle: none of them has a leader")
            seen.append(j)
            j = mimic[j][0]
    return mimic


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
    (Khalil §6; N m/rad, rad, N m s/rad or N/m, m, N s/m; see :mod:`rne_control.model.elastic`); with
    ``"rotor_inertia": Ia`` (kg m^2 or kg) too, the joint is a series-elastic drive instead: the rigid gear
    output J (the URDF joint, Ia its rotor inertia, child the massless body ``<J>_gear``) and the elastic
    ``<J>_deflection`` after it (link minus gear output), see :mod:`rne_control.model.series`. A
    ``<mimic joint multiplier offset>`` joint becomes a passive joint tied to its leader, q = multiplier
    q_leader + offset (``model.passive_joint_names``; the closed-loop functions treat it as a loop with
    constant G); with ``joints``, it is kept where its leader is and locked at the rule's value where its
    leader is locked. A ``<mimic>`` whose leader is not a movable joint of the document is warned about and
    its joint treated as an independent one, as MoveIt does.

    Only what the dynamics read is parsed: ``<visual>``, ``<collision>``, ``<material>``, ``<transmission>``
    (both forms), ``<gazebo>``, ``<ros2_control>`` and any other element are ignored, so the output of xacro
    that ``robot_state_publisher`` publishes loads as it is. A link without ``<inertial>`` has no mass.
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
    mimic = _mimic_couplings(robot)
    if elastic is not None and not isinstance(elastic, dict):
        raise ModelError("'elastic' must map joint names to {stiffness, rest_position, damping[, rotor_inertia]}")
    for j in joint_dynamics or {}:
        if j not in order:
            raise ModelError(f"joint_dynamics: unknown or fixed joint '{j}' (movable joints: {order})")
    passive, drives = drives_of(elastic)
    links, order, kept, springs = split_drives(robot.name, links, order, drives, joints, mimic, passive)
    model = build_model(robot.name, links, joints=kept, locked=locked, gravity=gravity, floating_base=floating_base,
                        default_order=order, elastic=dict(passive, **springs), mimic=mimic)
    model.source = ("urdf", source, dict(joints=joints, locked=locked, friction=friction, gravity=gravity,
                                         floating_base=floating_base, joint_dynamics=joint_dynamics,
                                         elastic=elastic))
    return model
