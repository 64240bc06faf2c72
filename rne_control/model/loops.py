"""The closed-loop part of a model: active and passive joints, cut joints and mimic couplings, as
immutable arrays (Khalil 2010, §2.2).

A closed-loop robot is described by its *equivalent tree* (the ordinary Model, every joint of which is
in ``joint_names``) plus, for each loop, the passive joint k where the loop was cut (Figure 2 of the
seed): frame R_k is fixed relative to link i = a(k) and carries q_k about or along its z axis; frame
R_(k+B) is fixed on link j. The loop is closed when the two frames coincide up to the motion of the cut
joint (eq. 3): revolute, up to a rotation about their common z (5 conditions); prismatic, up to a
translation along z (5); spherical, their origins coincide (3). A URDF ``<mimic>`` joint is the
simplest loop: a passive joint with q_f = multiplier q_leader + offset (1 condition, constant G).

A revolute or spherical cut on a planar loop (every revolute joint of the loop turning about the cut
joint's z axis, every prismatic one sliding across it, and for a revolute cut the two frames' z axes
parallel) keeps only the two in-plane conditions, D_x and D_y (PLANAR_CUT). The others hold for every
q: each joint moves the loop within planes normal to z, so z_(k+B) stays parallel to z_k and the
frames' offset along z, checked here at q = 0, never changes. Rotations about parallel axes keep them
parallel, so the test at q = 0 holds for every q.

Kernel array ``LK`` (float64, rows x LW): row 0 the header (counts), then one row per cut joint, one
per mimic coupling, the active and passive joint indices, and the workspace of the loop kernels (see
``rne_control.model.layout`` and ``rne_control.dynamics.closed_loop.arrays``). Like the model's ``K``, the workspace belongs to the model.
"""
import numpy as np

from .errors import ModelError
from .layout import (BODY_COLS, CUT_COLS, PLANAR_CUT, PRISMATIC_CUT, REVOLUTE, REVOLUTE_CUT, SPHERICAL_CUT,
                     VEC_ROWS)

CUT_TYPES = {"revolute": REVOLUTE_CUT, "prismatic": PRISMATIC_CUT, "spherical": SPHERICAL_CUT}
CUT_ROWS = {REVOLUTE_CUT: 5, PRISMATIC_CUT: 5, SPHERICAL_CUT: 3, PLANAR_CUT: 2}
PLANAR_TOL = 1e-12  # axis misalignment (unit vectors) and offset along z (m) at which a loop counts as planar:
#                     the loop solver's own tolerance, so the conditions dropped hold to it for every q


def _ro(a, dtype=float):
    a = np.ascontiguousarray(np.array(a, dtype=dtype))
    a.flags.writeable = False
    return a


class CutJoint:
    """A cut joint as a loader sees it: frame R_k on link ``parent`` (pose ``T_parent`` in that link's
    frame, at q_k = 0) and frame R_(k+B) on link ``closes_on`` (pose ``T_closes_on``)."""

    __slots__ = ("name", "joint_type", "parent", "T_parent", "closes_on", "T_closes_on")

    def __init__(self, name, joint_type, parent, T_parent, closes_on, T_closes_on):
        self.name, self.joint_type, self.parent, self.T_parent = name, joint_type, parent, T_parent
        self.closes_on, self.T_closes_on = closes_on, T_closes_on


class Loops:
    """Immutable description of a model's loops. ``active``/``passive``: joint indices (``joint_names``
    order), ``n_active`` = N their number; ``cut`` (B, 28) and ``mimic`` (M, 4) = [follower, leader,
    multiplier, offset] as in the kernel array; ``cut_joint_names``; ``loop_joints[c]``: the tree joints
    of the loop cut at cut joint c; ``q_ref``: the default initial guess of the loop solve (mid-range of
    the position limits, 0 where a limit is infinite)."""

    def __init__(self, joint_names, nb, active, cut, cut_names, loop_joints, mimic, q_ref):
        self.active = _ro(active, np.int64)
        self.n_active = len(self.active)
        self.passive = _ro([k for k in range(len(joint_names)) if k not in set(active)], np.int64)
        self.cut = _ro(np.reshape(cut, (-1, CUT_COLS)))
        self.mimic = _ro(np.reshape(mimic, (-1, 4)))
        self.cut_joint_names = tuple(cut_names)
        self.loop_joints = tuple(tuple(j) for j in loop_joints)
        self.n_rows = int(sum(CUT_ROWS[int(t)] for t in self.cut[:, 0]) + self.mimic.shape[0])
        self.q_ref = _ro(q_ref)
        self.q_guess0 = np.array(q_ref, float)   # a writable copy the kernels' fast path accepts; never written
        self.LK = self._kernel_array(len(joint_names), nb)

    def cut_rows(self, c):
        """The constraint rows (indices into the residual e) of the loop of cut joint c."""
        r0 = int(self.cut[c, CUT_COLS - 1])
        return range(r0, r0 + CUT_ROWS[int(self.cut[c, 0])])

    def _kernel_array(self, n, nb):
        B, M, N, p, m = len(self.cut), len(self.mimic), len(self.active), len(self.passive), self.n_rows
        width = max(CUT_COLS, BODY_COLS, n + 1, m + 1, 8)
        rows = 1 + B + M + 2 + nb + m + VEC_ROWS + m + p + n + N + nb + 2
        LK = np.zeros((rows, width))
        LK[0, 0:7] = (B, M, N, p, m, n, nb)
        LK[1:1 + B, :CUT_COLS] = self.cut
        LK[1 + B:1 + B + M, :4] = self.mimic
        LK[1 + B + M, :N] = self.active
        LK[2 + B + M, :p] = self.passive
        LK[3 + B + M:3 + B + M + nb, BODY_COLS - 2] = np.nan   # the bodies' poses: none yet
        return LK


def _path(body, parent):
    out = []
    while body >= 0:
        out.append(body)
        body = parent[body]
    return out


def _poses_at_zero(topo, kin):
    """Base-frame pose (R, p) of every body at q = 0, from the joints' fixed transforms (model.py's kin rows:
    E = R_pre^T row-major, then r)."""
    poses = []
    for (par, _, _), row in zip(topo, kin):
        R_p, p_p = poses[int(par)] if par >= 0 else (np.eye(3), np.zeros(3))
        poses.append((R_p @ np.reshape(row[:9], (3, 3)).T, p_p + R_p @ np.asarray(row[9:12])))
    return poses


def _is_planar(ctype, bi, A, bj, B, on_loop, topo, poses):
    """True if the loop of a revolute or spherical cut is planar about the cut joint's z (see the module
    docstring): A and B are the poses of R_k and R_(k+B) on bodies bi and bj (-1: the base)."""
    def world(b, T):
        R, p = poses[b] if b >= 0 else (np.eye(3), np.zeros(3))
        return R @ T[:3, :3], p + R @ T[:3, 3]
    (R_k, p_k), (R_B, p_B) = world(bi, A), world(bj, B)
    z = R_k[:, 2]
    for b in on_loop:
        z_b = poses[b][0][:, 2]
        off = np.linalg.norm(np.cross(z_b, z)) if topo[b][1] == REVOLUTE else abs(z_b @ z)
        if off > PLANAR_TOL:
            return False
    if ctype == REVOLUTE_CUT and np.linalg.norm(np.cross(R_B[:, 2], z)) > PLANAR_TOL:
        return False
    return abs(z @ (p_B - p_k)) <= PLANAR_TOL


def mimic_roots(mimic):
    """{follower: (root, multiplier, offset)} from {follower: (leader, multiplier, offset)}: each follower
    tied directly to the first joint up its chain of leaders that follows none, q_f = multiplier q_root +
    offset (the chain's rules composed). Leaders outside ``mimic`` are roots."""
    out = {}
    for f in mimic:
        leader, mult, off = mimic[f]
        seen = {f}
        while leader in mimic and leader not in seen:
            seen.add(leader)
            m2, o2 = mimic[leader][1], mimic[leader][2]
            leader, mult, off = mimic[leader][0], mult * m2, mult * o2 + off
        out[f] = (leader, mult, off)
    return out


def loop_groups(model):
    """The loops of ``model`` as independent mechanisms: loops (cut loops and mimic couplings) that share a
    passive joint form one group, whose passive joints then depend on its active joints alone. A list of
    (active, passive) joint-index tuples (``joint_names`` indices), one per group."""
    loops, index = model.loops, model.index
    members = [{index[j] for j in lj} for lj in loops.loop_joints]
    members += [{int(f), int(leader)} for f, leader, _, _ in loops.mimic]
    passive = {int(k) for k in loops.passive}
    group = list(range(len(members)))

    def find(i):
        while group[i] != i:
            group[i] = group[group[i]]
            i = group[i]
        return i

    owner = {}
    for i, mem in enumerate(members):
        for k in mem & passive:
            if k in owner:
                group[find(i)] = find(owner[k])
            else:
                owner[k] = i
    joined = {}
    for i, mem in enumerate(members):
        joined.setdefault(find(i), set()).update(mem)
    return [(tuple(sorted(m - passive)), tuple(sorted(m & passive))) for m in joined.values()]


def build_loops(model_name, joint_names, position_limits, frames, topo, actuated=None, cut_joints=(),
                mimic=None, kin=None):
    """Check and pack the loop description (see :class:`Loops`).

    ``actuated``: {joint: bool} (missing: True); ``cut_joints``: list of :class:`CutJoint`; ``mimic``:
    {follower: (leader, multiplier, offset)}; ``kin``: the joints' fixed transforms (model.py), with which
    planar loops are found. Raises ModelError naming the entry: unknown links or joints, a passive joint
    that no loop moves, a loop with no joint that the active joints can drive.
    """
    n = len(joint_names)
    index = {j: k for k, j in enumerate(joint_names)}
    actuated, mimic = dict(actuated or {}), dict(mimic or {})
    for j in actuated:
        if j not in index:
            raise ModelError(f"model '{model_name}': joint '{j}' is passive (actuated: false) but not a "
                             f"controlled joint (joints: {list(joint_names)})")
    mim = []
    for f, (leader, mult, off) in mimic.items():
        if f not in index:
            raise ModelError(f"mimic joint '{f}' is not a controlled joint of model '{model_name}' (a mimic "
                             "joint must not be locked)")
        if leader not in index:
            raise ModelError(f"mimic joint '{f}': its leader '{leader}' is not a movable, controlled joint of "
                             f"model '{model_name}' (joints: {list(joint_names)})")
        if leader == f:
            raise ModelError(f"mimic joint '{f}' mimics itself")
        if not (np.isfinite(mult) and np.isfinite(off)) or mult == 0.0:
            raise ModelError(f"mimic joint '{f}': multiplier must be finite and non-zero and offset finite, "
                             f"got {mult}, {off}")
        actuated[f] = False
        mim.append((index[f], index[leader], float(mult), float(off)))
    active = [k for k, j in enumerate(joint_names) if actuated.get(j, True)]
    parent = [int(t[0]) for t in topo]
    body_joint = [int(t[2]) for t in topo]

    cut, names, loops = [], [], []
    poses = _poses_at_zero(topo, kin) if kin is not None and cut_joints else None
    for c in cut_joints:
        if c.name in index or c.name in names:
            raise ModelError(f"cut joint '{c.name}': the name is already used by another joint")
        if c.joint_type not in CUT_TYPES:
            raise ModelError(f"cut joint '{c.name}': joint must be one of {sorted(CUT_TYPES)}, got {c.joint_type!r}")
        for key, link in (("parent", c.parent), ("closes_on", c.closes_on)):
            if link not in frames:
                raise ModelError(f"cut joint '{c.name}': '{key}' link {link!r} is not a link of model '{model_name}'")
        (bi, Ti), (bj, Tj) = frames[c.parent], frames[c.closes_on]
        if bi == bj:
            raise ModelError(f"cut joint '{c.name}': links '{c.parent}' and '{c.closes_on}' are the same rigid body, "
                             "so there is no loop to close")
        Pi, Pj = _path(bi, parent), _path(bj, parent)
        on_loop = [b for b in Pi if b not in Pj] + [b for b in Pj if b not in Pi]
        loops.append([joint_names[body_joint[b]] for b in on_loop])
        A, B = Ti @ c.T_parent, Tj @ c.T_closes_on
        ctype = CUT_TYPES[c.joint_type]
        if ctype != PRISMATIC_CUT and kin is not None and _is_planar(ctype, bi, A, bj, B, on_loop, topo, poses):
            ctype = PLANAR_CUT
        cut.append(np.concatenate([[ctype, bi, bj], A[:3, :3].ravel(), A[:3, 3], B[:3, :3].ravel(), B[:3, 3],
                                   [0.0]]))
        names.append(c.name)
    row = 0
    for r in cut:
        r[CUT_COLS - 1] = row
        row += CUT_ROWS[int(r[0])]

    passive = [joint_names[k] for k in range(n) if k not in set(active)]
    moved = {j for lj in loops for j in lj} | {joint_names[int(m[0])] for m in mim}
    for j in passive:
        if j not in moved:
            raise ModelError(f"passive joint '{j}' (actuated: false) is on no loop and mimics no joint, so the "
                             "active joints cannot move it (G undefined)")
    # A loop must contain a joint the active joints drive: an active joint, or a passive one shared with
    # another loop (a loop of its own passive joints only would move freely: G undefined).
    for c, lj in zip(names, loops):
        others = {j for name, o in zip(names, loops) if name != c for j in o}
        if not any(j in others or joint_names.index(j) in active for j in lj):
            raise ModelError(f"loop of cut joint '{c}' (joints {lj}) contains no active joint, so the active "
                             "joints cannot move it (G undefined)")
        if not any(j in passive for j in lj):
            raise ModelError(f"loop of cut joint '{c}' (joints {lj}) has no passive joint: closing it would "
                             "constrain the active joints")
    lim = np.asarray(position_limits, float).reshape(-1, 2)
    finite = np.isfinite(lim).all(axis=1)
    q_ref = np.where(finite, 0.5 * (np.where(finite, lim[:, 0], 0) + np.where(finite, lim[:, 1], 0)), 0.0)
    return Loops(joint_names, len(topo), active, cut, names, loops, mim, q_ref)
