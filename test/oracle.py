"""Pinocchio as an independent test oracle (test-only: rne_control never imports it).

Pinocchio orders joints depth-first and gives continuous joints two q entries (cos, sin); this maps
between its vectors and ours by joint name.
"""
import sysconfig
from pathlib import Path

import numpy as np
import pinocchio as pin

ROBOTS = Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix" / "share" / "example-robot-data" / "robots"
ROOT = Path(__file__).parents[1]


def erd(rel):
    """Path of a URDF shipped by the example-robot-data wheel."""
    path = ROBOTS / rel
    assert path.is_file(), path
    return str(path)


class Oracle:
    """Pinocchio's model of the URDF at ``path``, its vectors mapped to ``model``'s joints by name.
    ``weld``: {joint: position (rad or m)} of joints to lock (Pinocchio's ``buildReducedModel``)."""

    def __init__(self, path, model, floating=False, weld=None):
        self.pm = (pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer()) if floating
                   else pin.buildModelFromUrdf(str(path)))
        if weld:
            q = pin.neutral(self.pm)
            for name, value in weld.items():
                j = self.pm.joints[self.pm.getJointId(name)]
                q[j.idx_q:j.idx_q + j.nq] = (np.cos(value), np.sin(value)) if j.nq == 2 else value
            self.pm = pin.buildReducedModel(self.pm, [self.pm.getJointId(name) for name in weld], q)
        self.pd = self.pm.createData()
        self.model = model
        self.iq, self.iv, self.cont = [], [], []
        for name in model.joint_names:
            jid = self.pm.getJointId(name)
            j = self.pm.joints[jid]
            self.iq.append(j.idx_q)
            self.iv.append(j.idx_v)
            self.cont.append(j.nq == 2)
        self.iv = np.array(self.iv)

    def q(self, q):
        out = pin.neutral(self.pm)
        for k, (i, c) in enumerate(zip(self.iq, self.cont)):
            if c:
                out[i], out[i + 1] = np.cos(q[k]), np.sin(q[k])
            else:
                out[i] = q[k]
        return out

    def v(self, x):
        out = np.zeros(self.pm.nv)
        out[self.iv] = x
        return out

    def rnea(self, q, qd, qdd, fext=None):
        args = (self.pm, self.pd, self.q(q), self.v(qd), self.v(qdd))
        return (pin.rnea(*args, fext) if fext is not None else pin.rnea(*args))[self.iv]

    def gravity(self, q):
        return pin.computeGeneralizedGravity(self.pm, self.pd, self.q(q))[self.iv]

    def coriolis(self, q, qd):
        qq = self.q(q)
        return (pin.nonLinearEffects(self.pm, self.pd, qq, self.v(qd))
                - pin.computeGeneralizedGravity(self.pm, self.pd, qq))[self.iv]

    def mass_matrix(self, q):
        H = pin.crba(self.pm, self.pd, self.q(q))
        H = np.triu(H) + np.triu(H, 1).T
        return H[np.ix_(self.iv, self.iv)]

    def aba(self, q, qd, tau):
        return pin.aba(self.pm, self.pd, self.q(q), self.v(qd), self.v(tau))[self.iv]


def rel_err(a, b):
    """Largest deviation relative to the largest magnitude of the reference b."""
    a, b = np.asarray(a), np.asarray(b)
    return float(np.max(np.abs(a - b)) / max(1e-12, float(np.max(np.abs(b)))))
