"""The free-flying space robot of seed 000 (Li, Hong & He 1999) capturing a target in zero gravity.

    python -m rne_control.examples.ffsr [--plot out.png] [--duration S] [--dt S]

The 6-DOF arm on its 250 kg satellite (config/ffsr.yaml) moves from a stowed-forward posture to a
capture posture along a minimum-jerk (quintic) joint path while the satellite floats freely, starting
at rest with zero momentum. The joint torques are computed torques from
:func:`rne_control.free_floating_inverse_dynamics` (the base twist is measured, the base acceleration
is what the arm's motion causes), with a PD correction on the tracking error; the motion is simulated
with :func:`rne_control.floating_forward_dynamics`, integrated by RK4 together with the base pose (the
orientation quaternion through qdot = q (x) [w/2; 0], renormalised after each step).

It prints the base attitude (roll, pitch, yaw) and position, the joint angles and torques, and the
total linear and angular momentum (which must stay zero) over time, the seed's Figures 3 and 5;
``--plot`` writes them to a PNG.
"""
import argparse
import math
import sys

import numpy as np

import rne_control as rc
from rne_control.control.profiles import min_jerk
from rne_control.dynamics.floating.api import centroidal_momentum
from rne_control.dynamics.integrate import State, rk4_step
from rne_control.model.spatial import quat_to_matrix

Q_START = np.array([0.0, -0.4, 0.8, 0.0, 0.6, 0.0])      # rad
Q_CAPTURE = np.array([0.6, 0.1, 0.3, 0.4, 0.2, 0.5])     # rad
KP, KD = 25.0, 10.0                                       # 1/s^2, 1/s: critically damped error dynamics


def rpy(qt):
    """Roll, pitch, yaw (rad) of the quaternion: R = Rz(yaw) Ry(pitch) Rx(roll) (the seed's z-y-x angles)."""
    R = quat_to_matrix(*qt)
    return (math.atan2(R[2, 1], R[2, 2]), math.asin(max(-1.0, min(1.0, -R[2, 0]))), math.atan2(R[1, 0], R[0, 0]))


def load_ffsr():
    from rne_control.ros.paths import resolve_model_file  # no rclpy: only the path lookup
    return rc.load_dh(str(resolve_model_file("config/ffsr.yaml")))


def simulate(duration=10.0, dt=0.002, model=None, samples=200):
    """Run the capture manoeuvre; returns a dict of time histories (about ``samples`` rows)."""
    if model is None:
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the satellite's published inertia breaks the triangle inequality
            model = load_ffsr()
    T = duration

    def torque(t, s):
        qd_, vd, ad = min_jerk(t, T, Q_START, Q_CAPTURE)
        qdd_cmd = ad + KD * (vd - s.qd) + KP * (qd_ - s.q)
        return rc.free_floating_inverse_dynamics(model, s.q, s.qd, qdd_cmd, s.twist,
                                                 s.quat / np.linalg.norm(s.quat))[0]

    q0 = Q_START.copy()
    qd0 = np.zeros(model.n)
    quat0 = np.array([0.0, 0.0, 0.0, 1.0])
    s = State(q0, qd0, np.zeros(3), quat0, rc.base_twist_from_momentum(model, q0, qd0, None, quat0))
    _, com_b = centroidal_momentum(model, s.q, s.qd, s.twist, s.quat)
    com0 = s.pos + quat_to_matrix(*s.quat) @ com_b
    steps = int(round(duration / dt))
    every = max(1, steps // samples)
    rows = {k: [] for k in ("t", "rpy", "pos", "q", "tau", "p", "k", "com_drift")}

    def record(t, s):
        h, cb = centroidal_momentum(model, s.q, s.qd, s.twist, s.quat)
        rows["t"].append(t)
        rows["rpy"].append(rpy(s.quat))
        rows["pos"].append(s.pos.copy())
        rows["q"].append(s.q.copy())
        rows["tau"].append(torque(t, s))
        rows["p"].append(h[:3])
        rows["k"].append(h[3:])
        rows["com_drift"].append(np.linalg.norm(s.pos + quat_to_matrix(*s.quat) @ cb - com0))

    t = 0.0
    for i in range(steps):
        if i % every == 0:
            record(t, s)
        s = rk4_step(model, s, t, dt, torque)
        t = (i + 1) * dt
    record(t, s)
    return {k: np.array(v) for k, v in rows.items()}


def print_table(h, rows=11, file=sys.stdout):
    idx = np.unique(np.linspace(0, len(h["t"]) - 1, rows).round().astype(int))
    print(f"{'t':>5} | {'roll':>6} {'pitch':>6} {'yaw':>6} deg | {'x':>7} {'y':>7} {'z':>7} mm | "
          f"{'q1..q6 (deg)':^41} | {'tau1..tau6 (N m)':^47} | {'|p|':>8} {'|k|':>8}", file=file)
    for i in idx:
        r = np.degrees(h["rpy"][i])
        p = 1e3 * h["pos"][i]
        q = " ".join(f"{x:6.1f}" for x in np.degrees(h["q"][i]))
        tau = " ".join(f"{x:7.2f}" for x in h["tau"][i])
        print(f"{h['t'][i]:5.2f} | {r[0]:6.2f} {r[1]:6.2f} {r[2]:6.2f}     | {p[0]:7.2f} {p[1]:7.2f} {p[2]:7.2f}    | "
              f"{q} | {tau} | {np.linalg.norm(h['p'][i]):8.1e} {np.linalg.norm(h['k'][i]):8.1e}", file=file)
    print(f"max |linear momentum| {np.abs(h['p']).max():.3e} kg m/s, max |angular momentum| "
          f"{np.abs(h['k']).max():.3e} kg m^2/s, max COM drift {h['com_drift'].max():.3e} m", file=file)


def plot(h, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = h["t"]
    fig, ax = plt.subplots(3, 2, figsize=(11, 9), sharex=True)
    for j, name in enumerate(("roll", "pitch", "yaw")):
        ax[0, 0].plot(t, np.degrees(h["rpy"][:, j]), label=name)
    ax[0, 0].set_ylabel("base attitude (deg)")
    for j, name in enumerate("xyz"):
        ax[0, 1].plot(t, 1e3 * h["pos"][:, j], label=name)
    ax[0, 1].set_ylabel("base position (mm)")
    for j in range(h["q"].shape[1]):
        ax[1, 0].plot(t, np.degrees(h["q"][:, j]), label=f"q{j + 1}")
        ax[1, 1].plot(t, h["tau"][:, j], label=f"tau{j + 1}")
    ax[1, 0].set_ylabel("joint angle (deg)")
    ax[1, 1].set_ylabel("joint torque (N m)")
    for j, name in enumerate("xyz"):
        ax[2, 0].plot(t, h["p"][:, j], label=f"p_{name}")
        ax[2, 1].plot(t, h["k"][:, j], label=f"k_{name}")
    ax[2, 0].set_ylabel("linear momentum (kg m/s)")
    ax[2, 1].set_ylabel("angular momentum (kg m^2/s)")
    for a in ax.ravel():
        a.legend(fontsize=7, ncol=3)
        a.grid(alpha=0.3)
    for a in ax[2]:
        a.set_xlabel("t (s)")
    fig.suptitle("FFSR capture manoeuvre, free-floating base (Li, Hong & He 1999, Figs. 3 and 5)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m rne_control.examples.ffsr", description=__doc__.split("\n")[0])
    ap.add_argument("--duration", type=float, default=10.0, help="manoeuvre time, s (default 10)")
    ap.add_argument("--dt", type=float, default=0.002, help="RK4 step, s (default 0.002)")
    ap.add_argument("--plot", metavar="PNG", help="write the histories to this PNG file")
    args = ap.parse_args(argv)
    if not args.duration > 0 or not args.dt > 0:
        ap.error("--duration and --dt must be > 0")
    h = simulate(args.duration, args.dt)
    print_table(h)
    if args.plot:
        plot(h, args.plot)
        print(f"wrote {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
