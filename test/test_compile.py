"""rne_compile's groups, the manifest, loading a group without compiling, and cache writes shared between
processes (rne_control.compile, rne_control.kernel_cache). No ROS.

The processes here use caches of their own (NUMBA_CACHE_DIR in tmp_path), so nothing depends on the
session's cache.
"""
import os
import subprocess
import sys
import textwrap

import pytest

from rne_control.control.warmup import PROGRESS, PROGRESS_RE, READY


def _py(code, cache, timeout=600, **env):
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=timeout,
                       env=dict(os.environ, NUMBA_CACHE_DIR=str(cache), **env))
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_a_group_recorded_in_the_manifest_loads_in_a_fresh_process_without_compiling(tmp_path):
    """run_group("floating") records its signatures; a fresh process loads them with load_group: every
    signature there, numba's compile event never fired, and the kernels run."""
    out = _py("""
        from rne_control.compile import run_group
        r = run_group("floating")
        print(r["compiled"] > 0, r["signatures"] > 0)
    """, tmp_path)
    assert out.split() == ["True", "True"]
    out = _py("""
        from numba.core import event
        compiled = []
        class L(event.Listener):
            def on_start(self, ev): pass
            def on_end(self, ev): compiled.append(ev)
        event.register("numba:compile", L())
        from rne_control.kernel_cache import load_group, read_manifest
        from rne_control.dynamics.floating import moving_base as mb
        print(sorted(read_manifest()) == ["floating"], load_group("floating"), len(mb.moving_base_one.signatures),
              len(compiled))
        print(load_group("tree"))
    """, tmp_path)
    first, second = out.splitlines()
    assert first == "True [] 1 0", out
    assert "'tree' is not in the manifest" in second


def test_the_manifest_is_void_for_other_sources(tmp_path):
    """A manifest written for other kernel sources (an edit, an upgrade) reads as empty."""
    _py("""
        from rne_control.kernel_cache import record_group
        record_group("dynamics", {})
    """, tmp_path)
    out = _py("""
        import rne_control.kernel_cache as kc
        print(sorted(kc.read_manifest()))
        kc._digests["library"] = "0" * 40     # as if the sources had changed since
        print(sorted(kc.read_manifest()))
    """, tmp_path)
    assert out.splitlines() == ["['dynamics']", "[]"]


WORKER = """
    import os, sys, time
    sys.path.insert(0, %r)
    import numpy as np
    if %r:
        import rne_control   # installs the cache lock
    from numba.core.caching import IndexDataCacheFile
    save_index = IndexDataCacheFile._save_index
    me, other, saves = %r, %r, [0]
    def meet(self, overloads):
        # between reading the index and writing it: wait (1 s at most) until the other process is there too
        saves[0] += 1
        open(os.path.join(%r, "%%s%%d" %% (me, saves[0])), "w").close()
        deadline = time.monotonic() + 1.0
        while not os.path.exists(os.path.join(%r, "%%s%%d" %% (other, saves[0]))) and time.monotonic() < deadline:
            time.sleep(0.005)
        save_index(self, overloads)
    IndexDataCacheFile._save_index = meet
    import shared_kernel
    for dt in %r:
        shared_kernel.f(np.zeros(2, dtype=dt))
"""


def _save_side_by_side(tmp_path, lock):
    """Two processes compile disjoint signatures of one cached kernel, their index writes made to meet (each
    waits, 1 s at most, for the other to be between reading and writing the index too); then a third process
    loads all the signatures: (signatures it has, how many it compiled)."""
    tmp_path.mkdir()
    (tmp_path / "shared_kernel.py").write_text("import numba\n@numba.njit(cache=True)\ndef f(x):\n    return x + 1\n")
    marks = tmp_path / "marks"
    marks.mkdir()
    a, b = ["int8", "int16", "int32"], ["uint8", "uint16", "uint32"]
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    procs = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(WORKER % (str(tmp_path), lock, me, other,
                                                                               str(marks), str(marks), dts))], env=env)
             for me, other, dts in (("a", "b", a), ("b", "a", b))]
    assert [p.wait(timeout=300) for p in procs] == [0, 0]
    out = _py("""
        import sys
        sys.path.insert(0, %r)
        import numpy as np
        from numba.core import event
        compiled = []
        class L(event.Listener):
            def on_start(self, ev): pass
            def on_end(self, ev): compiled.append(ev)
        event.register("numba:compile", L())
        import shared_kernel
        for dt in %r:
            shared_kernel.f(np.zeros(2, dtype=dt))
        print(len(shared_kernel.f.signatures), len(compiled))
    """ % (str(tmp_path), a + b), tmp_path / "cache")
    return tuple(int(x) for x in out.split())


def test_cache_saves_of_one_kernel_from_two_processes_lose_nothing(tmp_path):
    """numba reads the whole index, adds its entry and replaces the file: two processes saving signatures of
    one kernel at once (rne_sim and rne_controller starting cold, rne_compile's workers) lose entries
    (the control case, without the lock: some signature compiles again). With rne_control's lock every
    entry stays: a third process loads all of them and compiles nothing."""
    assert _save_side_by_side(tmp_path / "locked", True) == (6, 0)
    signatures, compiled = _save_side_by_side(tmp_path / "unlocked", False)
    assert signatures == 6 and compiled > 0     # the lost entries: the test can tell


def test_install_cache_lock_replaces_numbas_save():
    from numba.core.caching import IndexDataCacheFile

    from rne_control import kernel_cache
    assert IndexDataCacheFile.save is kernel_cache._locked_save


@pytest.mark.parametrize("line, parsed", [
    (PROGRESS % (2, 5, "the momentum observer", 12.34, 7), ("2", "5", "the momentum observer", "12.3", "7")),
    (PROGRESS % (1, 3, "the control law, fixed base", 0.0, 0), ("1", "3", "the control law, fixed base", "0.0", "0")),
])
def test_the_progress_lines_parse_as_rne_demo_reads_them(line, parsed):
    import re
    assert re.search(PROGRESS_RE, "[INFO] [1.2] [rne_controller]: " + line).groups() == parsed
    assert re.search(r"kernels ready in ([\d.]+) s \((\d+) compiled", READY % (3.2, 4)).groups() == ("3.20", "4")


def test_rne_demo_follows_the_nodes_progress_from_their_logs(tmp_path):
    """StartProgress reads each node's newest progress line, then its ready line."""
    from rne_control.ros.demo.node import StartProgress

    class Proc:
        def __init__(self, name):
            self.name, self.path = name, tmp_path / (name + ".log")
            self.path.write_text("")

        def tail(self, n=2000):
            return self.path.read_text()[-n:]

    sim, ctl = Proc("rne_sim"), Proc("rne_controller")
    prog = StartProgress([sim, ctl])
    assert not prog.poll() and prog.describe("rne_sim") == "rne_sim: starting"
    ctl.path.write_text("loading\n" + PROGRESS % (1, 4, "the control law, fixed base", 0.5, 0) + "\n"
                        + PROGRESS % (2, 4, "the trajectories", 9.0, 3) + "\n")
    assert prog.poll()
    assert prog.describe("rne_controller") == "rne_controller loading kernels 2/4: the trajectories (9 s, 3 compiled)"
    assert prog.describe("rne_controller", bar=True).startswith("rne_controller [##........] 2/4")
    assert not prog.poll()
    sim.path.write_text(READY % (8.25, 2) + "\n")
    assert prog.poll() and prog.describe("rne_sim") == "rne_sim: kernels ready in 8.2 s (2 compiled)"
