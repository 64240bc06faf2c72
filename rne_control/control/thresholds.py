"""``rne_identify thresholds``: per-joint collision thresholds from a recorded free-motion run.

    rne_identify thresholds RECORD.npz --model MODEL [--joints j1 j2 ...] [--gain 50] [--margin 1.5]
        [--floor-fraction 0.02] [--torque-source commanded|measured] [--node rne_controller]
        [--out params.yaml] [--cutoff 10] [--no-friction] [--driver-adds-gravity]

A free-motion run has no external force, so the momentum observer's residual r on it
(:class:`~rne_control.control.observer.MomentumObserver`) is what the model gets wrong: inertial
parameters, friction, payload, the torque the driver actually applies. The record is replayed through the
observer sample by sample, and each controlled joint i gets

    threshold_i = max(margin * max_k |r_i,k|, floor_fraction * effort_limit_i)

(N m or N): above what free motion produced, with a margin, and never below a floor that keeps noise and
an unexcited joint from making it hair-trigger. A joint with no finite effort limit has no floor: it gets
margin * max |r| and a warning.

Replay (record keys: rne_control.identification.record):

* velocities: the record's ``qd`` when it is finite throughout; otherwise (absent, or NaN anywhere: a
  driver that publishes none, or none for some joints) q differentiated for every joint as ``rne_identify
  fit`` does (rne_control.identification.differentiate: a zero-phase Butterworth low-pass at ``cutoff``
  Hz and central differences on a uniform grid at the median sample interval, interpolated back onto the
  record's stamps). Not a mix: the momentum M(q) qd of filtered and unfiltered velocities together is
  inconsistent where the motion has sharp features (friction reversals), and a recorded velocity replaced
  for one sample makes a residual spike of K_O times its momentum error (on a simulated arm, half the joints
  differentiated put max|r| up to 7 % off, all of them 2.5 %). The filter has no delay, and a free-motion
  run's velocity lies far below its cut-off, but it removes the noise that an observer fed with
  differentiated velocities online would see: record the driver's velocities where it publishes them.
  Near the record's ends lies the zero-phase filter's start-up transient (scipy's filtfilt pads only a
  few samples): on a simulated arm the velocities were off by up to the velocity itself in the last
  0.1 s and within 2.5 % from 0.2 s = 2 / cutoff on, so the replay then leaves out 2 / cutoff seconds at
  each end.
* torques: ``commanded`` (default): ``tau_commanded``, or ``tau`` when ``effort_source`` is commanded;
  ``measured``: ``tau_measured``, or ``tau`` when ``effort_source`` is measured. The torque in force over
  [t_{k-1}, t_k] is the one recorded at sample k, as ``rne_identify run`` records it (with each joint state
  the last command received before it: in lockstep the one that answered state k-1) and as a driver
  measures it (rne_control's ``rne_sim`` reports the torque it applied over the step that led to the
  state). With ``driver_adds_gravity`` the commanded efforts are what the controller sent to a driver that
  adds g(q) itself, so g(q_{k-1}) (the model's gravity at the state the command answered) is added back.
  Only the controlled joints' torques are read: joint i's residual depends on joint i's torque
  alone (and on every joint's q and qd), so an uncontrolled joint's residual, which is not used, is fed zero.
* the observer's transient: the first 5 / K_O seconds after the first replayed sample are left out of the
  maximum: r starts at 0, and what it has not yet caught up with of the model error at the start decays
  as exp(-K_O t), to e^-5 < 1 % after 5 / K_O.

The model is loaded as ``rne_identify fit`` loads it (URDF, DH-YAML or URDF sidecar). The controlled
joints are ``joints`` (any of the model's actuated joints, in the order the thresholds are to be
given), by default the actuated ones in the model's order (``model.active_joint_names``: not a ``<mimic>``
follower, a loop's passive joint or an elastic joint), as ``rne_controller``'s plant picks them. The
record must hold every joint of the model (uncontrolled joints move the controlled ones' dynamics); a
record of the controlled joints only (``rne_identify run`` with the controller's ``joints``) is replayed
on the model reduced to them, as ``rne_identify run`` loads it: its other joints locked at 0 (a note on
stderr says so).

This module sits in the control layer, not in rne_control.identification beside ``fit``, because the
observer does (identification lies below control); the ``rne_identify`` console script dispatches to it.

Output: a ROS 2 parameter file for ``node`` (``collision.thresholds``, nested as ROS 2 writes a dotted
name) with a comment header (record, model, gain, margin, floor and per joint max |r|, threshold and the
rule that set it), on stdout and in ``out``; a table on stderr. Exit status 0, or 2 for bad input (the
message names the key, joint or option).
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..dynamics import gravity_torques
from ..identification.differentiate import differentiate
from ..identification.record import load_record
from ..model import load_model
from ..model.errors import InputError
from .limits import model_limits
from .observer import MomentumObserver

TORQUE_SOURCES = ("commanded", "measured")
TRANSIENT = 5.0   # observer time constants (1/K_O) left out at the start
EDGE = 2.0        # periods of the cut-off left out at each end of differentiated velocities


@dataclass
class Thresholds:
    """The result of :func:`collision_thresholds` (controlled-joint order)."""

    joints: list
    max_residual: np.ndarray     # max_k |r_i,k| after the transient (N m, N)
    thresholds: np.ndarray       # (N m, N)
    floors: np.ndarray           # floor_fraction * effort limit (NaN where the limit is not finite)
    rules: list                  # "margin", "floor" or "margin, no effort limit"
    gain: float
    margin: float
    floor_fraction: float
    torque_key: str              # the record key the torques came from
    velocity: str                # where the velocities came from
    t_skip: float                # s left out at the start (5 / K_O)
    samples: int                 # replayed samples
    used: int                    # samples after the transient
    duration: float              # s replayed
    warnings: list = field(default_factory=list)

    def header(self, record_path, model_path, friction=True, driver_adds_gravity=False):
        """The parameter file's comment lines (without the trailing newline)."""
        lines = [
            "collision thresholds from a free-motion run (rne_identify thresholds)",
            f"record: {record_path} ({self.samples} samples over {self.duration:.6g} s; torque "
            f"'{self.torque_key}'{' + g(q): the driver adds gravity' if driver_adds_gravity else ''}; "
            f"velocity: {self.velocity})",
            f"model: {model_path}",
            f"observer gain K_O: {self.gain:g} 1/s (friction {'on' if friction else 'off'}); the first "
            f"{self.t_skip:.6g} s (5/K_O) left out, {self.used} samples after it",
            f"margin: {self.margin:g}; floor: {100.0 * self.floor_fraction:g} % of the effort limit",
            "threshold = max(margin * max|r|, floor)  [N m, or N for a prismatic joint]",
            f"{'joint':<24} {'max|r|':>12} {'floor':>12} {'threshold':>12}  rule",
        ]
        for j, r, f, th, rule in zip(self.joints, self.max_residual, self.floors, self.thresholds, self.rules):
            lines.append(f"{j:<24} {r:12.6g} {_fmt_floor(f):>12} {th:12.6g}  {rule}")
        return ["# " + s for s in lines]

    def params_yaml(self, node="rne_controller", header=()):
        """The ROS 2 parameter file (str): ``node: ros__parameters: collision: thresholds: [...]``."""
        values = ", ".join(yaml_float(x) for x in self.thresholds)
        body = [f"{node}:", "  ros__parameters:", "    collision:", f"      thresholds: [{values}]"]
        return "\n".join(list(header) + body) + "\n"

    def table(self):
        """A human-readable table (str)."""
        rows = [f"{'joint':<24} {'max|r|':>12} {'x margin':>12} {'floor':>12} {'threshold':>12}  rule"]
        for j, r, f, th, rule in zip(self.joints, self.max_residual, self.floors, self.thresholds, self.rules):
            rows.append(f"{j:<24} {r:12.4g} {self.margin * r:12.4g} {_fmt_floor(f):>12} {th:12.4g}  {rule}")
        return "\n".join(rows)


def _fmt_floor(f):
    return "-" if not math.isfinite(f) else f"{f:.6g}"


def yaml_float(x):
    """``x`` with 6 significant digits, always written as a float (a '.' in the mantissa): ROS 2's parameter
    parser takes ``12`` for an integer, and an array mixing integers and doubles is refused."""
    s = f"{float(x):.6g}"
    if s in ("inf", "-inf", "nan"):
        return {"inf": ".inf", "-inf": "-.inf", "nan": ".nan"}[s]
    mant, e, exp = s.partition("e")
    if "." not in mant:
        mant += ".0"
    return mant + e + exp


def controlled_joints(model, joints=None):
    """``joints`` checked against the model's actuated joints (default: all of them, the model's order).
    InputError names an unknown, repeated or unactuated joint."""
    actuated = list(model.active_joint_names)
    if not joints:
        return actuated
    joints = list(joints)
    bad = [j for j in joints if j not in model.joint_names]
    if bad:
        raise InputError(f"joint(s) {bad} are not joints of model '{model.name}' (its actuated joints: {actuated})")
    twice = sorted({j for j in joints if joints.count(j) > 1})
    if twice:
        raise InputError(f"--joints lists joint(s) {twice} more than once")
    bad = [j for j in joints if j not in actuated]
    if bad:
        raise InputError(f"joint(s) {bad} of model '{model.name}' have no actuator of their own (mimic, loop-passive "
                         f"or elastic joints): no collision threshold; its actuated joints: {actuated}")
    return joints


def _check_settings(gain, margin, floor_fraction, torque_source, driver_adds_gravity, cutoff):
    if not (math.isfinite(gain) and gain > 0):
        raise InputError(f"--gain must be > 0 and finite (got {gain!r} 1/s)")
    if not (math.isfinite(margin) and margin >= 1.0):
        raise InputError(f"--margin must be >= 1 (got {margin!r}): a threshold below the free-motion residual "
                         f"would detect collisions in free motion")
    if not (math.isfinite(floor_fraction) and floor_fraction >= 0.0):
        raise InputError(f"--floor-fraction must be >= 0 and finite (got {floor_fraction!r})")
    if not (math.isfinite(cutoff) and cutoff > 0):
        raise InputError(f"--cutoff must be > 0 Hz (got {cutoff!r})")
    if torque_source not in TORQUE_SOURCES:
        raise InputError(f"--torque-source must be one of {TORQUE_SOURCES} (got {torque_source!r})")
    if driver_adds_gravity and torque_source != "commanded":
        raise InputError("--driver-adds-gravity applies to commanded efforts (--torque-source commanded)")


def _torques(rec, source, ctrl, names):
    """(the record key, its (N, n) array) for ``source``; InputError naming the key when absent or non-finite
    on a controlled joint (the last sample's torque is never in force and is not checked)."""
    key = "tau_" + source
    a = getattr(rec, key)
    if a is None:
        if rec.effort_source != source:
            raise InputError(f"the record has no '{key}' (its 'tau' is the {rec.effort_source} effort): "
                             f"record the {source} efforts, or choose --torque-source {rec.effort_source}")
        key, a = "tau", rec.tau
    sub = a[:-1, ctrl]
    bad = np.argwhere(~np.isfinite(sub))
    if len(bad):
        k, c = bad[0]
        fallback = ("" if key == "tau" or rec.effort_source != source
                    else f"; its 'tau' ({rec.effort_source}) may serve: remove '{key}' or choose the other source")
        raise InputError(f"the record's '{key}' is NaN or inf for joint '{names[ctrl[c]]}' (sample {k} of "
                         f"{len(a)}, {int((~np.isfinite(sub)).sum())} values in all){fallback}")
    return key, np.array(a, dtype=float)


def collision_thresholds(model, rec, joints=None, gain=50.0, margin=1.5, floor_fraction=0.02,
                         torque_source="commanded", friction=True, driver_adds_gravity=False, cutoff=10.0):
    """Per-joint collision thresholds of ``model`` from ``rec`` (a Record loaded with ``model``, columns in
    ``model.joint_names`` order): see the module docstring. InputError (a ValueError) names what is wrong."""
    gain, margin, floor_fraction, cutoff = float(gain), float(margin), float(floor_fraction), float(cutoff)
    _check_settings(gain, margin, floor_fraction, torque_source, driver_adds_gravity, cutoff)
    if getattr(model, "legs", None) is not None:
        raise InputError(f"model '{model.name}' is a parallel platform: the momentum observer needs a tree")
    if model.floating_base:
        raise InputError(f"model '{model.name}' has a floating base: the momentum observer needs a fixed base")
    joints = controlled_joints(model, joints)
    names = list(model.joint_names)
    ctrl = np.array([names.index(j) for j in joints], dtype=np.int64)

    t = np.asarray(rec.t, dtype=float)
    if t.ndim != 1 or len(t) < 2:
        raise InputError(f"the record's 't' must hold at least 2 time stamps (got shape {t.shape})")
    if not np.all(np.isfinite(t)):
        raise InputError(f"the record's 't' contains NaN or inf (sample {int(np.argmax(~np.isfinite(t)))})")
    dts = np.diff(t)
    if not np.all(dts > 0):
        k = int(np.argmax(~(dts > 0)))
        raise InputError(f"the record's 't' must be strictly increasing (t[{k + 1}] = {t[k + 1]!r} after "
                         f"t[{k}] = {t[k]!r})")
    T = float(dts.max())
    if gain * T >= 1.0:
        k = int(np.argmax(dts))
        raise InputError(f"--gain {gain:g} 1/s times the record's largest sample interval {T:.6g} s (after "
                         f"t[{k}] = {t[k]:.6g} s) is {gain * T:.3g} >= 1: the discrete observer needs K_O T < 1; "
                         f"give a gain below {1.0 / T:.6g} 1/s")
    q = np.asarray(rec.q, dtype=float)
    bad = np.argwhere(~np.isfinite(q))
    if len(bad):
        raise InputError(f"the record's 'q' is NaN or inf for joint '{names[bad[0][1]]}' (sample {bad[0][0]})")
    key, tau = _torques(rec, torque_source, ctrl, names)

    keep = slice(None)
    if rec.qd is not None and np.all(np.isfinite(rec.qd)):
        qd, velocity = np.array(rec.qd, dtype=float), "recorded 'qd'"
    else:
        tg, _, qdg, _, _ = differentiate(t, q, np.zeros_like(q), cutoff)
        qd = np.column_stack([np.interp(t, tg, qdg[:, c]) for c in range(q.shape[1])])
        edge = EDGE / cutoff
        inside = np.flatnonzero((t >= tg[0] + edge - 1e-12) & (t <= tg[-1] - edge + 1e-12))
        if len(inside) < 2:
            raise InputError(f"the record lasts {t[-1] - t[0]:.6g} s: too short to replay with differentiated "
                             f"velocities, which leave out {edge:.6g} s (2/cutoff) at each end")
        keep = slice(int(inside[0]), int(inside[-1]) + 1)
        why = ("the record has no 'qd'" if rec.qd is None else
               f"the record's 'qd' is NaN or inf in {int((~np.isfinite(rec.qd)).any(axis=0).sum())} of "
               f"{q.shape[1]} joints")
        velocity = (f"q differentiated ({why}; Butterworth {cutoff:g} Hz, central differences; {edge:.6g} s left "
                    f"out at each end)")
    t, q, qd, tau = t[keep], q[keep], qd[keep], tau[keep]
    if len(t) < 2:
        raise InputError("too few samples left to replay after differentiating q")

    applied = np.zeros_like(tau)
    applied[:, ctrl] = tau[:, ctrl]
    if driver_adds_gravity:
        g = gravity_torques(model, np.ascontiguousarray(q))[:, ctrl]
        applied[1:, ctrl] += g[:-1]
        applied[0, ctrl] += g[0]

    t_skip = TRANSIENT / gain
    start = t[0] + t_skip
    if t[-1] < start:
        raise InputError(f"the record lasts {t[-1] - t[0]:.6g} s: nothing is left after the observer's transient "
                         f"of 5/K_O = {t_skip:.6g} s (--gain {gain:g} 1/s); record longer or raise the gain")
    obs = MomentumObserver(model, gain, friction=friction)
    peak = np.zeros(len(joints))
    used = 0
    for k in range(len(t)):
        r = obs.update(t[k], q[k], qd[k], applied[k])
        if t[k] >= start:
            np.maximum(peak, np.abs(r[ctrl]), out=peak)
            used += 1

    limits = model_limits(model.effort_limits)[ctrl]
    floors = np.where(np.isfinite(limits), floor_fraction * limits, np.nan)
    thresholds, rules, notes = np.empty(len(joints)), [], []
    for i, j in enumerate(joints):
        scaled = margin * peak[i]
        if math.isfinite(floors[i]):
            thresholds[i] = max(scaled, floors[i])
            rules.append("margin" if scaled >= floors[i] else "floor")
        else:
            thresholds[i] = scaled
            rules.append("margin, no effort limit")
            notes.append(f"joint '{j}' has no finite effort limit: its threshold is margin * max|r| = {scaled:.6g} "
                         f"alone, with no floor")
        if not (math.isfinite(thresholds[i]) and thresholds[i] > 0):
            fix = ("record a run that moves it, or give it a finite effort limit" if not math.isfinite(floors[i])
                   else "give a --floor-fraction > 0")
            raise InputError(f"joint '{j}': the threshold would be {thresholds[i]!r} (max|r| {peak[i]!r}, floor "
                             f"{_fmt_floor(floors[i])}); a threshold must be > 0: {fix}")
    return Thresholds(joints=joints, max_residual=peak, thresholds=thresholds, floors=floors, rules=rules,
                      gain=gain, margin=margin, floor_fraction=floor_fraction, torque_key=key, velocity=velocity,
                      t_skip=t_skip, samples=len(t), used=used, duration=float(t[-1] - t[0]), warnings=notes)


def load(record_path, model_path, joints=None):
    """(model, record) for a record file and a model file; a record that lacks uncontrolled joints of the
    model gets the model reduced to ``joints`` (as ``rne_identify run`` loads it), with a note on stderr."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # published inertias that break the triangle inequality
        model = load_model(model_path)
    controlled = controlled_joints(model, joints)
    names = load_record(record_path).names
    absent = [j for j in model.joint_names if j not in names]
    if absent and joints and not any(j in absent for j in controlled):
        print(f"rne_identify thresholds: note: the record has no data for joint(s) {absent}; the model is reduced "
              f"to the controlled joints {controlled} with the others locked at 0, as rne_identify run loads it",
              file=sys.stderr)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = load_model(model_path, joints=controlled)
    return model, load_record(record_path, model)


def parser():
    p = argparse.ArgumentParser(
        prog="rne_identify thresholds",
        description="Per-joint collision thresholds (collision.thresholds) from a recorded free-motion run: "
                    "the momentum observer's max |r| times a margin, at least a floor of the effort limit.")
    p.add_argument("record", help="the record of a free-motion run (.npz, rne_control.identification.record)")
    p.add_argument("--model", required=True, help="the controller's model file (URDF, DH-YAML or URDF sidecar)")
    p.add_argument("--joints", nargs="+", metavar="JOINT",
                   help="the controlled joints, in the controller's order (default: the model's actuated joints)")
    p.add_argument("--gain", type=float, default=50.0, help="observer gain K_O, 1/s (default 50)")
    p.add_argument("--margin", type=float, default=1.5, help="threshold = margin x max |r| (>= 1; default 1.5)")
    p.add_argument("--floor-fraction", type=float, default=0.02,
                   help="the threshold's floor as a fraction of the joint's effort limit (>= 0; default 0.02)")
    p.add_argument("--torque-source", choices=TORQUE_SOURCES, default="commanded",
                   help="the record's efforts to replay (default commanded)")
    p.add_argument("--node", default="rne_controller", help="the node of the parameter file (default rne_controller)")
    p.add_argument("--out", help="also write the parameter file here")
    p.add_argument("--cutoff", type=float, default=10.0,
                   help="Butterworth cut-off, Hz, for velocities differentiated from q where the record has none "
                        "(default 10, as fit)")
    p.add_argument("--no-friction", action="store_true", help="the observer leaves out the model's friction")
    p.add_argument("--driver-adds-gravity", action="store_true",
                   help="the commanded efforts omit g(q), which the driver adds: add it back")
    return p


def main(argv=None):
    """The subcommand's arguments (after ``thresholds``); returns the exit status."""
    args = parser().parse_args(argv)
    try:
        model, rec = load(args.record, args.model, args.joints)
        res = collision_thresholds(model, rec, args.joints, args.gain, args.margin, args.floor_fraction,
                                   args.torque_source, not args.no_friction, args.driver_adds_gravity, args.cutoff)
        text = res.params_yaml(args.node, res.header(args.record, args.model, not args.no_friction,
                                                     args.driver_adds_gravity))
        if args.out:
            d = os.path.dirname(os.path.abspath(args.out))
            os.makedirs(d, exist_ok=True)
            with open(args.out, "w") as f:
                f.write(text)
    except (ValueError, OSError) as exc:  # InputError, ModelError, ObserverError; an unwritable --out
        print(f"rne_identify thresholds: {exc}", file=sys.stderr)
        return 2
    for note in res.warnings:
        print(f"rne_identify thresholds: warning: {note}", file=sys.stderr)
    print(f"rne_identify thresholds: {args.record}: {res.samples} samples, torque '{res.torque_key}', velocity "
          f"{res.velocity}; K_O {res.gain:g} 1/s, first {res.t_skip:.6g} s left out", file=sys.stderr)
    print(res.table(), file=sys.stderr)
    if args.out:
        print(f"rne_identify thresholds: wrote {args.out}", file=sys.stderr)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
