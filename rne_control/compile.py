"""Ahead-of-time compilation of every numba kernel into numba's on-disk cache: ``rne_compile``.

Run ``rne_compile`` (or ``python -m rne_control.compile``) once after installing: ``make install``,
the documented ``pip install`` set-up and ``colcon build`` (through ``setup.py install``) run it. It
compiles every kernel of the library and the control layer for the argument types the library and
the nodes call them with, and numba stores them next to the installed source files (``__pycache__``,
or ``NUMBA_CACHE_DIR`` when set). Numba keys the cache to the source file's path and modification
time, so it must run against the files that the nodes import. A node started afterwards loads the
kernels instead of compiling them (about 1 s instead of tens of seconds).

The kernels are compiled in groups (:data:`GROUPS`), each in a process of its own, as many at a time as
``--jobs`` (default: the CPUs this process may use, at most 2): the library's dynamics, each kind of plant's
control cycle and simulation, the task-space law, the floating-base bases. Each group records in a manifest
beside the cache (``rne_control.kernel_cache.record_group``) the signatures it left there, which a node that
deferred a group (the task-space modes, the other bases: ``rne_control.control.warmup``) loads once its
background compiler (``--background``) has recorded them. ``--profile`` prints the seconds numba spent
compiling each kernel (its own time, callees excluded; numba's ``numba:compile`` events).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

# A two-joint floating-base robot (one revolute, one prismatic joint): the kernels take the model as
# an array, so compiling them for this model compiles them for every model.
_URDF = """<robot name="rne_compile">
  <link name="base"><inertial><mass value="2.0"/><origin xyz="0 0 0"/>
    <inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="l1"><inertial><mass value="1.0"/><origin xyz="0.1 0 0"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="l2"><inertial><mass value="0.5"/><origin xyz="0 0 0.1"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><origin xyz="0 0 0.2"/>
    <axis xyz="0 1 0"/><limit effort="10" velocity="2" lower="-3" upper="3"/>
    <dynamics damping="0.1" friction="0.2"/></joint>
  <joint name="j2" type="prismatic"><parent link="l1"/><child link="l2"/><origin xyz="0.3 0 0"/>
    <axis xyz="1 0 0"/><limit effort="10" velocity="1" lower="-1" upper="1"/></joint>
</robot>"""

# one shipped model of each other kind: their kernels take the same argument types for every robot of that
# kind, so compiling them once here serves any tree, closed-loop, parallel or elastic model
KIND_MODELS = {"tree": "config/puma560.yaml", "closed_loop": "config/fourbar.yaml",
               "parallel": "config/gough_stewart.yaml", "elastic": "config/arm7_sea.yaml"}
# The groups, the longest first (the order the workers take them in; seconds on an idle 2-core machine).
# "task" and "bases" are also the warm-up's deferrable groups (rne_control.control.warmup): a node loads them
# by these names.
GROUPS = ("closed_loop", "task", "tree", "bases", "parallel", "elastic", "dynamics", "floating")
ENV_BACKGROUND = "RNE_CONTROL_BACKGROUND_COMPILE"   # "0": nodes compile every group before their first command


def _load(source, **kw):
    import warnings

    import rne_control as rc
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rc.load_model(source, **kw)


def _kind_plants(kind):
    """A shipped model of ``kind``'s plant with every actuated joint controlled, and one with half of them (a
    tree's last three: passengers, folded at rest); none where the shipped model files are not found (an
    install without its share folder: that kind's kernels then compile at first use)."""
    from .control.plants import make_plant
    from .ros.paths import resolve_model_file
    try:
        path = resolve_model_file(KIND_MODELS[kind])
    except FileNotFoundError:
        print("%s not found: the %s kernels compile at first use" % (KIND_MODELS[kind], kind), flush=True)
        return ()
    model = _load(str(path))
    whole = make_plant(model)
    return whole, make_plant(model, whole.joint_names[:max(1, whole.n // 2)])


def _cycle_and_sim(plant, groups, sim=True):
    """The cycle's warm-up of ``groups`` on ``plant``, and (``sim``) a simulation's (both integrators)."""
    from .control.cycle import ControlCycle
    from .control.settings import Settings
    from .control.simulation import Simulation
    ControlCycle(plant, Settings.of(plant)).warm_up(groups=groups)
    if not sim:
        return
    sim = Simulation(plant)
    for rk4 in (True, False):
        sim.warm_up(1e-4, rk4)
    sim.joint_states()


def _group(name):
    """Compile (or load) the kernels of group ``name`` in this process."""
    from .control.warmup import BASES, CORE, TASK
    if name == "dynamics":     # the fixed-base library: one- and many-sample kernels, frames
        from .dynamics import api, calls, frame_api
        for one, one_sig, many, many_sig in api.KERNELS.values():
            calls.prepare(one, [one_sig])
            calls.prepare(many, [many_sig])
        for many, many_sig in frame_api.KERNELS.values():
            calls.prepare(many, [many_sig])
    elif name == "floating":   # the floating-base library
        from .dynamics import calls
        from .dynamics.floating import api as floating_api
        for one, one_sig, many, many_sig in floating_api.KERNELS.values():
            calls.prepare(one, [one_sig])
            calls.prepare(many, [many_sig])
    elif name == "task":       # the tree group simulates the same plant
        for plant in _kind_plants("tree")[:1]:
            _cycle_and_sim(plant, (TASK,), sim=False)
    elif name == "bases":      # a floating-base tree: every base, and its simulation
        from .control.plants import make_plant
        _cycle_and_sim(make_plant(_load(_URDF, floating_base=True)), (CORE, BASES))
    else:
        for plant in _kind_plants(name):
            _cycle_and_sim(plant, (CORE,))


def start_kernels(names):
    """{qualified name: (dispatcher, [signatures])} of the kernels a tree plant's controller compiles before its
    first command that have a fixed signature (the ones :func:`prefetch` can compile ahead), of ``names``."""
    from .control import _fused, _observer, tree_state
    from .dynamics import api, frame_api
    table = {}
    for one, one_sig, _, _ in api.KERNELS.values():
        table[one] = [one_sig]
    for many, many_sig in frame_api.KERNELS.values():
        table[many] = [many_sig]
    for kernel, sig in _fused.SIGNATURES.items():
        table[kernel] = [sig]
    table[_observer.observer_update_one] = [_observer.SIGNATURE]
    table[tree_state.rest_ready] = None      # tree_state.prepare() compiles its four
    named = {"%s.%s" % (d.py_func.__module__, d.py_func.__qualname__): (d, sigs) for d, sigs in table.items()}
    return {n: named[n] for n in names if n in named}


def prefetch(names) -> None:
    """Compile (or find in the cache) the kernels ``names`` (qualified names of :func:`start_kernels`), in
    that order: a node starting cold runs this in a second process with its own start-up kernels in the
    reverse order of its warm-up, so that the two meet in the middle (each kernel is compiled once: its
    compile lock makes the other wait, then load it)."""
    from .control import tree_state
    from .dynamics.calls import prepare
    _die_with_parent()
    for name, (kernel, sigs) in start_kernels(names).items():
        if sigs is None:
            tree_state.prepare()
        else:
            prepare(kernel, sigs)


class _Profile:
    """CPU seconds numba spends compiling each kernel, its callees' compiles excluded (numba:compile events; CPU
    time, so that a loaded machine does not inflate them)."""

    def __init__(self):
        from numba.core import event
        self.own, self.stack, self.count = {}, [], 0
        prof = self

        class Listener(event.Listener):
            def on_start(self, ev):
                prof.stack.append([time.process_time(), 0.0])

            def on_end(self, ev):
                t0, child = prof.stack.pop()
                dt = time.process_time() - t0
                f = getattr(ev.data.get("dispatcher"), "py_func", None)
                name = "%s.%s" % (f.__module__, f.__qualname__) if f else str(ev.data.get("dispatcher"))
                prof.own[name] = prof.own.get(name, 0.0) + dt - child
                prof.count += 1
                if prof.stack:
                    prof.stack[-1][1] += dt

        self.listener = Listener()
        event.register("numba:compile", self.listener)


def run_group(name, report=None) -> dict:
    """Compile group ``name`` in this process and record it in the manifest; returns (and writes to the file
    ``report``, if given) {"group", "seconds", "cpu_seconds", "compiled" (signatures numba compiled, not loaded),
    "signatures", "kernels" ({kernel: own compile CPU seconds}), "maxrss_mb"}."""
    import resource

    from .kernel_cache import record_group, signatures
    prof = _Profile()
    t0, c0 = time.perf_counter(), time.process_time()
    _group(name)
    sigs = signatures()
    record_group(name, sigs)
    out = {"group": name, "seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0,
           "compiled": prof.count,
           "signatures": sum(len(v) for v in sigs.values()), "kernels": prof.own,
           "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0}
    if report:
        with open(report, "w") as f:
            json.dump(out, f)
    return out


def compile_all(verbose: bool = False) -> dict:
    """Compile (or load) every group in this process, one after the other (``rne_compile`` runs them in
    processes of their own instead). Returns {"seconds", "signatures", "compiled"}."""
    from .kernel_cache import signatures
    t0 = time.perf_counter()
    compiled = 0
    for g in GROUPS:
        compiled += run_group(g)["compiled"]
        if verbose:
            print("compiled %s (%.1f s)" % (g, time.perf_counter() - t0), flush=True)
    return {"seconds": time.perf_counter() - t0, "signatures": sum(len(v) for v in signatures().values()),
            "compiled": compiled}


def _background_child(avoid_cpus):
    """In a background compiler's group process: idle priority, off ``avoid_cpus``, dies with its parent."""
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):
        os.nice(19)
    if avoid_cpus:
        cpus = set(os.sched_getaffinity(0)) - set(avoid_cpus)
        if cpus:
            os.sched_setaffinity(0, cpus)
    _die_with_parent()


def _die_with_parent():
    import ctypes
    import signal
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class _RSS:
    """The largest sum of the resident memory of this process's children seen (MB), sampled every 0.2 s."""

    def __init__(self):
        self.peak, self.pids, self._stop = 0.0, set(), threading.Event()
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        while not self._stop.wait(0.2):
            total = 0
            for pid in list(self.pids):
                try:
                    with open("/proc/%d/statm" % pid) as f:
                        total += int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
                except (OSError, ValueError, IndexError):
                    pass
            self.peak = max(self.peak, total / 2**20)

    def stop(self):
        self._stop.set()


def _bar(done, total, width=30):
    k = int(width * done / max(total, 1))
    return "[" + "#" * k + "." * (width - k) + "]"


def run_groups(groups, jobs, background=False, avoid_cpus=(), quiet=False, profile=False) -> dict:
    """Compile ``groups`` in processes of their own, ``jobs`` at a time, showing progress on stdout (a bar on a
    terminal, else a line per group). Returns {"seconds", "compiled", "signatures", "peak_rss_mb", "failed",
    "reports"}."""
    tty = sys.stdout.isatty() and not quiet
    tmp = tempfile.mkdtemp(prefix="rne_compile_")
    todo, running, reports, failed = list(groups), {}, [], {}
    rss = _RSS()
    t0 = time.perf_counter()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]
                                        + [p for p in [env.get("PYTHONPATH")] if p])

    def show(line=None):
        if quiet:
            return
        done = len(reports) + len(failed)
        if tty:
            names = ", ".join(running) or "-"
            sys.stdout.write("\r\033[Krne_compile %s %d/%d groups, %.0f s (compiling: %s)"
                             % (_bar(done, len(groups)), done, len(groups), time.perf_counter() - t0, names))
            if line:
                sys.stdout.write("\r\033[K" + line + "\n")
            sys.stdout.flush()
        elif line:
            print(line, flush=True)

    while todo or running:
        while todo and len(running) < jobs:
            g = todo.pop(0)
            rep = os.path.join(tmp, g + ".json")
            cmd = [sys.executable, "-m", "rne_control.compile", "--run-group", g, "--report", rep]
            if background:
                cmd += ["--background-child"] + ["--avoid-cpus=%s" % ",".join(map(str, avoid_cpus))] * bool(avoid_cpus)
            p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                 preexec_fn=_die_with_parent)
            running[g] = (p, rep, time.perf_counter())
            rss.pids.add(p.pid)
        show()
        time.sleep(0.2)
        for g, (p, rep, ts) in list(running.items()):
            if p.poll() is None:
                continue
            out = p.stdout.read()
            del running[g]
            rss.pids.discard(p.pid)
            try:
                with open(rep) as f:
                    r = json.load(f)
            except (OSError, ValueError):
                r = None
            if p.returncode or r is None:
                failed[g] = "exit %s: %s" % (p.returncode, out.strip()[-2000:])
                show("rne_compile: group %s FAILED (exit %s)" % (g, p.returncode))
                continue
            reports.append(r)
            show("rne_compile: %-12s %5.1f s, %3d compiled, %3d signatures, %4.0f MB  (%d/%d, %.0f s)"
                 % (g, r["seconds"], r["compiled"], r["signatures"], r["maxrss_mb"], len(reports) + len(failed),
                    len(groups), time.perf_counter() - t0))
    rss.stop()
    show()
    if tty:
        sys.stdout.write("\n")
    from .kernel_cache import read_manifest
    manifest = read_manifest()
    total_sigs = len({(k, tuple(s)) for g in manifest.values() for k, v in g.items() for s in v})
    return {"seconds": time.perf_counter() - t0, "compiled": sum(r["compiled"] for r in reports),
            "signatures": total_sigs, "peak_rss_mb": rss.peak, "failed": failed, "reports": reports}


def profile_table(reports) -> str:
    """Markdown: each group's seconds and each kernel's own compile seconds, largest first."""
    lines = ["| group | seconds | CPU seconds | signatures compiled | peak resident MB |", "|---|---|---|---|---|"]
    lines += ["| %s | %.1f | %.1f | %d | %.0f |" % (r["group"], r["seconds"], r["cpu_seconds"], r["compiled"],
                                                 r["maxrss_mb"]) for r in reports]
    own = {}
    for r in reports:
        for k, v in r["kernels"].items():
            own.setdefault(k, []).append(v)
    lines += ["", "| kernel | own compile CPU seconds (summed over the groups that compiled it) | groups |", "|---|---|---|"]
    for k, v in sorted(own.items(), key=lambda kv: -sum(kv[1])):
        if sum(v) >= 0.05:
            lines.append("| `%s` | %.2f | %d |" % (k.replace("rne_control.", ""), sum(v), len(v)))
    return "\n".join(lines)


def background(groups, avoid_cpus=()) -> int:
    """The background compiler of a node: compiles those of ``groups`` that the manifest does not hold yet, one
    group at a time, at idle priority, off ``avoid_cpus``; one at a time per cache directory (a lock file:
    a second one waits, then finds the groups recorded). Dies with its parent."""
    from .kernel_cache import LOCK, file_lock, manifest_path, read_manifest
    _die_with_parent()
    path = manifest_path()
    lock = os.path.join(os.path.dirname(path), "rne_compile_background." + LOCK) if path else os.devnull
    with file_lock(lock):
        todo = [g for g in groups if g not in read_manifest()]
        if not todo:
            return 0
        res = run_groups(todo, 1, background=True, avoid_cpus=avoid_cpus, quiet=True)
    for g, why in res["failed"].items():
        print("rne_compile: group %s failed: %s" % (g, why), file=sys.stderr)
    return 1 if res["failed"] else 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="rne_compile", description=__doc__.split("\n\n")[0])
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    p.add_argument("-j", "--jobs", type=int, default=None, help="groups compiled at a time (default: the CPUs "
                   "this process may use, at most 2)")
    p.add_argument("--groups", default=",".join(GROUPS), help="comma-separated, of: " + ", ".join(GROUPS))
    p.add_argument("--profile", action="store_true", help="also print each kernel's compile seconds (markdown)")
    p.add_argument("--background", action="store_true", help="a node's background compiler (see background())")
    p.add_argument("--prefetch", help=argparse.SUPPRESS)
    p.add_argument("--avoid-cpus", default="", help=argparse.SUPPRESS)
    p.add_argument("--run-group", help=argparse.SUPPRESS)
    p.add_argument("--report", help=argparse.SUPPRESS)
    p.add_argument("--background-child", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    avoid = [int(c) for c in a.avoid_cpus.split(",") if c.strip()]
    if a.prefetch:
        prefetch(a.prefetch.split(","))
        return 0
    if a.run_group:
        if a.background_child:
            _background_child(avoid)
        run_group(a.run_group, a.report)
        return 0
    groups = [g.strip() for g in a.groups.split(",") if g.strip()]
    unknown = [g for g in groups if g not in GROUPS]
    if unknown:
        p.error("unknown group(s) %s (groups: %s)" % (", ".join(unknown), ", ".join(GROUPS)))
    if a.background:
        return background(groups, avoid)
    jobs = a.jobs or max(1, min(2, len(os.sched_getaffinity(0))))
    res = run_groups(groups, jobs, quiet=a.quiet)
    import numba.core.config as ncfg

    import rne_control
    where = ncfg.CACHE_DIR or "__pycache__ next to %s" % rne_control.__file__.rsplit("/", 1)[0]
    for g, why in res["failed"].items():
        print("rne_compile: group %s failed: %s" % (g, why), file=sys.stderr)
    if not a.quiet or res["failed"]:
        print("rne_compile: %d kernel signatures ready in %.1f s (%d compiled, the rest loaded from the cache; "
              "%d processes, %d at a time, peak %.0f MB resident in all; cache: %s)"
              % (res["signatures"], res["seconds"], res["compiled"], len(groups), jobs, res["peak_rss_mb"], where))
    if a.profile:
        print(profile_table(res["reports"]))
    return 1 if res["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
