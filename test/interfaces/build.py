"""Build the test-only ``control_msgs`` interface package once, into build/interfaces/ (ignored by git).

control_msgs has no PyPI wheel, so the tests of ``~/follow_joint_trajectory`` build its interfaces
here with colcon, CMake (the ``cmake`` wheel) and the PyPI wheels of the ROS 2 interface generators
(the ``[interfaces]`` extra of setup.py). ``make test`` runs this script; it does nothing when the
installed package is up to date with the sources.

The generator wheels' CMake exports (``share/<pkg>/cmake/export_<pkg>__rosidl_generator_pyExport.cmake``)
name the include folders of the machine the wheels were built on (``/opt/python/cp311-cp311/...``),
and CMake refuses to generate while those folders do not exist. Instead of creating those folders,
this script builds a *shadow prefix* inside build/interfaces/: for each affected package a
``share/<pkg>/cmake`` folder of copies with those paths rewritten to this Python's and numpy's include
folders (everything else in ``share/<pkg>`` linked to the original, and ``lib``/``include`` linked to the
environment's), searched before the environment itself.

Usage: ``python test/interfaces/build.py`` (build if needed), ``--force`` (rebuild),
``--env`` (print the shell exports that make the package usable, as ``source install/setup.bash``
would).
"""
from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
PACKAGE = HERE / "control_msgs"
BASE = REPO / "build" / "interfaces"
INSTALL = BASE / "install"
SHADOW = BASE / "shadow"
STAMP = BASE / "stamp"
FOREIGN = re.compile(r"/opt/python/cp3\d+-cp3\d+[^;\"\s]*")


def source_hash() -> str:
    h = hashlib.sha256()
    for p in sorted(PACKAGE.rglob("*")) + [Path(__file__).resolve()]:
        if p.is_file():
            h.update(str(p.relative_to(REPO)).encode())
            h.update(p.read_bytes())
    h.update(sys.prefix.encode())
    return h.hexdigest()[:16]


def python_site_dir(prefix: Path) -> Path:
    """Where ament_cmake_python installs the generated Python package under ``prefix``."""
    cands = sorted(prefix.glob("lib/python3*/site-packages")) + sorted(prefix.glob("local/lib/python3*/dist-packages"))
    for c in cands:
        if (c / "control_msgs").is_dir():
            return c
    v = "python%d.%d" % sys.version_info[:2]
    return prefix / "lib" / v / "site-packages"


def env_vars(install: Path = INSTALL) -> dict:
    """The variables ``source install/setup.bash`` would set for the package (prepended)."""
    return {
        "AMENT_PREFIX_PATH": str(install),
        "CMAKE_PREFIX_PATH": str(install),
        "LD_LIBRARY_PATH": str(install / "lib"),
        "PYTHONPATH": str(python_site_dir(install)),
    }


def _rewrite(text: str, py_include: str, np_include: str) -> str:
    def sub(m):
        path = m.group(0)
        if "numpy" in path:
            return np_include
        if "/include/python" in path:
            return py_include
        raise SystemExit("unexpected foreign path in a CMake export: %s" % path)
    return FOREIGN.sub(sub, text)


def make_shadow(prefix: Path) -> list:
    """Shadow prefix with rewritten copies of the CMake exports that name foreign include folders."""
    import numpy

    py_include = sysconfig.get_paths()["include"]
    np_include = numpy.get_include()
    for d in (py_include, np_include):
        if not Path(d).is_dir():
            raise SystemExit("include folder %s is missing (Python headers or numpy)" % d)
    if SHADOW.exists():
        shutil.rmtree(SHADOW)
    (SHADOW / "share").mkdir(parents=True)
    # a colcon build of a workspace holding this checkout must not take the shadow's packages
    (BASE / "COLCON_IGNORE").touch()
    for name in ("lib", "include"):
        os.symlink(prefix / name, SHADOW / name)
    fixed = []
    for cmake_dir in sorted((prefix / "share").glob("*/cmake")):
        files = [f for f in cmake_dir.iterdir() if f.is_file() and f.suffix == ".cmake"]
        if not any(FOREIGN.search(f.read_text(errors="replace")) for f in files):
            continue
        pkg_share = cmake_dir.parent
        dst = SHADOW / "share" / pkg_share.name
        dst.mkdir()
        for entry in pkg_share.iterdir():
            if entry.name != "cmake":
                os.symlink(entry, dst / entry.name)
        (dst / "cmake").mkdir()
        for f in cmake_dir.iterdir():
            text = f.read_text(errors="replace") if f.is_file() else None
            if text is not None and FOREIGN.search(text):
                (dst / "cmake" / f.name).write_text(_rewrite(text, py_include, np_include))
            else:
                os.symlink(f, dst / "cmake" / f.name)
        fixed.append(pkg_share.name)
    return fixed


def build(force: bool = False) -> Path:
    digest = source_hash()
    if not force and STAMP.exists() and STAMP.read_text().strip() == digest and \
            (python_site_dir(INSTALL) / "control_msgs").is_dir():
        print("control_msgs interfaces are up to date in %s" % INSTALL.relative_to(REPO))
        return INSTALL
    prefix = Path(sys.prefix)
    bindir = Path(sys.executable).parent
    colcon = bindir / "colcon"
    if not colcon.exists() or not (bindir / "cmake").exists():
        raise SystemExit("colcon and cmake are needed: pip install -e '.[colcon,interfaces]' (make install)")
    fixed = make_shadow(prefix)
    print("shadow prefix %s: rewrote the CMake exports of %d packages" % (SHADOW.relative_to(REPO), len(fixed)))
    for d in ("build", "install", "log"):
        shutil.rmtree(BASE / d, ignore_errors=True)
    env = dict(os.environ)
    env["PATH"] = "%s%s%s" % (bindir, os.pathsep, env.get("PATH", ""))
    env["AMENT_PREFIX_PATH"] = str(prefix)
    env["CMAKE_PREFIX_PATH"] = "%s%s%s" % (SHADOW, os.pathsep, prefix)
    env["COLCON_HOME"] = str(BASE / ".colcon")          # no user-level colcon defaults
    env.setdefault("MAKEFLAGS", "-j%d" % max(1, min(2, os.cpu_count() or 1)))
    for k in ("COLCON_PREFIX_PATH", "COLCON_DEFAULTS_FILE"):
        env.pop(k, None)
    cmd = [str(colcon), "--log-base", str(BASE / "log"), "build", "--merge-install",
           "--paths", str(PACKAGE), "--build-base", str(BASE / "build"), "--install-base", str(INSTALL),
           "--event-handlers", "console_cohesion+", "--cmake-args",
           "-DBUILD_TESTING=OFF", "-DCMAKE_BUILD_TYPE=Release",
           "-DPython3_EXECUTABLE=%s" % sys.executable,
           "-DCMAKE_PREFIX_PATH=%s;%s" % (SHADOW, prefix),
           # the installed libraries find the environment's and each other without LD_LIBRARY_PATH
           "-DCMAKE_INSTALL_RPATH_USE_LINK_PATH=ON", "-DCMAKE_INSTALL_RPATH=%s" % (INSTALL / "lib")]
    print(" ".join(cmd), flush=True)
    r = subprocess.run(cmd, cwd=str(REPO), env=env)
    if r.returncode != 0:
        raise SystemExit("colcon build of control_msgs failed (exit %d); logs in %s"
                         % (r.returncode, (BASE / "log").relative_to(REPO)))
    STAMP.write_text(digest + "\n")
    print("control_msgs interfaces installed in %s" % INSTALL.relative_to(REPO))
    return INSTALL


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--force", action="store_true", help="rebuild even if up to date")
    ap.add_argument("--env", action="store_true", help="print the shell exports for the built package")
    a = ap.parse_args(argv)
    if a.env:
        for k, v in env_vars().items():
            print('export %s="%s${%s:+:$%s}"' % (k, v, k, k))
        return 0
    build(a.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
