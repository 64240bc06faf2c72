"""Warm-up: run every compiled path of the control layer once, before the control loop starts.

numba compiles a kernel on its first call (or loads it from the on-disk cache). A path that the
warm-up misses compiles inside a control cycle and stalls the loop for seconds, so these functions
reach every mode, base, base-velocity source, friction setting, the torque split, the stale-state
hold torque, every trajectory kind (linear, cubic, quintic, hold), the output ramp and the clamp.
They restore the state of the objects they exercise. ``rne_control.compile`` runs them ahead of
time to fill numba's cache; the controller node runs them at start, then watches with
:class:`CompileMonitor` that nothing compiles afterwards.
"""
from __future__ import annotations

import array
from typing import Callable, Optional

import numpy as np

from ..kernel_cache import dispatchers
from . import _kernels as K
from .joint_states import JointStateMapper
from .laws import BASE_VELOCITY_SOURCES, JOINT_MODES, BaseState, ControlLaw
from .task import TASK_MODES
from .limits import EffortLimiter
from .ramp import OffsetRamp
from .trajectory import TrajectoryGenerator


def warm_up_law(law: ControlLaw, base_state: Optional[BaseState] = None, parts: Optional[dict] = None,
                hold_out: Optional[np.ndarray] = None, warn: Optional[Callable[[str], None]] = None,
                stop=None, bases=None) -> None:
    """Call :meth:`ControlLaw.compute`, :meth:`~ControlLaw.split`, the plant's ``extra_state`` and
    :meth:`~ControlLaw.hold_torque` for every base in ``bases`` (default: every base of the plant), base-velocity
    source, joint mode and friction setting, at the plant's reference state. ``warn`` receives a message for a
    base that fails (its error shows again when the base is selected). ``stop`` (e.g. a threading.Event):
    checked between the calls, which may each compile for seconds; KeyboardInterrupt once it is set."""
    plant = law.plant
    q, qd = plant.reference_state()
    z = np.zeros(law.n)
    bs = base_state if base_state is not None else BaseState()
    hold = np.zeros(law.n) if hold_out is None else hold_out
    saved = (law.mode, plant.base, plant.base_state, law.friction, law.base_velocity_source)
    try:
        for base in plant.bases if bases is None else bases:
            sources = BASE_VELOCITY_SOURCES if base == "free_floating" else ("odometry",)
            try:
                law.set_base(base, bs)
                for src in sources:
                    law.base_velocity_source = src
                    for mode in JOINT_MODES:     # the task-space modes: TaskSpace.warm_up
                        law.set_mode(mode)
                        for friction in (False, True):
                            if stop is not None and stop.is_set():
                                raise KeyboardInterrupt
                            law.friction = friction
                            law.compute(q, qd, plant.q.copy(), z, z, 1.0)
                            law.split(q, qd, plant.q.copy(), z, z, 1.0, None, parts)
                    law.hold_torque(hold)
                    plant.extra_state()     # ~/controller_state's extra fields (a platform's twist)
            except Exception as e:  # noqa: BLE001 (reported, and raised again when the base is selected)
                if warn is not None:
                    warn("warm-up of base %r failed: %s" % (base, e))
    finally:
        law.mode, law.friction = saved[0], saved[3]
        plant.set_base(saved[1], saved[2])
        law.base_velocity_source = saved[4]


# The warm-up's groups of kernels: CORE is what a cycle reaches without a parameter change; TASK (the
# task-space modes) and BASES (a floating-base plant's other bases) need one, so a node may start without
# them and load them once a background compiler has put them in the cache (rne_control.compile).
CORE, TASK, BASES = "core", "task", "bases"
GROUPS = (CORE, TASK, BASES)


def deferrable(cycle) -> tuple:
    """The groups ``cycle`` (a ControlCycle) needs only after a parameter change: TASK where the plant has a task
    space and the mode is a joint-space one, BASES where the plant has other bases than the one set."""
    s = cycle.settings
    out = ()
    if cycle.task is not None and s.mode not in TASK_MODES:
        out += (TASK,)
    if len(cycle.plant.bases) > 1:
        out += (BASES,)
    return out


def groups_needed(cycle, settings) -> tuple:
    """The deferrable groups that the Settings ``settings`` need on ``cycle``."""
    out = ()
    if settings.mode in TASK_MODES:
        out += (TASK,)
    if settings.base != cycle.start_base:
        out += (BASES,)
    return out


def cycle_steps(cycle, groups=GROUPS, warn=None, stop=None) -> list:
    """The warm-up of ``cycle`` (a ControlCycle) for ``groups``, as [(label, function)]: every compiled path of
    the law on the bases of the groups (CORE: the one set; BASES: the others), every mode and friction setting,
    the split, the stale hold, the task-space law (TASK), the trajectory kinds, the observer, ramps, clamp and
    the joint-state merge. Each function runs on throwaway objects where they hold state."""
    law, plant = cycle.law, cycle.plant
    steps = []
    if CORE in groups:
        steps.append(("the control law, %s base" % cycle.start_base, lambda: warm_up_law(
            law, cycle.base_state, cycle._parts, cycle._hold_cmd, warn=warn, stop=stop, bases=(cycle.start_base,))))
        if cycle.task is not None and TASK not in deferrable(cycle):
            steps.append(("the task-space law", cycle.task.warm_up))
        steps.append(("the trajectories", lambda: warm_up_trajectory(TrajectoryGenerator(cycle.joints))))
        steps.append(("the momentum observer", cycle.external.warm_up))
        steps.append(("ramps, clamp and the joint-state merge", lambda: (warm_up_output(cycle.n),
                                                                        warm_up_merge(plant, cycle.joints))))
    if TASK in groups and TASK in deferrable(cycle):
        steps.append(("the task-space law", cycle.task.warm_up))
    others = tuple(b for b in plant.bases if b != cycle.start_base)
    if BASES in groups and others:
        steps.append(("the control law, %s bases" % " and ".join(others), lambda: warm_up_law(
            law, cycle.base_state, cycle._parts, cycle._hold_cmd, warn=warn, stop=stop, bases=others)))
    return steps


def run_steps(steps, progress=None, stop=None) -> None:
    """Run ``steps`` ([(label, function)]) in order; ``progress(k, n, label)`` before step k (1..n) and
    ``progress(n, n, None)`` after the last; KeyboardInterrupt between steps once ``stop`` is set."""
    n = len(steps)
    for k, (label, fn) in enumerate(steps, 1):
        if stop is not None and stop.is_set():
            raise KeyboardInterrupt
        if progress is not None:
            progress(k, n, label)
        fn()
    if progress is not None:
        progress(n, n, None)


def warm_up_merge(plant, joints) -> None:
    """The joint-state merge of messages as they carry positions and velocities (or none)."""
    names = list(plant.state_names)
    k = len(names)
    m = JointStateMapper(names, joints, np.zeros(k))
    for t, vel in ((0.0, bytes(8 * k)), (0.01, b""), (0.02, b"")):   # as messages carry them
        m.update(names, array.array("d", bytes(8 * k)), array.array("d", vel), t)


def warm_up_trajectory(traj: TrajectoryGenerator) -> None:
    """Sample a linear, a cubic and a quintic trajectory inside a segment and past its end, then hold
    zero again."""
    n = traj.n
    names = list(traj.joint_names)
    zero = [0.0] * n
    one = [0.1] * n
    for V, A in ((None, None), ([zero, zero], None), ([zero, zero], [zero, zero])):
        traj.reset(np.zeros(n))
        prep = traj.prepare(names, [0.1, 0.2], [one, zero], V, A)
        traj.set_trajectory(prep, 0.0)
        traj.sample(0.05)
        traj.sample(0.15)
        traj.sample(1.0)
        # a trajectory that starts later (pending) and replaces nothing
        traj.set_trajectory(prep, 1.0, 1.5)
        traj.sample(1.6)
    traj.reset(np.zeros(n))
    traj.sample(0.0)


def warm_up_output(n: int) -> None:
    """The output ramp (blend) and the clamp for an n-joint command."""
    K.warm_up()
    tau = np.zeros(n)
    ramp = OffsetRamp(n, 0.5)
    ramp.start_blend(0.0, np.ones(n), tau)
    ramp.apply(0.25, tau)
    EffortLimiter(np.ones(n)).apply(np.full(n, 2.0), out=np.zeros(n))


# the warm-up's progress lines in a node's log (rne_demo reads them while it waits for the nodes)
PROGRESS = "warm-up %d/%d: %s (%.1f s, %d kernels compiled)"
PROGRESS_RE = r"warm-up (\d+)/(\d+): (.*) \(([\d.]+) s, (\d+) kernels compiled\)"
READY = "kernels ready in %.2f s (%d compiled, the rest loaded from numba's cache)"


class WarmUpProgress:
    """The ``progress`` of :func:`run_steps` for a node: logs ``first`` at the start, a :data:`PROGRESS` line
    per step (elapsed seconds, kernels numba compiled so far) and :data:`READY` at the end, through ``log``
    (an object with ``info``)."""

    def __init__(self, log, first: str):
        import time
        self.log, self.first, self._clock = log, first, time.perf_counter
        self.t0 = None
        self.monitor = CompileMonitor()

    def __call__(self, k: int, n: int, label) -> None:
        if self.t0 is None:
            self.t0 = self._clock()
            self.monitor.start()
            self.log.info(self.first)
        t = self._clock() - self.t0
        if label is None:
            self.monitor.stop()
            self.log.info(READY % (t, len(self.monitor.compiles)))
        else:
            self.log.info(PROGRESS % (k, n, label, t, len(self.monitor.compiles)))


def signature_counts(disp=None) -> dict:
    """{qualified name: number of compiled (or cache-loaded) signatures}."""
    return {name: len(d.overloads) for name, d in (dispatchers() if disp is None else disp)}


class CompileMonitor:
    """From :meth:`start` on: the signatures that rne_control's dispatchers gain (compiled or loaded
    from the cache) and numba's compile events (``numba:compile``; a cache load fires none)."""

    def __init__(self):
        self._disp = []
        self._base = {}
        self.compiles = []  # names of the functions numba compiled since start()
        self._listener = None

    def start(self) -> None:
        from numba.core import event

        self._disp = dispatchers()
        self._base = signature_counts(self._disp)
        self.compiles = []
        if self._listener is None:
            monitor = self

            class _Listener(event.Listener):
                def on_start(self, ev):
                    pass

                def on_end(self, ev):
                    d = ev.data.get("dispatcher")
                    f = getattr(d, "py_func", None)
                    monitor.compiles.append("%s.%s" % (f.__module__, f.__qualname__) if f else str(d))

            self._listener = _Listener()
            event.register("numba:compile", self._listener)

    def rebase(self) -> None:
        """Count signatures from now on (after kernels were loaded on purpose, e.g. a background group)."""
        self._base = signature_counts(self._disp)

    def new_signatures(self) -> dict:
        """{name: signatures gained since start()} (non-zero entries only)."""
        now = signature_counts(self._disp)
        return {k: v - self._base.get(k, 0) for k, v in now.items() if v != self._base.get(k, 0)}

    def stop(self) -> None:
        if self._listener is not None:
            from numba.core import event

            event.unregister("numba:compile", self._listener)
            self._listener = None
