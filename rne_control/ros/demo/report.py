"""The demo's report: the table of tracking errors per coordinate and run, and the plot of desired against
actual and of the error."""
from __future__ import annotations

import math

import numpy as np


def percent_of_limit(value, limit, fmt="%.2f") -> str:
    """|value| in percent of ``limit`` (as ``fmt``), or "no limit" where the limit is not finite and
    > 0: never a division by an infinite limit shown as 0."""
    return fmt % (100.0 * abs(value) / limit) if math.isfinite(limit) and limit > 0 else "no limit"


def largest_fraction(values, limits) -> float:
    """The largest |value| / limit over the rows of ``values`` (rows of n) at the joints with a finite limit
    (NaN where none has one or there is no row)."""
    limits = np.asarray(limits, float)
    finite = np.isfinite(limits) & (limits > 0)
    v = np.abs(np.asarray(values, float).reshape(-1, limits.size))[:, finite]
    return float((v / limits[finite]).max()) if v.size else math.nan


def _rms(e):
    return math.sqrt(float(np.mean(np.square(e))))


def print_report(results, labels, units, springs, diag):
    """Print RMS and max error per coordinate (milli-units of ``units``, default rad) and run, an "all" row
    per unit, which run tracks better and by how much (per unit), spring deflections, base drift and the
    controller's last /diagnostics."""
    units = list(units or ["rad"] * len(labels))
    print()
    head = f"{'coordinate':<12}{'unit':>6}" + "".join(f"{r['label'] + ' RMS':>24}{'max':>10}" for r in results)
    print("Tracking error (milli-units)")
    print(head)
    print("-" * len(head))
    for j, name in enumerate(labels):
        print(f"{name:<12}{'m' + units[j]:>6}" + "".join(
            f"{1e3 * _rms(r['err'][:, j]):>24.3f}{1e3 * float(np.abs(r['err'][:, j]).max()):>10.3f}" for r in results))
    for unit in dict.fromkeys(units):
        cols = [j for j, u in enumerate(units) if u == unit]
        print(f"{'all':<12}{'m' + unit:>6}" + "".join(
            f"{1e3 * _rms(r['err'][:, cols]):>24.3f}{1e3 * float(np.abs(r['err'][:, cols]).max()):>10.3f}"
            for r in results))
        if len(results) == 2:
            a, b = (_rms(r["err"][:, cols]) for r in results)
            good, bad = (results[1], results[0]) if b < a else (results[0], results[1])
            print(f"{good['label']} tracks {max(a, b) / max(min(a, b), 1e-15):.1f}x better than {bad['label']}"
                  + (f" ({unit})" if len(set(units)) > 1 else ""))
    for r in results:
        if springs and r["extra"].size:
            dmax = np.abs(r["extra"]).max(axis=0)
            print(f"'{r['label']}': largest spring deflections [mrad] "
                  + ", ".join(f"{j} {1e3 * v:.1f}" for j, v in zip(springs, dmax)))
        if "base_drift" in r:
            d, th, dmax, thmax = r["base_drift"]
            print(f"base during '{r['label']}': moved up to {dmax * 1e3:.1f} mm and {math.degrees(thmax):.2f} deg; "
                  f"net drift {d * 1e3:.2f} mm, {math.degrees(th):.3f} deg")
    print()
    if diag is not None:
        print(f"Loop statistics (/diagnostics, {diag.name}: {diag.message})")
        for kv in diag.values:
            print(f"  {kv.key:<28} {kv.value}")
    else:
        print("Loop statistics: no /diagnostics received from rne_controller")
    print()


def plot(results, joints, path, title, units=None):
    """``units``: per coordinate, "rad" (default) or "m"; errors are drawn in milli-units."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(joints)
    fig, axes = plt.subplots(n, 2, figsize=(12, 1.9 * n + 1), sharex="col", squeeze=False)
    colors = ["tab:orange", "tab:blue"]
    for j in range(n):
        ax, ae = axes[j, 0], axes[j, 1]
        ax.plot(results[0]["t"], results[0]["qd"][:, j], "k--", lw=1.2, label="desired")
        for r, c in zip(results, colors):
            ax.plot(r["t"], r["q"][:, j], color=c, lw=1.0, label=r["label"])
            ae.plot(r["t"], 1e3 * r["err"][:, j], color=c, lw=1.0, label=r["label"])
        unit = units[j] if units else "rad"
        ax.set_ylabel(f"{joints[j]}\n[{unit}]")
        ae.set_ylabel(f"error [m{unit}]")
        ae.grid(alpha=0.3)
        ax.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=8, loc="best")
    axes[0, 1].legend(fontsize=8, loc="best")
    axes[0, 0].set_title("desired vs actual")
    axes[0, 1].set_title("tracking error")
    axes[-1, 0].set_xlabel("time [s]")
    axes[-1, 1].set_xlabel("time [s]")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
