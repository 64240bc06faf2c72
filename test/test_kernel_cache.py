"""The numba cache of a kernel follows a change in a helper it inlines from another file (kernel_cache.py).

Numba alone keys a kernel's cache entry to the kernel's own file, so the premise is checked first: with
the helper edited and the kernel's file untouched, numba still loads the old compiled kernel. Then
kernel_cache.refresh drops the entry and the new helper takes effect.
"""
import os
import subprocess
import sys
import textwrap

import rne_control
from rne_control.kernel_cache import LAYOUT_SOURCES, STAMP, _entries, library_dispatchers, source_files, sources_hash

RUN = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[1])
    import kern, helper
    from rne_control.kernel_cache import refresh
    if sys.argv[2] == "refresh":
        refresh([("kern.kernel", kern.kernel), ("helper.scale", helper.scale)])
    print(kern.kernel(2.0))
""")


# a kernel in a subfolder reading a constant of a layout module (which has no kernel of its own)
RUN_LAYOUT = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[1])
    from kinds.sub import kern
    from rne_control.kernel_cache import refresh
    if sys.argv[2] == "refresh":
        refresh([("kinds.sub.kern.kernel", kern.kernel)], extra=[sys.argv[1] + "/layout.py"])
    print(kern.kernel(2.0))
""")


def _run(tmp_path, mode, run=RUN):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    out = subprocess.run([sys.executable, "-c", run, str(tmp_path / "src"), mode], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return float(out.stdout.split()[-1])


def test_refresh_recompiles_a_kernel_whose_helper_changed(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "helper.py").write_text("import numba\n\n@numba.njit(cache=True, inline='always')\n"
                                   "def scale(x):\n    return 3.0 * x\n")
    (src / "kern.py").write_text("import numba\nfrom helper import scale\n\n@numba.njit(cache=True)\n"
                                 "def kernel(x):\n    return scale(x) + 1.0\n")
    assert _run(tmp_path, "refresh") == 7.0          # compiled and cached; the stamp recorded
    assert _run(tmp_path, "plain") == 7.0            # loaded from the cache
    st = os.stat(src / "kern.py")
    (src / "helper.py").write_text((src / "helper.py").read_text().replace("3.0", "5.0"))
    os.utime(src / "kern.py", ns=(st.st_atime_ns, st.st_mtime_ns))
    assert _run(tmp_path, "plain") == 7.0            # numba alone: the stale kernel (the premise)
    assert _run(tmp_path, "refresh") == 11.0         # refreshed: compiled against the new helper
    assert _run(tmp_path, "refresh") == 11.0         # and cached again, the stamp now current


def test_refresh_recompiles_a_subfolder_kernel_whose_layout_constant_changed(tmp_path):
    src = tmp_path / "src"
    (src / "kinds" / "sub").mkdir(parents=True)
    (src / "kinds" / "__init__.py").write_text("")
    (src / "kinds" / "sub" / "__init__.py").write_text("")
    (src / "layout.py").write_text("COLUMN = 3\n")
    (src / "kinds" / "sub" / "kern.py").write_text("import numba\nfrom layout import COLUMN\n\n"
                                                   "@numba.njit(cache=True)\ndef kernel(x):\n    return COLUMN * x\n")
    assert _run(tmp_path, "refresh", RUN_LAYOUT) == 6.0
    assert _run(tmp_path, "plain", RUN_LAYOUT) == 6.0
    st = os.stat(src / "kinds" / "sub" / "kern.py")
    (src / "layout.py").write_text("COLUMN = 5\n")
    os.utime(src / "kinds" / "sub" / "kern.py", ns=(st.st_atime_ns, st.st_mtime_ns))
    assert _run(tmp_path, "plain", RUN_LAYOUT) == 6.0     # numba alone: the constant frozen in the stale kernel
    assert _run(tmp_path, "refresh", RUN_LAYOUT) == 10.0  # the layout module is hashed: the entry is dropped
    assert _run(tmp_path, "refresh", RUN_LAYOUT) == 10.0


def test_the_hash_covers_the_kind_folders_and_the_layout(tmp_path, monkeypatch):
    """The library's hash reads the kernels of every kind's folder and model/layout.py, so an edit to any
    of them (here: the layout, edited in a copy) changes the hash and refresh drops the cached kernels."""
    disp = library_dispatchers()
    files = {os.path.relpath(f, os.path.dirname(rne_control.__file__)) for f in source_files(disp)}
    for name in ("model/layout.py", "dynamics/primitives.py", "dynamics/direct.py", "dynamics/rnea.py",
                 "dynamics/momentum_coriolis.py", "dynamics/frames.py",
                 "dynamics/closed_loop/kernels.py", "dynamics/closed_loop/closure.py", "dynamics/closed_loop/arrays.py",
                 "dynamics/parallel/kinematics.py", "dynamics/parallel/dynamics.py", "dynamics/elastic/kernels.py",
                 "dynamics/floating/floating_aba.py", "dynamics/floating/base_body.py", "control/_fused.py",
                 "control/_observer.py"):
        assert name in files, name
    edited = tmp_path / "layout.py"
    edited.write_text(open(LAYOUT_SOURCES[0]).read().replace("KW = 162", "KW = 163"))
    assert sources_hash(disp, [str(edited)]) != sources_hash(disp)


def test_import_records_the_kernel_sources_hash():
    disp = library_dispatchers()
    dirs = {_entries(d)[0] for _, d in disp if _entries(d) is not None}
    assert dirs, "no cached kernels found"
    digest = sources_hash(disp)
    for cache_dir in dirs:
        with open(os.path.join(cache_dir, STAMP)) as f:
            assert f.read().strip() == digest, cache_dir
    assert rne_control.__version__
