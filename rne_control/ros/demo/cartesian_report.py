"""``rne_demo --cartesian``'s analysis, report and plot (numpy and matplotlib, no ROS): from the recorded joint
states (the pose, the twist J(q) qd and sigma_min(J) of the task frame by the model's kinematics, base frame),
the controller's ``~/task_state`` and rne_sim's ``~/contact_wrench``: the stiffness per axis from the
deflection under a constant wrench, the step's size, settling times, peak tool speeds and sigma_min, and the
contact force against F_d.

Rotations are compared by the log map: the rotation error of R against R_ref is |log(R R_ref^T)| (rad), the
rotational deflection log(R R_ref^T) (base axes) is what the impedance's rotational spring acts on."""
from __future__ import annotations

import math

import numpy as np

STEADY_PUSH = 0.4    # s: the end of the hold over which the deflection is taken as steady
REFERENCE = 0.3      # s: before the wrench, over which the held pose is measured
STEADY_PRESS = 0.5   # s: the end of the press over which the contact force is taken as steady
PRESS_BAND = 0.02    # the contact force's settling band, fraction of F_d
STEP_BAND = 0.02     # the step's coarse settling band, fraction of its size
FINE_BAND = (1e-3, math.radians(1.0))    # m, rad: the step's fine settling band
AXES = ("x", "y", "z", "rot x", "rot y", "rot z")


def _logs(R, R_ref):
    """log(R_i R_ref^T) (N, 3) per rotation R_i (N, 3, 3)."""
    from ...control.task.rotation import log

    return np.array([log(Ri @ R_ref.T) for Ri in R]).reshape(-1, 3)


def _settle(t, out, t0):
    """The time from t0 (s) after which ``out`` (bool per sample) stays False to the end; NaN if it is still
    True at the end, 0 if never True."""
    bad = np.flatnonzero(out)
    if bad.size == 0:
        return 0.0
    i = int(bad[-1])
    return math.nan if i + 1 >= len(t) else float(t[i + 1] - t0)


def _match(t_s, P, t_arrival, p_msg, tol=1e-9, back=1.0, ahead=0.05):
    """The stamps of ~/task_state messages: each message's measured position ``p_msg`` (p_d + (p - p_d), m) is
    the task frame's position at the state it was computed from; the nearest recorded state among those
    stamped from ``back`` s before its arrival (``t_arrival``, s: the demo node's clock, which may not have
    taken that state's /clock yet: up to ``ahead`` s after it) within ``tol`` m gives its stamp, else NaN.
    Unambiguous while the frame moves (0.1 mm per cycle at 0.1 m/s); at rest the stamp may be a neighbour's."""
    out = np.full(len(t_arrival), np.nan)
    lo = np.searchsorted(t_s, t_arrival - back)
    hi = np.searchsorted(t_s, t_arrival + ahead, side="right")
    for k, (a, b) in enumerate(zip(lo, hi)):
        if b <= a:
            continue
        d = np.linalg.norm(P[a:b] - p_msg[k], axis=1)
        i = int(np.argmin(d))
        if d[i] < tol:
            out[k] = t_s[a + i]
    return out


def analyse(model, frame, states, task, contact, push, step, press):
    """The figures and series of the demo. ``states``: the recorded (t, q, qd, extra, effort) of /joint_states;
    ``task``: (arrival sim times, {label: values}) of ~/task_state; ``contact``: (stamps, forces on the frame's
    origin (N, base axes)) of ~/contact_wrench.

    ``push``: the constant wrench's ``t`` (sim time it was sent, s), ``t_release``, ``w`` (as sent: at the
    frame's origin in its axes), ``wrench`` (base axes at the held pose), ``K`` (the commanded stiffness) and
    ``rest`` (s recorded after the release). ``step``: its ``t``, the held target (``p_a``, ``R_a``) and the
    step's target (``p_b``, ``R_b``), ``size`` (m, rad: from the message contents), ``limits``
    (max_cartesian_velocity: m/s, rad/s), ``run`` (s recorded from ``t``) and ``reach`` (the inverse kinematics
    along it: sigma_min, within_limits). ``press``: ``t_touch`` (the target behind the plane sent), ``t`` (F_d
    sent), ``end``, ``F_d`` (N), the plane's ``point`` (m, base frame), ``normal`` (unit, to the free side),
    ``k`` (N/m), ``c`` (N s/m), ``depth`` (m: the target behind it), ``K`` and the target (``p_c`` (m), ``R_c``)."""
    import rne_control as rc

    t_s = np.array([s[0] for s in states])
    keep = np.r_[True, np.diff(t_s) > 0]       # a state republished with its stamp
    t_s = t_s[keep]
    q = np.array([s[1] for s in states])[keep]
    qd = np.array([s[2] for s in states])[keep]
    T = rc.frame_pose(model, q, frame)
    J = rc.frame_jacobian(model, q, frame)                        # (N, 6, n): [linear; angular], base axes
    P, R = T[:, :3, 3], T[:, :3, :3]
    twist = np.einsum("kij,kj->ki", J, qd)
    sigma = np.linalg.svd(J, compute_uv=False)[:, -1]
    t_task, fields = task
    res = dict(frame=frame, dt=float(np.median(np.diff(t_s))), missing_states=int(np.sum(
        np.maximum(np.round(np.diff(t_s) / np.median(np.diff(t_s))) - 1, 0))))

    # 1. the stiffness: the wrench over the steady deflection from the held pose
    K = np.asarray(push["K"], float)
    ref = (t_s >= push["t"] - REFERENCE) & (t_s < push["t"])
    p_ref, R_ref = P[ref].mean(axis=0), R[ref][-1]
    span = (t_s >= push["t"] - REFERENCE) & (t_s <= push["t_release"] + push["rest"])
    e = np.c_[P[span] - p_ref, _logs(R[span], R_ref)]
    win = (t_s[span] >= push["t_release"] - STEADY_PUSH) & (t_s[span] < push["t_release"])
    w = np.asarray(push["w"], float)
    F = np.c_[R[span][win] @ w[:3], R[span][win] @ w[3:]]        # the applied wrench at the state, base axes
    e_mean, F_mean = e[win].mean(axis=0), F.mean(axis=0)
    K_meas = F_mean / e_mean
    res["push"] = dict(t=t_s[span] - push["t"], e=e, t_release=push["t_release"] - push["t"], K=K, K_meas=K_meas,
                       K_error=K_meas / K - 1.0, F=F_mean, e_mean=e_mean, e_expected=F_mean / K,
                       drift=(e[win].max(axis=0) - e[win].min(axis=0)) / np.abs(e_mean),
                       back=(float(np.linalg.norm(e[-1, :3])), float(np.linalg.norm(e[-1, 3:]))),
                       rest=push["rest"], steady=STEADY_PUSH)

    # 2. the step: the error to its target, the speeds, sigma_min
    sel = (t_s >= step["t"] - 0.2) & (t_s <= step["t"] + step["run"])
    before = sel & (t_s < step["t"])
    after = sel & (t_s >= step["t"])
    ep = np.linalg.norm(P[sel] - step["p_b"], axis=1)
    er = np.linalg.norm(_logs(R[sel], step["R_b"]), axis=1)
    ts = t_s[sel]
    d_lin, d_ang = step["size"]
    v_max, w_max = step["limits"]
    i_end = int(np.flatnonzero(sel)[-1])
    i_before = int(np.flatnonzero(before)[-1])
    moved = (float(np.linalg.norm(P[i_end] - P[before].mean(axis=0))),
             float(np.linalg.norm(_logs(R[i_end][None], R[i_before])[0])))
    speed = np.linalg.norm(twist[sel, :3], axis=1), np.linalg.norm(twist[sel, 3:], axis=1)
    tail = ts >= step["t"]
    bands = [(STEP_BAND * d_lin, STEP_BAND * d_ang), FINE_BAND]
    settle = [_settle(ts[tail], (ep[tail] > bp) | (er[tail] > br), step["t"]) for bp, br in bands]
    st = dict(t=ts - step["t"], ep=ep, er=er, speed=speed, size=(d_lin, d_ang), moved=moved, bands=bands,
              settle=settle, final=(float(ep[-1]), float(er[-1])), peak=(float(speed[0].max()), float(speed[1].max())),
              limits=(v_max, w_max), duration=max(1.875 * d_lin / v_max, 1.875 * d_ang / w_max),
              sigma=float(sigma[after].min()), sigma_start=float(sigma[i_before]), sigma_end=float(sigma[i_end]),
              reach=step["reach"])
    st["duration_by"] = "rotation" if d_ang / w_max >= d_lin / v_max else "translation"
    # the controller's view: its error against the shaped target (a statistic over the messages that arrived
    # during the step), its clip flags and sigma_min; the shaped target's distance to the step's target, at the
    # stamps matched by position (for the plot)
    in_step = (t_task >= step["t"]) & (t_task <= step["t"] + step["run"])
    if in_step.any():
        pe = fields["pose_error"][in_step]
        st["track"] = (float(np.linalg.norm(pe[:, :3], axis=1).max()), float(np.linalg.norm(pe[:, 3:], axis=1).max()))
        st["clipped"] = int(np.count_nonzero((fields["position_clipped"][in_step, 0] > 0)
                                             | (fields["rotation_clipped"][in_step, 0] > 0)))
        st["singular"] = int(np.count_nonzero(fields["singular"][in_step, 0] > 0))
        st["sigma_ctl"] = float(fields["sigma_min"][in_step, 0].min())
        tt = fields["target_twist"][in_step]
        st["target_peak"] = (float(np.linalg.norm(tt[:, :3], axis=1).max()),
                             float(np.linalg.norm(tt[:, 3:], axis=1).max()))
        st["messages"] = int(in_step.sum())
        p_d = fields["target_position"][in_step]
        stamp = _match(t_s, P, t_task[in_step], p_d + pe[:, :3])
        ok = np.isfinite(stamp)
        quat = fields["target_orientation"][in_step][ok]
        from ...control.task.rotation import quaternion_matrix
        Rd = np.array([quaternion_matrix(*x) for x in quat]).reshape(-1, 3, 3)
        st["target"] = (stamp[ok] - step["t"], np.linalg.norm(p_d[ok] - step["p_b"], axis=1),
                        np.linalg.norm(_logs(Rd, step["R_b"]), axis=1))
        st["matched"] = int(ok.sum())
    res["step"] = st

    # 3. the press: the force on the plane (= the plane's on the frame, reversed) along its normal
    t_F, Fc = contact
    n = np.asarray(press["normal"], float)
    Fn = Fc @ n
    F_d = float(press["F_d"])
    K_n = float(n @ (np.asarray(press["K"], float)[:3] * n))      # K along the normal (K diagonal, base axes)
    on = (t_F >= press["t_touch"] - 0.1) & (t_F <= press["end"])
    steady = (t_F >= press["end"] - STEADY_PRESS) & (t_F <= press["end"])
    pressing = (t_F >= press["t"]) & (t_F <= press["end"])
    pr = dict(t=t_F[on] - press["t"], F=Fn[on], F_d=F_d, t_touch=press["t_touch"] - press["t"],
              before=float(np.abs(Fn[t_F < press["t_touch"]]).max()) if np.any(t_F < press["t_touch"]) else 0.0,
              mean=float(Fn[steady].mean()), range=(float(Fn[steady].min()), float(Fn[steady].max())),
              peak=float(Fn[pressing].max()), k=press["k"], c=press["c"], depth=press["depth"], K_n=K_n,
              steady=STEADY_PRESS, band=PRESS_BAND,
              expected=(F_d + K_n * press["depth"]) / (1.0 + K_n / press["k"]))
    pr["error"] = pr["mean"] / F_d - 1.0
    tp = t_F[pressing]
    pr["settle"] = _settle(tp, np.abs(Fn[pressing] - F_d) > PRESS_BAND * F_d, press["t"])
    touching = np.flatnonzero((t_F >= press["t_touch"]) & (Fn > 0))
    pr["onset"] = float(t_F[touching[0]] - press["t"]) if touching.size else math.nan
    approach = (t_F >= press["t_touch"]) & (t_F < press["t"])
    pr["approach_peak"] = float(Fn[approach].max()) if approach.any() else math.nan
    pr["approach_end"] = float(Fn[approach][-1]) if approach.any() else math.nan
    # the depth behind the plane at the steady states, and the plane's spring there (rne_sim's law at rest)
    st_s = (t_s >= press["end"] - STEADY_PRESS) & (t_s <= press["end"])
    depth = (np.asarray(press["point"], float) - P[st_s]) @ n
    pr["tool_depth"] = float(depth.mean())
    # the pose held in the plane's directions: the tangential offset from the target, the rotation error
    off = P[st_s] - np.asarray(press["p_c"], float)
    pr["tangential"] = float(np.linalg.norm(off - np.outer(off @ n, n), axis=1).max())
    pr["rotation"] = float(np.linalg.norm(_logs(R[st_s], press["R_c"]), axis=1).max())
    pr["spring"] = float(press["k"] * depth.mean())
    expected_msgs = int(np.count_nonzero((t_s >= press["t_touch"]) & (t_s <= press["end"])))
    pr["missing"] = max(0, expected_msgs - int(np.count_nonzero((t_F >= press["t_touch"]) & (t_F <= press["end"]))))
    res["press"] = pr
    return res


def _pct(x):
    return f"{100 * x:+.2f} %"


def print_cartesian_report(res, sc):
    """Print the demo's figures: the stiffness per axis against K, the step (its size, reachability,
    settling times, final error, peak speeds against max_cartesian_velocity, sigma_min), the contact force
    against F_d."""
    K = sc["K"]
    print()
    print(f"Cartesian impedance ({sc['robot']}, {sc['frame']}, {sc['rate']:.0f} Hz lockstep): K = "
          f"{', '.join(f'{x:g}' for x in K[:3])} N/m, {', '.join(f'{x:g}' for x in K[3:])} N m/rad (base axes); "
          f"{sc['design']}, damping ratio {sc['zeta']:g}")
    pu = res["push"]
    print()
    print(f"1. Stiffness from the deflection under a constant wrench (rne_sim's ~/applied_wrench at {sc['frame']}, "
          f"held {sc['hold']:g} s; means over its last {pu['steady']:g} s):")
    head = f"{'axis':<8}{'wrench':>14}{'deflection':>16}{'K measured':>17}{'K commanded':>16}{'error':>11}{'drift':>9}"
    print(head)
    print("-" * len(head))
    for i, ax in enumerate(AXES):
        lin = i < 3
        fu, eu, ku, es = ("N", "mm", "N/m", 1e3) if lin else ("N m", "mrad", "N m/rad", 1e3)
        print(f"{ax:<8}{pu['F'][i]:>10.4f} {fu:<3}{es * pu['e_mean'][i]:>11.3f} {eu:<4}{pu['K_meas'][i]:>10.2f} "
              f"{ku:<6}{K[i]:>9.0f} {ku:<6}{_pct(pu['K_error'][i]):>11}{100 * pu['drift'][i]:>8.2f}%")
    print("(wrench: as rne_sim applies it at the measured state, base axes; deflection: from the pose held before "
          "it, log(R R_0^T) for the rotation; drift: its range over the window / its mean)")
    print(f"after the release: {1e3 * pu['back'][0]:.3f} mm and {1e3 * pu['back'][1]:.3f} mrad from the held pose "
          f"{pu['rest']:g} s later")
    st = res["step"]
    d_lin, d_ang = st["size"]
    v_max, w_max = st["limits"]
    reach = st["reach"]
    print()
    print(f"2. Step of the target: {d_lin:.4f} m and {math.degrees(d_ang):.2f} deg (one ~/target_pose, from the "
          "controller's held target)")
    print(f"  reachable: the straight path by inverse kinematics from the measured configuration keeps to the joint "
          f"limits: {'yes' if reach['within_limits'] else 'no'}; sigma_min along it {reach['sigma_min']:.3f}")
    print(f"  shaped path: {st['duration']:.3f} s (1.875 x distance / limit; the {st['duration_by']} sets it)")
    print(f"  tool moved {st['moved'][0]:.4f} m and {math.degrees(st['moved'][1]):.2f} deg (joint states)")
    (b1p, b1r), (b2p, b2r) = st["bands"]
    print(f"  settling time from sending: to {100 * STEP_BAND:.0f} % ({1e3 * b1p:.1f} mm, {math.degrees(b1r):.2f} deg) "
          f"{st['settle'][0]:.3f} s; to {1e3 * b2p:.0f} mm and {math.degrees(b2r):.0f} deg {st['settle'][1]:.3f} s")
    print(f"  final error: {1e3 * st['final'][0]:.3f} mm, {math.degrees(st['final'][1]):.4f} deg "
          f"({st['t'][-1]:.2f} s after sending)")
    print(f"  peak tool speed: linear {st['peak'][0]:.4f} m/s (limit {v_max:g} m/s: {st['peak'][0] / v_max:.3f}x), "
          f"angular {st['peak'][1]:.4f} rad/s (limit {w_max:g} rad/s: {st['peak'][1] / w_max:.3f}x)")
    if "track" in st:
        print(f"  shaped target's peak speed (~/task_state): {st['target_peak'][0]:.4f} m/s, "
              f"{st['target_peak'][1]:.4f} rad/s")
        print(f"  largest error against the shaped target (~/task_state): {1e3 * st['track'][0]:.2f} mm, "
              f"{math.degrees(st['track'][1]):.3f} deg; clipped in {st['clipped']} of {st['messages']} cycles")
    sig = (f"  sigma_min(J) during the step: min {st['sigma']:.3f} (joint states; {st['sigma_start']:.3f} at the "
           f"start, {st['sigma_end']:.3f} at the end)")
    if "sigma_ctl" in st:
        sig += f", {st['sigma_ctl']:.3f} (~/task_state); singular in {st['singular']} cycles"
    print(sig + f"; singular_damping {sc['singular_damping']:g}")
    pr = res["press"]
    print()
    print(f"3. Pressing with F_d = {pr['F_d']:g} N (~/target_wrench) into a plane {100 * sc['gap']:.0f} cm under the "
          f"step's target (k = {pr['k']:g} N/m, c = {pr['c']:g} N s/m),")
    print(f"   the target {1e3 * pr['depth']:.1f} mm behind it (F_d / k: where the plane's spring holds F_d)")
    print(f"  before the press: largest contact force {pr['before']:.4f} N")
    print(f"  the approach (the target sent {-pr['t_touch']:.3f} s before F_d): first contact at "
          f"{pr['onset']:+.3f} s, largest force {pr['approach_peak']:.3f} N, {pr['approach_end']:.3f} N when F_d is "
          "sent (times from ~/target_wrench sent)")
    print(f"  with F_d: peak {pr['peak']:.3f} N; within {100 * pr['band']:.0f} % of F_d from {pr['settle']:.3f} s")
    print(f"  contact force on the plane (rne_sim's ~/contact_wrench), last {pr['steady']:g} s: mean "
          f"{pr['mean']:.4f} N ({pr['range'][0]:.4f}-{pr['range'][1]:.4f} N), {_pct(pr['error'])} from F_d")
    print(f"  expected at rest from the two springs, (F_d + K_n d) / (1 + K_n / k): {pr['expected']:.4f} N; the tool "
          f"{1e3 * pr['tool_depth']:.4f} mm behind the plane: k d = {pr['spring']:.4f} N")
    print(f"  the pose in the plane, last {pr['steady']:g} s: within {1e3 * pr['tangential']:.4f} mm of the target "
          f"along it, {math.degrees(pr['rotation']):.4f} deg of its orientation")
    if pr["missing"] or res["missing_states"]:
        print(f"  {pr['missing']} ~/contact_wrench and {res['missing_states']} joint state samples not recorded")
    print()


def plot_cartesian(res, path):
    """Six panels: the deflection under the wrench (translation, rotation) with F/K; the step's position and
    rotation error to its target with the shaped target's and the settling bands; the tool's speeds with
    max_cartesian_velocity; the contact force against F_d."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(3, 2, figsize=(13, 10.5))
    colors = ["tab:blue", "tab:orange", "tab:green"]
    pu = res["push"]
    for col, (sl, scale, unit, what) in enumerate(((slice(0, 3), 1e3, "mm", "translation"),
                                                    (slice(3, 6), 1e3, "mrad", "rotation"))):
        ax = axes[0, col]
        for k, i in enumerate(range(sl.start, sl.stop)):
            ax.plot(pu["t"], scale * pu["e"][:, i], color=colors[k], lw=1.2,
                    label=f"{AXES[i]}: K {pu['K_meas'][i]:.1f} ({_pct(pu['K_error'][i])})")
            ax.axhline(scale * pu["e_expected"][i], color=colors[k], lw=0.8, ls="--")
        ax.axvline(0.0, color="grey", lw=0.8, ls="-.")
        ax.axvline(pu["t_release"], color="grey", lw=0.8, ls=":")
        ax.axvspan(pu["t_release"] - pu["steady"], pu["t_release"], color="grey", alpha=0.12)
        ax.set_title(f"deflection ({what}) under the wrench (dashed: F / K; shaded: measured)", fontsize=10)
        ax.set_xlabel("time from the wrench sent [s]")
        ax.set_ylabel(f"[{unit}]")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="center right")
    st = res["step"]
    for col, (err, scale, unit, band_i, tgt_i) in enumerate(((st["ep"], 1e3, "mm", 0, 1),
                                                            (st["er"], 180 / math.pi, "deg", 1, 2))):
        ax = axes[1, col]
        ax.semilogy(st["t"], np.maximum(scale * err, 1e-4), color="tab:blue", lw=1.3, label="tool (joint states)")
        if "target" in st:
            ax.semilogy(st["target"][0], np.maximum(scale * st["target"][tgt_i], 1e-4), color="k", lw=1.0, ls="--",
                        label="shaped target (~/task_state)")
        for (b, ls, name), s in zip(((st["bands"][0][band_i], ":", f"{100 * STEP_BAND:.0f} %"),
                                     (st["bands"][1][band_i], "-.", "fine")), st["settle"]):
            ax.axhline(scale * b, color="tab:red", lw=0.8, ls=ls, label=f"{name} band: settled {s:.2f} s")
        ax.axvline(st["duration"], color="grey", lw=0.8, ls="--")
        ax.set_ylim(bottom=max(1e-3, 0.3 * scale * min(st["final"][band_i], st["bands"][1][band_i])))
        ax.set_title(f"step of {st['size'][0]:.2f} m and {math.degrees(st['size'][1]):.0f} deg: "
                     f"{'position' if col == 0 else 'rotation'} error to the target (grey: the path's end)",
                     fontsize=10)
        ax.set_xlabel("time from the step sent [s]")
        ax.set_ylabel(f"[{unit}]")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=8, loc="lower left")
    ax = axes[2, 0]
    v_max, w_max = st["limits"]
    ax.plot(st["t"], st["speed"][0], color="tab:blue", lw=1.2, label=f"|v|: peak {st['peak'][0]:.3f} m/s")
    ax.axhline(v_max, color="tab:blue", lw=0.8, ls="--", label=f"limit {v_max:g} m/s")
    ax.set_ylabel("linear [m/s]")
    ax2 = ax.twinx()
    ax2.plot(st["t"], st["speed"][1], color="tab:orange", lw=1.2, label=f"|w|: peak {st['peak'][1]:.3f} rad/s")
    ax2.axhline(w_max, color="tab:orange", lw=0.8, ls="--", label=f"limit {w_max:g} rad/s")
    ax2.set_ylabel("angular [rad/s]")
    ax.set_ylim(0, 1.15 * v_max)
    ax2.set_ylim(0, 1.15 * w_max)
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, fontsize=8, loc="upper right")
    ax.set_title("the step: tool speed (J(q) qd, joint states) and max_cartesian_velocity", fontsize=10)
    ax.set_xlabel("time from the step sent [s]")
    ax.grid(alpha=0.3)
    pr = res["press"]
    ax = axes[2, 1]
    ax.plot(pr["t"], pr["F"], color="tab:blue", lw=1.2,
            label=f"~/contact_wrench: {pr['mean']:.3f} N at the end ({_pct(pr['error'])})")
    ax.axhline(pr["F_d"], color="k", lw=0.8, ls="--", label=f"F_d = {pr['F_d']:g} N")
    ax.axhspan((1 - pr["band"]) * pr["F_d"], (1 + pr["band"]) * pr["F_d"], color="grey", alpha=0.15,
               label=f"±{100 * pr['band']:.0f} %")
    ax.axvline(pr["t_touch"], color="grey", lw=0.8, ls="-.", label="target behind the plane sent")
    ax.axvline(0.0, color="tab:green", lw=0.8, ls=":", label="F_d sent")
    ax.set_title("pressing into the plane: the force on it", fontsize=10)
    ax.set_xlabel("time from ~/target_wrench sent [s]")
    ax.set_ylabel("force [N]")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.suptitle(f"rne_demo --cartesian: arm7 in cartesian_impedance at {res['frame']} (lockstep, 1 kHz)")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
