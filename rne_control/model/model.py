"""The compact, immutable array description of a rigid-body tree, and its builder.

Bodies are numbered 0..nb-1 in topological order (a parent before its children); ``parent[i] = -1``
means the base. Every body is attached by one 1-DOF joint whose axis has been rotated onto the body's
z axis at load time, so the kernels only know two joint types: ``REVOLUTE`` (rotation about z) and
``PRISMATIC`` (translation along z). Fixed joints (and locked ones) are folded into their parent body.

Kernel arrays (float64; read-only views for users):

- ``tree`` (nb, 18), immutable: ``E_tree`` (3x3 row-major; coordinate rotation from the parent body to
  the pre-joint frame) and ``r_tree`` (origin of the pre-joint frame in parent coordinates), together
  Featherstone's X_tree = rot(E) xlt(r); then the rotor inertia ``Ia``, viscous ``Fv`` and Coulomb ``Fs``
  friction of the joint; then ``parent`` (-1 = base), the joint type and the index of the joint in
  ``joint_names`` order (small integers stored as floats, so the kernels take one model array); then
  the joint's lumped elasticity (elastic.py): its role (0 rigid and actuated, 1 elastic, 2 free
  passive), stiffness K, rest position q0, damping D, and its index among the rigid joints (role 0) or
  among the other joints (roles 1, 2). ``tree`` is (nb, 23).
- ``dyn`` (nb + 2, 10), swappable: per body ``[m, h, I_o]`` (see spatial.py) in body coordinates, the
  base body in row nb, and the gravity vector (m/s^2, base/world frame) in row nb + 1. This is the part
  that changes at run time (payload, gravity): it is rebuilt and swapped as one reference, so a reader
  always sees either the old or the new array, never a mixture.

The kernels take one array per model, ``K`` (3 nb + 4, KW), so that a call passes few arguments (numba's
dispatch costs per argument): rows 0:nb hold ``tree``, rows nb:2nb+2 ``dyn``, and the rest the kernels'
workspace (one row per body and one for the base, then a scratch row). ``K`` is rebuilt with ``dyn``
and swapped with it; ``tree`` and ``dyn`` are read-only views of it. Because the workspace belongs to
the model, the kernels' entry points hold the GIL: calls on one model from several threads run one at
a time (use one model per thread to compute in parallel).
"""
import threading
import warnings

import numpy as np

from .elastic import ELASTIC, RIGID, elastic_columns
from .errors import ModelError
from .loops import build_loops, mimic_roots
from .spatial import (align_z, body_params, check_inertia, clip_negligible_inertia, inertia_matrix, inverse,
                      transform, transform_params)

REVOLUTE, PRISMATIC = 0, 1
KW = 162  # kernel-array width; rne_control.dynamics.spatial.KW
TREE_W = 23  # columns of ``tree``; rne_control.dynamics.spatial.TREE_W
DEFAULT_GRAVITY = (0.0, 0.0, -9.81)


def _readonly(a, dtype=float):
    a = np.ascontiguousarray(np.array(a, dtype=dtype))
    a.flags.writeable = False
    return a


class Model:
    """A robot model: joint order, limits, gravity, and the kernel arrays described in this module.

    Use :func:`rne_control.load_urdf` or :func:`rne_control.load_dh` to make one. Joint-space arrays
    (q, qd, qdd, tau, limits) are in ``joint_names`` order, SI units (rad, m, N m, N).
    """

    def __init__(self, name, joint_names, link_names, topo, kin, inertia, link_frames, gravity,
                 effort_limits, velocity_limits, floating_base, base_link, position_limits, elastic=None,
                 loops=None):
        self.name = name
        self.joint_names = tuple(joint_names)
        self.link_names = tuple(link_names)
        self.n = len(self.joint_names)
        self._mass_shape = (self.n, self.n)   # the mass matrix's shape, built once for its fast path
        topo = np.asarray(topo, float).reshape(-1, 3)
        # elastic: (n, 5) per joint, joints order (elastic.elastic_columns); None: every joint rigid
        if elastic is None:
            elastic = np.zeros((self.n, 5))
            elastic[:, 4] = np.arange(self.n)
        elastic = np.asarray(elastic, float).reshape(-1, 5)
        self._tree = np.hstack([np.asarray(kin, float).reshape(-1, 15), topo, elastic[topo[:, 2].astype(int)]])
        self._set_elastic_attributes(elastic)
        self._params = _readonly(inertia).reshape(-1, 10)  # the model's own inertial parameters
        self._payload = None
        self._K = self._kernel_array(self._params, gravity)
        self._lock = threading.Lock()
        # link name -> (body index or -1 for the base, 4x4 pose of the link frame in body coordinates)
        self.link_frames = {k: (b, _readonly(T)) for k, (b, T) in link_frames.items()}
        self.effort_limits = _readonly(effort_limits)
        self.velocity_limits = _readonly(velocity_limits)
        self.position_limits = _readonly(position_limits).reshape(-1, 2)
        self.floating_base = bool(floating_base)
        self.base_link = base_link
        self.index = {name: i for i, name in enumerate(self.joint_names)}
        # the closed-loop description (rne_control.model.loops); a tree has every joint active, no loop
        self.loops = loops if loops is not None else build_loops(name, self.joint_names, self.position_limits,
                                                                 {}, topo)
        self.link_params = {}  # link name -> its own [m, h, I_o] in its link frame (set by build_model)
        self.source = None     # (format, file or document, loader options), set by the loaders

    @property
    def active_joint_names(self):
        """The N motorised joints, in ``joint_names`` order: of a closed-loop model, the joints that are not
        passive in a loop; otherwise ``rigid_joint_names`` (all joints of a plain tree)."""
        if self.is_closed_loop:
            return tuple(self.joint_names[k] for k in self.loops.active)
        return self.rigid_joint_names

    @property
    def passive_joint_names(self):
        """The passive joints: of a closed-loop model, the loops' (``actuated: false``, URDF mimic joints);
        otherwise the elastic and free joints (``unactuated_joint_names``)."""
        if self.is_closed_loop:
            return tuple(self.joint_names[k] for k in self.loops.passive)
        return self.unactuated_joint_names

    @property
    def cut_joint_names(self):
        """The joints where the loops were cut (Khalil's cut joints), in file order."""
        return self.loops.cut_joint_names

    @property
    def is_closed_loop(self):
        """True if the model has passive joints tied to the active ones by loops or mimic couplings."""
        return len(self.loops.passive) > 0


    def with_parameters(self, link_params, rotor_inertia, viscous, coulomb):
        """A copy of this model with other inertial parameters and joint friction, same kinematics.

        ``link_params`` maps every link name to its 10-vector [m, hx, hy, hz, Ixx, Iyy, Izz, Ixy, Ixz, Iyz]
        about the link-frame origin in link-frame axes (kg, kg m, kg m^2); ``rotor_inertia``, ``viscous``,
        ``coulomb`` are per joint in ``joint_names`` order. No physical-consistency check (identification
        results may be inconsistent); the payload is not carried over.
        """
        import copy
        new = copy.copy(self)
        new._tree = np.array(self._tree)
        for i in range(self.nb):
            k = int(self._tree[i, 17])
            new._tree[i, 12:15] = rotor_inertia[k], viscous[k], coulomb[k]
        params = np.zeros((self.nb + 1, 10))
        for name in self.link_names:
            body, T = self.link_frames[name]
            params[body] += transform_params(np.asarray(link_params[name], float), T)  # body -1 = the base row
        new._params = _readonly(params)
        new.link_params = {k: _readonly(link_params[k]) for k in self.link_names}
        new._payload = None
        new._K = new._kernel_array(new._params, self.gravity)
        new._lock = threading.Lock()
        return new

    def restricted(self, joints):
        """The model of the bodies of ``joints`` alone, with this model's inertial parameters, gravity and
        payload (where its link is kept): the other bodies are dropped, every kept joint stays movable.

        ``joints`` must hold, with each joint, every joint between it and the base. On a fixed base the
        torque of a joint depends only on the joints between it and the base and on its subtree, so a
        restricted model that keeps those gives that torque exactly, whatever the dropped joints do. Joint
        order: this model's. Raises ModelError naming a joint whose parent joint is missing."""
        keep = {self.joint_index(j) for j in joints}
        topo = self._tree[:, 15:18]                          # parent, joint type, joint index per body
        bodies = [i for i in range(self.nb) if int(topo[i, 2]) in keep]
        new_body = {b: r for r, b in enumerate(bodies)}
        names = [j for k, j in enumerate(self.joint_names) if k in keep]
        new_joint = {self.index[j]: r for r, j in enumerate(names)}
        rows = []
        for b in bodies:
            parent = int(topo[b, 0])
            if parent >= 0 and parent not in new_body:
                raise ModelError(f"restricted model of '{self.name}': joint "
                                 f"'{self.joint_names[int(topo[b, 2])]}' is kept but the joint before it, "
                                 f"'{self.joint_names[int(topo[parent, 2])]}', is not")
            rows.append((new_body.get(parent, -1), topo[b, 1], new_joint[int(topo[b, 2])]))
        frames = {k: (new_body.get(b, -1), T) for k, (b, T) in self.link_frames.items() if b < 0 or b in new_body}
        old = [self.index[j] for j in names]
        model = Model(self.name, names, list(frames), rows, self._tree[bodies, 0:15],
                      np.vstack([self._params[bodies], self._params[self.nb:self.nb + 1]]), frames, self.gravity,
                      self.effort_limits[old], self.velocity_limits[old], self.floating_base, self.base_link,
                      self.position_limits[old])
        model.link_params = {k: v for k, v in self.link_params.items() if k in frames}
        if self._payload is not None and self._payload[0] in frames:
            model.set_payload(*self._payload)
        return model

    def _kernel_array(self, params, gravity):
        nb = self._tree.shape[0]
        K = np.zeros((3 * nb + 4, KW))
        K[0:nb, 0:TREE_W] = self._tree
        K[nb:2 * nb + 1, 0:10] = params
        K[2 * nb + 1, 0:3] = gravity
        return K

    def kernel_array(self, gravity=None):
        """The array the kernels take; with ``gravity`` (m/s^2), a copy that has it in place of the model's."""
        if gravity is None:
            return self._K
        K = self._K.copy()
        K[2 * self.nb + 1, 0:3] = gravity
        return K

    @property
    def nb(self):
        return self._tree.shape[0]

    def _view(self, rows, cols):
        v = self._K[rows, cols]
        v.flags.writeable = False
        return v

    @property
    def tree(self):
        """The immutable kernel description (nb, 23), read-only; see the module docstring."""
        return self._view(slice(0, self.nb), slice(0, TREE_W))

    def _set_elastic_attributes(self, cols):
        role = cols[:, 0]
        names = self.joint_names
        self.rigid_index = _readonly(np.flatnonzero(role == RIGID), int)
        self.unactuated_index = _readonly(np.flatnonzero(role != RIGID), int)
        self.elastic_index = _readonly(np.flatnonzero(role == ELASTIC), int)
        self.rigid_joint_names = tuple(names[k] for k in self.rigid_index)
        self.unactuated_joint_names = tuple(names[k] for k in self.unactuated_index)
        self.elastic_joint_names = tuple(names[k] for k in self.elastic_index)
        self.elastic_stiffness = _readonly(cols[self.elastic_index, 1])
        self.elastic_rest_position = _readonly(cols[self.elastic_index, 2])
        self.elastic_damping = _readonly(cols[self.elastic_index, 3])
        self._split_sizes = (len(self.rigid_index), len(self.unactuated_index))

    @property
    def dyn(self):
        """The swappable inertial parameters (payload included) and gravity (nb + 2, 10), read-only."""
        return self._view(slice(self.nb, 2 * self.nb + 2), slice(0, 10))

    @property
    def gravity(self):
        """Gravity (m/s^2) in the base frame (for a floating base: the world frame), read-only."""
        return self._view(2 * self.nb + 1, slice(0, 3))

    def set_gravity(self, gravity):
        """Change the model's gravity vector (m/s^2) at run time (atomic swap)."""
        g = np.asarray(gravity, float).reshape(-1)
        if g.shape != (3,) or not np.isfinite(g).all():
            raise ModelError(f"gravity must be 3 finite numbers, got {np.asarray(gravity).tolist()}")
        with self._lock:
            self._K = self.kernel_array(g)

    @property
    def payload(self):
        """The current payload as (link, mass, com, inertia6), or None."""
        return self._payload

    def set_payload(self, link, mass, com=(0.0, 0.0, 0.0), inertia=(0.0, 0.0, 0.0, 0.0, 0.0, 0.0)):
        """Attach a rigid payload to ``link``, replacing any previous one, without rebuilding the model.

        ``com`` (m) is in the link frame; ``inertia`` = [ixx, iyy, izz, ixy, ixz, iyz] (kg m^2) is about the
        payload's COM in link-frame axes. The swap is atomic: concurrent dynamics calls see the old or the new
        parameters, never a mixture.
        """
        if link not in self.link_frames:
            raise ModelError(f"payload link '{link}' is not a link of model '{self.name}'")
        com = np.asarray(com, float).reshape(-1)
        inertia = np.asarray(inertia, float).reshape(-1)
        if com.shape != (3,):
            raise ModelError(f"payload com must have 3 elements, got {com.shape[0]}")
        if inertia.shape != (6,):
            raise ModelError(f"payload inertia must have 6 elements [ixx, iyy, izz, ixy, ixz, iyz], got {inertia.shape[0]}")
        if not np.isfinite(com).all():
            raise ModelError("payload com must be finite")
        I_com = inertia_matrix(*inertia)
        msg = check_inertia(float(mass), I_com, f"payload on link '{link}'")
        if msg:
            warnings.warn(msg, stacklevel=2)
        body, T = self.link_frames[link]
        params = np.array(self._params)
        params[body] += transform_params(body_params(float(mass), com, I_com), T)
        with self._lock:
            self._K = self._kernel_array(params, self.gravity)
            self._payload = (link, float(mass), tuple(com), tuple(inertia))

    def clear_payload(self):
        """Remove the payload (atomic swap back to the model's own parameters)."""
        with self._lock:
            self._K = self._kernel_array(self._params, self.gravity)
            self._payload = None

    def joint_index(self, name):
        try:
            return self.index[name]
        except KeyError:
            raise ModelError(f"unknown joint '{name}' (model '{self.name}' has {list(self.joint_names)})") from None

    def __repr__(self):
        kind = "floating" if self.floating_base else "fixed"
        return f"<rne_control.Model '{self.name}': {self.n} joints, {len(self.link_names)} links, {kind} base>"


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
    model.link_params = {lk.name: _readonly(link_params.get(lk.name, np.zeros(10))) for lk in links}
    return model


__all__ = ["Model", "Link", "build_model", "REVOLUTE", "PRISMATIC", "inverse"]
