"""The compact array description of a rigid-body tree (its builder: build.py).

Bodies are numbered 0..nb-1 in topological order (a parent before its children); ``parent[i] = -1``
means the base. Every body is attached by one 1-DOF joint whose axis has been rotated onto the body's
z axis at load time, so the kernels only know two joint types: ``REVOLUTE`` (rotation about z) and
``PRISMATIC`` (translation along z). Fixed joints (and locked ones) are folded into their parent body.

Kernel arrays (float64; read-only views for users; column offsets and codes in layout.py):

- ``tree`` (nb, TREE_W = 23), fixed for the model's life (a new model for other kinematics or friction,
  see :meth:`Model.with_parameters`): ``E_tree`` (3x3 row-major; coordinate rotation from the parent body
  to the pre-joint frame) and ``r_tree`` (origin of the pre-joint frame in parent coordinates), together
  Featherstone's X_tree = rot(E) xlt(r); then the rotor inertia ``Ia``, viscous ``Fv`` and Coulomb ``Fs``
  friction of the joint; then ``parent`` (-1 = base), the joint type and the index of the joint in
  ``joint_names`` order (small integers stored as floats, so the kernels take one model array); then
  the joint's lumped elasticity (elastic.py): its role (0 rigid and actuated, 1 elastic, 2 free
  passive), stiffness K, rest position q0, damping D, and its index among the rigid joints (role 0) or
  among the other joints (roles 1, 2).
- ``dyn`` (nb + 2, 10), swappable: per body ``[m, h, I_o]`` (see spatial.py) in body coordinates, the
  base body in row nb, and the gravity vector (m/s^2, base/world frame) in row nb + 1. This is the part
  that changes at run time (payload, gravity; swap.py): it is rebuilt and swapped as one reference, so a
  reader always sees either the old or the new array, never a mixture.

The kernels take one array per model, ``K`` (3 nb + 4, KW), so that a call passes few arguments (numba's
dispatch costs per argument): rows 0:nb hold ``tree``, rows nb:2nb+2 ``dyn``, and the rest the kernels'
workspace (one row per body and one for the base, then a scratch row). ``K`` is rebuilt with ``dyn``
and swapped with it; ``tree`` and ``dyn`` are read-only views of it. Because the workspace belongs to
the model, the kernels' entry points hold the GIL: calls on one model from several threads run one at
a time (use one model per thread to compute in parallel).
"""
import threading

import numpy as np

from .errors import ModelError
from .layout import ELASTIC_JOINT, FS, FV, IA, KW, PRISMATIC, QIDX, REVOLUTE, RIGID_JOINT, TREE_W
from .loops import build_loops
from .spatial import transform_params
from .swap import RunTimeSwaps

DEFAULT_GRAVITY = (0.0, 0.0, -9.81)


def readonly(a, dtype=float):
    a = np.ascontiguousarray(np.array(a, dtype=dtype))
    a.flags.writeable = False
    return a


class Model(RunTimeSwaps):
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
        self._params = readonly(inertia).reshape(-1, 10)  # the model's own inertial parameters
        self._payload = None
        self._K = self._kernel_array(self._params, gravity)
        self._lock = threading.Lock()
        # link name -> (body index or -1 for the base, 4x4 pose of the link frame in body coordinates)
        self.link_frames = {k: (b, readonly(T)) for k, (b, T) in link_frames.items()}
        self.effort_limits = readonly(effort_limits)
        self.velocity_limits = readonly(velocity_limits)
        self.position_limits = readonly(position_limits).reshape(-1, 2)
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
            k = int(self._tree[i, QIDX])
            new._tree[i, (IA, FV, FS)] = rotor_inertia[k], viscous[k], coulomb[k]
        params = np.zeros((self.nb + 1, 10))
        for name in self.link_names:
            body, T = self.link_frames[name]
            params[body] += transform_params(np.asarray(link_params[name], float), T)  # body -1 = the base row
        new._params = readonly(params)
        new.link_params = {k: readonly(link_params[k]) for k in self.link_names}
        new._payload = None
        new._K = new._kernel_array(new._params, self.gravity)
        new._lock = threading.Lock()
        return new

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
        """The tree rows of the kernel array (nb, TREE_W), read-only; see the module docstring."""
        return self._view(slice(0, self.nb), slice(0, TREE_W))

    def _set_elastic_attributes(self, cols):
        role = cols[:, 0]
        names = self.joint_names
        self.rigid_index = readonly(np.flatnonzero(role == RIGID_JOINT), int)
        self.unactuated_index = readonly(np.flatnonzero(role != RIGID_JOINT), int)
        self.elastic_index = readonly(np.flatnonzero(role == ELASTIC_JOINT), int)
        self.rigid_joint_names = tuple(names[k] for k in self.rigid_index)
        self.unactuated_joint_names = tuple(names[k] for k in self.unactuated_index)
        self.elastic_joint_names = tuple(names[k] for k in self.elastic_index)
        self.elastic_stiffness = readonly(cols[self.elastic_index, 1])
        self.elastic_rest_position = readonly(cols[self.elastic_index, 2])
        self.elastic_damping = readonly(cols[self.elastic_index, 3])
        self._split_sizes = (len(self.rigid_index), len(self.unactuated_index))

    @property
    def dyn(self):
        """The swappable inertial parameters (payload included) and gravity (nb + 2, 10), read-only."""
        return self._view(slice(self.nb, 2 * self.nb + 2), slice(0, 10))

    @property
    def gravity(self):
        """Gravity (m/s^2) in the base frame (for a floating base: the world frame), read-only."""
        return self._view(2 * self.nb + 1, slice(0, 3))

    def _rebuild(self, params, gravity):
        self._K = self._kernel_array(params, gravity)

    def _with_payload(self, link, params10):
        if link not in self.link_frames:
            raise ModelError(f"payload link '{link}' is not a link of model '{self.name}'")
        body, T = self.link_frames[link]
        params = np.array(self._params)
        params[body] += transform_params(params10, T)
        return params

    def joint_index(self, name):
        try:
            return self.index[name]
        except KeyError:
            raise ModelError(f"unknown joint '{name}' (model '{self.name}' has {list(self.joint_names)})") from None

    def __repr__(self):
        kind = "floating" if self.floating_base else "fixed"
        return f"<rne_control.Model '{self.name}': {self.n} joints, {len(self.link_names)} links, {kind} base>"


__all__ = ["Model", "REVOLUTE", "PRISMATIC", "DEFAULT_GRAVITY"]
