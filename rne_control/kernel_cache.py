"""Keep numba's on-disk cache of the kernels consistent with all of their sources.

Numba keys each kernel's cache entry to the kernel's own source file (its path, modification time and
size). The kernels inline helpers from other files (``primitives.py``, ``direct.py``, ...) and call kernels
of other files, so after a change to a helper alone (an edit in a development checkout, a ``git pull``
into an editable or ``--symlink-install`` install) numba would keep loading the kernels of the unchanged
files, compiled against the old helper. :func:`refresh` runs at ``import rne_control``: it hashes the
source files of every kernel and, in each cache directory whose recorded hash differs (or has none),
removes the cache entries of rne_control's kernels, so that numba compiles them afresh (``rne_compile``
does it ahead of time). A fresh install has no entries to remove.

The hash also covers :data:`LAYOUT_SOURCES`, modules without kernels whose constants the kernels read
(numba freezes a global's value into the compiled code): the layout of the kernel arrays.
"""
from __future__ import annotations

import hashlib
import os
import sys

STAMP = "rne_control_kernel_sources.sha1"
# model/layout.py: joint codes and column offsets of the kernel arrays (no dispatchers: named here)
LAYOUT_SOURCES = (os.path.join(os.path.dirname(os.path.abspath(__file__)), "model", "layout.py"),)


def source_files(dispatchers, extra=LAYOUT_SOURCES) -> list:
    """The source files of ``dispatchers`` ((name, numba dispatcher) pairs) and ``extra``, sorted."""
    return sorted({d.py_func.__code__.co_filename for _, d in dispatchers} | set(extra))


def sources_hash(dispatchers, extra=LAYOUT_SOURCES) -> str:
    """SHA-1 over the contents of :func:`source_files` (``dispatchers`` and ``extra``)."""
    h = hashlib.sha1()
    for path in source_files(dispatchers, extra):
        with open(path, "rb") as f:
            h.update(path.encode() + b"\0" + f.read())
    return h.hexdigest()


def _entries(d):
    """(cache directory, index file name) of a dispatcher with caching, else None (numba's private API:
    another numba version without these attributes only turns the check off)."""
    cache = getattr(d, "_cache", None)
    try:
        return cache._cache_path, cache._cache_file._index_name
    except AttributeError:
        return None


def dispatchers() -> list:
    """(qualified name, numba dispatcher) of every jitted function in the loaded rne_control modules."""
    from numba.core.dispatcher import Dispatcher

    out, seen = [], set()
    for mname, mod in sorted(sys.modules.items()):
        if mod is None or not (mname == "rne_control" or mname.startswith("rne_control.")):
            continue
        for attr, obj in sorted(vars(mod).items()):
            if isinstance(obj, Dispatcher) and id(obj) not in seen:
                seen.add(id(obj))
                out.append(("%s.%s" % (getattr(obj.py_func, "__module__", mname), obj.py_func.__qualname__),
                            obj))
    return out


def library_dispatchers() -> list:
    """The kernels of the dynamics, identification and control layers, which share helpers and kernels
    across files (the control layer's fused kernels run the dynamics layer's). The control layer's kernel
    modules are imported for it (numpy and numba only, no ROS)."""
    import importlib
    for name in ("rne_control.control._kernels", "rne_control.control._fused", "rne_control.control._observer"):
        importlib.import_module(name)
    return [(name, d) for name, d in dispatchers()
            if d.py_func.__module__.startswith(("rne_control.dynamics.", "rne_control.identification.",
                                                "rne_control.control."))]


def refresh(dispatchers=None, extra=LAYOUT_SOURCES) -> list:
    """Remove stale cache entries (see the module docstring) of ``dispatchers`` (default
    :func:`library_dispatchers`), hashed with the files ``extra``; returns the cache directories refreshed."""
    if dispatchers is None:
        dispatchers = library_dispatchers()
    by_dir = {}
    for _, d in dispatchers:
        e = _entries(d)
        if e is not None:
            by_dir.setdefault(e[0], []).append(e[1])
    if not by_dir:
        return []
    digest = sources_hash(dispatchers, extra)
    refreshed = []
    for cache_dir, indexes in sorted(by_dir.items()):
        stamp = os.path.join(cache_dir, STAMP)
        try:
            with open(stamp) as f:
                if f.read().strip() == digest:
                    continue
        except OSError:
            pass
        try:
            names = os.listdir(cache_dir)
        except OSError:
            names = []
        prefixes = tuple(ix[:-len("nbi")] for ix in indexes)   # "crba.crba-14.py311." (.nbi, .N.nbc)
        try:
            for name in names:
                if name.startswith(prefixes) and name.endswith((".nbi", ".nbc")):
                    os.remove(os.path.join(cache_dir, name))
            os.makedirs(cache_dir, exist_ok=True)
            with open(stamp, "w") as f:
                f.write(digest + "\n")
        except OSError:  # a read-only install: numba does not write there either
            continue
        refreshed.append(cache_dir)
    return refreshed
