"""Ahead-of-time compilation of every numba kernel into numba's on-disk cache.

Run ``rne_compile`` (or ``python -m rne_control.compile``) once after installing: ``make install``,
the documented ``pip install`` set-up and ``colcon build`` (through ``setup.py install``) run it. It
compiles every kernel of the library and the control layer for the argument types the library and
the nodes call them with, and numba stores them next to the installed source files (``__pycache__``,
or ``NUMBA_CACHE_DIR`` when set). Numba keys the cache to the source file's path and modification
time, so it must run against the files that the nodes import. A node started afterwards loads the
kernels instead of compiling them (about 1 s instead of tens of seconds).

It counts what it compiled with :class:`rne_control.control.warmup.CompileMonitor`, which the
controller node also starts at "kernels ready" to report anything that compiles on the cycle path.
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from .control.warmup import CompileMonitor, signature_counts

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


def compile_all(verbose: bool = False) -> dict:
    """Compile (or load) every kernel: the library's dynamics kernels for their canonical argument
    types, and the control layer's paths through :mod:`rne_control.control.warmup`. Returns
    {"seconds", "signatures", "compiled"} (compiled: how many numba actually compiled, not loaded)."""
    import warnings

    import rne_control as rc
    from .control import observer
    from .control.plants import make_plant
    from .dynamics import api, calls, frame_api
    from .dynamics.floating import api as floating_api

    t0 = time.perf_counter()
    mon = CompileMonitor()
    mon.start()
    for table in (api.KERNELS, floating_api.KERNELS):
        for name, (one, one_sig, many, many_sig) in table.items():
            calls.prepare(one, [one_sig])
            calls.prepare(many, [many_sig])
            if verbose:
                print("compiled %s (%.1f s)" % (name, time.perf_counter() - t0), flush=True)
    for name, (many, many_sig) in frame_api.KERNELS.items():  # checked path only: no one-sample kernel
        calls.prepare(many, [many_sig])
        if verbose:
            print("compiled %s (%.1f s)" % (name, time.perf_counter() - t0), flush=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = rc.load_model(_URDF, floating_base=True)
    observer.warm_up(model)   # the momentum observer's compiled update (_observer.py) and its checked path
    if verbose:
        print("compiled the momentum observer (%.1f s)" % (time.perf_counter() - t0), flush=True)
    _warm_up_cycle(make_plant(model))
    _warm_up_other_plants(verbose)
    stats = {"seconds": time.perf_counter() - t0, "signatures": sum(signature_counts().values()),
             "compiled": len(mon.compiles)}
    mon.stop()
    return stats


# one shipped model of each other kind: their kernels take the same argument types for every robot of
# that kind, so compiling them once here serves any closed-loop, parallel or elastic model, and a tree with
# uncontrolled joints (restricted, folded, welded)
_OTHER_KINDS = ("config/fourbar.yaml", "config/gough_stewart.yaml", "config/arm7_sea.yaml", "config/puma560.yaml")


def _warm_up_other_plants(verbose: bool) -> None:
    """The control law and the simulation step on a closed-loop, a parallel, an elastic and a tree model,
    each with every actuated joint controlled and with half of them (a tree's last three: passengers,
    folded at rest)."""
    import warnings

    import rne_control as rc
    from .control.plants import make_plant
    from .control.simulation import Simulation
    from .ros.paths import resolve_model_file

    for rel in _OTHER_KINDS:
        try:
            path = resolve_model_file(rel)
        except FileNotFoundError:
            if verbose:
                print("%s not found: its kind of model compiles at first use" % rel, flush=True)
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = rc.load_model(str(path))
        whole = make_plant(model)
        for plant in (whole, make_plant(model, whole.joint_names[:max(1, whole.n // 2)])):
            _warm_up_cycle(plant)
            sim = Simulation(plant)
            sim.step(np.zeros(plant.n), 1e-4, rk4=True)
            sim.step(np.zeros(plant.n), 1e-4, rk4=False)
            sim.joint_states()


def _warm_up_cycle(plant) -> None:
    """Every compiled path of a controller's cycle on ``plant``: :meth:`ControlCycle.warm_up`."""
    from .control.cycle import ControlCycle
    from .control.settings import Settings

    ControlCycle(plant, Settings.of(plant)).warm_up()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="rne_compile", description=__doc__.split("\n\n")[0])
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    p.add_argument("-v", "--verbose", action="store_true", help="report each kernel")
    a = p.parse_args(argv)
    import numba.core.config as ncfg
    stats = compile_all(verbose=a.verbose)
    if not a.quiet:
        import rne_control
        where = ncfg.CACHE_DIR or "__pycache__ next to %s" % rne_control.__file__.rsplit("/", 1)[0]
        print("rne_compile: %d kernel signatures ready in %.1f s (%d compiled, the rest loaded from the cache; "
              "cache: %s)" % (stats["signatures"], stats["seconds"], stats["compiled"], where))
    return 0


if __name__ == "__main__":
    sys.exit(main())
