"""``rne_demo --collision``'s analysis, report and plot (numpy and matplotlib, no ROS): from the recorded
joint states, the observer's residual r (``~/external_torque``) and the contact force (``~/contact_wrench``),
per run the contact onset, the detection, its delay, the peak and final contact force, and r against the
true external torque J_lin(q)^T F (F at the frame's origin in base axes, J_lin its linear Jacobian in base
axes, as rne_sim applies it); and the detection delay of a constant wrench from its onset."""
from __future__ import annotations

import math

import numpy as np

from .report import largest_fraction

STEADY = 0.5        # s: the end of a run over which r is compared with the truth (when the force is steady)


def _key(t):
    return np.round(np.asarray(t, float) * 1e6).astype(np.int64)   # stamps in µs: exact for 1 kHz states


def _at(t_from, t_to, values):
    """``values`` (stamped ``t_from``) at the stamps ``t_to``: an array with NaN rows where none."""
    idx = {k: i for i, k in enumerate(_key(t_from))}
    out = np.full((len(t_to),) + values.shape[1:], np.nan)
    for j, k in enumerate(_key(t_to)):
        i = idx.get(k)
        if i is not None:
            out[j] = values[i]
    return out


def _gaps(t, dt):
    """How many samples of period ``dt`` are missing between the first and last of the stamps ``t``."""
    return int(np.sum(np.maximum(np.round(np.diff(t) / dt) - 1, 0))) if len(t) > 1 else 0


def _first_over(r, thresholds):
    """Index of the first row with some |r_i| > threshold_i, or None."""
    over = np.flatnonzero(np.any(np.abs(r) > thresholds, axis=1))
    return int(over[0]) if over.size else None


def _detection(t, r, thresholds, t_from, dt):
    """(stamp of the first r over a threshold at or after ``t_from``, joint indices over, consecutive): whether
    the r sample one cycle before it was recorded too (else the crossing may have come earlier)."""
    keep = t >= t_from - 1e-9
    t, r = t[keep], r[keep]
    i = _first_over(r, thresholds)
    if i is None:
        return None, [], True
    consecutive = i > 0 and abs(t[i] - t[i - 1] - dt) < 1e-6
    return float(t[i]), np.flatnonzero(np.abs(r[i]) > thresholds).tolist(), consecutive


def analyse(model, frame, joints, thresholds, limits, k_o, dt, states, r_series, F_series, collision, runs,
            run_length, wrench, contact):
    """The figures and series of the demo. ``states``: the recorded (t, q, qd, extra, effort); ``r_series``,
    ``F_series``: (stamps, values) of ~/external_torque and ~/contact_wrench (force, base axes);
    ``collision``: (arrival sim time, value) of ~/collision; ``runs``: (label, start) with the motion starting
    at ``start`` (s, sim time) and recorded for ``run_length`` s; ``wrench``: the constant wrench's ``t_pub``
    (sim time it was sent, as the demo saw it: before its onset), ``hold`` (s), ``ratio``, ``torques(q)``
    (its joint torques per row of q) and ``change(states, t_from, w)`` (the stamp of the first state after
    ``t_from`` that the simulation does not reproduce with the wrench ``w`` (None: without one));
    ``contact(q, qd)``: rne_sim's contact force at a state (N, base axes), for the ~/contact_wrench messages this
    node did not get, and to check those it got."""
    import rne_control as rc

    t_s = np.array([s[0] for s in states])
    keep = np.r_[True, np.diff(t_s) > 0]       # a state republished with its stamp
    t_s = t_s[keep]
    q = np.array([s[1] for s in states])[keep]
    qd = np.array([s[2] for s in states])[keep]
    eff = np.array([s[4] for s in states])[keep]
    t_r, r = r_series
    t_F, F = F_series
    bound = math.log(2.0) / k_o + 2 * dt
    res = dict(joints=list(joints), thresholds=np.asarray(thresholds, float), limits=np.asarray(limits, float),
               k_o=k_o, dt=dt, bound=bound, runs=[])

    # the constant wrench: its onset by replaying the recorded steps, its detection, r against J^T F
    w = dict(ratio=wrench["ratio"], force=float(np.linalg.norm(wrench["w"][:3])))
    sel = (t_s >= wrench["t_pub"] - 0.05) & (t_s <= wrench["t_pub"] + wrench["hold"] + 0.5)
    recorded = list(zip(t_s[sel], q[sel], qd[sel], eff[sel]))
    onset = wrench["change"](recorded, wrench["t_pub"] - 0.03, None)
    w["onset"] = onset
    if onset is not None:
        w["start"] = onset - dt           # it acts over the whole step that ends at the onset state
        removed = wrench["change"](recorded, onset, wrench["w"])
        w["end"] = removed - dt if removed is not None else math.nan   # the first step without it starts
        before = (t_r >= w["start"] - 0.4) & (t_r < w["start"])
        w["rest_r"] = largest_fraction(r[before], limits)
        w["t_det"], w["joints_over"], w["consecutive"] = _detection(t_r, r, thresholds, onset, dt)
        if w["t_det"] is not None:
            w["delay"] = w["t_det"] - w["start"]
            w["delay_from_state"] = w["t_det"] - onset
        # r against its torques once it has settled (after 5 / K_O) until it is removed
        win = (t_r >= w["start"] + 5.0 / k_o) & (t_r <= w["end"])
        truth = wrench["torques"](_at(t_s, t_r[win], q))
        ok = np.all(np.isfinite(truth), axis=1)
        if ok.any():
            e = np.linalg.norm(r[win][ok] - truth[ok], axis=1) / np.linalg.norm(truth[ok], axis=1)
            w["r_error"] = float(e.max())
        w["peak_ratio"] = float(np.max(np.abs(wrench["torques"](q[(t_s >= onset) & (t_s < onset + 0.05)]))
                                       / thresholds))
    res["wrench"] = w

    for i, (label, start) in enumerate(runs):
        end = start + run_length
        # every state of the run; F from ~/contact_wrench, and where a message was not recorded (this node
        # lags the lockstep loop, which keeps 10 of them) from the state by rne_sim's contact law
        win_s = (t_s >= start) & (t_s <= end)
        tF, qF, qdF = t_s[win_s], q[win_s], qd[win_s]
        Fw = _at(t_F, tF, F)
        lost = ~np.all(np.isfinite(Fw), axis=1)
        F_law = np.array([contact(a, b) for a, b in zip(qF, qdF)])
        F_check = float(np.abs(Fw[~lost] - F_law[~lost]).max()) if (~lost).any() else math.nan
        Fw[lost] = F_law[lost]
        Fn = np.linalg.norm(Fw, axis=1)
        J = rc.frame_jacobian(model, qF, frame)                       # (N, 6, n): rows [linear; angular], base axes
        truth = np.einsum("kij,ki->kj", J[:, :3], Fw)                 # J_lin^T F
        rF = _at(t_r, tF, r)
        win_r = (t_r >= start) & (t_r <= end)
        run = dict(label=label, start=start, t=tF - start, force=Fn, truth=truth, r=rF, F_check=F_check,
                   missing_F=int(lost.sum()), missing_r=int(np.count_nonzero(~np.all(np.isfinite(rF), axis=1))),
                   missing_states=_gaps(tF, dt))
        touching = np.flatnonzero(Fn > 0)
        run["onset"] = float(tF[touching[0]]) if touching.size else None
        run["peak"] = float(Fn.max()) if Fn.size else math.nan
        run["t_peak"] = float(tF[int(np.argmax(Fn))]) if Fn.size else math.nan
        run["final"] = float(Fn[-1]) if Fn.size else math.nan
        # free motion: r from the start of the run to the contact
        free = (t_r >= start) & (t_r < (run["onset"] if run["onset"] is not None else end))
        run["free_r"] = largest_fraction(r[free], limits)
        run["t_det"], run["joints_over"], run["consecutive"] = _detection(t_r[win_r], r[win_r], thresholds, start, dt)
        i_truth = _first_over(truth, thresholds)
        run["truth_over"] = float(tF[i_truth]) if i_truth is not None else None
        if run["onset"] is not None and run["t_det"] is not None:
            run["delay"] = run["t_det"] - run["onset"]
        if run["truth_over"] is not None and run["t_det"] is not None:
            run["delay_truth"] = run["t_det"] - run["truth_over"]
        # r against the truth over the last STEADY s (steady contact in the run that keeps pressing)
        last = (tF >= end - STEADY) & np.all(np.isfinite(rF), axis=1)
        if last.any() and Fn[last].min() > 0:
            tr = truth[last]
            e = np.linalg.norm(rF[last] - tr, axis=1) / np.linalg.norm(tr, axis=1)
            run["steady"] = dict(error=float(e.max()), force=(float(Fn[last].min()), float(Fn[last].max())),
                                 per_joint=np.max(np.abs(rF[last] - tr), axis=0), truth=np.abs(tr).mean(axis=0))
        nxt = runs[i + 1][1] if i + 1 < len(runs) else math.inf
        run["collision_true"] = any(v for t, v in collision if start <= t < nxt)
        res["runs"].append(run)
    return res


def _ms(x):
    return f"{1e3 * x:.1f} ms"


def _pct(x):
    """A fraction of the effort limits in percent ("-": none, no finite limit or no sample)."""
    return f"{100 * x:.3f}" if math.isfinite(x) else "-"


def print_collision_report(res, sc):
    """Print the demo's figures: the scene, the constant wrench's detection delay against the bound, per run
    the contact onset, detection, delay, peak and final force, and r against the truth in steady contact."""
    dt, bound, k_o = res["dt"], res["bound"], res["k_o"]
    thr, joints = res["thresholds"], res["joints"]
    groups = {}
    for j, x in zip(joints, thr):
        groups.setdefault(round(float(x), 6), []).append(j)
    print()
    print(f"Collision detection ({sc['rate']:.0f} Hz, lockstep; K_O = {k_o:g} 1/s; thresholds "
          f"{100 * sc['fraction']:.0f} % of the effort limits: "
          + ", ".join(f"{x:g} N m ({', '.join(js)})" for x, js in groups.items()) + ")")
    print(f"bound for a constant wrench of at least twice the threshold: ln 2 / K_O + 2 cycles = {_ms(bound)}")
    w = res["wrench"]
    print()
    print(f"Constant wrench ({w['force']:.2f} N at {sc['frame']}, joint torque {w.get('peak_ratio', math.nan):.2f}x "
          "the threshold on its most loaded joint), the arm at rest, reaction none:")
    if w.get("onset") is None:
        print("  wrench onset: not found (the replay of the recorded steps did not reproduce rne_sim)")
    elif w.get("t_det") is None:
        print(f"  wrench onset {w['start']:.3f} s: not detected")
    else:
        cyc = round(w["delay"] / dt)
        flag = "ok" if w["delay"] <= bound + 1e-9 else "over"
        print(f"  r before it: largest |r| {_pct(w['rest_r'])} % of the effort limits")
        print(f"  onset {w['start']:.3f} s (it acts from the step ending at the state of {w['onset']:.3f} s), "
              f"held {_ms(w['end'] - w['start'])}, "
              f"detected at the state of {w['t_det']:.3f} s ({', '.join(joints[j] for j in w['joints_over'])})"
              + ("" if w["consecutive"] else "; the r sample before it was not recorded"))
        print(f"  wrench detection delay: {cyc} cycles = {_ms(w['delay'])} (bound {_ms(bound)}): {flag}")
        if "r_error" in w:
            print(f"  r against J^T F after 5 / K_O: largest error {100 * w['r_error']:.2f} % (|r - J^T F| / |J^T F|)")
    print()
    print(f"Contact: a plane {100 * sc['below']:.0f} cm under {sc['frame']}'s start stops its origin "
          f"(k = {sc['stiffness']:g} N/m, c = {sc['damping']:g} N s/m); the {sc['T']:g} s trajectory ends "
          f"{100 * sc['depth']:.0f} cm behind it.")
    print("The contact force grows from zero (a spring-damper, not a step): the delays below are from the first")
    print("state with a contact force, and from the first state whose true torque J_lin^T F crosses a threshold;")
    print("the bound applies to a step of at least twice the threshold (above), not to this ramp.")
    head = (f"{'run':<16}{'onset [s]':>11}{'detected [s]':>14}{'delay':>16}{'from J^T F over':>18}{'peak F [N]':>12}"
            f"{'final F [N]':>13}{'free |r|':>10}")
    print(head)
    print("-" * len(head))
    for run in res["runs"]:
        onset = f"{run['onset'] - run['start']:.3f}" if run["onset"] is not None else "none"
        det = f"{run['t_det'] - run['start']:.3f}" if run["t_det"] is not None else "none"
        if "delay" in run:
            flag = "ok" if run["delay"] <= bound + 1e-9 else "over"
            delay = f"{round(run['delay'] / dt)} cyc {flag}"
        else:
            delay = "-"
        dtr = f"{round(run['delay_truth'] / dt)} cyc" if "delay_truth" in run else "-"
        print(f"{run['label']:<16}{onset:>11}{det:>14}{delay:>16}{dtr:>18}{run['peak']:>12.2f}{run['final']:>13.2f}"
              f"{_pct(run['free_r']):>9}%")
    print("(times from the start of each run's motion; delay in cycles of "
          f"{_ms(dt)}; free |r|: the largest |r| before the contact, % of the effort limits)")
    for run in res["runs"]:
        parts = []
        if "delay" in run:
            parts.append(f"contact detection delay {round(run['delay'] / dt)} cycles = {_ms(run['delay'])}")
        parts.append(f"peak contact force {run['peak']:.2f} N")
        parts.append(f"final contact force {run['final']:.2f} N")
        parts.append("~/collision went true" if run["collision_true"] else "~/collision stayed false")
        if run["t_det"] is not None and not run["consecutive"]:
            parts.append("the r sample before the detection was not recorded")
        if run["missing_r"] or run["missing_F"] or run["missing_states"]:
            parts.append(f"{run['missing_r']} r, {run['missing_F']} contact (taken from rne_sim's contact law at the "
                         f"state) and {run['missing_states']} joint state samples not recorded")
        if math.isfinite(run["F_check"]) and run["F_check"] > 1e-9:
            parts.append(f"~/contact_wrench differs from rne_sim's contact law at the state by {run['F_check']:.2e} N")
        print(f"{run['label']}: " + "; ".join(parts))
    a, b = res["runs"][0], res["runs"][1]
    if a["final"] > 0:
        print(f"with the reaction: peak force {b['peak'] / a['peak']:.2f}x, final force {b['final'] / a['final']:.4f}x "
              "those without")
    for run in res["runs"]:
        st = run.get("steady")
        if st:
            print(f"r vs true external torque, steady contact ({run['label']}, last {STEADY:g} s, force "
                  f"{st['force'][0]:.2f}-{st['force'][1]:.2f} N): largest error {100 * st['error']:.4f} % "
                  "(|r - J_lin^T F| / |J_lin^T F|)")
            print("  per joint, largest |r - J^T F| [N m] / mean |J^T F| [N m]: " + ", ".join(
                f"{j} {e:.3f}/{x:.2f}" for j, e, x in zip(joints, st["per_joint"], st["truth"])))
    print()


def plot_collision(res, path):
    """r against the true external torque J_lin^T F in the run with the reaction, for the (up to four) joints
    the contact loads most relative to their thresholds (those it loads at all: 5 % of the most loaded one),
    with the thresholds, the contact onset and the detection; the contact force of both runs."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = res["runs"]
    react = runs[-1]
    thr = res["thresholds"]
    load = np.nanmax(np.abs(react["truth"]), axis=0) / thr
    top = sorted(j for j in np.argsort(-load)[:4].tolist() if load[j] >= 0.05 * load.max())
    k = len(top)
    fig, axes = plt.subplots(k + 1, 1, figsize=(11, 2.2 * k + 3.2), squeeze=False,
                             gridspec_kw=dict(height_ratios=[1] * k + [1.4]))
    axes = axes[:, 0]
    t0 = react["onset"] - react["start"] if react["onset"] is not None else 0.0
    t_det = react["t_det"] - react["start"] if react["t_det"] is not None else None
    for ax, j in zip(axes, top):
        ax.plot(react["t"], react["truth"][:, j], "k--", lw=1.2, label="true external torque J_lin^T F")
        ax.plot(react["t"], react["r"][:, j], color="tab:blue", lw=1.1, label="r (~/external_torque)")
        for s in (-1, 1):
            ax.axhline(s * thr[j], color="tab:red", lw=0.8, ls=":", label="threshold" if s > 0 else None)
        ax.axvline(t0, color="grey", lw=0.8, ls="-.", label="contact onset")
        if t_det is not None:
            ax.axvline(t_det, color="tab:green", lw=1.0, label="detected")
        ax.set_xlim(t0 - 0.1, t0 + 0.4)
        ax.set_ylabel(f"{res['joints'][j]}\n[N m]")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7, loc="upper right", ncol=3)
    axes[0].set_title(f"{react['label']}: r against the true external torque", fontsize=10)
    axes[k - 1].set_xlabel("time from the start of the motion [s]")
    ax = axes[-1]
    for run, c in zip(runs, ["tab:orange", "tab:blue"]):
        ax.plot(run["t"], run["force"], color=c, lw=1.2, label=f"{run['label']}: peak {run['peak']:.1f} N, "
                                                                 f"final {run['final']:.1f} N")
        if run["t_det"] is not None:
            ax.axvline(run["t_det"] - run["start"], color=c, lw=0.8, ls=":")
    ax.set_title("contact force (dotted: detection)", fontsize=10)
    ax.set_xlabel("time from the start of the motion [s]")
    ax.set_ylabel("contact force [N]")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="center right")
    fig.suptitle("rne_demo --collision: arm7 pressing into a plane, collision.reaction none and damp")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
