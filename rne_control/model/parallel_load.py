"""The Gough-Stewart model file (YAML, format in the README, "Parallel robots") -> :class:`ParallelModel`."""
import math
import os

import numpy as np
import yaml

from .errors import ModelError
from .layout import N_LEGS
from .parallel import ParallelModel, leg_model, reference_frame
from .spatial import INERTIA_KEYS, body_params, check_inertia, inertia_matrix

TOP_KEYS = {"name", "gravity", "platform", "leg_defaults", "legs", "home"}
PLATFORM_KEYS = {"mass", "com", "inertia"}
LEG_KEYS = {"name", "joint_name", "base_point", "platform_point", "u_axis", "cylinder", "piston", "viscous",
            "coulomb", "effort_limit", "velocity_limit", "lower_limit", "upper_limit"}
BODY_KEYS = {"mass", "com", "inertia"}
AXI_KEYS = {"axial", "transverse"}
HOME_KEYS = {"position", "quaternion"}


def _num(d, key, where, default=None, positive=False, nonneg=False):
    if key not in d or d[key] is None:
        if default is None:
            raise ModelError(f"{where}: missing '{key}'")
        return float(default)
    try:
        val = float(d[key])
    except (TypeError, ValueError):
        raise ModelError(f"{where}: '{key}' must be a number, got {d[key]!r}") from None
    if math.isnan(val):
        raise ModelError(f"{where}: '{key}' is NaN")
    if positive and not val > 0:
        raise ModelError(f"{where}: '{key}' must be > 0, got {val}")
    if nonneg and not (val >= 0 and math.isfinite(val)):
        raise ModelError(f"{where}: '{key}' must be finite and >= 0, got {val}")
    return val


def _vec(d, key, where, size=3, default=None):
    if key not in d:
        if default is None:
            raise ModelError(f"{where}: missing '{key}'")
        return np.asarray(default, float)
    try:
        v = np.asarray(d[key], float).reshape(-1)
    except (TypeError, ValueError):
        raise ModelError(f"{where}: '{key}' must be {size} numbers, got {d[key]!r}") from None
    if v.shape != (size,) or not np.isfinite(v).all():
        raise ModelError(f"{where}: '{key}' must be {size} finite numbers, got {d[key]!r}")
    return v


def _mapping(d, where, allowed):
    if not isinstance(d, dict):
        raise ModelError(f"{where} must be a mapping (keys {sorted(allowed)}), got {type(d).__name__}")
    bad = set(d) - set(allowed)
    if bad:
        raise ModelError(f"{where}: unknown key(s) {sorted(bad)} (allowed: {sorted(allowed)})")
    return d


def _leg_body(d, where):
    """(mass, com distance, axial, transverse) of a cylinder or piston."""
    _mapping(d, where, BODY_KEYS)
    inert = _mapping(d.get("inertia", {}) or {}, f"{where} inertia", AXI_KEYS)
    return (_num(d, "mass", where, nonneg=True), _num(d, "com", where, 0.0),
            _num(inert, "axial", f"{where} inertia", 0.0, nonneg=True),
            _num(inert, "transverse", f"{where} inertia", 0.0, nonneg=True))


def _home(A, b, limits):
    """Identity orientation, the platform origin on the z axis at the height where the mean leg length is
    mid-stroke (a few Newton steps on the mean length)."""
    target = float(np.mean(limits.mean(axis=1)))
    z = target
    for _ in range(50):
        L = b + np.array([0.0, 0.0, z]) - A
        n = np.linalg.norm(L, axis=1)
        f, df = n.mean() - target, (L[:, 2] / n).mean()
        z -= f / df
        if abs(f) < 1e-14:
            break
    return np.array([0.0, 0.0, z, 0.0, 0.0, 0.0, 1.0])


def load_parallel(source):
    """Load a Gough-Stewart platform from a YAML file path or an already parsed dict (format in the
    README, section "Parallel robots"). Raises ModelError naming the leg and field on bad input."""
    if isinstance(source, dict):
        doc, where0 = source, "parallel model"
    else:
        path = os.fspath(source)
        try:
            with open(path) as f:
                doc = yaml.safe_load(f)
        except OSError as e:
            raise ModelError(f"cannot read parallel model file '{path}': {e}") from None
        except yaml.YAMLError as e:
            raise ModelError(f"'{path}' is not valid YAML: {e}") from None
        where0 = f"'{path}'"
    _mapping(doc, where0, TOP_KEYS)
    name = str(doc.get("name", "parallel"))
    gravity = _vec(doc, "gravity", where0, default=(0.0, 0.0, -9.81))
    if "platform" not in doc:
        raise ModelError(f"{where0}: missing 'platform'")
    plat = _mapping(doc["platform"], "platform", PLATFORM_KEYS)
    inert = _mapping(plat.get("inertia", {}) or {}, "platform inertia", set(INERTIA_KEYS))
    m_p = _num(plat, "mass", "platform", nonneg=True)
    c_p = _vec(plat, "com", "platform", default=(0.0, 0.0, 0.0))
    I_p = inertia_matrix(*[_num(inert, k, "platform inertia", 0.0) for k in INERTIA_KEYS])
    check_inertia(m_p, I_p, "platform")
    defaults = _mapping(doc.get("leg_defaults", {}) or {}, "leg_defaults", LEG_KEYS - {"name", "joint_name"})
    legs = doc.get("legs")
    if not isinstance(legs, list) or len(legs) != N_LEGS:
        raise ModelError(f"{where0}: 'legs' must list exactly {N_LEGS} legs, got "
                         f"{len(legs) if isinstance(legs, list) else type(legs).__name__}")
    names, joints, A, b, axes, models = [], [], [], [], [], []
    effort, velocity, limits = [], [], []
    for k, raw in enumerate(legs):
        _mapping(raw, f"legs[{k}]", LEG_KEYS)
        leg = {**defaults, **raw}
        if "joint_name" not in leg:
            raise ModelError(f"legs[{k}]: missing 'joint_name'")
        jn = str(leg["joint_name"])
        ln = str(leg.get("name", jn))
        where = f"leg '{ln}'"
        Ai, bi = _vec(leg, "base_point", where), _vec(leg, "platform_point", where)
        ua = _vec(leg, "u_axis", where, default=(-Ai[1], Ai[0], 0.0))
        if np.linalg.norm(ua) < 1e-9:
            raise ModelError(f"{where}: 'u_axis' is zero (a base point on the z axis needs an explicit u_axis)")
        ua = ua / np.linalg.norm(ua)
        cyl = _leg_body(leg.get("cylinder", {}) or {}, f"{where} cylinder")
        pis = _leg_body(leg.get("piston", {}) or {}, f"{where} piston")
        lo = _num(leg, "lower_limit", where, positive=True)
        hi = _num(leg, "upper_limit", where)
        if not hi > lo:
            raise ModelError(f"{where}: 'upper_limit' {hi} must exceed 'lower_limit' {lo}")
        eff = _num(leg, "effort_limit", where, math.inf, positive=True)
        vel = _num(leg, "velocity_limit", where, math.inf, positive=True)
        visc = _num(leg, "viscous", where, 0.0, nonneg=True)
        coul = _num(leg, "coulomb", where, 0.0, nonneg=True)
        models.append(leg_model(ln, jn, Ai, reference_frame(ua), cyl, pis, visc, coul, eff, vel, lo, hi, gravity))
        names.append(ln)
        joints.append(jn)
        A.append(Ai)
        b.append(bi)
        axes.append(ua)
        effort.append(eff)
        velocity.append(vel)
        limits.append((lo, hi))
    for label, seq in (("leg name", names), ("joint_name", joints)):
        dup = sorted({x for x in seq if seq.count(x) > 1})
        if dup:
            raise ModelError(f"{where0}: duplicate {label}(s) {dup}")
    A, b, limits = np.array(A), np.array(b), np.array(limits)
    home = doc.get("home")
    if home is None:
        if not np.all(np.isfinite(limits)):
            raise ModelError(f"{where0}: 'home' is needed where a stroke is unbounded (upper_limit of leg(s) "
                             f"{[n for n, lim in zip(names, limits) if not np.isfinite(lim).all()]}): the "
                             f"default home is mid-stroke")
        home_pose = _home(A, b, limits)
    else:
        _mapping(home, "home", HOME_KEYS)
        quat = _vec(home, "quaternion", "home", 4, default=(0.0, 0.0, 0.0, 1.0))
        if not np.linalg.norm(quat) > 0:
            raise ModelError("home: 'quaternion' is zero")
        home_pose = np.r_[_vec(home, "position", "home"), quat / np.linalg.norm(quat)]
    return ParallelModel(name, names, joints, A, b, np.array(axes), models, body_params(m_p, c_p, I_p), gravity,
                         effort, velocity, limits, home_pose)
