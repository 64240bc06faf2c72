"""Run by test_direct_call.py in a subprocess: the direct call of elastic_inverse_dynamics on arm7_sea.

Wrong ranks, lengths and dtypes raise ValueError naming the argument; legitimate forms give the bytes
of a clean float64 call; the entry point answers NOT_DIRECT, without touching memory, for anything but
plain float64 vectors (and writeable outputs) in any slot of its tuple. Prints DONE at the end.
"""
import sys
import warnings
from pathlib import Path

import numpy as np

import rne_control as rc
from rne_control.dynamics.elastic import api as elastic_api
from rne_control.dynamics.direct import LAYOUT_OK, NOT_DIRECT, not_compiled

SEA = Path(__file__).resolve().parent.parent / "config" / "arm7_sea.yaml"


def same(a, b):
    return all(type(x) is np.ndarray and x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()
               for x, y in zip(a, b))


def main():
    m = rc.load_dh(SEA)
    n, nr = m.n, len(m.rigid_joint_names)
    rng = np.random.default_rng(3)
    clean = [rng.uniform(-1, 1, n), rng.uniform(-1, 1, n), rng.uniform(-1, 1, nr)]
    names = ["q", "qd", "qdd_rigid"]
    fn = rc.elastic_inverse_dynamics
    ref = fn(m, *clean)
    entry = elastic_api._id_one
    assert LAYOUT_OK and entry is not not_compiled, "the direct path is not in place"
    failures = []
    outs = (np.empty(nr), np.empty(n - nr))
    args = (np.ndarray, m._K, *clean, *outs)
    if entry(id(args), 1) != 0 or not same(outs, ref):
        failures.append("direct entry on clean arrays")
    ro = np.zeros(nr)
    ro.setflags(write=False)
    nasty = [None, 1.5, "q" * n, [0.0] * n, np.zeros((2, n)), np.zeros(n, np.float32), np.zeros(n, ">f8"),
             np.zeros(2 * n)[::2], np.zeros(n, dtype=object), object()]
    for slot in range(1, len(args)):
        for bad in nasty + ([ro] if slot >= 5 else []):
            a = list(args)
            a[slot] = bad
            a = tuple(a)
            if entry(id(a), 1) != NOT_DIRECT:
                failures.append(f"direct entry accepted slot {slot} = {type(bad).__name__} {getattr(bad, 'dtype', '')}")
    for i, name in enumerate(names):
        for label, make in {"rank 2": lambda x: x[:, None], "short": lambda x: x[:-1], "None": lambda x: None,
                            "strings": lambda x: x.astype(str), "complex": lambda x: x + 1j,
                            "NaN": lambda x: np.where(np.arange(x.size) == 1, np.nan, x)}.items():
            inputs = list(clean)
            inputs[i] = make(clean[i])
            try:
                fn(m, *inputs)
                failures.append(f"{name} as {label}: accepted")
            except ValueError as e:
                if name not in str(e):
                    failures.append(f"{name} as {label}: the error does not name it: {e}")
        x = clean[i]
        view = np.empty(2 * x.size)
        view[::2] = x
        for label, given in {"list": x.tolist(), "strided": view[::2], "big-endian": x.astype(">f8"),
                             "read-only": np.array(x)}.items():
            if label == "read-only":
                given.setflags(write=False)
            inputs = list(clean)
            inputs[i] = given
            if not same(fn(m, *inputs), ref):
                failures.append(f"{name} as {label}: differs from the clean float64 result")
    S = [np.tile(c, (3, 1)) for c in clean]
    tau, qdd = fn(m, *S)
    if not (np.array_equal(tau[1], ref[0]) and np.array_equal(qdd[2], ref[1])):
        failures.append("stacked samples differ from the single call")
    if failures:
        print("\n".join(failures))
        sys.exit(1)
    print("DONE")


if __name__ == "__main__":
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)   # model-file warnings
        warnings.simplefilter("error", np.exceptions.ComplexWarning)
        main()
