"""The state of a tree plant: its controlled joints, the uncontrolled rest of the mechanism, and the model
its dynamics run on (see :class:`~rne_control.control.plants.TreePlant`).

The measured state comes in the plant's ``state_names`` order (NaN: not measured). :func:`complete` puts
it into the model's joint order:

- a controlled joint must be measured (finite);
- an uncontrolled joint takes its measured position and velocity, else keeps its last (initially its
  locked position, at rest);
- a mimic joint follows the first joint up its chain of leaders that follows none, q = multiplier q_root
  + offset and qd = multiplier qd_root, whether or not it is published. A published position farther
  than ``tolerance`` from that (an angle modulo 2 pi) is ignored and counted per mimic joint.

The dynamics then run on the *dynamics model*: on a fixed base, the model restricted to the joints the
controlled torques depend on (:meth:`rne_control.Model.restricted`: the controlled joints, the joints
between them and the base, and their subtrees); on a floating base, the whole model. The uncontrolled
joints it keeps take zero acceleration.

Everything lives in two arrays that the compiled calls take: ``plan`` (int64, the index maps) and
``work`` (float64 rows, the state in the model's and the dynamics model's joint order). Layout below.
"""
import math

import numpy as np
from numba import njit

# plan: header, then the index maps
NS, NF, NR, NC, NM = range(5)   # header: state joints, model joints, dynamics-model joints, controlled, mimic
HEADER = 5
# work rows: the model's state, the dynamics model's state, acceleration and torque, the controlled
# joints' state and acceleration, the mimic rules and their counts of ignored positions, the tolerance
QF, QDF, QR, QDR, QDDR, TAUR, QC, QDC, QDDC, MULT, OFFSET, IGNORED, TOL = range(13)
ROWS = 13
REJECTED = 1    # status: an input of another length


@njit(cache=True, nogil=True, inline="always")
def _offsets(ns, nr, nc):
    s2f = HEADER
    r2f = s2f + ns
    c2r = r2f + nr
    mim = c2r + nc
    return s2f, r2f, c2r, mim


@njit(cache=True, nogil=True, inline="always")
def _wrapped(d):
    return d - 2.0 * math.pi * math.floor((d + math.pi) / (2.0 * math.pi))


@njit(cache=True, nogil=True)
def complete(q, qd, plan, work):
    """The measured state q, qd (``state_names`` order, NaN: not measured) into ``work`` (see the module
    docstring): rows QF, QDF (model order), QR, QDR (dynamics-model order), QC, QDC (controlled). Returns 0;
    REJECTED (q or qd of another length, nothing written); or -1 - i (controlled joint i not finite,
    nothing written)."""
    ns, nr, nc, nm = plan[NS], plan[NR], plan[NC], plan[NM]
    if q.shape[0] != ns or qd.shape[0] != ns:
        return REJECTED
    for i in range(nc):
        if not (math.isfinite(q[i]) and math.isfinite(qd[i])):
            return -1 - i
    s2f, r2f, c2r, mim = _offsets(ns, nr, nc)
    qf, qdf = work[QF], work[QDF]
    for i in range(ns):
        f = plan[s2f + i]
        if math.isfinite(q[i]):
            qf[f] = q[i]
        if math.isfinite(qd[i]):
            qdf[f] = qd[i]
    tol = work[TOL, 0]
    for m in range(nm):
        f, root, s, revolute = plan[mim + m], plan[mim + nm + m], plan[mim + 2 * nm + m], plan[mim + 3 * nm + m]
        qf[f] = work[MULT, m] * qf[root] + work[OFFSET, m]
        qdf[f] = work[MULT, m] * qdf[root]
        if math.isfinite(q[s]):
            d = q[s] - qf[f]
            if revolute:
                d = _wrapped(d)
            if abs(d) > tol:
                work[IGNORED, m] += 1.0
    for r in range(nr):
        f = plan[r2f + r]
        work[QR, r] = qf[f]
        work[QDR, r] = qdf[f]
    for c in range(nc):
        work[QC, c] = q[c]
        work[QDC, c] = qd[c]
    return 0


@njit(cache=True, nogil=True)
def scatter_controlled(qdd_c, plan, work):
    """Row QDDR (the dynamics model's accelerations): ``qdd_c`` (controlled, ``joint_names`` order) at the
    controlled joints, 0 elsewhere."""
    ns, nr, nc = plan[NS], plan[NR], plan[NC]
    c2r = _offsets(ns, nr, nc)[2]
    for r in range(nr):
        work[QDDR, r] = 0.0
    for c in range(nc):
        work[QDDR, plan[c2r + c]] = qdd_c[c]


@njit(cache=True, nogil=True)
def gather_controlled(plan, work, out):
    """``out`` (controlled, ``joint_names`` order) from row TAUR (the dynamics model's torques)."""
    ns, nr, nc = plan[NS], plan[NR], plan[NC]
    c2r = _offsets(ns, nr, nc)[2]
    for c in range(nc):
        out[c] = work[TAUR, plan[c2r + c]]


class TreeState:
    """The plan and work arrays of one tree plant (see the module docstring).

    ``state_index``: the model index of each state joint; ``dynamics_index``: the model index of each joint
    of the dynamics model; ``controlled``: the number of controlled joints (they lead the state, and their
    dynamics-model indices are ``controlled_index``); ``mimic``: rows (follower, root, multiplier, offset)
    of model indices; ``revolute``: per model joint; ``initial_q``: the model's positions before any
    measurement (locked values; mimic joints follow)."""

    def __init__(self, state_index, dynamics_index, controlled_index, mimic, revolute, initial_q, tolerance):
        ns, nf, nr, nc, nm = (len(state_index), len(initial_q), len(dynamics_index), len(controlled_index),
                              len(mimic))
        state_pos = {int(f): i for i, f in enumerate(state_index)}
        rows = [[int(r[0]) for r in mimic], [int(r[1]) for r in mimic], [state_pos[int(r[0])] for r in mimic],
                [int(bool(revolute[int(r[0])])) for r in mimic]]
        self.plan = np.concatenate([[ns, nf, nr, nc, nm], state_index, dynamics_index, controlled_index,
                                    *rows]).astype(np.int64)
        self.work = np.zeros((ROWS, max(nf, 1)))
        self.work[QF, :nf] = initial_q
        self.work[MULT, :nm] = [r[2] for r in mimic]
        self.work[OFFSET, :nm] = [r[3] for r in mimic]
        self.work[TOL, 0] = tolerance
        for r in mimic:    # the followers' initial positions by their rules
            self.work[QF, int(r[0])] = r[2] * self.work[QF, int(r[1])] + r[3]
        w = self.work
        self.q_model, self.qd_model = w[QF, :nf], w[QDF, :nf]
        self.q, self.qd, self.qdd, self.tau = w[QR, :nr], w[QDR, :nr], w[QDDR, :nr], w[TAUR, :nr]
        self.q_ctrl, self.qd_ctrl, self.qdd_ctrl = w[QC, :nc], w[QDC, :nc], w[QDDC, :nc]
        self.ignored = w[IGNORED, :nm]
        for r in range(nr):   # the dynamics model's state before any measurement
            self.q[r], self.qd[r] = self.q_model[dynamics_index[r]], 0.0
        for c in range(nc):
            self.q_ctrl[c] = self.q[controlled_index[c]]


def prepare():
    """Compile (or load from the cache) this module's kernels for their one signature each: C-contiguous
    float64 vectors, the int64 plan and the float64 work array."""
    import numba as nb

    from ..dynamics.calls import prepare as prepare_kernel
    f1, f2, i1 = nb.float64[::1], nb.float64[:, ::1], nb.int64[::1]
    prepare_kernel(complete, [(f1, f1, i1, f2)])
    prepare_kernel(scatter_controlled, [(f1, i1, f2)])
    prepare_kernel(gather_controlled, [(i1, f2, f1)])
