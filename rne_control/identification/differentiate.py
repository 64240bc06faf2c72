"""Joint velocities and accelerations from measured positions, with torques filtered alike (Gautier 1997).

1. Resample q and tau onto a uniform grid (linear interpolation): /joint_states stamps are not uniform,
   and a digital filter assumes they are.
2. Low-pass q with a zero-phase Butterworth filter (scipy.signal.filtfilt: forward and backward, so no
   delay), and take central differences for qd and qdd.
3. Filter tau with the same filter ("parallel filtering"): the filter then acts on both sides of
   tau = Y(q, qd, qdd) pi alike, so the estimate is not biased by the filter's attenuation.
4. Keep every ``decimate``-th sample (the low-pass filter is the anti-aliasing filter).
"""
import numpy as np

from ..model.errors import InputError


def _check(name, x, rows, cols=None):
    try:
        a = np.array(x, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"'{name}' must be an array of numbers") from None
    if a.ndim == 1 and cols is not None:
        a = a[:, None]
    if a.shape[0] != rows or (cols is not None and (a.ndim != 2 or a.shape[1] != cols)):
        raise InputError(f"'{name}' has shape {a.shape}, expected ({rows}{', ' + str(cols) if cols else ''}) "
                         f"(one row per time stamp)")
    bad = np.argwhere(~np.isfinite(a))
    if len(bad):
        where = f" (sample {bad[0][0]}" + (f", column {bad[0][1]})" if a.ndim == 2 else ")")
        raise InputError(f"'{name}' contains NaN or inf{where}")
    return a


def differentiate(t, q, tau, cutoff_hz, decimate=1, order=4):
    """(t, q, qd, qdd, tau) on a uniform grid from samples at stamps ``t`` (s, increasing), positions
    ``q`` (N, n) (rad or m) and torques ``tau`` (N, n) (N m or N): see the module docstring.

    ``cutoff_hz``: the Butterworth cut-off (Hz; Gautier's rule of thumb: 5-10 x the trajectory's highest
    frequency, well below the sample rate). ``decimate``: keep every k-th sample after filtering; the
    cut-off must lie below the decimated Nyquist frequency. ``order``: the filter order (the zero-phase
    result has twice this). The grid step is the median stamp interval; the first and last sample are
    dropped (central differences need both neighbours).
    """
    from scipy.signal import butter, filtfilt

    t = _check("t", t, np.shape(t)[0] if np.ndim(t) == 1 else -1)
    N = t.shape[0]
    if np.ndim(q) not in (1, 2):
        raise InputError(f"'q' must have shape (N, n), got {np.shape(q)}")
    n = 1 if np.ndim(q) == 1 else np.shape(q)[1]
    q = _check("q", q, N, n)
    tau = _check("tau", tau, N, n)
    dts = np.diff(t)
    if not np.all(dts > 0):
        k = int(np.argmax(~(dts > 0)))
        raise InputError(f"'t' must be strictly increasing (t[{k + 1}] = {t[k + 1]} after t[{k}] = {t[k]})")
    if int(decimate) != decimate or decimate < 1:
        raise InputError(f"'decimate' must be a positive integer, got {decimate}")
    dt = float(np.median(dts))
    fs = 1.0 / dt
    if not 0.0 < cutoff_hz < 0.5 * fs / decimate:
        raise InputError(f"'cutoff_hz' = {cutoff_hz} must be in (0, {0.5 * fs / decimate:.6g}) Hz: the Nyquist "
                         f"frequency of the {fs:.6g} Hz samples decimated by {decimate}")
    M = int(np.floor((t[-1] - t[0]) / dt + 1e-9)) + 1
    padlen = 3 * (order + 1)
    if M < max(padlen + 1, 3 * decimate + 2):
        raise InputError(f"too few samples ({N}) to filter and differentiate; need more than {max(padlen + 1, 3)}")
    tg = t[0] + dt * np.arange(M)
    qg = np.column_stack([np.interp(tg, t, q[:, j]) for j in range(n)])
    taug = np.column_stack([np.interp(tg, t, tau[:, j]) for j in range(n)])
    b, a = butter(order, cutoff_hz / (0.5 * fs))
    qf = filtfilt(b, a, qg, axis=0)
    tauf = filtfilt(b, a, taug, axis=0)
    qd = (qf[2:] - qf[:-2]) / (2.0 * dt)
    qdd = (qf[2:] - 2.0 * qf[1:-1] + qf[:-2]) / (dt * dt)
    keep = slice(0, None, int(decimate))
    return tg[1:-1][keep], qf[1:-1][keep], qd[keep], qdd[keep], tauf[1:-1][keep]
