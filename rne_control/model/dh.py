"""DH / modified-DH YAML model files (schema in the README, section "Model files")."""
import math
import os

import numpy as np
import yaml

from .elastic import actuated_flag, elastic_spec
from .errors import ModelError
from .loops import CutJoint
from .build import Link, build_model
from .spatial import INERTIA_KEYS, inertia_matrix, rot_x, rot_z, transform

TOP_KEYS = {"name", "convention", "gravity", "links", "base", "base_link", "cut_joints"}
LINK_KEYS = {"name", "joint_name", "joint", "mass", "com", "inertia", "rotor_inertia", "coulomb", "viscous",
             "effort_limit", "velocity_limit", "lower_limit", "upper_limit", "elastic", "actuated"}
CUT_KEYS = {"name", "joint", "parent", "gamma", "b", "alpha", "d", "theta", "r", "closes_on", "on_closes_on"}
ON_CLOSES_ON_KEYS = {"gamma", "b", "alpha", "d"}
GEOMETRY = {"standard": {"a", "alpha", "d", "theta"},
            "modified": {"parent", "gamma", "b", "alpha", "d", "theta", "r"}}
BASE_KEYS = {"name", "mass", "com", "inertia"}


def _num(d, key, where, default=0.0):
    val = d.get(key, default)
    try:
        val = float(val)
    except (TypeError, ValueError):
        raise ModelError(f"{where}: '{key}' must be a number, got {val!r}") from None
    if math.isnan(val):
        raise ModelError(f"{where}: '{key}' is NaN")
    return val


def _limit(d, key, where):
    """An effort or velocity limit: inf (none) where absent or 0, as the URDF loader reads <limit effort="0">;
    a negative one is refused."""
    val = _num(d, key, where, np.inf)
    if val < 0:
        raise ModelError(f"{where}: '{key}' must be >= 0 (0 or absent: no limit), got {val!r}")
    return val if val > 0 else np.inf


def _vec3(d, key, where):
    val = d.get(key, [0.0, 0.0, 0.0])
    try:
        v = np.asarray(val, float).reshape(-1)
    except (TypeError, ValueError):
        raise ModelError(f"{where}: '{key}' must be 3 numbers, got {val!r}") from None
    if v.shape != (3,) or not np.isfinite(v).all():
        raise ModelError(f"{where}: '{key}' must be 3 finite numbers, got {val!r}")
    return v


def _inertial(d, where):
    inert = d.get("inertia", {}) or {}
    if not isinstance(inert, dict):
        raise ModelError(f"{where}: 'inertia' must be a mapping with keys {INERTIA_KEYS}")
    bad = set(inert) - set(INERTIA_KEYS)
    if bad:
        raise ModelError(f"{where}: unknown key(s) {sorted(bad)} in 'inertia' (allowed: {list(INERTIA_KEYS)})")
    I = inertia_matrix(*[_num(inert, k, f"{where} inertia") for k in INERTIA_KEYS])
    return (_num(d, "mass", where), _vec3(d, "com", where), I)


def _tz(d):
    return transform(p=[0.0, 0.0, d])


def _tx(a):
    return transform(p=[a, 0.0, 0.0])


def _rz(a):
    return transform(R=rot_z(a))


def _rx(a):
    return transform(R=rot_x(a))


def _khalil(d, where):
    """Khalil's frame transform T = Rz(gamma) Tz(b) Rx(alpha) Tx(d) Rz(theta) Tz(r) (seed 001, §2.1)."""
    return (_rz(_num(d, "gamma", where)) @ _tz(_num(d, "b", where)) @ _rx(_num(d, "alpha", where))
            @ _tx(_num(d, "d", where)) @ _rz(_num(d, "theta", where)) @ _tz(_num(d, "r", where)))


def _link_index(e, key, where, names):
    val = e.get(key)
    if isinstance(val, bool) or not isinstance(val, int) or not 0 <= val < len(names):
        raise ModelError(f"{where}: '{key}' must be the index of a link (1..{len(names) - 1}, 0 = base), got {val!r}")
    return names[val]


def _cut_joints(entries, src, names):
    """The top-level ``cut_joints`` list (Khalil §2.2, Figure 2) -> CutJoint objects."""
    if not isinstance(entries, list):
        raise ModelError(f"{src}: 'cut_joints' must be a list")
    out = []
    for c, e in enumerate(entries):
        where = f"{src}: cut_joints[{c}]"
        if not isinstance(e, dict):
            raise ModelError(f"{where}: each cut joint must be a mapping")
        if "name" in e:
            where = f"{src}: cut_joints[{c}] (cut joint '{e['name']}')"
        bad = set(e) - CUT_KEYS
        if bad:
            raise ModelError(f"{where}: unknown key(s) {sorted(bad)} (allowed: {sorted(CUT_KEYS)})")
        for key in ("name", "joint", "parent", "closes_on"):
            if key not in e:
                raise ModelError(f"{where}: missing required field '{key}'")
        if e["joint"] not in ("revolute", "prismatic", "spherical"):
            raise ModelError(f"{where}: unknown cut joint type {e['joint']!r} (revolute | prismatic | spherical)")
        on = e.get("on_closes_on", {}) or {}
        if not isinstance(on, dict):
            raise ModelError(f"{where}: 'on_closes_on' must be a mapping with keys {sorted(ON_CLOSES_ON_KEYS)}")
        bad = set(on) - ON_CLOSES_ON_KEYS
        if bad:
            raise ModelError(f"{where}: unknown key(s) {sorted(bad)} in 'on_closes_on' (allowed: "
                             f"{sorted(ON_CLOSES_ON_KEYS)}; theta = r = 0 for frame R_(k+B))")
        out.append(CutJoint(str(e["name"]), e["joint"], _link_index(e, "parent", where, names), _khalil(e, where),
                            _link_index(e, "closes_on", where, names), _khalil(on, f"{where} on_closes_on")))
    return out


def load_dh(path_or_dict, floating_base=None, joints=None, locked=None):
    """Load a DH (``convention: standard``) or modified-DH (``convention: modified``) YAML model.

    ``path_or_dict`` is a file path or an already-parsed mapping. Standard DH (Corke):
    T_{i-1,i} = Rz(theta) Tz(d) Tx(a) Rx(alpha); modified DH (Khalil-Kleinfinger, seed 001 §2.1):
    T_{a(j),j} = Rz(gamma) Tz(b) Rx(alpha) Tx(d) Rz(theta) Tz(r). Revolute joints add q to theta,
    prismatic ones to d (standard) or r (modified). Lengths in m, angles in rad, masses in kg,
    inertias in kg m^2 about the COM in link-frame axes. ``floating_base``: None lets the file decide
    (``base: floating``), True/False overrides. Unknown keys raise :class:`ModelError`.

    Closed loops (Khalil §2.2): in a file with ``cut_joints``, ``actuated: false`` makes a joint passive in
    its loop (without them, a free passive joint, see below); the top-level
    ``cut_joints`` list gives, per loop, the cut joint k (``joint``: revolute | prismatic | spherical),
    frame R_k relative to link ``parent`` (= i = a(k); gamma, b, alpha, d, theta, r) and frame R_(k+B)
    relative to link ``closes_on`` (= j; ``on_closes_on``: gamma, b, alpha, d). Link indices are 1-based
    positions in ``links``, 0 = the base.

    Lumped elasticity (Khalil §6): a link's ``elastic: {stiffness, rest_position, damping}`` makes its
    joint elastic (passive, torque -K (q - q0) - D qd); ``actuated: false`` alone makes it a free
    passive joint (zero torque). See :mod:`rne_control.model.elastic`.
    """
    if isinstance(path_or_dict, dict):
        doc, src = path_or_dict, "<dict>"
    else:
        src = os.fspath(path_or_dict)
        if not os.path.isfile(src):
            raise ModelError(f"model file not found: '{src}'")
        with open(src) as fh:
            try:
                doc = yaml.safe_load(fh)
            except yaml.YAMLError as exc:
                raise ModelError(f"{src}: invalid YAML: {exc}") from exc
    if not isinstance(doc, dict):
        raise ModelError(f"{src}: a model file must be a mapping")
    bad = set(doc) - TOP_KEYS
    if bad:
        raise ModelError(f"{src}: unknown key(s) {sorted(bad)} (allowed: {sorted(TOP_KEYS)})")
    for key in ("convention", "links"):
        if key not in doc:
            raise ModelError(f"{src}: missing required field '{key}'")
    conv = doc["convention"]
    if conv not in GEOMETRY:
        raise ModelError(f"{src}: 'convention' must be 'standard' or 'modified', got {conv!r}")
    base = doc.get("base", "fixed")
    if base not in ("fixed", "floating"):
        raise ModelError(f"{src}: 'base' must be 'fixed' or 'floating', got {base!r}")
    if floating_base is None:
        floating_base = base == "floating"
    entries = doc["links"]
    if not isinstance(entries, list) or not entries:
        raise ModelError(f"{src}: 'links' must be a non-empty list")

    base_doc = doc.get("base_link", {}) or {}
    if not isinstance(base_doc, dict):
        raise ModelError(f"{src}: 'base_link' must be a mapping")
    bad = set(base_doc) - BASE_KEYS
    if bad:
        raise ModelError(f"{src}: unknown key(s) {sorted(bad)} in 'base_link' (allowed: {sorted(BASE_KEYS)})")
    base_name = str(base_doc.get("name", "base"))
    links = [Link(base_name, inertial=_inertial(base_doc, f"{src}: base_link") if base_doc else None)]
    names = [base_name]
    elastic, actuated = {}, {}
    allowed = LINK_KEYS | GEOMETRY[conv]
    for i, e in enumerate(entries, start=1):
        where = f"{src}: links[{i - 1}]"
        if not isinstance(e, dict):
            raise ModelError(f"{where}: each link must be a mapping")
        name = str(e.get("name", f"link{i}"))
        where = f"{src}: links[{i - 1}] (link '{name}')"
        bad = set(e) - allowed
        if bad:
            raise ModelError(f"{where}: unknown key(s) {sorted(bad)} for convention '{conv}' (allowed: {sorted(allowed)})")
        if "joint" not in e:
            raise ModelError(f"{where}: missing required field 'joint'")
        jt = e["joint"]
        if jt not in ("revolute", "prismatic", "fixed"):
            raise ModelError(f"{where}: unknown joint type {jt!r} (revolute | prismatic | fixed)")
        theta, alpha = _num(e, "theta", where), _num(e, "alpha", where)
        if conv == "standard":
            parent = i - 1
            a, d = _num(e, "a", where), _num(e, "d", where)
            # The joint frame is link frame i-1 moved by Rz(theta0) Tz(d0); the joint adds Rz(q) (revolute)
            # or Tz(q) (prismatic) about/along that z; link frame i follows by Tx(a) Rx(alpha).
            T_joint = _rz(theta) @ _tz(d)
            T_post = _tx(a) @ _rx(alpha)
        else:
            parent = e.get("parent", i - 1)
            if not isinstance(parent, int) or not 0 <= parent < i:
                raise ModelError(f"{where}: 'parent' must be an index of an earlier link (0 = base), got {parent!r}")
            T_joint = (_rz(_num(e, "gamma", where)) @ _tz(_num(e, "b", where)) @ _rx(alpha) @ _tx(_num(e, "d", where))
                       @ _rz(theta) @ _tz(_num(e, "r", where)))
            T_post = np.eye(4)
        links.append(Link(
            name, parent=names[parent], joint_name=str(e.get("joint_name", f"joint{i}")), joint_type=jt,
            T_joint=T_joint, axis=(0.0, 0.0, 1.0), T_post=T_post, inertial=_inertial(e, where),
            rotor=_num(e, "rotor_inertia", where), viscous=_num(e, "viscous", where),
            coulomb=_num(e, "coulomb", where), effort=_limit(e, "effort_limit", where),
            velocity=_limit(e, "velocity_limit", where), lower=_num(e, "lower_limit", where, -np.inf),
            upper=_num(e, "upper_limit", where, np.inf)))
        names.append(name)
        _passive_keys(e, where, jt, links[-1].joint_name, elastic, actuated)
    if len(set(names)) != len(names):
        raise ModelError(f"{src}: duplicate link names")
    gravity = doc.get("gravity")
    if gravity is not None:
        gravity = _vec3(doc, "gravity", src)
    cuts = _cut_joints(doc["cut_joints"], src, names) if "cut_joints" in doc else ()
    model = build_model(str(doc.get("name", "robot")), links, joints=joints, locked=locked, gravity=gravity,
                        floating_base=floating_base, elastic=elastic, actuated=actuated, cut_joints=cuts)
    model.source = ("dh", doc, dict(joints=joints, locked=locked, floating_base=floating_base))
    return model


def _passive_keys(e, where, jt, joint, elastic, actuated):
    """A link's ``elastic`` and ``actuated`` keys into the maps that build_model takes."""
    if "actuated" in e:
        actuated[joint] = actuated_flag(e["actuated"], where)
    if "elastic" in e:
        elastic[joint] = elastic_spec(e["elastic"], where)
    if jt == "fixed" and ("elastic" in e or not actuated.get(joint, True)):
        raise ModelError(f"{where}: a fixed joint cannot be elastic or passive")
