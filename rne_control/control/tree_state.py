"""The state of a tree plant: its controlled joints, the uncontrolled rest of the mechanism, and the models
its dynamics run on (see :class:`~rne_control.control.plants.TreePlant`).

The measured state comes in the plant's ``state_names`` order (NaN: not measured). :func:`complete` puts
it into the model's joint order:

- a controlled joint must be measured (finite);
- an uncontrolled joint takes its measured position and velocity, else keeps its last (initially its
  locked position, at rest);
- a mimic joint follows the first joint up its chain of leaders that follows none, q = multiplier q_root
  + offset and qd = multiplier qd_root, whether or not it is published. A published position farther
  than ``tolerance`` from that (an angle modulo 2 pi) is ignored and counted per mimic joint.

The dynamics then run on the *restricted model*: on a fixed base, the model restricted to the joints
the controlled torques depend on (:meth:`rne_control.Model.restricted`: the controlled joints, the joints
between them and the base, and their subtrees); on a floating base, the whole model. Its uncontrolled
joints take zero acceleration.

Its *passenger* joints are the uncontrolled ones with no controlled joint below them (a gripper's fingers
on the controlled arm). While they are all at rest (zero velocity; their acceleration is zero anyway),
each passenger subtree moves as one rigid body with the body it hangs from, and the dynamics run on the
*folded model* instead: the restricted model without the passengers, each of their subtrees added to
that body as its composite inertia at the current positions (Featherstone's composite-rigid-body
inertia, I^c_lambda(i) += X^T I^c_i X of Table 6.2). That gives the controlled torques exactly, at the
cost of the arm alone; :func:`rest_ready` refolds only when a passenger's position has changed.

Everything lives in two arrays that the compiled calls take: ``plan`` (int64, the index maps) and
``work`` (float64 rows, the state in each model's joint order). Layout below.
"""
import math

import numpy as np
from numba import njit

from ..dynamics.primitives import add_params_to_parent, body, joint_xform, split

# plan header: state joints, model joints, restricted-model joints (= its bodies: one joint each), controlled
# joints, mimic rules, folded-model joints (= its bodies; 0: no passenger, no folding), passengers
NS, NM, NR, NC, NMIM, NF, NP = range(7)
HEADER = 7
# work rows: the model's state; the restricted model's state, acceleration and torque; the folded model's;
# the controlled joints' state and acceleration; the mimic rules and their counts of ignored positions;
# the tolerance; the passengers' positions at the last fold (NaN: fold again)
(QM, QDM, QR, QDR, QDDR, TAUR, QF, QDF, QDDF, TAUF, QC, QDC, QDDC, MULT, OFFSET, IGNORED, TOL,
 FOLDQ) = range(18)
ROWS = 18
REJECTED = 1    # status: an input of another length
# per restricted-model body, for the fold: not a passenger; a passenger below a passenger; a passenger
# below a body of the folded model (or the base)
KEPT, BELOW_PASSENGER, BELOW_FOLDED = 0, 1, 2


@njit(cache=True, nogil=True, inline="always")
def _offsets(plan):
    """Where each index map starts in ``plan``: state -> model, restricted -> model, controlled ->
    restricted, the mimic rules (follower, root, follower's state index, revolute; one block each),
    folded -> restricted, controlled -> folded, the passengers (restricted indices), and per restricted
    body its kind and target, per folded body its restricted body."""
    s2m = HEADER
    r2m = s2m + plan[NS]
    c2r = r2m + plan[NR]
    mim = c2r + plan[NC]
    f2r = mim + 4 * plan[NMIM]
    c2f = f2r + plan[NF]
    pas = c2f + plan[NC]
    kind = pas + plan[NP]
    target = kind + plan[NR]
    src = target + plan[NR]
    return s2m, r2m, c2r, mim, f2r, c2f, pas, kind, target, src


@njit(cache=True, nogil=True, inline="always")
def _wrapped(d):
    return d - 2.0 * math.pi * math.floor((d + math.pi) / (2.0 * math.pi))


@njit(cache=True, nogil=True)
def complete(q, qd, plan, work):
    """The measured state q, qd (``state_names`` order, NaN: not measured) into ``work`` (see the module
    docstring): rows QM, QDM (model order), QR, QDR (restricted-model order), QC, QDC (controlled). Returns
    0; REJECTED (q or qd of another length, nothing written); or -1 - i (controlled joint i not finite,
    nothing written)."""
    ns, nr, nc, nmim = plan[NS], plan[NR], plan[NC], plan[NMIM]
    if q.shape[0] != ns or qd.shape[0] != ns:
        return REJECTED
    for i in range(nc):
        if not (math.isfinite(q[i]) and math.isfinite(qd[i])):
            return -1 - i
    s2m, r2m, _, mim = _offsets(plan)[:4]
    qm, qdm = work[QM], work[QDM]
    for i in range(ns):
        f = plan[s2m + i]
        if math.isfinite(q[i]):
            qm[f] = q[i]
        if math.isfinite(qd[i]):
            qdm[f] = qd[i]
    tol = work[TOL, 0]
    for m in range(nmim):
        f, root, s, revolute = plan[mim + m], plan[mim + nmim + m], plan[mim + 2 * nmim + m], plan[mim + 3 * nmim + m]
        qm[f] = work[MULT, m] * qm[root] + work[OFFSET, m]
        qdm[f] = work[MULT, m] * qdm[root]
        if math.isfinite(q[s]):
            d = q[s] - qm[f]
            if revolute:
                d = _wrapped(d)
            if abs(d) > tol:
                work[IGNORED, m] += 1.0
    for r in range(nr):
        f = plan[r2m + r]
        work[QR, r] = qm[f]
        work[QDR, r] = qdm[f]
    for c in range(nc):
        work[QC, c] = q[c]
        work[QDC, c] = qd[c]
    return 0


@njit(cache=True, nogil=True)
def scatter_controlled(qdd_c, plan, work):
    """Row QDDR (the restricted model's accelerations): ``qdd_c`` (controlled, ``joint_names`` order) at
    the controlled joints, 0 elsewhere."""
    c2r = _offsets(plan)[2]
    for r in range(plan[NR]):
        work[QDDR, r] = 0.0
    for c in range(plan[NC]):
        work[QDDR, plan[c2r + c]] = qdd_c[c]


@njit(cache=True, nogil=True)
def gather_controlled(plan, work, out, folded):
    """``out`` (controlled, ``joint_names`` order) from row TAUR (the restricted model's torques), or with
    ``folded`` from row TAUF (the folded model's)."""
    o = _offsets(plan)
    idx, row = (o[5], TAUF) if folded else (o[2], TAUR)
    for c in range(plan[NC]):
        out[c] = work[row, plan[idx + c]]


@njit(cache=True, nogil=True)
def fold(KR, KF, plan, work):
    """The folded model's inertial parameters and gravity (in KF): those of the restricted model's bodies
    it keeps (payload included) and its gravity, from KR, plus each passenger subtree's composite inertia
    at the positions of row QR, in the coordinates of the body it hangs from (the base: KF's base row).
    KR's workspace holds the passengers' transforms and composite inertias (crba.py's layout)."""
    treeR, dynR, wsR, _ = split(KR)
    dynF = split(KF)[1]
    nbr, nbf = plan[NR], plan[NF]
    o = _offsets(plan)
    kind, target, src = o[7], o[8], o[9]
    for f in range(nbf):
        b = plan[src + f]
        for j in range(10):
            dynF[f, j] = dynR[b, j]
    for j in range(10):
        dynF[nbf, j] = dynR[nbr, j]          # the base
        dynF[nbf + 1, j] = dynR[nbr + 1, j]  # gravity
    for b in range(nbr):
        if plan[kind + b] != KEPT:
            for j in range(10):
                wsR[b, 12 + j] = dynR[b, j]
    for b in range(nbr - 1, -1, -1):          # children before parents: I^c_parent += X^T I^c_b X
        if plan[kind + b] == KEPT:
            continue
        _, jtype, k = body(treeR, b)
        joint_xform(treeR[b], jtype, work[QR, k], wsR[b, 0:12])
        t = plan[target + b]
        if plan[kind + b] == BELOW_PASSENGER:
            add_params_to_parent(wsR[b, 0:12], wsR[b, 12:22], wsR[t, 12:22])
        else:
            add_params_to_parent(wsR[b, 0:12], wsR[b, 12:22], dynF[t if t >= 0 else nbf])


@njit(cache=True, nogil=True)
def rest_ready(KR, KF, plan, work):
    """True if the model has passengers and they are all at rest (row QDR): the folded model KF then gives
    the controlled torques exactly, and its rows QF, QDF, QDDF are filled from the restricted model's
    (QR, QDR, QDDR). Folds again (:func:`fold`) when a passenger's position differs from the last fold's."""
    npas = plan[NP]
    if npas == 0:
        return False
    o = _offsets(plan)
    pas, f2r = o[6], o[4]
    for i in range(npas):
        if work[QDR, plan[pas + i]] != 0.0:
            return False
    same = True
    for i in range(npas):
        same = same and work[QR, plan[pas + i]] == work[FOLDQ, i]   # NaN (invalidated): never the same
    if not same:
        fold(KR, KF, plan, work)
        for i in range(npas):
            work[FOLDQ, i] = work[QR, plan[pas + i]]
    for f in range(plan[NF]):
        r = plan[f2r + f]
        work[QF, f] = work[QR, r]
        work[QDF, f] = work[QDR, r]
        work[QDDF, f] = work[QDDR, r]
    return True


class TreeState:
    """The plan and work arrays of one tree plant (see the module docstring).

    ``state_index``: the model index of each state joint; ``restricted_index``: the model index of each
    joint of the restricted model; ``controlled_index``: the restricted-model index of each controlled
    joint (they lead the state); ``mimic``: rows (follower, root, multiplier, offset) of model indices;
    ``revolute``: per model joint; ``initial_q``: the model's positions before any measurement (locked
    values; mimic joints follow); ``fold``: None, or (the passengers' restricted-model indices, per
    restricted body (kind, target), per folded body its restricted body, per folded joint its restricted
    index, per controlled joint its folded index)."""

    def __init__(self, state_index, restricted_index, controlled_index, mimic, revolute, initial_q, tolerance,
                 fold=None):
        ns, nm, nr, nc, nmim = (len(state_index), len(initial_q), len(restricted_index), len(controlled_index),
                                len(mimic))
        state_pos = {int(f): i for i, f in enumerate(state_index)}
        rows = [[int(r[0]) for r in mimic], [int(r[1]) for r in mimic], [state_pos[int(r[0])] for r in mimic],
                [int(bool(revolute[int(r[0])])) for r in mimic]]
        if fold is None:
            sizes, maps = [0, 0], [[], [], [], [], [], []]
        else:
            passengers, kinds_targets, src, f2r, c2f = fold
            sizes = [len(f2r), len(passengers)]
            maps = [f2r, c2f, passengers, [k for k, _ in kinds_targets], [t for _, t in kinds_targets], src]
        self.plan = np.concatenate([[ns, nm, nr, nc, nmim], sizes, state_index, restricted_index,
                                    controlled_index, *rows, *maps]).astype(np.int64)
        self.work = np.zeros((ROWS, max(nm, 1)))
        w = self.work
        w[QM, :nm] = initial_q
        w[MULT, :nmim] = [r[2] for r in mimic]
        w[OFFSET, :nmim] = [r[3] for r in mimic]
        w[TOL, 0] = tolerance
        for r in mimic:    # the followers' initial positions by their rules
            w[QM, int(r[0])] = r[2] * w[QM, int(r[1])] + r[3]
        nf = sizes[0]
        self.q_model, self.qd_model = w[QM, :nm], w[QDM, :nm]
        self.q, self.qd, self.qdd, self.tau = w[QR, :nr], w[QDR, :nr], w[QDDR, :nr], w[TAUR, :nr]
        self.q_folded, self.qd_folded, self.qdd_folded, self.tau_folded = w[QF, :nf], w[QDF, :nf], w[QDDF, :nf], \
            w[TAUF, :nf]
        self.q_ctrl, self.qd_ctrl, self.qdd_ctrl = w[QC, :nc], w[QDC, :nc], w[QDDC, :nc]
        self.ignored = w[IGNORED, :nmim]
        for r in range(nr):   # the restricted model's state before any measurement
            self.q[r], self.qd[r] = self.q_model[restricted_index[r]], 0.0
        for c in range(nc):
            self.q_ctrl[c] = self.q[controlled_index[c]]
        self.invalidate_fold()

    def invalidate_fold(self):
        """Fold again at the next call (the restricted model's parameters or gravity changed)."""
        self.work[FOLDQ] = np.nan


def prepare():
    """Compile (or load from the cache) this module's kernels for their one signature each: C-contiguous
    float64 vectors and kernel arrays, the int64 plan and the float64 work array."""
    import numba as nb

    from ..dynamics.calls import prepare as prepare_kernel
    f1, f2, i1, B = nb.float64[::1], nb.float64[:, ::1], nb.int64[::1], nb.boolean
    prepare_kernel(complete, [(f1, f1, i1, f2)])
    prepare_kernel(scatter_controlled, [(f1, i1, f2)])
    prepare_kernel(gather_controlled, [(i1, f2, f1, B)])
    prepare_kernel(rest_ready, [(f2, f2, i1, f2)])
