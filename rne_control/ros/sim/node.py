"""``rne_sim``: a simulated robot driver integrating the equations of motion of an rne_control model.

The embedded default plant of ``rne_controller``.  It behaves like an effort-controlled robot driver:

* subscribes to effort commands on ``command_topic`` (std_msgs/Float64MultiArray in ``joints``
  order, or sensor_msgs/JointState with efforts mapped by name when ``command_type: joint_state``);
* simulates the commanded joints (``joints``, any subset of the actuated joints, as ``rne_controller``
  takes it) and holds the rest of the mechanism at its ``locked.<joint>`` positions: it publishes the
  joints it simulates (the commanded ones, the passive joints of their loops and their mimic joints,
  elastic joints), so that an uncontrolled gripper's own driver is its only publisher; with
  ``publish_uncontrolled: true`` it also publishes the others at their locked positions;
* holds its brakes (joints still, zero applied effort) until the first command arrives, and again
  whenever no command has come for ``command_timeout`` seconds;
* integrates the plant's simulation model (:class:`rne_control.control.simulation.Simulation`) at
  ``sim_rate`` with RK4 (or semi-implicit Euler with ``substeps``), in real time: for a tree, the forward
  dynamics of its model with the uncontrolled joints welded at their locked positions (the plant's
  ``sim_model``; on a floating base, with the base pose and twist); for a closed loop, a parallel platform
  or an elastic robot, the plant's ``sim_acceleration`` in its own coordinates (``sim_names``: a loop's
  commanded joints, the passive ones solved from them; the legs; the commanded and the link-side joints of
  the springs); with the model's friction (``friction``) and extra viscous ``joint_damping``;
* applies a wrench from ``~/applied_wrench`` (geometry_msgs/WrenchStamped, at the origin of its
  ``header.frame_id`` in that frame's axes, held until the next message; a tree on a fixed base);
* with ``contact.frame``, stops that frame's origin at a plane (a spring-damper penalty), and publishes
  the contact force on ``~/contact_wrench`` with each joint state;
* publishes ``/joint_states`` (stamped; names, positions, velocities, applied efforts) at
  ``publish_rate`` and, for a floating base, the base state on ``base_odometry`` (nav_msgs/Odometry,
  relative name: pose of the base in ``odom_frame``, twist in the base frame = ``child_frame_id``).

**Lockstep mode** (``lockstep: true``, for deterministic tests; the controller runs with
``use_sim_time: true``): the simulator publishes ``/joint_states`` (and odometry) of step k, then
``/clock`` = t_k.  It advances by one control period (``control_period``, or 1/``control_rate``)
only when a command arrives after that publication, applying that command over the period.  If
none comes within ``lockstep_timeout`` wall seconds (``lockstep_idle_timeout`` while no controller
has answered yet, i.e. at start-up or after a timed-out step), it advances anyway with the brakes
held, so that a late-starting controller (whose sim-time timer needs the clock to move) never
deadlocks.

The node publishes nothing before its dynamics kernels are compiled (each one is called once at
start-up) and exits with code 0 on SIGINT. Its parameters: :mod:`rne_control.ros.sim.settings`.
"""
from __future__ import annotations

import sys
import threading
import time

import numpy as np

import rclpy
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from geometry_msgs.msg import WrenchStamped
from rosgraph_msgs.msg import Clock as ClockMsg
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String

from ...control.limits import model_limits
from ...control.plant import DEFAULT_LOOP_TOLERANCE
from ...control.simulation import Simulation
from ...control.warmup import WarmUpProgress
from .. import model_params
from ..conversions import time_msg
from ..params import TypedParameters
from ..paths import resolve_model_file
from ..publishers import Publishers
from ..runner import run
from ..wire import JointStateReader, read_float64_array
from .output import StateOutput
from .settings import SPECS, validate

NODE_NAME = "rne_sim"


# --------------------------------------------------------------------------- node
class SimNode(Node):
    def __init__(self, **kwargs):
        super().__init__(NODE_NAME, **kwargs)
        self.publishing = Publishers(self)
        self._elastic = None   # elastic.<joint>.* parameters (URDF models), read at the first load
        self.params = TypedParameters(self)
        self.params.declare(SPECS)
        self.p = p = {s.name: self.params.get(s.name) for s in SPECS}
        validate(p)
        self.executor_kind = p["executor"]   # the runner's

        self.model = None
        self._ready = False
        self._desc_sub = None
        if p["robot_description"] or p["model_file"]:
            self._setup(p["robot_description"] or None)
        else:
            self.get_logger().info("no model_file / robot_description: waiting for /robot_description")
            qos = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)
            self._desc_sub = self.create_subscription(String, "/robot_description", self._on_description, qos)

    # ------------------------------------------------------------------ setup
    def _on_description(self, msg):
        if self.model is not None:
            return
        try:
            self._setup(msg.data)
        except Exception as e:  # keep waiting for a usable description
            self.get_logger().error(f"cannot use /robot_description: {e}")

    def _load(self, xml):
        source = xml or str(resolve_model_file(self.p["model_file"]))
        if self._elastic is None:
            self._elastic = model_params.elastic_overrides(self)
        return model_params.load(source, self._elastic, False, warn=self.get_logger().warning)

    def _vec(self, name, n, default, allow_scalar=True):
        v = self.p[name]
        if v is None or len(v) == 0:
            return np.full(n, default, dtype=float)
        v = np.asarray(v, dtype=float)
        if allow_scalar and v.size == 1:
            v = np.full(n, float(v[0]))
        if v.shape != (n,) or not np.all(np.isfinite(v) | (name == "effort_limits")):
            raise ValueError(f"parameter '{name}' must have {n} finite values (got {v.tolist()})")
        return v

    def _setup(self, xml):
        p = self.p
        # the commanded joints are simulated; the uncontrolled ones held at their locked.<joint> positions
        plant = model_params.make_plant(self.params, self._load(xml), p["joints"] or None, DEFAULT_LOOP_TOLERANCE)
        held_names, held_q = plant.held_joint_states()
        self.locked_names = list(held_names)
        self.plant = plant
        self.model = model = plant.model
        n = self.n = plant.n
        self.joints = list(plant.joint_names)
        ns = len(plant.sim_names)
        q0 = None
        if p["initial_positions"]:   # every simulated joint, or the controlled ones (the rest completed)
            q0 = plant.sim_initial_positions(np.asarray(p["initial_positions"], dtype=float))
            if not np.all(np.isfinite(q0)):
                raise ValueError("parameter 'initial_positions' must be finite")
        qd0 = None if not p["initial_velocities"] else self._vec("initial_velocities", ns, 0.0, allow_scalar=False)
        damping = self._vec("joint_damping", n, 0.0)
        if np.any(damping < 0):
            raise ValueError("joint_damping must be >= 0")
        lim = self._vec("effort_limits", n, np.inf)
        if p["effort_limits"] is None:   # the model's, as rne_controller takes them (inf: unclamped)
            lim = model_limits(plant.effort_limits)
        if np.any(np.isnan(lim)) or np.any(lim <= 0):
            raise ValueError("effort_limits must be > 0")
        self.effort_limits = lim
        gravity = None
        if p["gravity"] is not None and len(p["gravity"]) > 0:
            gravity = np.asarray(p["gravity"], dtype=float)
            if gravity.shape != (3,) or not np.all(np.isfinite(gravity)):
                raise ValueError("gravity must have 3 finite values")
            if plant.sim_floating_base:
                self.get_logger().warning("'gravity' is ignored for a floating-base model (the model's applies)")
                gravity = None
        self.floating = plant.sim_floating_base
        base_p = self._vec("initial_base_position", 3, 0.0, allow_scalar=False) if self.floating else None
        qb = p["initial_base_orientation"] or None
        self.sim = Simulation(plant, q0, qd0, friction=bool(p["friction"]), damping=damping, gravity=gravity,
                              base_position=base_p, base_orientation=qb)
        if p["contact.frame"]:
            self.sim.set_contact(p["contact.frame"], p["contact.point"], p["contact.normal"], p["contact.stiffness"],
                                 p["contact.damping"])
        if self.floating:
            self.base_frame = p["base_frame"] or (getattr(model, "base_link", None) or "base")
            if not isinstance(self.base_frame, str):
                self.base_frame = getattr(self.base_frame, "name", "base")

        # integration
        self.dt_sim = 1.0 / p["sim_rate"]
        self.h = self.dt_sim / p["substeps"]
        self.rk4 = p["integrator"] == "rk4"
        self.tau = np.zeros(n)           # applied effort (clamped command, 0 under brakes)
        self.cmd = np.zeros(n)
        self.have_cmd = False
        self.braked = True
        self.last_cmd_wall = -1e9
        self.bad_commands = 0
        self._warned_bad = 0.0

        # compile kernels before anything is published
        t0 = time.monotonic()
        self.sim.warm_up(self.h, self.rk4, progress=WarmUpProgress(self.get_logger(), "loading the kernels"))
        names, _, _, _ = self.sim.joint_states()
        self.get_logger().info(
            f"model '{model.name}' ({plant.kind}): commanding {n} joints {self.joints}"
            f"{' (floating base)' if self.floating else ''}, publishing {list(names)}"
            f"{', holding ' + str(self.locked_names) if self.locked_names else ''}; kernels ready in "
            f"{time.monotonic() - t0:.2f} s")

        # the uncontrolled joints belong to their own drivers: published only when asked for
        held = ([], []) if not p["publish_uncontrolled"] else (list(held_names), held_q.tolist())
        self.output = StateOutput(self, self.sim, p, held, self.base_frame if self.floating else None)
        # depth 1: a driver applies the newest command; a queue would only delay it. raw: read from the
        # serialised bytes (rne_control.ros.wire)
        if p["command_type"] == "joint_state":
            self._js_reader = JointStateReader(JointState)
            self.create_subscription(JointState, p["command_topic"], self._on_joint_state_command, 1, raw=True)
        else:
            self.create_subscription(Float64MultiArray, p["command_topic"], self._on_array_command, 1, raw=True)

        self.create_subscription(WrenchStamped, "~/applied_wrench", self._on_applied_wrench, 10)

        self.steady = Clock(clock_type=ClockType.STEADY_TIME)
        if p["lockstep"]:
            self.clock_pub = self.publishing.create(ClockMsg, "/clock", 10)
            period = p["control_period"] if p["control_period"] > 0 else 1.0 / p["control_rate"]
            self.ls_period_ns = int(round(period * 1e9))
            self.ls_substeps = max(1, int(round(period / self.dt_sim)))
            self.ls_h = period / self.ls_substeps
            self.t_ns = int(round(p["start_time"] * 1e9))
            self.ls_answered = False   # did the controller answer the previous step?
            self.ls_steps = 0
            self.ls_timeouts = 0
            self._ls_publish()
            self.create_timer(0.005, self._ls_watchdog, clock=self.steady)
            self.get_logger().info(
                f"lockstep: period {period * 1e3:.3f} ms ({self.ls_substeps} x {self.ls_h * 1e3:.3f} ms "
                f"{'RK4' if self.rk4 else 'semi-implicit'} steps), /clock from {p['start_time']} s")
        else:
            self.t0_ros_ns = self.get_clock().now().nanoseconds
            self.t0_wall = time.monotonic()
            self.sim_steps = 0
            self.max_catchup = max(1, int(0.05 / self.dt_sim))  # never integrate more than 50 ms at once
            # a plain thread paced with sleep: much cheaper than a 1 kHz executor timer in rclpy
            self._rt_stop = threading.Event()
            self._rt_thread = threading.Thread(target=self._rt_loop, name="rne_sim_rt", daemon=True)
            self._rt_thread.start()
            self.get_logger().info(
                f"real time: {p['sim_rate']:.0f} Hz {'RK4' if self.rk4 else 'semi-implicit'}, "
                f"joint states at {p['publish_rate']:.0f} Hz")
        self._ready = True

    # ------------------------------------------------------------------ dynamics
    def _step(self, h):
        """Advance the state by h with the applied effort self.tau (or hold the brakes)."""
        if self.braked:
            self.sim.brake(h)
        elif not self.sim.step(self.tau, h, self.rk4):
            # never publish a diverged state: keep the last finite one and brake until the next command
            self.get_logger().error("simulation diverged (non-finite state after a step of %.2e s): brakes on at "
                                    "the last finite state" % h, throttle_duration_sec=1.0)
            self.braked = True
            self.sim.brake(0.0)

    # ------------------------------------------------------------------ commands
    def _warn_bad(self, why):
        self.bad_commands += 1
        now = time.monotonic()
        if now - self._warned_bad > 2.0:
            self._warned_bad = now
            self.get_logger().warning(f"ignoring command ({self.bad_commands} so far): {why}")

    def _accept(self, u):
        if not np.all(np.isfinite(u)):
            self._warn_bad("non-finite effort")
            return
        if self.p["clamp_efforts"]:
            np.clip(u, -self.effort_limits, self.effort_limits, out=u)
        self.cmd = u
        self.have_cmd = True
        self.last_cmd_wall = time.monotonic()
        if self.p["lockstep"]:
            self._ls_on_command()

    def _on_array_command(self, raw):
        if not self._ready:
            return
        try:
            u = read_float64_array(raw, Float64MultiArray)
        except Exception as e:
            self._warn_bad(f"unreadable message: {e}")
            return
        if len(u) != self.n:
            self._warn_bad(f"{len(u)} efforts for {self.n} joints")
            return
        self._accept(u)

    def _on_joint_state_command(self, raw):
        if not self._ready:
            return
        try:
            names, _, _, effort, _ = self._js_reader.read(raw)
        except Exception as e:
            self._warn_bad(f"unreadable message: {e}")
            return
        if len(effort) != len(names):
            self._warn_bad("effort and name lengths differ")
            return
        idx = {nm: i for i, nm in enumerate(names)}
        missing = [j for j in self.joints if j not in idx]
        if missing:
            self._warn_bad(f"missing joints {missing}")
            return
        self._accept(np.array([effort[idx[j]] for j in self.joints], dtype=float))

    def _on_applied_wrench(self, msg):
        """~/applied_wrench: a wrench at the origin of ``header.frame_id``, in that frame's axes, held until the
        next message (a zero wrench removes it). A message it cannot apply is refused with the reason."""
        f, m = msg.wrench.force, msg.wrench.torque
        w = [f.x, f.y, f.z, m.x, m.y, m.z]
        before = self.sim.wrench
        try:
            if not msg.header.frame_id:
                raise ValueError("header.frame_id must name a link or frame of the model")
            self.sim.set_wrench(msg.header.frame_id, w)
        except ValueError as e:
            self.get_logger().warning(f"ignoring ~/applied_wrench: {e}")
            return
        after = self.sim.wrench
        if (before and before[0]) != (after and after[0]):   # logged when it starts, stops or moves
            self.get_logger().info(f"applying a wrench at {after[0]!r}" if after else "applied wrench removed")

    # ------------------------------------------------------------------ real time
    def _rt_loop(self):
        period = 1.0 / self.p["publish_rate"]
        next_t = time.monotonic()
        while not self._rt_stop.is_set():
            try:
                self._rt_tick()
            except Exception as e:  # context shut down under us, or a dynamics error
                if not rclpy.ok() or self._rt_stop.is_set():
                    return
                self.get_logger().error(f"simulation step failed: {e}", throttle_duration_sec=1.0)
            next_t += period
            delay = next_t - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            elif delay < -0.05:  # far behind: resynchronise instead of bursting
                next_t = time.monotonic()

    def close(self):
        t = getattr(self, "_rt_thread", None)
        if t is not None:
            self._rt_stop.set()
            t.join(timeout=2.0)

    def _rt_tick(self):
        now = time.monotonic()
        if now - self.last_cmd_wall > self.p["command_timeout"]:
            if not self.braked:
                self.get_logger().info("no command for command_timeout: brakes on", throttle_duration_sec=5.0)
            self.braked = True
            self.tau[:] = 0.0
        elif self.have_cmd:
            if self.braked:
                self.get_logger().info("commands arriving: brakes released", throttle_duration_sec=5.0)
            self.braked = False
            self.tau = self.cmd.copy()
        target = int((now - self.t0_wall) / self.dt_sim)
        steps = target - self.sim_steps
        if steps > self.max_catchup:  # we fell behind (machine busy): drop the backlog
            self.sim_steps = target - self.max_catchup
            steps = self.max_catchup
        for _ in range(max(0, steps)):
            for _ in range(self.p["substeps"]):
                self._step(self.h)
        self.sim_steps += max(0, steps)
        self.output.publish(self.t0_ros_ns + int(round(self.sim_steps * self.dt_sim * 1e9)))

    # ------------------------------------------------------------------ lockstep
    def _ls_publish(self):
        self.output.publish(self.t_ns)
        self.clock_pub.publish(ClockMsg(clock=time_msg(self.t_ns)))
        self.ls_pub_wall = time.monotonic()
        self.ls_waiting = True

    def _ls_advance(self, commanded: bool):
        self.ls_waiting = False
        if commanded:
            self.braked = False
            self.tau = self.cmd.copy()
        else:
            self.braked = True
            self.tau[:] = 0.0
        for _ in range(self.ls_substeps):
            self._step(self.ls_h)
        self.t_ns += self.ls_period_ns
        self.ls_steps += 1
        self.ls_answered = commanded
        self._ls_publish()

    def _ls_on_command(self):
        if self.ls_waiting:
            self._ls_advance(True)

    def _ls_watchdog(self):
        if not self.ls_waiting:
            return
        limit = self.p["lockstep_timeout"] if self.ls_answered else self.p["lockstep_idle_timeout"]
        if time.monotonic() - self.ls_pub_wall > limit:
            if self.ls_answered:
                self.ls_timeouts += 1
                self.get_logger().warning(
                    f"lockstep: no command for {limit:.2f} s at t={self.t_ns * 1e-9:.3f}: "
                    f"advancing with brakes ({self.ls_timeouts} timeouts)")
            self._ls_advance(False)


def main(args=None):
    return run(SimNode, NODE_NAME, args, quiet=(ValueError,))   # a bad parameter or model: its message only


if __name__ == "__main__":
    sys.exit(main())
