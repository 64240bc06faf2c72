"""The demo's processes and its rclpy node: spawning rne_sim and rne_controller from a robot's parameter
file, recording joint states, odometry and diagnostics, sending joint and platform trajectories, setting
parameters."""
from __future__ import annotations

import re
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from ..conversions import duration_msg, joint_trajectory_message, stamp_to_sec, time_msg
from ..process import Spawned, console
from ...control.warmup import PROGRESS_RE
from ..runner import DEFAULT_EXECUTOR, spin_in_background


def write_params(path, node, params):
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


def spawn(exe, cfg_path, logdir, params=None, tag=""):
    """``rne_sim`` or ``rne_controller`` (``exe``) from the robot's parameter file, with ``params`` (if
    any) written over it; ``params_files`` of the returned process lists the files it was given."""
    files = [str(cfg_path)]
    if params:
        files.append(str(write_params(Path(logdir) / f"{exe}{tag}.yaml", exe, params)))
    p = Spawned(exe, console(exe) + ["--ros-args"] + [x for f in files for x in ("--params-file", f)], logdir)
    p.params_files = files
    return p


def _check_alive(procs):
    for p in procs:
        if not p.alive():
            raise RuntimeError(f"{p.name} exited with {p.proc.returncode}:\n{p.tail()}")


# rne_demo gives up when neither node has shown progress (a warm-up step, a command) for this long (s)
STALL_TIMEOUT = 300.0


class StartProgress:
    """The nodes' start-up as their logs show it (:class:`~rne_control.control.warmup.WarmUpProgress`'s
    lines): per process (step, steps, label, seconds, kernels compiled) or "ready"."""

    def __init__(self, procs):
        self.procs = procs
        self.state = {p.name: None for p in procs}

    def poll(self) -> bool:
        """Read the logs again; True if any node's state changed."""
        changed = False
        for p in self.procs:
            text = p.tail(20000)
            st = None
            for m in re.finditer(PROGRESS_RE, text):
                st = (int(m.group(1)), int(m.group(2)), m.group(3), float(m.group(4)), int(m.group(5)))
            ready = re.findall(r"kernels ready in ([\d.]+) s \((\d+) compiled", text)
            if ready:
                st = ("ready", float(ready[-1][0]), int(ready[-1][1]))
            if st != self.state[p.name]:
                self.state[p.name] = st
                changed = True
        return changed

    def describe(self, name, bar=False) -> str:
        st = self.state[name]
        if st is None:
            return "%s: starting" % name
        if st[0] == "ready":
            return "%s: kernels ready in %.1f s (%d compiled)" % (name, st[1], st[2])
        k, n, label, t, compiled = st
        head = "%s %s" % (name, "[" + "#" * (10 * (k - 1) // n) + "." * (10 - 10 * (k - 1) // n) + "]" if bar
                          else "loading kernels")
        return "%s %d/%d: %s (%.0f s, %d compiled)" % (head, k, n, label, t, compiled)


def wait_running(dn, procs, n0=0, stall=STALL_TIMEOUT):
    """Wait for 50 commands after the ``n0``-th and a joint state, for as long as the nodes make progress:
    while they load or compile their kernels, their progress is shown (a line kept up to date on a terminal,
    else a line per step). Raises if a process exits, or if no node showed progress for ``stall`` s."""
    prog = StartProgress([p for p in procs if p.name in ("rne_sim", "rne_controller")])
    tty = sys.stdout.isatty()
    t0 = last = time.monotonic()
    seen_cmd = dn.ncmd
    shown = False
    while dn.ncmd < n0 + 50 or dn.last_state is None:
        _check_alive(procs)
        now = time.monotonic()
        if prog.poll() or dn.ncmd != seen_cmd:
            last, seen_cmd = now, dn.ncmd
            if tty:
                sys.stdout.write("\r\033[K[rne_demo] " + " | ".join(prog.describe(p.name, bar=True) for p in prog.procs))
                sys.stdout.flush()
                shown = True
            else:
                for p in prog.procs:
                    if prog.state[p.name] is not None and prog.state[p.name] != getattr(p, "_shown", None):
                        p._shown = prog.state[p.name]
                        print("[rne_demo] " + prog.describe(p.name), flush=True)
        if now - last > stall:
            raise RuntimeError("rne_sim / rne_controller made no progress for %.0f s (started %.0f s ago): %s"
                               % (stall, now - t0, "; ".join(prog.describe(p.name) for p in prog.procs)))
        time.sleep(0.1)
    if shown:
        sys.stdout.write("\n")
    if time.monotonic() - t0 > 5.0:
        print("[rne_demo] the nodes started in %.1f s" % (time.monotonic() - t0), flush=True)


def wait_until(dn, t, procs=()):
    """Wait until the demo's sim time reaches ``t`` (s); raise if a process exits."""
    while dn.now() < t:
        _check_alive(procs)
        time.sleep(0.02)


def start_contact_loop(session, cfg_path, joints, rate, ctl, contact, recorder, ready, missing):
    """Start rne_sim in lockstep at ``rate`` (Hz) with the contact plane ``contact`` = (frame, point, normal,
    stiffness N/m, damping N s/m) and rne_controller with the parameters ``ctl``, both over ``cfg_path``'s,
    into ``session``; then the demo's node on sim time with ``recorder(dn)``. Waits until the loop runs and
    ``ready(rec)`` (else RuntimeError ``missing`` after 30 s), and starts recording. Returns (dn, rec)."""
    frame, point, normal, k, c = contact
    sim_params = {"lockstep": True, "control_rate": rate, "contact.frame": frame, "contact.point": point,
                  "contact.normal": normal, "contact.stiffness": k, "contact.damping": c}
    tmp = tempfile.mkdtemp(prefix="rne_demo_")
    session.procs.append(spawn("rne_sim", cfg_path, tmp, sim_params))
    session.procs.append(spawn("rne_controller", cfg_path, tmp, ctl))
    # the events executor: this node takes several topics at the lockstep loop's pace (faster than real time)
    dn = session.dn = DemoNode(joints, sim_time=True, executor=DEFAULT_EXECUTOR)
    rec = recorder(dn)
    wait_running(dn, session.procs)
    deadline = time.monotonic() + 30.0
    while not ready(rec):
        if time.monotonic() > deadline:
            raise RuntimeError(missing)
        time.sleep(0.05)
    with dn.lock:
        dn.recording = True
    return dn, rec


def stop_contact_loop(session, end, recorded_until, what):
    """The end of :func:`start_contact_loop`'s run at sim time ``end`` (s): wait until this node's recordings,
    which lag the lockstep loop, pass it (the joint states, and ``recorded_until()``, the recorder's; else
    RuntimeError ``what`` after 20 s); stop recording; stop the processes, which would otherwise run on
    through the analysis, and this node with them. Returns the joint states recorded."""
    dn = session.dn
    deadline = time.monotonic() + 20.0
    while recorded_until() < end or dn.states[-1][0] < end:
        if time.monotonic() > deadline:
            raise RuntimeError(what)
        time.sleep(0.05)
    with dn.lock:
        dn.recording = False
        states = list(dn.states)
    session.stop_processes()
    return states


class DemoNode:
    """The demo's own node ``rne_demo``, spun in a background thread: what it records (``states``, ``odom``,
    ``diag``, ``ncmd``) is read under ``lock``; ``now()`` is ROS time (sim time with ``sim_time``).
    ``executor``: None (a SingleThreadedExecutor) or a kind of rne_control.ros.runner.EXECUTORS."""

    def __init__(self, joints, extra=(), sim_time=False, executor=None):
        import rclpy
        from diagnostic_msgs.msg import DiagnosticArray
        from nav_msgs.msg import Odometry
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray
        from trajectory_msgs.msg import JointTrajectory

        self.rclpy = rclpy
        rclpy.init(args=None)
        from rclpy.parameter import Parameter
        self.node = rclpy.create_node("rne_demo", parameter_overrides=[
            Parameter("use_sim_time", Parameter.Type.BOOL, bool(sim_time))])   # lockstep: rne_sim's /clock
        self.joints = list(joints)
        self.extra = list(extra)   # further joints recorded (elastic deflections)
        self.lock = threading.Lock()
        self.states = []   # (t, q, qd, extra joints' positions, efforts or NaN)
        self.odom = []     # (t, p, quat)
        self.ncmd = 0
        self.diag = None
        self.diag_count = 0
        self.r_peak = None   # the momentum observer's largest |r| per joint over the run (/diagnostics)
        self.recording = False
        # deep: a lockstep simulation can outrun these callbacks, and each recorded state counts
        self.node.create_subscription(JointState, "/joint_states", self._on_state, 10000)
        self.node.create_subscription(Odometry, "base_odometry", self._on_odom, 100)
        self.node.create_subscription(Float64MultiArray, "/effort_controller/commands", self._on_cmd, 100)
        self.node.create_subscription(DiagnosticArray, "/diagnostics", self._on_diag, 10)
        self.traj_pub = self.node.create_publisher(JointTrajectory, "/rne_controller/joint_trajectory", 10)
        self.last_state = None
        self.platform_pub = None
        self._halt = spin_in_background(self.node, executor)

    def _on_state(self, m):
        idx = {n: i for i, n in enumerate(m.name)}
        try:
            q = np.array([m.position[idx[j]] for j in self.joints])
            qd = np.array([m.velocity[idx[j]] for j in self.joints]) if m.velocity else np.zeros(len(self.joints))
            x = np.array([m.position[idx[j]] for j in self.extra])
            tau = np.array([m.effort[idx[j]] for j in self.joints]) if m.effort else np.full(len(self.joints), np.nan)
        except (KeyError, IndexError):
            return
        t = stamp_to_sec(m.header.stamp)
        with self.lock:
            self.last_state = (t, q, qd)
            if self.recording:
                self.states.append((t, q, qd, x, tau))

    def _on_odom(self, m):
        p, o = m.pose.pose.position, m.pose.pose.orientation
        t = stamp_to_sec(m.header.stamp)
        with self.lock:
            if self.recording:
                self.odom.append((t, np.array([p.x, p.y, p.z]), np.array([o.x, o.y, o.z, o.w])))

    def _on_cmd(self, m):
        self.ncmd += 1

    def _on_diag(self, m):
        for st in m.status:
            if "rne_controller" in st.name or "rne_controller" in st.hardware_id:
                self.diag = st
                self.diag_count += 1
                values = {kv.key: kv.value for kv in st.values}
                peak = values.get("external_torque_max_abs", "")
                if peak and values.get("observer") == "running":   # its largest |r| per joint over that second
                    x = np.array([float(v) for v in peak.split(",")])
                    self.r_peak = x if self.r_peak is None or len(self.r_peak) != len(x) else np.maximum(self.r_peak, x)

    def stale_events(self, timeout=2.5):
        """The controller's ``stale_events`` from the next /diagnostics message (1 Hz), or None if none
        comes within ``timeout`` s."""
        n = self.diag_count
        deadline = time.monotonic() + timeout
        while self.diag_count == n and time.monotonic() < deadline:
            time.sleep(0.02)
        if self.diag_count == n:
            return None
        return int({kv.key: kv.value for kv in self.diag.values}.get("stale_events", 0))

    def now(self):
        return self.node.get_clock().now().nanoseconds * 1e-9

    def send(self, f, T, start, dt=0.05):
        """The joint motion f(t) -> (q, qd, qdd) for t in (0, T] s, sampled every ``dt`` s, starting at ROS
        time ``start`` (s), to the controller's ~/joint_trajectory."""
        self.traj_pub.publish(joint_trajectory_message(self.joints, int(start * 1e9), [(f, T)], dt))

    def send_platform(self, f, T, start, dt=0.05):
        """A platform trajectory on ~/platform_trajectory: f(t) -> (pose [p; quat xyzw], twist, accel)."""
        from geometry_msgs.msg import Transform, Twist
        from trajectory_msgs.msg import MultiDOFJointTrajectory, MultiDOFJointTrajectoryPoint

        if self.platform_pub is None:
            self.platform_pub = self.node.create_publisher(MultiDOFJointTrajectory,
                                                           "/rne_controller/platform_trajectory", 10)
            time.sleep(0.5)   # discovery
        msg = MultiDOFJointTrajectory()
        msg.header.stamp = time_msg(int(start * 1e9))
        msg.joint_names = ["platform"]
        for k in range(1, int(round(T / dt)) + 1):
            t = k * dt
            pose, twist, accel = (np.asarray(x, float).tolist() for x in f(t))
            tr, v, a = Transform(), Twist(), Twist()
            tr.translation.x, tr.translation.y, tr.translation.z = pose[:3]
            tr.rotation.x, tr.rotation.y, tr.rotation.z, tr.rotation.w = pose[3:]
            v.linear.x, v.linear.y, v.linear.z, v.angular.x, v.angular.y, v.angular.z = twist
            a.linear.x, a.linear.y, a.linear.z, a.angular.x, a.angular.y, a.angular.z = accel
            msg.points.append(MultiDOFJointTrajectoryPoint(transforms=[tr], velocities=[v], accelerations=[a],
                                                           time_from_start=duration_msg(t)))
        self.platform_pub.publish(msg)

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
        self._halt()
        try:
            self.node.destroy_node()
        finally:
            self.rclpy.try_shutdown()
