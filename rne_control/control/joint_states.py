"""Merging sensor_msgs/JointState messages from several publishers, joint by joint.

On a real robot several drivers often publish disjoint joint sets on ``/joint_states`` (an arm driver
and a gripper driver, or one message per joint group). :class:`JointStateMapper` merges them by name:
each message updates the joints it carries, and remembers for each joint when it was last updated,
so that freshness is judged per joint.

Rules
-----
* **Needed** joints (``required``: the controlled joints, and any joint the model needs measured)
  must each be updated within ``state_timeout`` for the state to be fresh.
* Other model joints take their last received value, initially their locked value. Joints the model
  does not know are ignored.
* An optional joint's received value is fresh for ``state_timeout`` (:meth:`JointStateMapper.expire`).
  After that its velocity is 0 (an uncontrolled joint keeps its last position, at rest), and a
  **solved** joint (initial value NaN: the passive joint of a loop, a mimic joint, which the plant
  computes from the others) is NaN again, so that a driver that stops publishing a gripper's mimic
  joint leaves it to follow its leader.
* A message that carries none of the needed joints is ignored (its model joints, if any, are still
  taken): it is not an error.
* A message is **rejected** (:class:`JointStateError`, and none of its joints is applied) when its
  position array, or a non-empty velocity or effort array, disagrees in length with its names; when it
  repeats a name; or when a position or velocity of a needed joint is NaN or inf. A non-finite value of
  another joint is skipped (that joint keeps its value); a NaN effort never rejects a message (efforts
  are kept, for the needed joints, only while ``track_effort`` is set).
* A joint published without velocity gets a first-order filtered difference of its positions, per
  joint, with that joint's own sample times.
"""
from __future__ import annotations

import array
import math
from typing import Optional, Sequence

import numpy as np

from . import _kernels as K

_CACHE = 32  # distinct name lists remembered (one per publisher or joint group)


class JointStateError(ValueError):
    pass


class _Map:
    __slots__ = ("src", "dst", "src_opt", "dst_opt", "error")

    def __init__(self, src=(), dst=(), src_opt=(), dst_opt=(), error=None):
        self.src = np.asarray(src, dtype=np.int64)
        self.dst = np.asarray(dst, dtype=np.int64)
        self.src_opt = np.asarray(src_opt, dtype=np.int64)
        self.dst_opt = np.asarray(dst_opt, dtype=np.int64)
        self.error = error


def _as_array(x) -> np.ndarray:
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, array.array):
        return np.frombuffer(x, dtype=np.float64) if len(x) else np.zeros(0)
    return np.asarray(x, dtype=float)


class JointStateMapper:
    """Merge JointState messages by name onto the model's joint order (see the module docstring).

    ``q``, ``qd``: the merged state (model joint order). ``updated``: the model indices of the needed
    joints the last accepted message carried (empty if it carried none). ``last_update``: per model
    joint, the time (s, the ``t`` given to :meth:`update`) of its last update, -inf before the first.
    """

    def __init__(self, model_joint_names: Sequence[str], controlled: Sequence[str], initial_q=None,
                 velocity_cutoff_hz: float = 50.0, required: Optional[Sequence[str]] = None):
        self.model_joint_names = tuple(model_joint_names)
        self.controlled = tuple(controlled)
        self.required = tuple(self.controlled if required is None else required)
        self.n = n = len(self.model_joint_names)
        self._model_index = {nm: i for i, nm in enumerate(self.model_joint_names)}
        missing = [j for j in self.required if j not in self._model_index]
        if missing:
            raise ValueError("required joints %s are not model joints" % missing)
        self.required_index = np.array([self._model_index[j] for j in self.required], dtype=np.int64)
        self._needed = np.zeros(n, dtype=bool)
        self._needed[self.required_index] = True
        self.q = np.zeros(n) if initial_q is None else np.array(initial_q, dtype=float)
        self.qd = np.zeros(n)
        self._solved = np.isnan(self.q) & ~self._needed
        self._received = np.full(n, -math.inf)   # receive time of the optional joints' values (-inf: expired)
        self._oldest_fresh = math.inf            # the oldest of those not expired (inf: none)
        self._q_stage = self.q.copy()
        # rows: last update of each joint; sample time of the position a velocity estimate last used
        self._times = np.full((2, n), -math.inf)
        self.last_update, self._t_vel = self._times
        self._estimated = np.zeros(n, dtype=bool)
        self._any_estimated = False
        self.velocity_cutoff_hz = float(velocity_cutoff_hz)
        self.updated = np.zeros(0, dtype=np.int64)
        self._maps: dict = {}
        # the needed joints' measured efforts (NaN: the last message with them had none), kept only while
        # track_effort is set (the momentum observer's torque_source: measured)
        self.track_effort = False
        self.effort = np.full(n, np.nan)

    @property
    def estimating_velocity(self) -> bool:
        """True if some needed joint gets its velocity from the filtered position difference."""
        return self._any_estimated and bool(np.any(self._estimated[self.required_index]))

    def estimated_joints(self) -> list:
        return [j for j, i in zip(self.required, self.required_index) if self._estimated[i]]

    def oldest_update(self) -> float:
        """The time of the least recent update among the needed joints (-inf if one never came)."""
        return float(self.last_update[self.required_index].min()) if self.required_index.size else math.inf

    def stale_joints(self, t: float, timeout: float) -> list:
        """Names of the needed joints not updated within ``timeout`` of time ``t``."""
        return [j for j, i in zip(self.required, self.required_index) if t - self.last_update[i] > timeout]

    def _map(self, names) -> _Map:
        key = tuple(names)
        m = self._maps.get(key)
        if m is not None:
            return m
        src, dst, src_opt, dst_opt, seen, err = [], [], [], [], set(), None
        for k, nm in enumerate(key):
            if nm in seen:
                err = "joint %r appears twice in name" % nm
                break
            seen.add(nm)
            i = self._model_index.get(nm)
            if i is None:
                continue
            if self._needed[i]:
                src.append(k)
                dst.append(i)
            else:
                src_opt.append(k)
                dst_opt.append(i)
        m = _Map(error=err) if err else _Map(src, dst, src_opt, dst_opt)
        if len(self._maps) >= _CACHE:
            self._maps.clear()
        self._maps[key] = m
        return m

    def update(self, names, position, velocity, t: float, effort=(), received: Optional[float] = None) -> int:
        """Merge one message (names, position, velocity, effort sequences), sampled at time ``t`` (s) and
        received at ``received`` (s, the clock :meth:`expire` is given; default ``t``).

        Returns the number of needed joints it carried (0: ignored for freshness; its other model joints
        were taken). Raises :class:`JointStateError` if the message is rejected (nothing applied)."""
        nn = len(names)
        if len(position) != nn:
            raise JointStateError("position has %d values for %d names" % (len(position), nn))
        nv = len(velocity)
        if nv != 0 and nv != nn:
            raise JointStateError("velocity has %d values for %d names" % (nv, nn))
        ne = len(effort)
        if ne != 0 and ne != nn:
            raise JointStateError("effort has %d values for %d names" % (ne, nn))
        m = self._map(names)
        if m.error:
            raise JointStateError(m.error)
        pos = _as_array(position)
        dst = m.dst
        # needed joints: all finite or the message is rejected (nothing applied)
        if nv:
            vel = _as_array(velocity)
            if K.merge_measured(pos, vel, m.src, dst, self.q, self.qd, self._times, t) >= 0:
                for what, values in (("position", pos), ("velocity", vel)):
                    self._check_finite(names, values, m, what)
            if self._any_estimated:
                self._estimated[dst] = False
                self._any_estimated = bool(self._estimated.any())
        else:
            vel = None
            if dst.size:
                if not K.gather(pos, m.src, self._q_stage, dst):
                    self._check_finite(names, pos, m, "position")
                self._estimate(dst, t)
                self.q[dst] = self._q_stage[dst]
                self.last_update[dst] = t
        if self.track_effort:
            if ne:
                K.gather(_as_array(effort), m.src, self.effort, dst)
            else:
                self.effort[dst] = np.nan
        if m.src_opt.size:
            K.gather_finite(pos, m.src_opt, self.q, m.dst_opt)
            if vel is not None:
                K.gather_finite(vel, m.src_opt, self.qd, m.dst_opt)
            t_recv = t if received is None else received
            self._received[m.dst_opt] = t_recv
            if self._oldest_fresh == math.inf:
                self._oldest_fresh = t_recv
        self.updated = dst
        return dst.size

    def expire(self, t: float, timeout: float) -> None:
        """Optional joints whose last value was received more than ``timeout`` (s) before ``t`` (s): their
        velocity becomes 0, and a solved joint's position NaN (not measured: the plant computes it)."""
        limit = t - timeout
        if self._oldest_fresh >= limit:
            return
        fresh = np.isfinite(self._received)
        old = fresh & (self._received < limit)
        self.q[old & self._solved] = np.nan
        self.qd[old] = 0.0
        self._received[old] = -math.inf
        rest = self._received[fresh & ~old]
        self._oldest_fresh = float(rest.min()) if rest.size else math.inf

    def _estimate(self, dst, t: float) -> None:
        """qd += alpha (dq/dt - qd), per joint, with alpha from each joint's own sample interval."""
        tau = 1.0 / (2.0 * math.pi * self.velocity_cutoff_hz)
        q_new, q, qd, t_prev = self._q_stage, self.q, self.qd, self._t_vel
        for i in dst:
            tp = t_prev[i]
            if tp != -math.inf and t > tp:
                dt = t - tp
                alpha = dt / (tau + dt)
                qd[i] += alpha * ((q_new[i] - q[i]) / dt - qd[i])
            if t > tp:
                t_prev[i] = t
        self._estimated[dst] = True
        self._any_estimated = True

    @staticmethod
    def _check_finite(names, values, m: _Map, what: str) -> None:
        """Raise JointStateError naming the first needed joint whose ``what`` in ``values`` is not finite."""
        for k in m.src:
            if not math.isfinite(values[k]):
                raise JointStateError("non-finite %s of joint %r" % (what, names[k]))
