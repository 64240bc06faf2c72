"""A demo run: its processes and node (:class:`Session`), its log, and the runs it compares (:func:`phase`)."""
from __future__ import annotations

import time

import numpy as np

from ...control.profiles import min_jerk
from .motions import pose_coordinates, task_coordinates


def log(msg):
    """Print ``msg`` as rne_demo's progress (stdout, flushed)."""
    print(f"[rne_demo] {msg}", flush=True)


class Session:
    """A demo run's processes (``procs``, newest last) and node (``dn``): ``with Session() as s:`` turns
    Ctrl-C into exit code 130 and an error into a logged 1 (``s.code``), and on leaving shuts the node down
    and stops the processes, logging one that exits non-zero after an otherwise clean run."""

    def __init__(self):
        self.procs, self.dn, self.code = [], None, 0

    def __enter__(self):
        return self

    def __exit__(self, typ, exc, tb):
        handled = typ is not None and issubclass(typ, (KeyboardInterrupt, Exception))
        if typ is KeyboardInterrupt:
            self.code = 130
        elif handled:
            log(f"error: {exc}")
            self.code = 1
        if self.dn is not None:
            self.dn.shutdown()
        self.stop_processes()
        return handled

    def stop_processes(self):
        """Stop the processes, newest first, logging one that exits non-zero while the run is clean."""
        for p in reversed(self.procs):
            rc_ = p.stop()
            if rc_ not in (0, None) and self.code == 0:
                log(f"{p.name} exited with {rc_}")
        self.procs.clear()


def return_to(dn, q_goal, T=2.0):
    """Move the robot from where it is to ``q_goal`` by a min-jerk of ``T`` s, and wait until it is there."""
    q_now = dn.last_state[1].copy()
    start = dn.now() + 0.2
    dn.send(lambda t: min_jerk(t, T, q_now, q_goal), T, start)
    while dn.now() < start + T + 0.5:
        time.sleep(0.05)


def phase(dn, label, f, T, lead=0.3, tail=0.5, task=None):
    """One run: send the motion f (joint space; with ``task`` = (model, home): a platform motion), record
    it, and return the measured and desired coordinates (joints, or the platform pose) and the error."""
    with dn.lock:
        dn.states, dn.odom = [], []
        dn.recording = True
    start = dn.now() + lead
    if task:
        dn.send_platform(f, T, start)
    else:
        dn.send(f, T, start)
    log(f"{label}: trajectory of {T:.1f} s sent")
    end = start + T + tail
    while dn.now() < end:
        time.sleep(0.05)
    with dn.lock:
        dn.recording = False
        states, odom = list(dn.states), list(dn.odom)
    states = [s for s in states if start <= s[0] <= end]
    if len(states) < 10:
        raise RuntimeError(f"{label}: only {len(states)} joint states recorded")
    t = np.array([s[0] for s in states]) - start
    q = np.array([s[1] for s in states])
    if task:
        model, home = task
        q = task_coordinates(model, home, q)
        qdes = pose_coordinates(home, [f(x)[0] for x in t])
    else:
        qdes = np.array([f(x)[0] for x in t])
    res = dict(label=label, t=t, q=q, qd=qdes, err=q - qdes, extra=np.array([s[3] for s in states]),
               tau=np.array([s[4] for s in states]), t_stamp=t + start)
    if odom:
        p = np.array([o[1] for o in odom if start <= o[0] <= end] or [odom[0][1]])
        quat = np.array([o[2] for o in odom if start <= o[0] <= end] or [odom[0][2]])
        dots = np.minimum(1.0, np.abs(quat @ quat[0]))
        ang = 2.0 * np.arccos(dots)
        dist = np.linalg.norm(p - p[0], axis=1)
        # (end drift, max excursion) of position and attitude: an out-and-back joint path retraced
        # exactly returns a zero-momentum base to its start pose, so the excursion matters too
        res["base_drift"] = (float(dist[-1]), float(ang[-1]), float(dist.max()), float(ang.max()))
    return res


def phase_once_fresh(dn, label, f, T, q0, task):
    """phase, run again once if a joint state came late during it: the controller then went stale, held
    the measured position and dropped the trajectory (a hiccup of the machine the demo shares, not of the
    law under test), so the run says nothing about tracking. The robot is brought back to ``q0`` first."""
    before = dn.stale_events()
    res = phase(dn, label, f, T, task=task)
    after = dn.stale_events()
    if before is None or after is None or after == before:
        return res
    log(f"{label}: {after - before} stale joint state(s) during the run (a late state from the machine, not "
        "the law): returning to the start and running it again")
    return_to(dn, q0, 1.5)
    return phase(dn, label, f, T, task=task)
