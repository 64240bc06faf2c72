"""``rne_demo``: the rne_control demo, in real time over ROS 2.

Starts ``rne_sim`` (the simulated robot) and ``rne_controller`` as subprocesses, drives the robot
through a demo trajectory twice and compares the two control laws:

* PUMA 560 (default): ``gravity`` compensation plus a PD of equal stiffness
  (hold_kp = diag M(q0) kp, hold_kd = diag M(q0) kd), then ``computed_torque``;
* ``--robot ffsr`` (free-flying space robot): computed torque with ``base: fixed`` (ignoring that
  the satellite floats), then ``base: free_floating``; the base drift is reported;
* ``--robot arm7``: like the PUMA, on the 7-DOF arm;
* ``--robot palletizer``: like the PUMA, on the palletiser whose elbow is driven through a
  parallelogram (a closed loop: the controller works in the three motor coordinates);
* ``--robot arm7_sea`` (the 7-DOF arm on series-elastic actuators): computed torque with the rigid
  model (``ignore_elasticity``: the controller is restarted between the runs), then with the elastic
  model; the springs' deflections are reported.

It prints progress, a table of RMS and max tracking error per joint, the controller's loop
statistics (from /diagnostics), and writes a PNG plot of desired vs actual (``rne_demo.png`` in the
current directory by default).  ``--no-spawn`` drives already running nodes (demo.launch.py).
"""
from __future__ import annotations

import argparse
import math
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

ROBOTS = {
    "puma560": dict(config="config/puma560_controller.yaml",
                    amp=[0.6, -0.5, 0.5, 0.8, 0.6, 1.0], T=4.0),
    "arm7": dict(config="config/arm7_controller.yaml",
                 amp=[0.6, 0.5, -0.5, 0.6, 0.8, 0.5, 1.0], T=4.0),
    "palletizer": dict(config="config/palletizer_controller.yaml", amp=[0.8, 0.3, -0.35], T=4.0),
    "arm7_sea": dict(config="config/arm7_sea_controller.yaml", amp=[0.3, 0.25, -0.3, 0.3, 0.4, -0.3, 0.4],
                     T=3.0, compare="elasticity"),
    "ffsr": dict(config="config/ffsr_controller.yaml",
                 amp=[0.3, -0.3, 0.3, 0.4, 0.4, 0.4], T=6.0),
}
TIME_BUDGET = 55.0


def _log(msg):
    print(f"[rne_demo] {msg}", flush=True)


def _find(name):
    from rne_control.ros import paths

    return Path(paths.resolve_model_file(name))


def _console(exe):
    cand = Path(sys.executable).parent / exe
    if cand.exists():
        return [str(cand)]
    return [sys.executable, "-m", {"rne_sim": "rne_control.ros.sim_node",
                                   "rne_controller": "rne_control.ros.controller_node"}[exe]]


def _write_params(path, node, params):
    import yaml

    def fix(v):
        if isinstance(v, np.ndarray):
            v = v.tolist()
        if isinstance(v, (list, tuple)):
            return [float(x) if isinstance(x, (int, float, np.floating)) and not isinstance(x, bool) else x for x in v]
        return v

    doc = {f"/**/{node}": {"ros__parameters": {k: fix(v) for k, v in params.items()}}}
    Path(path).write_text(yaml.safe_dump(doc, default_flow_style=None))
    return str(path)


class Spawned:
    def __init__(self, name, argv, logdir):
        self.name = name
        self.log_path = Path(logdir) / f"{name}.log"
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(argv, stdout=self._log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True)

    def alive(self):
        return self.proc.poll() is None

    def tail(self, n=2000):
        try:
            return self.log_path.read_text(errors="replace")[-n:]
        except OSError:
            return ""

    def stop(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGINT)
                self.proc.wait(timeout=5)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                    self.proc.wait(timeout=3)
                except (ProcessLookupError, subprocess.TimeoutExpired):
                    pass
        self._log.close()
        return self.proc.returncode


def out_and_back(q0, amp, T):
    """q_d(t): min-jerk to q0 + amp in T/2, back to q0 in T/2 (positions, velocities, accelerations)."""
    q0, amp, h = np.asarray(q0, float), np.asarray(amp, float), T / 2.0

    def mj(t):
        if t <= 0:
            return 0.0, 0.0, 0.0
        if t >= h:
            return 1.0, 0.0, 0.0
        x = t / h
        return (10 * x**3 - 15 * x**4 + 6 * x**5, (30 * x**2 - 60 * x**3 + 30 * x**4) / h,
                (60 * x - 180 * x**2 + 120 * x**3) / h**2)

    def f(t):
        if t <= h:
            s, sd, sdd = mj(t)
        else:
            s, sd, sdd = mj(t - h)
            s, sd, sdd = 1.0 - s, -sd, -sdd
        return q0 + amp * s, amp * sd, amp * sdd

    return f


class DemoNode:
    def __init__(self, joints, extra=()):
        import rclpy
        from diagnostic_msgs.msg import DiagnosticArray
        from nav_msgs.msg import Odometry
        from rclpy.executors import SingleThreadedExecutor
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray
        from trajectory_msgs.msg import JointTrajectory

        self.rclpy = rclpy
        rclpy.init(args=None)
        self.node = rclpy.create_node("rne_demo")
        self.joints = list(joints)
        self.extra = list(extra)   # further joints recorded (elastic deflections)
        self.lock = threading.Lock()
        self.states = []   # (t, q, qd)
        self.odom = []     # (t, p, quat)
        self.ncmd = 0
        self.diag = None
        self.recording = False
        self.node.create_subscription(JointState, "/joint_states", self._on_state, 100)
        self.node.create_subscription(Odometry, "base_odometry", self._on_odom, 100)
        self.node.create_subscription(Float64MultiArray, "/effort_controller/commands", self._on_cmd, 100)
        self.node.create_subscription(DiagnosticArray, "/diagnostics", self._on_diag, 10)
        self.traj_pub = self.node.create_publisher(JointTrajectory, "/rne_controller/joint_trajectory", 10)
        self.last_state = None
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)
        self._stop = False
        self.thread = threading.Thread(target=self._spin, daemon=True)
        self.thread.start()

    def _spin(self):
        while not self._stop and self.rclpy.ok():
            try:
                self.executor.spin_once(timeout_sec=0.05)
            except Exception:
                break

    def _on_state(self, m):
        idx = {n: i for i, n in enumerate(m.name)}
        try:
            q = np.array([m.position[idx[j]] for j in self.joints])
            qd = np.array([m.velocity[idx[j]] for j in self.joints]) if m.velocity else np.zeros(len(self.joints))
            x = np.array([m.position[idx[j]] for j in self.extra])
        except (KeyError, IndexError):
            return
        t = m.header.stamp.sec + m.header.stamp.nanosec * 1e-9
        with self.lock:
            self.last_state = (t, q, qd)
            if self.recording:
                self.states.append((t, q, qd, x))

    def _on_odom(self, m):
        p, o = m.pose.pose.position, m.pose.pose.orientation
        t = m.header.stamp.sec + m.header.stamp.nanosec * 1e-9
        with self.lock:
            if self.recording:
                self.odom.append((t, np.array([p.x, p.y, p.z]), np.array([o.x, o.y, o.z, o.w])))

    def _on_cmd(self, m):
        self.ncmd += 1

    def _on_diag(self, m):
        for st in m.status:
            if "rne_controller" in st.name or "rne_controller" in st.hardware_id:
                self.diag = st

    def now(self):
        return self.node.get_clock().now().nanoseconds * 1e-9

    def send(self, f, T, start, dt=0.05):
        from builtin_interfaces.msg import Duration, Time
        from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

        msg = JointTrajectory()
        ns = int(start * 1e9)
        msg.header.stamp = Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)
        msg.joint_names = self.joints
        for k in range(1, int(round(T / dt)) + 1):
            t = k * dt
            q, qd, qdd = f(t)
            pt = JointTrajectoryPoint(positions=q.tolist(), velocities=qd.tolist(), accelerations=qdd.tolist())
            tn = int(round(t * 1e9))
            pt.time_from_start = Duration(sec=tn // 1_000_000_000, nanosec=tn % 1_000_000_000)
            msg.points.append(pt)
        self.traj_pub.publish(msg)

    def set_params(self, params, timeout=5.0):
        from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
        from rcl_interfaces.srv import SetParameters

        cli = self.node.create_client(SetParameters, "/rne_controller/set_parameters")
        if not cli.wait_for_service(timeout_sec=timeout):
            raise RuntimeError("rne_controller parameter service not available")
        req = SetParameters.Request()
        for k, v in params.items():
            pv = ParameterValue()
            if isinstance(v, str):
                pv.type, pv.string_value = ParameterType.PARAMETER_STRING, v
            elif isinstance(v, (list, tuple, np.ndarray)):
                pv.type, pv.double_array_value = ParameterType.PARAMETER_DOUBLE_ARRAY, [float(x) for x in v]
            else:
                pv.type, pv.double_value = ParameterType.PARAMETER_DOUBLE, float(v)
            req.parameters.append(Parameter(name=k, value=pv))
        fut = cli.call_async(req)
        t0 = time.monotonic()
        while not fut.done() and time.monotonic() - t0 < timeout:
            time.sleep(0.01)
        self.node.destroy_client(cli)
        if not fut.done():
            raise RuntimeError("rne_controller did not answer set_parameters")
        bad = [(p.name, r.reason) for p, r in zip(req.parameters, fut.result().results) if not r.successful]
        if bad:
            raise RuntimeError(f"rne_controller refused {bad}")

    def shutdown(self):
        self._stop = True
        self.thread.join(timeout=2)
        try:
            self.node.destroy_node()
        finally:
            self.rclpy.try_shutdown()


def _phase(dn, label, f, T, lead=0.3, tail=0.5):
    with dn.lock:
        dn.states, dn.odom = [], []
        dn.recording = True
    start = dn.now() + lead
    dn.send(f, T, start)
    _log(f"{label}: trajectory of {T:.1f} s sent")
    end = start + T + tail
    while dn.now() < end:
        time.sleep(0.05)
    with dn.lock:
        dn.recording = False
        states, odom = list(dn.states), list(dn.odom)
    states = [s for s in states if start <= s[0] <= end]
    if len(states) < 10:
        raise RuntimeError(f"{label}: only {len(states)} joint states recorded")
    t = np.array([s[0] for s in states]) - start
    q = np.array([s[1] for s in states])
    qdes = np.array([f(x)[0] for x in t])
    res = dict(label=label, t=t, q=q, qd=qdes, err=q - qdes, extra=np.array([s[3] for s in states]))
    if odom:
        p = np.array([o[1] for o in odom if start <= o[0] <= end] or [odom[0][1]])
        quat = np.array([o[2] for o in odom if start <= o[0] <= end] or [odom[0][2]])
        dots = np.minimum(1.0, np.abs(quat @ quat[0]))
        ang = 2.0 * np.arccos(dots)
        dist = np.linalg.norm(p - p[0], axis=1)
        # (end drift, max excursion) of position and attitude: an out-and-back joint path retraced
        # exactly returns a zero-momentum base to its start pose, so the excursion matters too
        res["base_drift"] = (float(dist[-1]), float(ang[-1]), float(dist.max()), float(ang.max()))
    return res


def _plot(results, joints, path, title):
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
        ax.set_ylabel(f"{joints[j]}\n[rad]")
        ae.set_ylabel("error [mrad]")
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


def _mass_diag(model, joints, q_sim):
    """Diagonal of the mass matrix in the controlled coordinates at the simulator's start state
    (``initial_positions``, in its joint order), for any kind of model."""
    from rne_control.control import make_plant

    plant = make_plant(model, joints)
    names, q, _ = plant.sim_joint_states(q_sim, np.zeros_like(q_sim))
    at = dict(zip(names, q))
    q_state = np.array([at.get(j, math.nan) for j in plant.state_names])
    plant.set_state(q_state, np.zeros_like(q_state))
    return np.diag(plant.mass_matrix())


def main(argv=None):
    ap = argparse.ArgumentParser(prog="rne_demo", description=__doc__.split("\n\n")[0])
    ap.add_argument("--robot", choices=sorted(ROBOTS), default="puma560")
    ap.add_argument("--output", default="rne_demo.png", help="plot file (default: rne_demo.png)")
    ap.add_argument("--no-spawn", action="store_true", help="drive running rne_sim/rne_controller nodes")
    # ROS arguments (when started by launch) are ignored
    args, _unknown = ap.parse_known_args(argv if argv is not None else sys.argv[1:])
    t_begin = time.monotonic()
    spec = ROBOTS[args.robot]
    cfg_path = _find(spec["config"])
    import yaml

    cfg = yaml.safe_load(cfg_path.read_text())
    ctl_cfg = cfg["/**/rne_controller"]["ros__parameters"]
    sim_cfg = cfg["/**/rne_sim"]["ros__parameters"]
    joints = list(ctl_cfg["joints"])
    n = len(joints)
    kp = np.asarray(ctl_cfg.get("kp", [100.0] * n), float)
    kd = np.asarray(ctl_cfg.get("kd", [20.0] * n), float)
    floating = args.robot == "ffsr"
    compare = spec.get("compare", "gravity_pd")

    import rne_control as rc

    model = rc.load_model(str(_find(ctl_cfg["model_file"])))
    q0 = np.asarray(sim_cfg.get("initial_positions", [0.0] * n), float)
    mdiag = _mass_diag(model, joints, q0) if compare == "gravity_pd" else None
    springs = list(getattr(model, "elastic_joint_names", ()))

    if floating:
        # free-floating first: the fixed-base model drives this robot into saturation and leaves it
        # far from the start, which would spoil the phase after it
        phases = [("base free_floating", {"mode": "computed_torque", "base": "free_floating"}),
                  ("base fixed", {"base": "fixed"})]
    elif compare == "elasticity":   # a static parameter: the controller restarts between the runs
        phases = [("rigid model", {"mode": "computed_torque", "ignore_elasticity": True}),
                  ("elastic model", {"mode": "computed_torque", "ignore_elasticity": False})]
        if args.no_spawn:
            raise SystemExit("rne_demo --robot %s restarts rne_controller between its runs: drop --no-spawn"
                             % args.robot)
    else:
        phases = [("gravity + PD", {"mode": "gravity", "hold_kp": mdiag * kp, "hold_kd": mdiag * kd}),
                  ("computed_torque", {"mode": "computed_torque"})]

    procs = []
    tmp = tempfile.mkdtemp(prefix="rne_demo_")
    dn = None
    code = 0
    try:
        if not args.no_spawn:
            _log(f"robot {args.robot}: starting rne_sim and rne_controller ({cfg_path})")
            ctl_over = _write_params(Path(tmp) / "controller.yaml", "rne_controller", phases[0][1])
            procs.append(Spawned("rne_sim", _console("rne_sim") + ["--ros-args", "--params-file", str(cfg_path)], tmp))
            procs.append(Spawned("rne_controller", _console("rne_controller") + [
                "--ros-args", "--params-file", str(cfg_path), "--params-file", ctl_over], tmp))
        dn = DemoNode(joints, springs)

        def wait_running(n0=0):
            t0 = time.monotonic()
            while dn.ncmd < n0 + 50 or dn.last_state is None:
                for p in procs:
                    if not p.alive():
                        raise RuntimeError(f"{p.name} exited with {p.proc.returncode}:\n{p.tail()}")
                if time.monotonic() - t0 > 30:
                    raise RuntimeError("rne_sim / rne_controller did not start within 30 s")
                time.sleep(0.05)

        wait_running()
        _log(f"loop running ({time.monotonic() - t_begin:.1f} s after start)")
        if args.no_spawn:
            dn.set_params(phases[0][1])
            time.sleep(0.6)
        q0 = dn.last_state[1].copy()
        f = out_and_back(q0, np.asarray(spec["amp"], float), spec["T"])
        results = []
        for i, (label, params) in enumerate(phases):
            if i > 0 and compare == "elasticity":
                procs.pop().stop()
                ctl_over = _write_params(Path(tmp) / f"controller{i}.yaml", "rne_controller", params)
                procs.append(Spawned("rne_controller", _console("rne_controller") + [
                    "--ros-args", "--params-file", str(cfg_path), "--params-file", ctl_over], tmp))
                wait_running(dn.ncmd)
                _log(f"restarted rne_controller with {params}")
                time.sleep(1.0)
            elif i > 0:
                dn.set_params(params)
                _log(f"switched rne_controller to {params} (ramp)")
                time.sleep(1.0)
            results.append(_phase(dn, label, f, spec["T"]))
            if time.monotonic() - t_begin > TIME_BUDGET - 8:
                _log("time budget nearly used: stopping early")
                break

        # ---- report
        print()
        head = f"{'joint':<12}" + "".join(f"{r['label'] + ' RMS':>24}{'max':>10}" for r in results)
        print("Tracking error [mrad]")
        print(head)
        print("-" * len(head))
        for j, name in enumerate(joints):
            row = f"{name:<12}"
            for r in results:
                e = r["err"][:, j]
                row += f"{1e3 * math.sqrt(float(np.mean(e**2))):>24.3f}{1e3 * float(np.abs(e).max()):>10.3f}"
            print(row)
        row = f"{'all':<12}"
        for r in results:
            row += f"{1e3 * math.sqrt(float(np.mean(r['err']**2))):>24.3f}{1e3 * float(np.abs(r['err']).max()):>10.3f}"
        print(row)
        if len(results) == 2:
            a, b = (math.sqrt(float(np.mean(r["err"] ** 2))) for r in results)
            good, bad = (results[1], results[0]) if b < a else (results[0], results[1])
            print(f"{good['label']} tracks {max(a, b) / max(min(a, b), 1e-15):.1f}x better than {bad['label']}")
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
        st = dn.diag
        if st is not None:
            print(f"Loop statistics (/diagnostics, {st.name}: {st.message})")
            for kv in st.values:
                print(f"  {kv.key:<28} {kv.value}")
        else:
            print("Loop statistics: no /diagnostics received from rne_controller")
        print()
        title = {"ffsr": "FFSR: computed torque with a free-floating vs a fixed-base model",
                 "arm7_sea": "arm7_sea: computed torque with a rigid vs the elastic model"}.get(
            args.robot, f"{args.robot}: gravity + PD vs computed torque")
        out = Path(args.output).resolve()
        _plot(results, joints, out, title)
        _log(f"plot written to {out}")
        _log(f"done in {time.monotonic() - t_begin:.1f} s")
    except KeyboardInterrupt:
        code = 130
    except Exception as e:
        _log(f"error: {e}")
        code = 1
    finally:
        if dn is not None:
            dn.shutdown()
        for p in reversed(procs):
            rc_ = p.stop()
            if rc_ not in (0, None) and code == 0:
                _log(f"{p.name} exited with {rc_}")
    return code


if __name__ == "__main__":
    sys.exit(main())
