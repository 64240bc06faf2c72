"""The identification record: one ``.npz`` file per recorded trajectory (numpy.savez).

Keys (N samples, n joints; SI units):

============== ========== ================================================================================
key            shape      meaning
============== ========== ================================================================================
format         ()         the string ``"rne_control.identification/1"``
t              (N,)       time stamps (s), strictly increasing, need not be uniform (/joint_states stamps)
names          (n,)       joint names, the column order of every (N, n) array
q              (N, n)     measured positions (rad, m)
tau            (N, n)     the effort the fit uses (N m, N): ``tau_measured`` if the driver reports efforts,
                          else ``tau_commanded``
effort_source  ()         ``"measured"`` or ``"commanded"``: which one ``tau`` is
qd             (N, n)     measured velocities (rad/s, m/s) or NaN; optional, the fit differentiates q
tau_measured   (N, n)     measured efforts or NaN; optional
tau_commanded  (N, n)     commanded efforts (the controller's output); optional
model          ()         the model file the controller used; optional, informational
============== ========== ================================================================================
"""
import numpy as np

from ..model.errors import InputError

FORMAT = "rne_control.identification/1"
SOURCES = ("measured", "commanded")


def save_record(path, t, names, q, tau, effort_source, **optional):
    """Write a record (keys above); ``optional``: qd, tau_measured, tau_commanded, model."""
    if effort_source not in SOURCES:
        raise InputError(f"'effort_source' must be one of {SOURCES}, got {effort_source!r}")
    bad = set(optional) - {"qd", "tau_measured", "tau_commanded", "model"}
    if bad:
        raise InputError(f"unknown record key(s) {sorted(bad)}")
    data = dict(format=FORMAT, t=np.asarray(t, float), names=np.asarray(list(names), dtype=str),
                q=np.asarray(q, float), tau=np.asarray(tau, float), effort_source=effort_source)
    data.update({k: (np.asarray(v, float) if k != "model" else str(v)) for k, v in optional.items()})
    np.savez(path, **data)


class Record:
    """A loaded record with columns in a model's joint order: ``t``, ``q``, ``tau``, ``effort_source``,
    ``names`` and the optional arrays (None when absent)."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


def load_record(path, model=None):
    """Read a record; with ``model``, reorder the columns to ``model.joint_names`` (extra joints dropped)."""
    try:
        z = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read the record '{path}': {exc}") from None
    missing = [k for k in ("t", "names", "q", "tau", "effort_source") if k not in z.files]
    if missing:
        raise InputError(f"record '{path}' lacks the key(s) {missing} (see rne_control.identification.record)")
    if "format" in z.files and str(z["format"]) != FORMAT:
        raise InputError(f"record '{path}' has format {str(z['format'])!r}, expected {FORMAT!r}")
    names = [str(x) for x in z["names"]]
    t = np.asarray(z["t"], float)
    arrays = {}
    for key in ("q", "tau", "qd", "tau_measured", "tau_commanded"):
        if key not in z.files:
            arrays[key] = None
            continue
        a = np.asarray(z[key], float)
        if a.shape != (len(t), len(names)):
            raise InputError(f"record '{path}': '{key}' has shape {a.shape}, expected ({len(t)}, {len(names)}) "
                             f"(t has {len(t)} stamps, names {len(names)} joints)")
        arrays[key] = a
    if model is not None:
        absent = [j for j in model.joint_names if j not in names]
        if absent:
            raise InputError(f"record '{path}' has no data for joint(s) {absent} of model '{model.name}' "
                             f"(it has {names})")
        cols = [names.index(j) for j in model.joint_names]
        arrays = {k: (None if a is None else a[:, cols]) for k, a in arrays.items()}
        names = list(model.joint_names)
    source = str(z["effort_source"])
    if source not in SOURCES:
        raise InputError(f"record '{path}': effort_source must be one of {SOURCES}, got {source!r}")
    return Record(t=t, names=names, effort_source=source,
                  model=str(z["model"]) if "model" in z.files else None, **arrays)
