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

Several processes share a cache directory (``rne_sim`` and ``rne_controller`` starting cold side by side,
``rne_compile``'s workers, a node's background compiler). Numba's own index write is not safe between
processes: it reads the index, adds its entry and replaces the file, so two processes saving signatures of
one kernel can lose an entry, or name two data files alike. :func:`install_cache_lock` makes each save hold
a file lock of its cache directory, and :func:`compile_lock` lets a process compiling a kernel hold it
against the others, which then load what it saved instead of compiling the same code.
"""
from __future__ import annotations

import contextlib
import copy
import fcntl
import hashlib
import itertools
import os
import sys
import time

STAMP = "rne_control_kernel_sources.sha1"
# model/layout.py: joint codes and column offsets of the kernel arrays (no dispatchers: named here)
LAYOUT_SOURCES = (os.path.join(os.path.dirname(os.path.abspath(__file__)), "model", "layout.py"),)


def source_files(dispatchers, extra=LAYOUT_SOURCES) -> list:
    """The source files of ``dispatchers`` ((name, numba dispatcher) pairs) and ``extra``, sorted."""
    return sorted({d.py_func.__code__.co_filename for _, d in dispatchers} | set(extra))


_digests = {}


def library_hash() -> str:
    """:func:`sources_hash` of :func:`library_dispatchers`, computed once per process (the sources a process
    runs do not change under it)."""
    if "library" not in _digests:
        _digests["library"] = sources_hash(library_dispatchers())
    return _digests["library"]


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


LOCK = "rne_control.lock"


@contextlib.contextmanager
def file_lock(path):
    """An exclusive advisory lock (flock) on the file ``path``, created if needed; released when the block ends
    or the process dies. Without a writable directory: no lock."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)   # releases the lock


def _locked_save(self, key, data):
    """numba's IndexDataCacheFile.save under the cache directory's lock, the data file written before the
    index that names it."""
    with file_lock(os.path.join(self._cache_path, LOCK)):
        overloads = self._load_index()
        data_name = overloads.get(key)
        if data_name is None:
            existing = set(overloads.values())
            data_name = next(n for n in map(self._data_name, itertools.count(1)) if n not in existing)
            self._save_data(data_name, data)
            overloads[key] = data_name
            self._save_index(overloads)
        else:
            self._save_data(data_name, data)


def install_cache_lock() -> bool:
    """Make numba's cache saves (every kernel's, in this process) hold the cache directory's lock. False
    where this numba's cache has another shape (nothing is changed then)."""
    try:
        from numba.core.caching import IndexDataCacheFile
        IndexDataCacheFile._load_index, IndexDataCacheFile._save_data, IndexDataCacheFile._data_name
    except (ImportError, AttributeError):
        return False
    IndexDataCacheFile.save = _locked_save
    return True


class _InlineCopy:
    """numba's IR inliner (``inline="always"``) copies the callee's IR block by block, each block with a
    ``copy.deepcopy`` of its own, and a block's variables hold the function's scope, which holds all of its
    variables: so every block copies the whole scope again. This stands in for the ``copy`` module inside
    numba's inliner and copies the blocks of one IR with one memo (its scope copied once, as the original
    blocks share it), which took a quarter off the kernels' compile time. A block met again, or a block of
    another scope, starts a new memo: one IR's copy never shares objects with another's."""

    def __init__(self):
        self.memo, self.scope = {}, None

    def deepcopy(self, x, memo=None):
        if memo is None and isinstance(x, self._block):
            if id(x) in self.memo or x.scope is not self.scope:
                self.memo, self.scope = {}, x.scope
            return copy.deepcopy(x, self.memo)
        return copy.deepcopy(x, memo)

    def __getattr__(self, name):
        return getattr(copy, name)


def _loc_deepcopy(self, memo):
    """numba's ir.Loc without a copy of the source lines it may have cached (immutable, shared)."""
    out = type(self)(self.filename, self.line, self.col, self.maybe_decorator)
    out.lines = self.lines
    return out


def install_inline_copy() -> bool:
    """Make numba's IR inliner copy a callee's blocks with one memo (:class:`_InlineCopy`), and its source
    locations without their cached lines. False where this numba's inliner has another shape (nothing is
    changed then)."""
    try:
        from numba.core import inline_closurecall as ic, ir
        loc = ir.Loc("f", 1)
        if ic.copy is not copy or "scope" not in ir.Block(ir.Scope(None, loc), loc).__dict__ or \
                {"filename", "line", "col", "maybe_decorator", "lines"} - set(loc.__dict__):
            return False
    except (ImportError, AttributeError):
        return False
    shim = _InlineCopy()
    shim._block = ir.Block
    ic.copy = shim
    ir.Loc.__deepcopy__ = _loc_deepcopy
    return True


@contextlib.contextmanager
def compile_lock(dispatcher):
    """Hold ``dispatcher``'s own lock in its cache directory while compiling it: another process asking for the
    same kernel meanwhile waits, then finds it in the cache. No lock for a dispatcher without a cache."""
    e = _entries(dispatcher)
    if e is None:
        yield
        return
    with file_lock(os.path.join(e[0], e[1][:-len(".nbi")] + ".lock")):
        yield


# ------------------------------------------------------------------ compile groups and their manifest
# rne_compile compiles the kernels in groups (rne_control.compile.GROUPS), each in a process of its own, and
# records per group the signatures it left in the cache; a node that defers a group (the task-space modes, the
# other bases) loads exactly those once its background compiler has recorded them (load_group).
MANIFEST = "rne_control_manifest.pkl"


def manifest_path():
    """The manifest's file: in the cache directory of the RNE's one-sample kernel (numba's choice: NUMBA_CACHE_DIR,
    else __pycache__ beside the sources, else its user-wide fallback); None without a cache."""
    d = dict(library_dispatchers()).get("rne_control.dynamics.rnea.rnea_one")
    e = None if d is None else _entries(d)
    return None if e is None else os.path.join(e[0], MANIFEST)


def signatures(disp=None) -> dict:
    """{qualified name: [signature, ...]} of the compiled (or loaded) signatures of rne_control's kernels."""
    return {name: list(d.signatures) for name, d in (dispatchers() if disp is None else disp) if d.signatures}


def read_manifest() -> dict:
    """{group: {qualified name: [signatures]}} of the groups recorded for the kernel sources as they are now;
    empty when there is none (or it was written for other sources, or another numba)."""
    import pickle
    path = manifest_path()
    try:
        with open(path, "rb") as f:
            doc = pickle.load(f)
    except (OSError, TypeError, EOFError, pickle.UnpicklingError, AttributeError, ImportError):
        return {}
    import numba
    if doc.get("sources") != library_hash() or doc.get("numba") != numba.__version__:
        return {}
    return doc.get("groups", {})


def record_group(group: str, sigs: dict) -> None:
    """Record that ``group``'s kernels ``sigs`` ({qualified name: [signatures]}) are in the cache."""
    import pickle

    import numba
    path = manifest_path()
    if path is None:
        return
    with file_lock(os.path.join(os.path.dirname(path), LOCK)):
        groups = read_manifest()
        groups[group] = sigs
        tmp = "%s.tmp.%d" % (path, os.getpid())
        with open(tmp, "wb") as f:
            pickle.dump({"sources": library_hash(), "numba": numba.__version__,
                         "groups": groups}, f)
        os.replace(tmp, path)


def load_group(group: str, manifest=None) -> list:
    """Load ``group``'s recorded kernels from numba's cache into this process, compiling nothing: a signature
    missing from the cache stays missing. Returns the names of those that could not be loaded (empty: all
    there). Holds numba's compiler lock one signature at a time (about 1 ms each)."""
    from numba.core.compiler_lock import global_compiler_lock
    sigs = (read_manifest() if manifest is None else manifest).get(group)
    if sigs is None:
        return ["group %r is not in the manifest" % group]
    by_name = dict(dispatchers())
    missing = []
    for name, wanted in sigs.items():
        d = by_name.get(name)
        if d is None:
            missing.append(name)
            continue
        for sig in wanted:
            with global_compiler_lock:
                if tuple(sig) in d.overloads:
                    continue
                cres = d._cache.load_overload(sig, d.targetctx) if d._cache is not None else None
                if cres is None:
                    missing.append("%s%s" % (name, tuple(sig)))
                    continue
                d.add_overload(cres)
            time.sleep(0)   # between two signatures, another thread (a control loop) takes the interpreter
    return missing
