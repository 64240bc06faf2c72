"""Run by test_direct_call.py in a subprocess (a crash then fails the test instead of ending the run):

    python direct_call_checks.py FUNCTION

For one public dynamics function on UR5: every wrong rank, length or dtype raises ValueError (an
InputError naming the argument); every legitimate form gives exactly the bytes a clean float64 array
gives; the direct entry point itself answers NOT_DIRECT, without touching the memory, for anything but a
plain float64 vector, and any Python object in any slot of its argument tuple. Prints DONE at the end.
"""
import sys
import warnings

import numpy as np

import rne_control as rc
from rne_control.dynamics import api
from rne_control.dynamics.direct import LAYOUT_OK, NOT_DIRECT, not_compiled
from rne_control.model.layout import KW
from oracle import erd

UR5 = erd("ur_description/urdf/ur5_robot.urdf")
# function -> (number of joint-space inputs, its argument names, the direct entry's global in api, flags)
FUNCTIONS = {
    "inverse_dynamics": (3, ("q", "qd", "qdd"), "_rnea_one", 1),
    "gravity_torques": (1, ("q",), "_gravity_one", 0),
    "coriolis_torques": (2, ("q", "qd"), "_rnea_one", 2),
    "mass_matrix": (1, ("q",), "_crba_one", 0),
    "forward_dynamics": (3, ("q", "qd", "tau"), "_aba_one", 1),
}


def same(a, b):
    """Bitwise equality of two results."""
    return type(a) is np.ndarray and a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def plain(x, ndim, writeable):
    """What the direct entry takes: an exact ndarray, native float64, C-contiguous, aligned, of rank ndim."""
    return (type(x) is np.ndarray and x.dtype == np.float64 and x.dtype.isnative and x.ndim == ndim
            and x.flags.c_contiguous and x.flags.aligned and (x.flags.writeable or not writeable))


def raises_value_error(call, name):
    try:
        call()
    except ValueError as e:
        return f"'{name}'" in str(e) or name in str(e)
    return False


def main(fname):
    fn = getattr(rc, fname)
    nin, names, entry_name, flags = FUNCTIONS[fname]
    m = rc.load_urdf(UR5)
    n = m.n
    rng = np.random.default_rng(7)
    clean = [rng.uniform(-1.5, 1.5, n) for _ in range(nin)]
    ref = fn(m, *clean)  # compiles; the next calls go direct
    entry = getattr(api, entry_name)
    assert LAYOUT_OK and entry is not not_compiled, "the direct path is not in place"
    failures = []

    # the direct entry point on its own: 0 for plain float64 vectors, NOT_DIRECT for anything else
    out = np.empty((n, n) if fname == "mass_matrix" else n)
    args = (np.ndarray, m._K, *clean, *(clean[:1] if fname == "coriolis_torques" else ()), out)  # C: qdd unused
    if entry(id(args), flags) != 0 or not same(out, ref):
        failures.append("direct entry on clean arrays")
    ro = clean[0].copy()
    ro.setflags(write=False)
    nasty = [None, 1, 1.5, "q" * n, b"x" * 64, [0.0] * n, (0.0,) * n, {"q": 1}, np.float64(1.0), object(),
             np.zeros((2, n)), np.zeros((n, 1)), np.zeros(n, np.float32), np.zeros(n, np.int64),
             np.zeros(n, ">f8"), np.zeros(n, complex), np.zeros(n, np.longdouble), np.zeros(2 * n)[::2],
             np.zeros(n, dtype=object), np.array(["1"] * n), np.zeros(n).view(np.recarray), np.zeros(0)]
    last = len(args) - 1
    for slot in range(1, len(args)):
        for bad in nasty + ([ro, m._K.copy()] if slot > 1 else []):
            a = list(args)
            a[slot] = bad
            a = tuple(a)
            st = entry(id(a), flags)
            ndim = 2 if slot == 1 or (slot == last and fname == "mass_matrix") else 1
            ok = plain(bad, ndim, slot in (1, last)) and (slot != 1 or bad.shape[1] == KW)
            if (st == NOT_DIRECT) == ok:
                failures.append(f"direct entry, slot {slot} = {type(bad).__name__} {getattr(bad, 'dtype', '')} "
                                f"{getattr(bad, 'shape', '')}: status {st}")
    short = args[:-2] + (np.zeros(n - 1), out)  # held in a variable: the entry reads it by address
    if entry(id(short), flags) <= 0:
        failures.append("direct entry: a short input vector must give a LENGTH status")
    for wrong_size in (args[:-1], args + (out,), args[:2], ()):
        if entry(id(wrong_size), flags) != NOT_DIRECT:
            failures.append(f"direct entry: a tuple of {len(wrong_size)} items accepted")

    # the public function: wrong inputs raise ValueError naming the argument
    wrong = {
        "rank 0": lambda x: x[0], "rank 2 (n, 1)": lambda x: x[:, None], "rank 3": lambda x: np.stack([[x]]),
        "length n-1": lambda x: x[:-1], "length n+1": lambda x: np.append(x, 0.0), "length 0": lambda x: x[:0],
        "stack (4, n+1)": lambda x: np.zeros((4, n + 1)),
        "complex, imaginary part": lambda x: x + 1j, "object": lambda x: x.astype(object),
        "strings": lambda x: x.astype(str), "string": lambda x: "0" * n, "None": lambda x: None,
        "list with None": lambda x: [None] * n, "ragged list": lambda x: [[0.0] * n, [0.0]],
        "NaN": lambda x: np.where(np.arange(n) == 2, np.nan, x),
    }
    for i, name in enumerate(names):
        for label, make in wrong.items():
            inputs = list(clean)
            inputs[i] = make(clean[i])
            if not raises_value_error(lambda: fn(m, *inputs), name):
                failures.append(f"{name} as {label}: no ValueError naming '{name}'")
        if nin > 1:  # stacks of different lengths
            inputs = [np.tile(x, (3, 1)) for x in clean]
            inputs[i] = np.tile(clean[i], (2, 1))
            try:
                fn(m, *inputs)
                failures.append(f"{name}: stacks of 2 and 3 samples accepted")
            except ValueError:
                pass

    # legitimate forms: exactly the clean float64 result of the same numbers
    def forms(x):
        ints = np.round(x * 3).astype(np.int64)
        view = np.empty(2 * n)
        view[::2] = x
        ro = x.copy()
        ro.setflags(write=False)
        return {
            "list of floats": (x.tolist(), x), "tuple of floats": (tuple(x), x),
            "float32": (x.astype(np.float32), x.astype(np.float32).astype(float)),
            "int64 array": (ints, ints.astype(float)), "int32 array": (ints.astype(np.int32), ints.astype(float)),
            "list of ints": (ints.tolist(), ints.astype(float)),
            "strided view": (view[::2], x), "read-only": (ro, x), "big-endian": (x.astype(">f8"), x),
            "complex, zero imaginary part": (x.astype(complex), x), "float64 subclass": (x.view(np.recarray), x),
            "negative stride": (x[::-1].copy()[::-1], x),
        }

    for i, name in enumerate(names):
        for label, (given, value) in forms(clean[i]).items():
            expect_in = list(clean)
            expect_in[i] = np.ascontiguousarray(value, dtype=float)
            inputs = list(clean)
            inputs[i] = given
            try:
                got = fn(m, *inputs)
            except Exception as e:  # noqa: BLE001
                failures.append(f"{name} as {label}: raised {type(e).__name__}: {e}")
                continue
            if not same(got, fn(m, *expect_in)):
                failures.append(f"{name} as {label}: differs from the clean float64 result")

    # stacks: C- and Fortran-ordered, read-only, strided, big-endian, a list of lists
    N = 4
    S = [rng.uniform(-1.5, 1.5, (N, n)) for _ in range(nin)]
    ref_stack = fn(m, *S)
    for k in range(N):
        if not same(ref_stack[k], fn(m, *[s[k] for s in S])):
            failures.append(f"stacked sample {k} differs from the single call")
    ro = [s.copy() for s in S]
    for s in ro:
        s.setflags(write=False)
    stacks = {"Fortran-ordered": [np.asfortranarray(s) for s in S], "read-only": ro,
              "strided": [np.repeat(s, 2, axis=0)[::2] for s in S], "big-endian": [s.astype(">f8") for s in S],
              "list of lists": [s.tolist() for s in S]}
    for label, given in stacks.items():
        if not same(fn(m, *given), ref_stack):
            failures.append(f"{label} stack differs from the C-ordered float64 stack")
    if nin > 1:  # an unstacked input is broadcast
        mixed = [S[0]] + [np.tile(c, (N, 1)) for c in clean[1:]]
        if not same(fn(m, S[0], *clean[1:]), fn(m, *mixed)):
            failures.append("broadcast single sample differs from the tiled stack")

    # out= (the functions that take it): a plain float64 vector is written and returned; others work too
    if fname in ("inverse_dynamics", "gravity_torques", "coriolis_torques"):
        o = np.full(n, np.nan)
        if fn(m, *clean, out=o) is not o or not same(o, ref):
            failures.append("out=: not written in place")
        o2 = np.full(2 * n, np.nan)[::2]
        got = fn(m, *clean, out=o2)
        if not np.array_equal(o2, ref) or not same(np.ascontiguousarray(got), ref):
            failures.append("out= a strided view: wrong result")
        o3 = np.zeros(n)
        o3.setflags(write=False)
        try:
            fn(m, *clean, out=o3)
            failures.append("out= a read-only array: accepted")
        except ValueError:
            pass
        if not same(fn(m, *clean), ref):
            failures.append("result changed after the out= calls")

    if failures:
        print("\n".join(failures))
        sys.exit(1)
    print("DONE")


if __name__ == "__main__":
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a ComplexWarning or any other is a failure
        main(sys.argv[1])
