"""Calling the JIT kernels: the fast path, argument checks, stacking, status codes -> exceptions.

Every public function starts with its fast path and falls back to the checked path:

- fast path: the one-sample kernel called on the arguments as given. The fixed-base (and the elastic
  inverse and closed-loop torque) kernels are called past numba's dispatcher, through their entry points
  (direct.py); the others through their dispatchers, by :func:`fast_path`. Both return the kernel's
  status: 0 done, > 0 an input error to raise (:func:`check`), NOT_DIRECT (an argument not of the
  compiled types, or the kernel not compiled yet) the checked path;
- checked path: compiles the kernels if needed (each lazily, on the first call of its public function,
  for exactly the canonical argument types: C-contiguous float64, model arrays read-only; its
  dispatcher is then closed to new types), converts, validates and stacks the inputs (single samples as
  N = 1) and calls the many-sample kernel.
"""
import numba as nb
import numpy as np

from ..kernel_cache import compile_lock
from ..model.errors import InputError
from .direct import NOT_DIRECT
from .primitives import LENGTH, NONFINITE, SINGULAR


def arr(ndim, readonly=False):
    return nb.types.Array(nb.float64, ndim, "C", readonly=readonly)


MODEL = (arr(2),)  # the model's kernel array K
FLAGS = nb.int64
FIELDS = {1: "q", 2: "qd", 3: "qdd", 4: "tau", 5: "gravity", 6: "out", 7: "base"}
NO_FEXT_MANY = np.empty((0, 0, 6))


class SingularMassMatrixError(InputError):
    """Forward dynamics met a joint with no inertia behind it (a singular joint-space mass matrix)."""


def close(kernel):
    """Make the dispatcher refuse argument types it has not been compiled for (TypeError), instead of
    compiling them. ``disable_compile`` asserts that a signature exists, so set its flag directly."""
    kernel._can_compile = False


def fast_path(kernel, *args):
    """The status of ``kernel(*args)``, a one-sample kernel (or a function that calls one) behind its closed
    dispatcher, or NOT_DIRECT when an argument is not of the types it was compiled for (numba's
    TypeError; IndexError or ValueError from the caller's own packing of an odd argument): the contract of
    a direct entry point (direct.py), so that every public function tests one status."""
    try:
        return kernel(*args)
    except (TypeError, ValueError, IndexError):
        return NOT_DIRECT


def prepare(kernel, signatures):
    """Compile ``kernel`` for ``signatures`` (from the on-disk cache when warm), then close it. While it
    compiles, another process asking for the same kernel waits for it, then loads it from the cache."""
    if not getattr(kernel, "_rc_prepared", False):
        kernel._can_compile = True
        with compile_lock(kernel):
            for sig in signatures:
                kernel.compile(sig)
        close(kernel)
        kernel._rc_prepared = True


class Prepared:
    """Stands in for ``owner.<attr>``, a kernel made ready by ``make()`` at its first call rather than when
    ``owner`` (a plant, an observer) is built: building one compiles nothing, the warm-up's steps do, with
    their progress shown. The first call puts the ready kernel in the attribute and calls it."""

    def __init__(self, owner, attr, make):
        self.owner, self.attr, self.make = owner, attr, make

    def __call__(self, *args):
        kernel = self.make()
        setattr(self.owner, self.attr, kernel)
        return kernel(*args)


def check(model, st, sample=None, fields=FIELDS):
    """Raise the InputError that a non-zero kernel status stands for."""
    if st == 0:
        return
    code, idx = divmod(int(st), 100000)
    kind, field = divmod(code, 10)
    name = fields.get(field, "input")
    at = "" if sample is None else f" (sample {sample})"
    if kind == LENGTH:
        raise InputError(f"'{name}' has {idx} entries, expected {model.n} (joints {list(model.joint_names)}){at}")
    if kind == NONFINITE:
        if name == "gravity":
            raise InputError(f"gravity[{idx}] is not finite{at}")
        if name.startswith("base"):
            raise InputError(f"'{name}'[{idx}] is not finite (NaN or inf){at}")
        raise InputError(f"'{name}' of joint '{model.joint_names[idx]}' is not finite (NaN or inf){at}")
    if kind == SINGULAR:
        raise SingularMassMatrixError(
            f"the mass matrix is singular at joint '{model.joint_names[idx]}': nothing with mass or rotor "
            f"inertia moves with it (a massless chain end?){at}")
    raise InputError(f"kernel status {st}{at}")


def into(out, res):
    """``res`` written into ``out`` if ``out`` (a caller's preallocated array) has its shape, else ``res``."""
    if out is not None and np.shape(out) == res.shape:
        out[...] = res
        return out
    return res


def as_float(name, x):
    """A C-contiguous float64 copy of ``x``: numbers of any real type, or complex ones whose imaginary parts
    are all zero. Strings, None and other objects are refused, not parsed."""
    try:
        a = np.asarray(x)
    except (TypeError, ValueError):  # ragged nesting
        a = None
    if a is None or a.dtype.kind not in "biufc":
        raise InputError(f"'{name}' must be an array of numbers, got {type(x).__name__}"
                         + (f" of dtype {x.dtype}" if isinstance(x, np.ndarray) else ""))
    if a.dtype.kind == "c":
        if np.any(a.imag != 0):
            raise InputError(f"'{name}' has a non-zero imaginary part")
        a = a.real
    return np.array(a, dtype=float, order="C")


def joint_arrays(model, **named):
    """Convert joint-space inputs to float64 arrays of shape (n,) or, if any is stacked, all (N, n).

    Returns (list of arrays, N or None)."""
    return sized_arrays([(name, x, model.n, "joints", model.joint_names) for name, x in named.items()])


def sized_arrays(items):
    """Like :func:`joint_arrays` for inputs of different sizes: ``items`` are (name, value, size, what,
    names), e.g. ("tau", tau, 6, "rigid joints", names). Returns (list of arrays, N or None)."""
    arrays, N = [], None
    for name, x, size, what, names in items:
        a = as_float(name, x)
        if a.ndim not in (1, 2) or a.shape[-1] != size:
            raise InputError(f"'{name}' must have shape ({size},) or (N, {size}) for {what} {list(names)}, "
                             f"got {a.shape}")
        if a.ndim == 2:
            if N is not None and a.shape[0] != N:
                raise InputError(f"'{name}' stacks {a.shape[0]} samples, others {N}")
            N = a.shape[0]
        arrays.append(a)
    if N is not None:
        arrays = [a if a.ndim == 2 else np.ascontiguousarray(np.broadcast_to(a, (N, a.shape[0]))) for a in arrays]
    return arrays, N


def vector(name, x, size, stacked_ok=True):
    """A float64 array of shape (size,) or (N, size)."""
    a = as_float(name, x)
    if a.ndim not in ((1, 2) if stacked_ok else (1,)) or a.shape[-1] != size:
        raise InputError(f"'{name}' must have {size} elements" + (f" (or shape (N, {size}))" if stacked_ok else "")
                         + f", got shape {a.shape}")
    if not np.isfinite(a).all():
        raise InputError(f"'{name}' contains NaN or inf")
    return a


def model_array(model, gravity):
    """The model's kernel array, or a copy of it with ``gravity`` (m/s^2) in place of its own."""
    return model.kernel_array(None if gravity is None else vector("gravity", gravity, 3, stacked_ok=False))


def external_forces(model, f_ext, N):
    """{link: [fx, fy, fz, tx, ty, tz]} (on the link, link frame, at its origin) -> body-coordinate
    Featherstone forces [n; f] of shape (N, nb, 6), and the part on the base body, (N, 6)."""
    if not f_ext:
        return NO_FEXT_MANY, np.zeros((N, 6))
    if not isinstance(f_ext, dict):
        raise InputError("'f_ext' must map link names to wrenches [fx, fy, fz, tx, ty, tz]")
    out = np.zeros((N, model.nb, 6))
    base = np.zeros((N, 6))
    for link, w in f_ext.items():
        if link not in model.link_frames:
            raise InputError(f"f_ext: unknown link '{link}' (links: {list(model.link_names)})")
        w = vector(f"f_ext['{link}']", w, 6)
        if w.ndim == 2 and w.shape[0] != N:
            raise InputError(f"f_ext['{link}'] stacks {w.shape[0]} samples, the joint inputs {N}")
        body, T = model.link_frames[link]
        R, p = T[:3, :3], T[:3, 3]
        f = w[..., 0:3] @ R.T
        n = w[..., 3:6] @ R.T + np.cross(p, f)
        target = base if body < 0 else out[:, body, :]
        target[..., 0:3] += n
        target[..., 3:6] += f
    return out, base
