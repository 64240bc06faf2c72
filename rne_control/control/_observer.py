"""The momentum observer's update (rne_control.control.observer) in one compiled call.

:func:`observer_update_one` takes a sample through the direct call of the dynamics layer
(rne_control.dynamics.direct: the tuple ``(numpy.ndarray, K, q, qd, tau, W)`` passed by address, no
dispatcher): the dynamics layer's one forward and one backward pass
(:func:`~rne_control.dynamics.momentum_coriolis.momentum_coriolis_gravity`: p = M qd, C^T qd, g(q)), the
friction tau_f = Fv qd + Fs sign(qd) from the model's tree rows, then De Luca's discrete residual

    r_k = (1 - K_O T_k) r_{k-1} + K_O [p_k - p_{k-1} - T_k (tau_{k-1} + C^T qd - g - tau_f)_{k-1}]

K is the model's kernel array as it is at the call (a payload or gravity set at run time swaps it), W
the observer's own array (the rows below). The entry point takes a third argument besides the direct
call's two (the tuple's address and the flags): the sample time t (s), a double. Nothing but the
model's workspace and W's scratch rows is written unless the sample is taken (status 0); any other status
(an argument not of the canonical types, a length, a non-finite value, a time not after the previous one,
K_O T >= 1) leaves the observer as it was, and the observer's checked path raises the error it stands for.
"""
import math

from numba.core import types

from ..dynamics.calls import prepare
from ..dynamics.direct import LAYOUT_OK, NOT_DIRECT, arrays_ok, matrix, vector
from ..dynamics.momentum_coriolis import momentum_coriolis_gravity
from ..dynamics.primitives import FRICTION, bad, entry, sgn, split
from ..model.layout import FS, FV, QIDX

# rows of W (ROWS, max(n, CLOCK_W)): the gain K_O, r, p and beta = C^T qd - g - tau_f of the previous sample,
# the current sample's p, beta and g (scratch), and the clock row
GAIN, R, P, BETA, P_NEW, BETA_NEW, G_NEW, CLOCK = range(8)
ROWS = 8
# columns of the clock row: the time of the previous sample, 1 once a sample was taken, and the observer's
# own gravity (m/s^2, base frame; flag OWN_GRAVITY)
T_PREV, STARTED, GRAVITY = 0, 1, 2
CLOCK_W = 5
# flags (FRICTION: subtract the model's friction)
OWN_GRAVITY = 2     # gravity from W's clock row, not the model's
CHECKED = 4         # take the checked path (an own gravity that is not 3 values)
# statuses of the residual update (the dynamics' are > 0, NOT_DIRECT = -1)
TIME, GAIN_TIMES_T, TAU = -2, -3, -4
SIGNATURE = (types.int64, types.int64, types.float64)   # id(args), flags, t


@entry
def observer_update_one(args, flags, t):
    """The direct call: ``args`` is the address of the tuple (ndarray, K, q, qd, tau, W), ``t`` the sample
    time (s). Returns 0 (the sample taken, W's r, p, beta and clock updated) or the status of what it did
    not take."""
    if flags & CHECKED or not arrays_ok(args, 3, 2):
        return NOT_DIRECT
    tree, dyn, ws, _ = split(matrix(args, 1))
    q, qd, tau, W = vector(args, 2), vector(args, 3), vector(args, 4), matrix(args, 5)
    n = tree.shape[0]
    if W.shape[0] != ROWS or W.shape[1] < max(n, CLOCK_W):
        return NOT_DIRECT
    a_g = W[CLOCK, GRAVITY:GRAVITY + 3] if flags & OWN_GRAVITY else dyn[n + 1, 0:3]
    p, beta, g = W[P_NEW, 0:n], W[BETA_NEW, 0:n], W[G_NEW, 0:n]
    st = momentum_coriolis_gravity(tree, dyn, a_g, q, qd, p, beta, g, ws)
    if st:
        return st
    for i in range(n):                          # beta = C^T qd - g - tau_f
        k = int(tree[i, QIDX])
        b = beta[k] - g[k]
        if flags & FRICTION:
            b -= tree[i, FV] * qd[k] + tree[i, FS] * sgn(qd[k])
        beta[k] = b
    clock = W[CLOCK]
    if clock[STARTED] != 0.0:
        T = t - clock[T_PREV]
        if not (T > 0.0) or not math.isfinite(T):
            return TIME
        for k in range(n):
            if W[GAIN, k] * T >= 1.0:
                return GAIN_TIMES_T
        if tau.shape[0] != n:
            return TAU
        for k in range(n):
            if bad(tau[k]):
                return TAU
        for k in range(n):                      # r_k = (1 - K_O T) r_k-1 + K_O [p_k - p_k-1 - T (tau + beta)_k-1]
            K_O = W[GAIN, k]
            r = W[R, k] * (1.0 - K_O * T)
            W[R, k] = r + K_O * ((p[k] - W[P, k]) - T * (tau[k] + W[BETA, k]))
    for k in range(n):
        W[P, k] = p[k]
        W[BETA, k] = beta[k]
    clock[T_PREV] = t
    clock[STARTED] = 1.0
    return 0


def checked_only(args, flags, t):
    """Stands in for the entry point where the direct call is off (direct.LAYOUT_OK false): every sample
    takes the checked path."""
    return NOT_DIRECT


def ready():
    """The compiled entry point of :func:`observer_update_one` for :data:`SIGNATURE` (compiled, or loaded
    from numba's cache, at the first call), or :func:`checked_only` where the direct call is off."""
    global _entry
    if _entry is None:
        prepare(observer_update_one, [SIGNATURE])
        _entry = observer_update_one.overloads[SIGNATURE].entry_point if LAYOUT_OK else checked_only
    return _entry


_entry = None
