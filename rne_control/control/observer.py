"""External joint torques from the robot's own model: De Luca's generalised-momentum observer.

For a tree on a fixed base, the generalised momentum p = M(q) qd obeys

    dp/dt = tau + C(q, qd)^T qd - g(q) - tau_f + tau_ext

(tau the applied joint torques, tau_f = Fv qd + Fs sign(qd) the model's friction, tau_ext the joint
torques of the external forces). The residual

    r = K_O [p - p(0) - integral of (tau + C^T qd - g - tau_f + r) dt]

therefore obeys dr/dt = K_O (tau_ext - r): a first-order estimate of tau_ext with bandwidth K_O (1/s),
needing no acceleration and no inverse of M. Discretised per sample k at time t_k (T_k = t_k - t_{k-1},
with K_O T_k < 1), with the torque tau_{k-1} in force over [t_{k-1}, t_k]:

    r_k = (1 - K_O T_k) r_{k-1} + K_O [p_k - p_{k-1} - T_k (tau_{k-1} + C^T qd - g - tau_f)_{k-1}]

p, C^T qd and g come from one O(n) forward and backward pass of the RNE's recursion
(rne_control.dynamics.momentum_coriolis.momentum_coriolis_gravity), so the estimate uses exactly the
RNE's model: rotor inertia, friction, payload and gravity as set (the model's arrays as they are at each
sample). :meth:`MomentumObserver.update` runs that pass, the friction and the residual update in one
compiled call (_observer.py); a sample it does not take (an argument not a plain float64 vector, a wrong
length, a non-finite value, a bad time) goes through the checked path, the same equations on the library's
public functions (generalized momentum and C^T qd, gravity torques), which raises the named error.
"""
from __future__ import annotations

import math
from typing import Optional

import numpy as np

from .. import dynamics as dyn
from ..dynamics.calls import Prepared, check
from ..model.layout import FS, FV, QIDX
from . import _observer as kernel

_ndarray, _id = np.ndarray, id   # bound once for update's fast path


class ObserverError(ValueError):
    """A bad observer setting or sample (the message names the field)."""


def check_gain(gain, n: int) -> np.ndarray:
    """K_O (1/s) as n positive finite values (one value is repeated); ObserverError naming 'gain'."""
    k = np.asarray(gain, dtype=float).reshape(-1)
    if k.size == 1:
        k = np.full(n, k[0])
    if k.shape != (n,):
        raise ObserverError(f"gain must be one value or {n} (got {k.size})")
    if not np.all(np.isfinite(k)) or np.any(k <= 0):
        raise ObserverError(f"gain must be > 0 and finite (got {k.tolist()})")
    return k


class MomentumObserver:
    """The residual r (N m, N; ``model.joint_names`` order) of the module docstring for ``model`` (a tree
    on a fixed base; a closed-loop model over its spanning tree).

    ``gain``: K_O in 1/s, one value or one per joint. ``friction``: subtract the model's friction (as
    the plant's simulation and a real robot feel it). ``gravity`` (m/s^2, base frame): the model's if None.
    :meth:`update` takes each sample in time order; :meth:`reset` starts again from r = 0 (at activation,
    after a stale period, after a change of payload or gravity).

    The state lives in one array (_observer.py's rows): ``r``, ``gain``, the previous sample's p and
    beta = C^T qd - g - tau_f and its time ``t`` are views of it, which the compiled update writes."""

    def __init__(self, model, gain=50.0, friction: bool = True, gravity=None):
        self.model = model
        n = self.n = model.n
        self._W = np.zeros((kernel.ROWS, max(n, kernel.CLOCK_W)))
        self._gain, self.r = self._W[kernel.GAIN, :n], self._W[kernel.R, :n]
        self._p, self._beta = self._W[kernel.P, :n], self._W[kernel.BETA, :n]
        self._clock = self._W[kernel.CLOCK]
        self.set_gain(gain)
        tree = np.asarray(model.tree)
        k = tree[:, QIDX].astype(int)
        self.friction = bool(friction)
        self.viscous, self.coulomb = np.zeros(n), np.zeros(n)
        if friction:
            self.viscous[k], self.coulomb[k] = tree[:, FV], tree[:, FS]
        self._update_one = Prepared(self, "_update_one", kernel.ready)
        self.set_gravity(gravity)

    @property
    def gain(self) -> np.ndarray:
        """K_O (1/s), one per joint; set it with :meth:`set_gain`."""
        return self._gain

    @gain.setter
    def gain(self, gain) -> None:
        self.set_gain(gain)

    def set_gain(self, gain) -> None:
        """K_O (1/s, one value or one per joint; :func:`check_gain`) from the next sample on; r is kept."""
        self._gain[:] = check_gain(gain, self.n)

    @property
    def t(self) -> Optional[float]:
        """The time (s) of the last sample taken, None before the first (after :meth:`reset`)."""
        return float(self._clock[kernel.T_PREV]) if self._clock[kernel.STARTED] else None

    def reset(self) -> None:
        """r = 0; the next sample starts the integration."""
        self.r[:] = 0.0
        self._clock[kernel.STARTED] = 0.0
        self._p[:] = 0.0
        self._beta[:] = 0.0   # C^T qd - g - tau_f at the previous sample

    def set_gravity(self, gravity) -> None:
        """Gravity (m/s^2, base frame; None: the model's) from the next sample on; resets r."""
        self.gravity = None if gravity is None else np.array(gravity, dtype=float)
        flags = kernel.FRICTION if self.friction else 0
        if self.gravity is not None:
            if self.gravity.shape == (3,):
                self._clock[kernel.GRAVITY:kernel.GRAVITY + 3] = self.gravity
                flags |= kernel.OWN_GRAVITY
            else:   # the checked path names what is wrong with it
                flags |= kernel.CHECKED
        self._flags = flags
        self.reset()

    def friction_torques(self, qd) -> np.ndarray:
        """tau_f = Fv qd + Fs sign(qd) (N m, N)."""
        return self.viscous * qd + self.coulomb * np.sign(qd)

    def update(self, t: float, q, qd, tau) -> np.ndarray:
        """Take the sample (q, qd) measured at time ``t`` (s), with ``tau`` the joint torques applied since the
        previous sample (N m, N; ignored at the first sample). Returns r (the observer's own array).

        One compiled call (_observer.py) when q, qd and tau are float64 vectors (C-contiguous); anything
        else, and any sample it refuses, through :meth:`_update_checked`, which raises the error."""
        args = (_ndarray, self.model._K, q, qd, tau, self._W)
        try:
            st = self._update_one(_id(args), self._flags, t)
        except (TypeError, ValueError):   # t not a number
            st = kernel.NOT_DIRECT
        if st == 0:
            return self.r
        if st == kernel.NOT_DIRECT:
            return self._update_checked(t, q, qd, tau)
        self._refuse(st, t, tau)

    def _refuse(self, st: int, t: float, tau) -> None:
        """Raise the error that the compiled update's status ``st`` stands for (it took nothing)."""
        if st == kernel.TIME:
            raise ObserverError(f"sample time {t!r} s is not after the previous one ({self.t!r} s)")
        if st == kernel.GAIN_TIMES_T:
            raise ObserverError(f"gain times the sample interval must be < 1 (gain {self.gain.max():g} 1/s, "
                                f"interval {t - self.t:g} s)")
        if st == kernel.TAU:
            raise ObserverError(f"tau must be {self.n} finite values (got shape {np.shape(tau)})")
        check(self.model, st)   # the dynamics' InputError: a length, a non-finite q or qd

    def _update_checked(self, t: float, q, qd, tau) -> np.ndarray:
        """:meth:`update` on the library's public functions: converts and checks every input and raises
        the library's InputError (q, qd, gravity) or an ObserverError naming the field."""
        q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
        p, ctq = dyn.momentum_and_coriolis_transpose(self.model, q, qd)
        if p.shape != (self.n,):
            raise ObserverError(f"q and qd must be one sample of {self.n} values (got shapes {q.shape}, {qd.shape})")
        beta = ctq - dyn.gravity_torques(self.model, q, self.gravity) - self.friction_torques(qd)
        if self.t is not None:
            T = float(t) - self.t
            if not (T > 0.0) or not math.isfinite(T):
                raise ObserverError(f"sample time {t!r} s is not after the previous one ({self.t!r} s)")
            kt = self.gain * T
            if np.any(kt >= 1.0):
                raise ObserverError(f"gain times the sample interval must be < 1 (gain {self.gain.max():g} 1/s, "
                                    f"interval {T:g} s)")
            tau = np.asarray(tau, dtype=float)
            if tau.shape != (self.n,) or not np.all(np.isfinite(tau)):
                raise ObserverError(f"tau must be {self.n} finite values (got shape {tau.shape})")
            self.r *= 1.0 - kt
            self.r += self.gain * (p - self._p - T * (tau + self._beta))
        self._clock[kernel.T_PREV] = float(t)
        self._clock[kernel.STARTED] = 1.0
        self._p[:], self._beta[:] = p, beta
        return self.r

    def warm_up(self) -> None:
        """Run the compiled update and the checked path once, on a throwaway observer of the same model and
        settings, so that no sample compiles (or loads) anything."""
        warm_up(self.model, self.gain, self.friction, self.gravity)


def warm_up(model, gain=50.0, friction: bool = True, gravity=None) -> None:
    """Compile (or load from numba's cache) and run every path of :meth:`MomentumObserver.update` once on a
    throwaway observer of ``model``: the compiled update (first and later samples), a refused sample, and
    where the direct call is off (every sample then takes it) the checked path; an argument of another type
    than the node's takes it too, and compiles its kernels then."""
    obs = MomentumObserver(model, gain, friction, gravity)
    z = np.zeros(model.n)
    obs.update(0.0, z, z, z)
    obs.update(1e-4, z, z, z)
    try:
        obs.update(1e-4, z, z, z)
    except ObserverError:
        pass
    if not kernel.LAYOUT_OK:
        obs._update_checked(2e-4, z, z, z)


WRENCH_DAMPING = 1e-3   # the damped pseudo-inverse's lambda (m and 1, the units of J) of estimate_wrench


def estimate_wrench(model, q, tau_ext, frame: str, damping: float = WRENCH_DAMPING, columns=None) -> np.ndarray:
    """The wrench F = [force (N); moment (N m)] acting on the robot at the origin of ``frame``, in that
    frame's axes, whose joint torques are ``tau_ext``: tau_ext = J_f^T F with J_f the frame's Jacobian in its
    own axes, solved by the damped pseudo-inverse F = (J_f J_f^T + damping^2 I)^-1 J_f tau_ext (``damping``
    in the units of J: m and 1). ``q``: ``model.joint_names`` order; ``columns``: the joints (indices in that
    order) whose torques ``tau_ext`` holds, in its order (default: every joint), e.g. only the joints whose
    applied torque is known."""
    T = dyn.frame_pose(model, q, frame)
    R = T[:3, :3]
    J = dyn.frame_jacobian(model, q, frame)
    if columns is not None:
        J = J[:, np.asarray(columns, dtype=int)]
    Jf = np.vstack([R.T @ J[:3], R.T @ J[3:]])   # base axes -> frame axes
    A = Jf @ Jf.T + damping * damping * np.eye(6)
    return np.linalg.solve(A, Jf @ np.asarray(tau_ext, dtype=float))
