"""Gravity and payload changed at run time, shared by :class:`~rne_control.model.Model` and
:class:`~rne_control.model.parallel.ParallelModel`.

A model keeps its own inertial parameters ``_params`` and rebuilds its kernel arrays from them, the
payload and the gravity vector (``_rebuild``); the new arrays replace the old ones as one reference
under the model's lock, so a dynamics call sees the old or the new parameters, never a mixture.
"""
import warnings

import numpy as np

from .errors import ModelError
from .spatial import body_params, check_inertia, inertia_matrix


class RunTimeSwaps:
    """``set_gravity``, ``set_payload``, ``clear_payload`` and ``payload``. A model class provides
    ``_params``, ``_lock``, ``_payload``, ``gravity``, ``_rebuild(params, gravity)`` (build and install
    the kernel arrays) and ``_with_payload(link, params10)`` (its own parameters with the payload's
    10-vector, about the link frame's origin, added; a ModelError for an unknown link)."""

    def set_gravity(self, gravity):
        """Change the model's gravity vector (m/s^2; base frame, for a floating base the world frame) at run
        time (atomic swap)."""
        g = np.asarray(gravity, float).reshape(-1)
        if g.shape != (3,) or not np.isfinite(g).all():
            raise ModelError(f"gravity must be 3 finite numbers, got {np.asarray(gravity).tolist()}")
        with self._lock:
            self._rebuild(self._params if self._payload is None else self._payload_params, g)

    @property
    def payload(self):
        """The current payload as (link, mass, com, inertia6), or None."""
        return self._payload

    def set_payload(self, link, mass, com=(0.0, 0.0, 0.0), inertia=(0.0, 0.0, 0.0, 0.0, 0.0, 0.0)):
        """Attach a rigid payload to ``link``, replacing any previous one, without rebuilding the model.

        ``mass`` (kg); ``com`` (m) in the link frame; ``inertia`` = [ixx, iyy, izz, ixy, ixz, iyz] (kg m^2)
        about the payload's COM in link-frame axes. The swap is atomic: concurrent dynamics calls see the
        old or the new parameters, never a mixture.
        """
        com = np.asarray(com, float).reshape(-1)
        inertia = np.asarray(inertia, float).reshape(-1)
        if com.shape != (3,):
            raise ModelError(f"payload com must have 3 elements, got {com.shape[0]}")
        if inertia.shape != (6,):
            raise ModelError(f"payload inertia must have 6 elements [ixx, iyy, izz, ixy, ixz, iyz], got {inertia.shape[0]}")
        if not np.isfinite(com).all():
            raise ModelError("payload com must be finite")
        I_com = inertia_matrix(*inertia)
        params = self._with_payload(link, body_params(float(mass), com, I_com))   # checks the link first
        msg = check_inertia(float(mass), I_com, f"payload on link '{link}'")
        if msg:
            warnings.warn(msg, stacklevel=2)
        with self._lock:
            self._rebuild(params, self.gravity)
            self._payload = (link, float(mass), tuple(com), tuple(inertia))
            self._payload_params = params

    def clear_payload(self):
        """Remove the payload (atomic swap back to the model's own parameters)."""
        with self._lock:
            self._rebuild(self._params, self.gravity)
            self._payload = None
