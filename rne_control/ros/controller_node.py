"""``rne_controller``: model-based joint torque control over ROS 2.

Reads ``/joint_states`` and desired trajectories, runs the control law of
:mod:`rne_control.control.laws` on the RNE core at ``rate`` and publishes
joint effort commands (for a ros2_control ``forward_command_controller`` with
effort interfaces, or any driver taking effort arrays).

Run it as ``rne_controller --ros-args --params-file config/puma560_controller.yaml``.

Parameters: see :mod:`rne_control.ros.controller_settings`.

Topics
------
Subscriptions: ``/joint_states`` (sensor_msgs/JointState), ``~/joint_trajectory``
(trajectory_msgs/JointTrajectory), ``base_odometry`` (nav_msgs/Odometry),
``base_accel`` (geometry_msgs/AccelStamped), ``/robot_description`` (only
while waiting for a model). Publications: the command topic
(std_msgs/Float64MultiArray or sensor_msgs/JointState efforts, ``joints``
order) at ``rate``; ``~/controller_state`` (std_msgs/Float64MultiArray, layout
in :mod:`rne_control.ros.conversions`); ``/diagnostics`` at 1 Hz.

Models
------
The node runs the control law on the model's
:class:`~rne_control.control.plant.Plant` (:func:`~rne_control.control.plants.make_plant`) and never
branches on the kind of model. The controlled coordinates are ``joints``, any subset of the actuated
joints (required in ``/joint_states``); the other actuated joints are optional (measured, else
``locked.<joint>``), mimic joints follow their leaders. Per kind:

- tree: the movable joints that no ``<mimic>`` moves are actuated;
- closed loop: the active joints are; passive joints, when published, warm-start the loop solve and
  are checked against it (``loop_tolerance``): where a controlled joint drives the loop, a state whose
  loops do not close, or whose passive joint is off, is rejected and counted
  (``rejected_joint_states``), and the node holds the last accepted state's gravity torques; elsewhere
  the value is ignored and counted (``ignored_passive_positions``, one warning);
- elastic joints: the rigid joints are; every elastic joint is required too (e.g. link-side encoders);
- parallel platform: the legs are; the platform pose and twist come from the forward kinematics.

Behaviour
---------
Nothing is published until the dynamics kernels are loaded or compiled (the
warm-up runs every mode, base, trajectory kind, ramp and on_stale path once;
``rne_compile``, run at install, fills numba's cache so that this takes about
a second) and every controlled joint has been received. After "kernels ready"
nothing compiles: a kernel that does is named in the log and counted in the
diagnostics (``jit_signatures_after_ready``, ``jit_compiles_after_ready``).

``/joint_states`` messages from several publishers are merged by name (see
:mod:`rne_control.ros.joint_states`): the state is fresh while every
controlled joint was received within ``state_timeout``; a stale state names
the joints in the log and in the diagnostics (``stale_joints``). Messages
without any controlled joint are ignored (``ignored_joint_states``), not
rejected. At that
activation the desired state holds the measured position, the feed-forward
applies at once and the feedback terms ramp in over ``ramp_time``. A change
of mode, base, gains, gravity, payload or friction compensation, and the
recovery from a stale state, blend the command linearly from the old law to
the new one over ``ramp_time`` (see :mod:`rne_control.control.ramp`). After a
stale period the desired state is reset to hold the measured position.

**Trigger.** With ``trigger: timer`` (default) the executor delivers joint
states between cycles and each timer cycle computes from the latest one: a
state waits for the next tick, half a period on average. With
``trigger: state`` the cycle runs in the ``/joint_states`` callback, as soon as
a message that updates a trigger joint (``trigger_joints``, default every
required joint) leaves every required joint fresh; messages queued behind it
are merged first, so the newest state wins and nothing queues up, and one
state gives at most one command. A message carrying only other joints (a
gripper driver at 50 Hz beside an arm driver at 1 kHz, say) is merged and used
by the next cycle; with the default ``trigger_joints`` it starts a cycle
itself. Choose ``state`` when one driver publishes the controlled joints at the
control rate (rne_sim at ``publish_rate``, a ros2_control joint_state_broadcaster
at the controller manager's rate); ``timer`` when states come faster or
irregularly and a fixed command rate matters. Either way a timer runs the
watchdog (with ``state``: every 5 ms while the state is fresh, so that it does not
wake the executor at ``rate`` besides the states, and at ``rate`` while it is
stale): while the state is stale it applies ``on_stale`` at ``rate``, and
recovery, ramps, trajectory ends and parameter changes behave the same.
With ``use_sim_time`` the cycle always runs on ``/clock`` (lockstep).
``latency_p50_us``/``latency_p99_us``/``latency_max_us`` in the diagnostics
run from the arrival of the joint state a command used (callback entry) to the
return of its publish call, on the node's monotonic clock. The cycle itself
is in :mod:`rne_control.ros.controller_loop`.

The node exits with code 0 on SIGINT.
"""
from __future__ import annotations

import array
import math
import sys
import time
from typing import Optional

import numpy as np

from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rcl_interfaces.msg import SetParametersResult

from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import AccelStamped
from nav_msgs.msg import Odometry
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectory

from ..control.laws import SPLIT_PARTS, BaseState, ControlLaw
from ..control.limits import EffortLimiter
from ..control.ramp import OffsetRamp, Ramp
from ..control.trajectory import TrajectoryError, TrajectoryGenerator
from ..control.warmup import warm_up_law, warm_up_output, warm_up_trajectory
from ..control.watchdog import Watchdog
from ..control.warmup import CompileMonitor
from .conversions import (JointStateError, JointStateMapper, accel_fields, bind_float_field,
                          controller_state_message, odometry_fields, trajectory_fields)
from . import controller_diagnostics, follow_joint_trajectory, model_params, platform_topics
from .controller_settings import (COMMAND_TYPES, RUNTIME_NAMES, RUNTIME_SPECS, STATIC_SPECS, TRIGGERS,
                                  ConfigError, Settings)
from .params import Spec, T, TypedParameters
from .loop_stats import LoopStats
from .realtime import apply_realtime_options
from .controller_loop import WATCH_PERIOD, ControlLoop
from .runner import STOP, run
from .paths import resolve_model_file

NODE_NAME = "rne_controller"


class ControllerNode(ControlLoop, Node):
    def __init__(self, node_name: str = NODE_NAME, **kwargs):
        super().__init__(node_name, **kwargs)
        self._ready = False
        self.model = None
        self._fjt = None
        self.params = TypedParameters(self)
        self.params.declare(STATIC_SPECS)
        self.params.declare(RUNTIME_SPECS)
        self.params.declare(model_params.SPECS)
        self._rejected = {"joint_states": 0, "joint_trajectory": 0, "base_odometry": 0, "base_accel": 0,
                          "robot_description": 0, "parameters": 0}
        self._desc_sub = None
        fb = self.params.get("floating_base")
        if fb is None and self.params.get("base") != "fixed":
            fb = True
        self._floating_base = fb
        desc = self.params.get("robot_description")
        mfile = self.params.get("model_file")
        if desc:
            self._setup(self._load(desc, "robot_description"))
        elif mfile:
            try:
                path = resolve_model_file(mfile)
            except FileNotFoundError as e:
                raise ConfigError(str(e)) from None
            self._setup(self._load(str(path), str(path)))
        else:
            qos = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
            self._desc_sub = self.create_subscription(String, "/robot_description", self._on_description, qos)
            self.get_logger().info("robot_description and model_file are empty: waiting for /robot_description")

    # ------------------------------------------------------------------ model
    def _load(self, source: str, what: str):
        kw = {}
        if self._floating_base is not None:
            kw["floating_base"] = bool(self._floating_base)
        try:
            return model_params.load(source, model_params.elastic_overrides(self),
                                     bool(self.params.get("ignore_elasticity")), warn=self.get_logger().warning,
                                     **kw)
        except (ValueError, OSError) as e:
            raise ConfigError("cannot load the model from %s: %s" % (what if len(what) < 200 else "URDF string", e)) \
                from None

    def _on_description(self, msg: String) -> None:
        if self._ready:
            return
        try:
            model = self._load(msg.data, "/robot_description")
            self._setup(model)
        except ConfigError as e:
            self._rejected["robot_description"] += 1
            self.get_logger().error("ignoring /robot_description: %s" % e)
            return
        self.destroy_subscription(self._desc_sub)
        self._desc_sub = None

    # ------------------------------------------------------------------ setup
    def _make_plant(self, model):
        """The model's Plant for the ``joints`` parameter, with ``locked.<joint>`` parameters for the
        uncontrolled joints that have a default position."""
        def declare(name, default, description):
            self.params.declare([Spec(name, T.DOUBLE, default, description, read_only=True)])
            return self.params.get(name)
        try:
            return model_params.make_plant(declare, model, self.params.get("joints") or None,
                                           float(self.params.get("loop_tolerance")))
        except ValueError as e:
            raise ConfigError(str(e)) from None

    def _setup(self, model) -> None:
        log = self.get_logger()
        self.model = model
        self.plant = plant = self._make_plant(model)
        self.joints = plant.joint_names
        self.nc = nc = plant.n
        self.ctrl_idx = np.arange(nc, dtype=np.int64)  # the controlled joints lead plant.state_names

        self.rate = float(self.params.get("rate"))
        if not (self.rate > 0.0) or math.isinf(self.rate):
            raise ConfigError("rate must be a positive number of Hz (got %r)" % self.rate)
        self.period = 1.0 / self.rate
        self.trigger = self.params.get("trigger")
        if self.trigger not in TRIGGERS:
            raise ConfigError("trigger must be one of %s (got %r)" % (", ".join(TRIGGERS), self.trigger))
        ctype = self.params.get("command_type")
        if ctype not in COMMAND_TYPES:
            raise ConfigError("command_type must be one of %s (got %r)" % (", ".join(COMMAND_TYPES), ctype))
        spr = float(self.params.get("state_publish_rate"))
        self._state_every = 1 if spr <= 0 or spr >= self.rate else max(1, int(round(self.rate / spr)))

        # --- control layer (all preallocated); every array is in the plant's coordinates
        self.law = ControlLaw(plant)
        self.traj = TrajectoryGenerator(self.joints)
        self.mapper = JointStateMapper(plant.state_names, self.joints, plant.initial_state,
                                       float(self.params.get("velocity_filter_cutoff")), required=plant.required_names)
        ns = len(plant.state_names)
        self._recv_ns = np.full(ns, -1, dtype=np.int64)  # per state joint, receive time; -1: never
        self._n_required = len(self.mapper.required_index)
        self._trigger_mask = self._trigger_joints(plant.state_names)
        self._trigger_all = bool(self._trigger_mask[self.mapper.required_index].all())
        self._arrival_ns = 0          # perf_counter_ns() of the latest message that updated a required joint
        self._new_state = False       # a trigger joint was updated since the last command of the law
        self._stamp_ns = np.zeros(ns, dtype=np.int64)     # per state joint, header stamp
        self._ignored_states = 0
        self.base_state = BaseState()
        self.feedback_ramp = Ramp(0.5)
        self.output_ramp = OffsetRamp(nc, 0.5)
        self._last_cmd = np.zeros(nc)
        self._hold_cmd = np.zeros(nc)
        self._parts = {k: np.zeros(nc) for k in SPLIT_PARTS}

        values = {k: self.params.get(k) for k in RUNTIME_NAMES}
        try:
            settings = Settings(values, self)
        except ValueError as e:
            raise ConfigError("invalid parameter: %s" % e) from None
        self.limiter = EffortLimiter(settings.effort_limits)
        self.watchdog = Watchdog(settings.state_timeout, settings.on_stale)
        self.settings = None
        self._apply_settings(settings, now=None)
        self._pending: Optional[Settings] = None
        if not np.all(np.isfinite(settings.effort_limits)):
            log.warning("effort limits of %s are not finite: set effort_limits (the output is only clamped to "
                        "finite limits)" % [j for j, v in zip(self.joints, settings.effort_limits)
                                             if not math.isfinite(v)])

        # --- warm-up: compile/load every kernel before publishing anything
        t0 = time.perf_counter()
        log.info("loading the kernels (compiling those not in numba's cache: run rne_compile once after installing)")
        self._warm_up()
        # from here on nothing may compile: the monitor reports any kernel that does (diagnostics, log)
        self.jit_monitor = CompileMonitor()
        self.jit_monitor.start()
        self._jit_reported = set()
        log.info("kernels ready in %.2f s" % (time.perf_counter() - t0))

        # --- messages (preallocated; numpy views share the message buffers)
        if ctype == "joint_state":
            self._cmd_msg = JointState()
            self._cmd_msg.name = list(self.joints)
            self._cmd = bind_float_field(self._cmd_msg, "effort", nc)
            self._cmd_pub = self.create_publisher(JointState, self.params.get("command_topic"), 10)
        else:
            self._cmd_msg = Float64MultiArray()
            self._cmd = bind_float_field(self._cmd_msg, "data", nc)
            self._cmd_pub = self.create_publisher(Float64MultiArray, self.params.get("command_topic"), 10)
        self._cmd_is_js = ctype == "joint_state"
        self._state_msg, self._state2d, self._state_extra = controller_state_message(nc, plant.extra_state())
        self._state_pub = self.create_publisher(Float64MultiArray, "~/controller_state", 10)
        self._diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", 10)

        # --- statistics
        self.stats = LoopStats(self.period)
        self._cycles = 0
        self._sat_mask = np.zeros(nc, dtype=bool)
        self._state_count = 0
        self._state_rejected_at = -1

        # --- activity state
        self._active = False
        self._stopped = False        # on_stale: stop in effect
        self._have_published = False
        self._state_stamp_ns = 0
        self._warned_velocity = False
        self._warned_ignored = False  # the one warning on ignored passive positions (diagnostics)
        self._sim_time = bool(self.get_parameter("use_sim_time").value)
        self._trigger_state = self.trigger == "state" and not self._sim_time
        if self.trigger == "state" and self._sim_time:
            log.info("use_sim_time: the cycle runs on /clock (lockstep); trigger 'state' applies in real time")
        # ROS time without /clock is the system time: read it without building rclpy Time objects
        self._now_ns = self._ros_now_ns if self._sim_time else time.time_ns

        # --- ROS interfaces
        # deep enough for several drivers publishing between two cycles (each message carries other joints)
        self._js_sub = self.create_subscription(
            JointState, "/joint_states", self._on_state_trigger if self._trigger_state else self._on_joint_state, 100)
        self.create_subscription(JointTrajectory, "~/joint_trajectory", self._on_trajectory, 10)
        self.create_subscription(Odometry, "base_odometry", self._on_odometry, 10)
        self.create_subscription(AccelStamped, "base_accel", self._on_accel, 10)
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self._timer = self.create_timer(self.period, self._on_timer)
        self._period_ns = self._timer.timer_period_ns
        self._watch_period_ns = max(self._period_ns, int(WATCH_PERIOD * 1e9))
        self._diag_timer = self.create_timer(1.0, self._on_diagnostics,
                                             clock=Clock(clock_type=ClockType.STEADY_TIME))
        self._fjt = follow_joint_trajectory.create_server(self)   # None without control_msgs
        self._platform = platform_topics.create(self)              # None without a task space
        apply_realtime_options(self.params, self.get_logger())
        self._ready = True
        log.info("model %r: controlling %s at %.1f Hz, mode %s, base %s, publishing %s on %s"
                 % (model.name, ", ".join(self.joints), self.rate, self.settings.mode, self.settings.base,
                    ctype, self._cmd_pub.topic_name))

    def _trigger_joints(self, names) -> np.ndarray:
        """Mask over the state joints whose update starts a cycle (trigger: state): ``trigger_joints``, or
        every required joint."""
        chosen = self.params.get("trigger_joints")
        mask = np.zeros(len(names), dtype=bool)
        if not chosen:
            mask[self.mapper.required_index] = True
            return mask
        unknown = [j for j in chosen if j not in names]
        if unknown:
            raise ConfigError("trigger_joints %s are not joints of the state (%s)" % (unknown, ", ".join(names)))
        mask[[list(names).index(j) for j in chosen]] = True
        return mask

    def _warm_up(self) -> None:
        """Run every compiled path once (every mode, base, trajectory kind, ramp, clamp, state mapping),
        on throwaway objects where they hold state, so that no cycle compiles anything."""
        log = self.get_logger()
        warm_up_law(self.law, self.base_state, self._parts, self._hold_cmd, warn=log.warning, stop=STOP)
        if STOP.is_set():  # SIGINT while compiling: stop here (the runner exits with 0)
            raise KeyboardInterrupt
        warm_up_trajectory(TrajectoryGenerator(self.joints))
        warm_up_output(self.nc)
        names = list(self.plant.state_names)
        n = len(names)
        m = JointStateMapper(names, self.joints, np.zeros(n))
        m.update(names, array.array("d", bytes(8 * n)), array.array("d", bytes(8 * n)), 0.0)
        m.update(names, array.array("d", bytes(8 * n)), array.array("d"), 0.01)
        m.update(names, array.array("d", bytes(8 * n)), array.array("d"), 0.02)

    # ------------------------------------------------------------ parameters
    def _on_set_parameters(self, params) -> SetParametersResult:
        changed = {p.name: p for p in params if p.name in RUNTIME_NAMES}
        if not changed:
            return SetParametersResult(successful=True)
        values = {k: self.params.get(k) for k in RUNTIME_NAMES}
        for name, p in changed.items():
            values[name] = None if p.type_ == T.NOT_SET else (list(p.value) if isinstance(p.value, (list, tuple))
                                                              or type(p.value).__name__ == "array" else p.value)
        try:
            settings = Settings(values, self)
        except ValueError as e:
            self._rejected["parameters"] += 1
            self.get_logger().warning("parameter change refused: %s" % e)
            return SetParametersResult(successful=False, reason=str(e))
        self._pending = settings
        return SetParametersResult(successful=True)

    def _apply_settings(self, s: Settings, now: Optional[float]) -> bool:
        """Install a settings snapshot; returns True if the law changed (ramp wanted)."""
        old = self.settings
        law = self.law
        law.set_mode(s.mode)
        law.set_base(s.base, self.base_state)
        law.base_velocity_source = s.base_velocity_source
        law.friction = s.friction_compensation
        law.set_gravity(s.gravity)
        for name in ("kp", "kd", "hold_kp", "hold_kd"):
            arr = getattr(law, name)
            arr[:] = getattr(s, name)
        if old is None or old.payload != s.payload:
            self.plant.set_payload(*(s.payload or (None,)))
        self.limiter.set_limits(s.effort_limits)
        self.watchdog.timeout = s.state_timeout
        self.watchdog.on_stale = s.on_stale
        self.feedback_ramp.duration = s.ramp_time
        self.output_ramp.duration = s.ramp_time
        changed = s.law_differs(old)
        self.settings = s
        if old is not None:
            self.get_logger().info("parameters applied: mode %s, base %s%s" % (
                s.mode, s.base, " (ramping over %.3f s)" % s.ramp_time if changed and s.ramp_time > 0 else ""))
        return changed and old is not None

    # ------------------------------------------------------------ callbacks
    def _ros_now_ns(self) -> int:
        return self.get_clock().now().nanoseconds

    def _now(self) -> float:
        return self._now_ns() * 1e-9

    def _on_joint_state(self, msg: JointState) -> None:
        """Merge one /joint_states message (see :mod:`rne_control.ros.joint_states`); the state is fresh
        while every needed joint was received within state_timeout."""
        arrival_ns = time.perf_counter_ns()
        now_ns = self._now_ns()
        st = msg.header.stamp
        stamp_ns = st.sec * 1000000000 + st.nanosec
        try:
            got = self.mapper.update(msg.name, msg.position, msg.velocity,
                                     (stamp_ns if stamp_ns else now_ns) * 1e-9, msg.effort, now_ns * 1e-9)
        except JointStateError as e:
            self._reject("joint_states", "/joint_states", e)
            return
        if not got:
            self._ignored_states += 1
            return
        idx = self.mapper.updated          # the required joints the message carried (got > 0 of them)
        self._arrival_ns = arrival_ns
        if self._trigger_all or self._trigger_mask[idx].any():
            self._new_state = True
        self._recv_ns[idx] = now_ns
        self._stamp_ns[idx] = stamp_ns
        if got == self._n_required:         # it carried them all: nothing older to look up
            self.watchdog.feed(now_ns * 1e-9)
            self._state_stamp_ns = stamp_ns
        else:
            req = self.mapper.required_index
            oldest = self._recv_ns[req].min()
            if oldest >= 0:
                self.watchdog.feed(oldest * 1e-9)
            self._state_stamp_ns = int(self._stamp_ns[req].min())
        if not self._warned_velocity and self.mapper.estimating_velocity:
            self._warned_velocity = True
            self.get_logger().warning("/joint_states has no velocities for %s: estimating them by filtered "
                                      "differentiation (%.0f Hz)" % (", ".join(self.mapper.estimated_joints()),
                                                                     self.mapper.velocity_cutoff_hz))
        self._state_count += 1

    def stale_joints(self, now_ns: int) -> list:
        """Needed joints not received within state_timeout (never received ones included)."""
        limit = now_ns - int(self.watchdog.timeout * 1e9)
        return [j for j, i in zip(self.mapper.required, self.mapper.required_index) if self._recv_ns[i] < limit]

    def _on_trajectory(self, msg: JointTrajectory) -> None:
        self.accept_trajectory("joint_trajectory", "~/joint_trajectory", *trajectory_fields(msg))

    def accept_trajectory(self, key, topic, names, times, P, V, A, start) -> None:
        """Validate and run a trajectory that came on ``topic`` (rejections counted under ``key``)."""
        if not self._active:
            self._reject(key, topic, "no valid joint state yet")
            return
        now = self._now()
        try:
            prep = self.traj.prepare(names, times, P, V, A)
            self.traj.set_trajectory(prep, now, start)
        except TrajectoryError as e:
            self._reject(key, topic, e)
            return
        if self._fjt is not None:
            self._fjt.preempt_by_topic(topic)
        self.get_logger().info("trajectory accepted: %d points (%s), %.3f s"
                               % (len(times), prep.kind, times[-1]), throttle_duration_sec=1.0)

    def _reject(self, key, topic, reason) -> None:
        """Count a rejected message and log why (throttled); the node keeps running."""
        self._rejected[key] += 1
        self.get_logger().warning("rejected %s: %s (%d rejected)" % (topic, reason, self._rejected[key]),
                                  throttle_duration_sec=2.0)

    def _on_odometry(self, msg: Odometry) -> None:
        try:
            quat, twist = odometry_fields(msg)
            self.base_state.set_odometry(quat, twist)
        except ValueError as e:
            self._reject("base_odometry", "base_odometry", e)

    def _on_accel(self, msg: AccelStamped) -> None:
        try:
            lin, ang = accel_fields(msg)
            self.base_state.set_classical_accel(lin, ang)
        except ValueError as e:
            self._reject("base_accel", "base_accel", e)

    # ------------------------------------------------------------ diagnostics
    def _on_diagnostics(self) -> None:
        if self._ready:
            self._diag_pub.publish(controller_diagnostics.message(self))


def main(args=None) -> int:
    return run(ControllerNode, NODE_NAME, args, quiet=(ConfigError,))


if __name__ == "__main__":
    sys.exit(main())
