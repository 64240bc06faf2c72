"""The kernels a controller starts without: compiled by a background process, loaded by a thread.

A node compiles (or loads) before its first command the warm-up's CORE group: every path its cycle reaches
without a parameter change (:mod:`rne_control.control.warmup`). The deferrable groups (the task-space modes,
a floating-base plant's other bases), unless numba's cache already holds them (the manifest of
``rne_compile``, :func:`rne_control.kernel_cache.read_manifest`), are compiled after the first command by
``rne_compile --background`` in a process of its own: at idle priority, off the control thread's CPUs, one per
cache directory, dying with the node. A thread of this class, never the executor's, waits for it and loads
what it recorded (:func:`rne_control.kernel_cache.load_group`: about 1 ms per signature, nothing compiled),
then marks the groups ready on the cycle, whose parameter changes that need them wait until then
(:meth:`ControlCycle.request`). Should the compile fail, the groups are marked failed with the reason and a
change that needs them is refused.

``RNE_CONTROL_BACKGROUND_COMPILE=0`` turns this off: the node then warms up every group before its first command.
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from typing import Callable, Optional

from ..kernel_cache import load_group, read_manifest
from .warmup import deferrable

ENV = "RNE_CONTROL_BACKGROUND_COMPILE"
LOAD_SWITCH_INTERVAL = 0.0005   # s: Python's thread switch interval while a group loads


def enabled() -> bool:
    """Background compiling is on unless RNE_CONTROL_BACKGROUND_COMPILE is "0"."""
    return os.environ.get(ENV, "1") != "0"


def split_groups(cycle) -> tuple:
    """(now, later): the deferrable groups of ``cycle`` that the cache holds (loaded at start with the core),
    and those to compile in the background (none when background compiling is off: all are warmed up now)."""
    groups = deferrable(cycle)
    if not enabled():
        return groups, ()
    held = read_manifest()
    return tuple(g for g in groups if g in held), tuple(g for g in groups if g not in held)


def start_prefetch(cycle, log):
    """A tree plant's controller starting on a cache without its start-up kernels: start a second process that
    compiles them in the reverse order of the warm-up (``rne_compile --prefetch``), so that the two cores share
    the cold start. Returns the process, or None (a warm cache, another kind of plant, or background compiling
    off)."""
    plant = cycle.plant
    kernel = getattr(plant, "fused_kernel", None)
    if not enabled() or kernel is None or plant.base != "fixed":
        return None
    from ..dynamics.frame_api import KERNELS as FRAMES
    frames, sig = FRAMES["frames"]
    if frames.signatures or (frames._cache is not None and frames._cache.load_overload(sig, frames.targetctx)):
        return None
    names = ["rne_control.control.tree_state.rest_ready", _name(kernel), "rne_control.dynamics.gravity.gravity_one",
             "rne_control.dynamics.rnea.rnea_one"]
    if cycle.external.observer is not None:
        names += ["rne_control.control._observer.observer_update_one", "rne_control.dynamics.frames.frame_many"]
    p = subprocess.Popen([sys.executable, "-m", "rne_control.compile", "--prefetch", ",".join(reversed(names))],
                         env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    log.info("numba's cache lacks the start-up kernels: a second process (pid %d) compiles them from the other end"
             % p.pid)
    return p


def _name(d) -> str:
    return "%s.%s" % (d.py_func.__module__, d.py_func.__qualname__)


def _env() -> dict:
    """This process's environment, with the folder holding rne_control first on PYTHONPATH (the child imports
    the same package)."""
    env = dict(os.environ)
    pkg_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = os.pathsep.join([pkg_root] + [p for p in [env.get("PYTHONPATH")] if p])
    return env


class BackgroundKernels:
    """Compiles ``groups`` in the background and loads them into this process for ``cycle`` (see the module
    docstring). ``log``: an object with ``info`` and ``error``; ``avoid_cpus``: the control thread's CPUs;
    ``on_loaded(group)``: called from the loading thread after each group is loaded."""

    def __init__(self, cycle, groups, log, avoid_cpus=(), on_loaded: Optional[Callable[[str], None]] = None):
        self.cycle, self.groups, self.log = cycle, tuple(groups), log
        self.avoid_cpus, self.on_loaded = tuple(avoid_cpus), on_loaded
        self.pending = list(self.groups)      # not loaded yet (read by diagnostics)
        cycle.pending_groups.update(self.groups)
        self.process = None
        self._stop = threading.Event()
        self._thread = None

    def start(self) -> None:
        cmd = [sys.executable, "-m", "rne_control.compile", "--background", "--groups", ",".join(self.groups)]
        if self.avoid_cpus:
            cmd.append("--avoid-cpus=%s" % ",".join(map(str, self.avoid_cpus)))
        self.t0 = time.monotonic()
        self.process = subprocess.Popen(cmd, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.log.info("compiling the kernels of %s in the background (pid %d): the modes that need them wait "
                      "until they are loaded" % (" and ".join(self.groups), self.process.pid))
        self._thread = threading.Thread(target=self._run, name="rne_kernels", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the background compiler (the node is shutting down)."""
        self._stop.set()
        p = self.process
        if p is not None and p.poll() is None:
            p.kill()
            p.wait()

    def _run(self) -> None:
        p = self.process
        while p.poll() is None:
            if self._stop.wait(0.25):
                return
            self._load(read_manifest(), final=False)
        err = p.stderr.read() if p.stderr else ""
        self._load(read_manifest(), final=True, why="rne_compile --background exited with %d%s"
                   % (p.returncode, (": " + err.strip()[-500:]) if err.strip() else ""))

    def _load(self, manifest, final: bool, why: str = "") -> None:
        for g in list(self.pending):
            if g in manifest:
                # the loop thread takes the interpreter back after 0.5 ms, not Python's default 5 ms
                switch = sys.getswitchinterval()
                sys.setswitchinterval(min(switch, LOAD_SWITCH_INTERVAL))
                try:
                    missing = load_group(g, manifest)
                finally:
                    sys.setswitchinterval(switch)
                self.pending.remove(g)
                if missing:
                    self._fail(g, "not in the cache after compiling: %s" % ", ".join(missing[:5]))
                    continue
                self.cycle.pending_groups.discard(g)
                if self.on_loaded is not None:
                    self.on_loaded(g)
                self.log.info("the kernels of %s are loaded (%.1f s after the background compile started)"
                              % (g, time.monotonic() - self.t0))
            elif final:
                self.pending.remove(g)
                self._fail(g, why)

    def _fail(self, group, why) -> None:
        self.cycle.failed_groups[group] = why
        self.cycle.pending_groups.discard(group)
        self.log.error("the background compile of the %s kernels failed: %s; a change to a mode or base that "
                       "needs them is refused" % (group, why))
