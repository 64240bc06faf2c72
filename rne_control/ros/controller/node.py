"""``rne_controller``: model-based joint torque control over ROS 2.

Runs the ROS-free cycle of :mod:`rne_control.control.cycle` on ``/joint_states`` and desired trajectories
and publishes joint efforts (for a ros2_control effort ``forward_command_controller``, or any driver).
The node owns the ROS side: parameters (:mod:`.settings`), subscriptions, publishers, timers and
diagnostics (:mod:`.diagnostics`). Its update is read -> compute -> write: a subscription callback merges
each ``/joint_states`` message into the cycle; what starts a cycle is the timer (``trigger: timer``, and
always on ``/clock`` under ``use_sim_time``: lockstep) or a state that updates a trigger joint
(``trigger: state``); :meth:`ControlCycle.update` returns the clamped command (or none), which is then
published, and after it, every ``1/state_publish_rate`` and only while someone subscribes,
``~/controller_state``. The action server (:mod:`.follow_joint_trajectory`) and the platform topics
(:mod:`.platform_topics`) feed the same cycle's trajectory, the task-space topics (:mod:`.task_topics`) its
task-space target. Users' reference: the README's "The ROS 2 node".

Timing
------
Under ``use_sim_time`` a cycle takes the queued joint states and waits up to ``SIM_STATE_WAIT`` (wall) for
the state stamped with its own time (lockstep is deterministic). ``compute_time`` runs from after the
merge to the hand-off of the command to rclpy, ``publish_time`` is the publish call, ``latency`` runs
from the arrival of the state used to the publish call's return; periods are taken at the callback entry.

Nothing is published before the kernels are loaded or compiled (the warm-up) and every required joint
has been received. The node exits with code 0 on SIGINT and SIGTERM.
"""
from __future__ import annotations

import math
import subprocess
import sys
import time

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

from ...control.cycle import HOLD, STALE_OUTPUT, ControlCycle
from ...control.settings import Settings
from ...control.trajectory import TrajectoryError
from ...control.watchdog import FRESH
from ...control.background import BackgroundKernels, split_groups, start_prefetch
from ...control.warmup import CORE, CompileMonitor, WarmUpProgress
from ..conversions import (accel_fields, controller_state_message, fill_controller_state, odometry_fields,
                           trajectory_fields)
from .. import model_params
from ..params import T, TypedParameters
from ..paths import resolve_model_file
from ..publishers import Publishers
from ..realtime import apply_realtime_options
from ..runner import STOP, check_executor, run
from ..wire import JointStateReader, SerializedMessage
from . import diagnostics, follow_joint_trajectory, platform_topics
from .external_topics import ExternalTopics
from .task_topics import TaskTopics
from .loop_stats import LoopStats
from .settings import RUNTIME_NAMES, RUNTIME_SPECS, STATIC_SPECS, ConfigError, LoopSettings

NODE_NAME = "rne_controller"
# with use_sim_time: how long (wall s) a cycle waits for the joint state stamped with its own time
SIM_STATE_WAIT = 0.005
# trigger: state: the watchdog timer's period while the state is fresh, as a fraction of state_timeout (at
# least 1/rate), so that the executor is not woken at rate on top of the states: a stale state is seen
# within a quarter of state_timeout after it went stale
WATCH_FRACTION = 0.25


class ControllerNode(Node):
    def __init__(self, node_name: str = NODE_NAME, **kwargs):
        super().__init__(node_name, **kwargs)
        self.publishing = Publishers(self)
        self._ready = False
        self.model = None
        self._fjt = None
        self.params = TypedParameters(self)
        self.params.declare(STATIC_SPECS)
        self.params.declare(RUNTIME_SPECS)
        self.params.declare(model_params.SPECS)
        try:
            self.executor_kind = check_executor(self.params.get("executor"))   # the runner's
        except ValueError as e:
            raise ConfigError(str(e)) from None
        self._rejected = {"joint_trajectory": 0, "base_odometry": 0, "base_accel": 0,
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
        try:
            return model_params.make_plant(self.params, model, self.params.get("joints") or None,
                                           float(self.params.get("loop_tolerance")), read_only=True)
        except ValueError as e:
            raise ConfigError(str(e)) from None

    def _setup(self, model) -> None:
        log = self.get_logger()
        self.model = model
        self.plant = plant = self._make_plant(model)
        self.joints = plant.joint_names
        nc = plant.n
        loop = LoopSettings(self.params.get)
        self.rate, self.period, self.trigger, ctype = loop.rate, 1.0 / loop.rate, loop.trigger, loop.command_type
        self._state_every = loop.state_every
        try:
            settings = Settings({k: self.params.get(k) for k in RUNTIME_NAMES}, plant, self.period)
        except ValueError as e:
            raise ConfigError("invalid parameter: %s" % e) from None

        # --- the command: the cycle writes it into cmd, which is copied into the serialised message
        self._cmd_is_js = ctype == "joint_state"
        field = "effort" if self._cmd_is_js else "data"
        cmd_msg = JointState(name=list(self.joints)) if self._cmd_is_js else Float64MultiArray()
        self._cmd_wire = SerializedMessage(cmd_msg, {field: nc}, stamped=self._cmd_is_js)
        self._cmd_out = self._cmd_wire.views[field]
        cmd = np.zeros(nc)
        try:
            self.cycle = cycle = ControlCycle(plant, settings, loop.trigger_joints, loop.velocity_filter_cutoff,
                                              out=cmd, log=log,
                                              driver_adds_gravity=self.params.get("driver_adds_gravity"),
                                              end_effector_frame=self.params.get("end_effector_frame"))
        except ValueError as e:
            raise ConfigError(str(e)) from None
        if not np.all(np.isfinite(settings.effort_limits)):
            log.warning("effort limits of %s are not finite: set effort_limits (the output is only clamped to "
                        "finite limits)" % [j for j, v in zip(self.joints, settings.effort_limits)
                                             if not math.isfinite(v)])

        # --- warm-up: compile/load the kernels of every path reachable without a parameter change before
        # publishing anything; those of the task-space modes and the other bases too where numba's cache holds
        # them, else a background compiler makes them after the first command (control/background.py)
        now, later = split_groups(cycle)
        prefetch = start_prefetch(cycle, log)
        cycle.warm_up(warn=log.warning, stop=STOP, groups=(CORE,) + now,   # KeyboardInterrupt on SIGINT: exit 0
                      progress=WarmUpProgress(log, "loading the kernels (compiling those not in numba's cache: run "
                                                   "rne_compile once after installing)"))
        if prefetch is not None:   # it ends with the warm-up: what is left, it finds in the cache
            try:
                prefetch.wait(timeout=60.0)
            except subprocess.TimeoutExpired:
                prefetch.kill()
        # from here on nothing may compile: the monitor reports any kernel that does (diagnostics, log)
        self.jit_monitor = CompileMonitor()
        self.jit_monitor.start()
        self._jit_reported = set()
        self.background = None
        cycle.on_refused = self._keep_mode_and_base
        if later:
            self.background = BackgroundKernels(cycle, later, log, self.params.get("cpu_affinity") or (),
                                                on_loaded=lambda g: self.jit_monitor.rebase())
            self.background.start()

        # --- publishers (messages preallocated; numpy views share their buffers)
        self._cmd_pub = self.publishing.create(type(cmd_msg), self.params.get("command_topic"), 10)
        self._state_msg, self._state2d, self._state_extra = controller_state_message(nc, plant.extra_state())
        self._state_pub = self.publishing.create(Float64MultiArray, "~/controller_state", 10)
        self._diag_pub = self.publishing.create(DiagnosticArray, "/diagnostics", 10)
        self.stats = LoopStats(self.period)
        self._cycles = 0
        self._warned_ignored = False  # the one warning on ignored passive positions (diagnostics)
        self._sim_time = bool(self.get_parameter("use_sim_time").value)
        self._trigger_state = self.trigger == "state" and not self._sim_time
        if self.trigger == "state" and self._sim_time:
            log.info("use_sim_time: the cycle runs on /clock (lockstep); trigger 'state' applies in real time")
        # ROS time without /clock is the system time: read it without building rclpy Time objects
        self._now_ns = self._ros_now_ns if self._sim_time else time.time_ns

        # --- subscriptions and timers
        # deep enough for several drivers publishing between two cycles (each message carries other joints)
        # raw: the states are read from their serialised bytes (rne_control.ros.wire)
        self._js_reader = JointStateReader(JointState)
        self._js_sub = self.create_subscription(
            JointState, "/joint_states", self._on_state_trigger if self._trigger_state else self._on_joint_state, 100,
            raw=True)
        self.create_subscription(JointTrajectory, "~/joint_trajectory", self._on_trajectory, 10)
        self.create_subscription(Odometry, "base_odometry", self._on_odometry, 10)
        self.create_subscription(AccelStamped, "base_accel", self._on_accel, 10)
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self._timer = self.create_timer(self.period, self._on_timer)
        self._period_ns = self._timer.timer_period_ns
        self._diag_timer = self.create_timer(1.0, self._on_diagnostics,
                                             clock=Clock(clock_type=ClockType.STEADY_TIME))
        self._fjt = follow_joint_trajectory.create_server(self)   # None without control_msgs
        self._platform = platform_topics.create(self)              # None without a task space
        self._external = ExternalTopics(self)
        self._task = TaskTopics(self)
        apply_realtime_options(self.params, self.get_logger())
        self._ready = True
        log.info("model %r: controlling %s at %.1f Hz, mode %s, base %s, publishing %s on %s"
                 % (model.name, ", ".join(self.joints), self.rate, cycle.settings.mode, cycle.settings.base,
                    ctype, self._cmd_pub.topic_name))

    # ------------------------------------------------------------ read: joint states
    def _ros_now_ns(self) -> int:
        return self.get_clock().now().nanoseconds

    def _now(self) -> float:
        return self._now_ns() * 1e-9

    def _on_joint_state(self, raw: bytes) -> None:
        """Merge one serialised /joint_states message into the cycle (see
        :mod:`rne_control.control.joint_states`)."""
        arrival_ns = time.perf_counter_ns()
        try:
            names, position, velocity, effort, stamp_ns = self._js_reader.read(raw)
        except Exception as e:   # not a JointState rclpy can read: rejected like a bad one
            self.cycle.reject(e)
            return
        self.cycle.merge(names, position, velocity, effort, stamp_ns, self._now_ns(), arrival_ns)

    def _drain_joint_states(self) -> bool:
        """Merge the joint states that have arrived but not been dispatched yet; True if any."""
        sub = self._js_sub
        took = False
        while True:
            with sub.handle:
                info = sub.handle.take_message(sub.msg_type, sub.raw)
            if info is None:
                return took
            took = True
            self._on_joint_state(info[0])

    # ------------------------------------------------------------ what starts a cycle
    def _on_state_trigger(self, raw: bytes) -> None:
        """trigger: state. Merge this message and any queued behind it (the newest state wins), then run
        one cycle if a trigger joint was updated and every required joint is fresh."""
        self._on_joint_state(raw)
        self._drain_joint_states()
        self._triggered_cycle()

    def _triggered_cycle(self) -> None:
        now_ns = self._now_ns()
        if self._ready and self.cycle.due(now_ns):
            entry = time.perf_counter_ns()
            self.stats.timer_entry(entry)
            self._cycle(entry, now_ns)

    def _on_timer(self) -> None:
        if self._trigger_state and self._watchdog_tick():
            return
        self.stats.timer_entry(time.perf_counter_ns())
        now_ns = self._now_ns()
        # take the joint states still queued: the executor hands the timer and the subscription one
        # callback each in turn, so a backlog built up once (at start-up, a hiccup) would otherwise
        # stay, and every cycle would compute from a state that old (100 ms of a 1 kHz driver)
        self._drain_joint_states()
        cycle = self.cycle
        if self._sim_time:
            # lockstep simulation: wait for the state of this step (published before /clock), so that
            # the run is deterministic
            if cycle.active and cycle.watchdog.status == FRESH and 0 < cycle.state_stamp_ns < now_ns:
                deadline = time.perf_counter() + SIM_STATE_WAIT
                while cycle.state_stamp_ns < now_ns and time.perf_counter() < deadline:
                    if not self._drain_joint_states():
                        time.sleep(0.0001)
        self._cycle(time.perf_counter_ns(), now_ns)   # compute starts here, as with trigger: state

    def _watchdog_tick(self) -> bool:
        """trigger: state: the timer watches the state. While it is fresh (or missing) the timer's period is
        ``WATCH_FRACTION`` of ``state_timeout`` (a state the executor has not handed over yet gets its cycle
        here) and no cycle is due: True. When it goes stale the timer runs at ``rate`` and each tick is a
        cycle (on_stale)."""
        self._drain_joint_states()
        wd = self.cycle.watchdog
        if wd.last == -math.inf or wd.fresh(self._now()):
            self._triggered_cycle()
            self._set_timer_period(max(self._period_ns, int(WATCH_FRACTION * 1e9 * wd.timeout)))
            return True
        self._set_timer_period(self._period_ns)
        return False

    def _set_timer_period(self, ns: int) -> None:
        if self._timer.timer_period_ns != ns:
            self._timer.timer_period_ns = ns

    # ------------------------------------------------------------ compute -> write
    def _cycle(self, entry_ns: int, now_ns: int) -> None:
        """One cycle: the cycle's command (read -> compute -> clamp), published; then what follows it."""
        self._cycles += 1
        cycle = self.cycle
        if cycle.update(now_ns) is None:
            return
        wire = self._cmd_wire
        self._cmd_out[:] = cycle.cmd
        if self._cmd_is_js:
            wire.stamp(now_ns)
        handoff = time.perf_counter_ns()
        self._cmd_pub.publish(wire.bytes())
        done = time.perf_counter_ns()
        self.stats.published_command(entry_ns, handoff, done)
        if cycle.outcome in (HOLD, STALE_OUTPUT):
            return
        self.stats.latency(cycle.arrival_ns, done)
        if cycle.collision_started:
            self._external.publish_collision()
            if self._fjt is not None:
                self._fjt.abort_collision()
        if self._fjt is not None:
            self._fjt.update(now_ns * 1e-9)
        if self._cycles % self._state_every == 0:
            if self._state_pub.get_subscription_count():
                self._publish_state()
            if self._platform is not None:
                self._platform.publish_state(now_ns)
            self._external.publish_state()
            self._external.publish_collision()
            self._task.publish_state(cycle.state_stamp_ns or now_ns)

    def _publish_state(self) -> None:
        """``~/controller_state`` of the command just published (layout: :mod:`rne_control.ros.conversions`)."""
        cycle, plant = self.cycle, self.plant
        try:
            parts = cycle.split()
            extra = plant.extra_state()
        except Exception as e:  # never let the diagnostics path kill the loop
            self.get_logger().warning("controller_state: %s" % e, throttle_duration_sec=5.0)
            return
        fill_controller_state(self._state2d, self._state_extra, (cycle.q_d, cycle.qd_d, cycle.qdd_d),
                              (plant.q, plant.qd), cycle.cmd, parts, extra)
        self._state_pub.publish(self._state_msg.bytes())

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
            settings = Settings(values, self.plant, self.period)
        except ValueError as e:
            self._rejected["parameters"] += 1
            self.get_logger().warning("parameter change refused: %s" % e)
            return SetParametersResult(successful=False, reason=str(e))
        try:
            self.cycle.request(settings, changed)
        except ValueError as e:   # it needs kernels whose background compile failed
            self._rejected["parameters"] += 1
            self.get_logger().warning("parameter change refused: %s" % e)
            return SetParametersResult(successful=False, reason=str(e))
        return SetParametersResult(successful=True)

    # ------------------------------------------------------------ trajectories and the base
    def _on_trajectory(self, msg: JointTrajectory) -> None:
        self.accept_trajectory("joint_trajectory", "~/joint_trajectory", *trajectory_fields(msg))

    def accept_trajectory(self, key, topic, names, times, P, V, A, start) -> None:
        """Validate and run a trajectory that came on ``topic`` (rejections counted under ``key``)."""
        try:
            prep = self.cycle.accept_trajectory(names, times, P, V, A, start, self._now())
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
            self.cycle.base_state.set_odometry(quat, twist)
        except ValueError as e:
            self._reject("base_odometry", "base_odometry", e)

    def _on_accel(self, msg: AccelStamped) -> None:
        try:
            lin, ang = accel_fields(msg)
            self.cycle.base_state.set_classical_accel(lin, ang)
        except ValueError as e:
            self._reject("base_accel", "base_accel", e)

    # ------------------------------------------------------------ diagnostics
    def _on_diagnostics(self) -> None:
        if self._ready:
            self._diag_pub.publish(diagnostics.message(self))

    def _keep_mode_and_base(self, why) -> None:
        """A change that waited for kernels whose background compile failed: the parameters ``mode`` and
        ``base`` go back to those in effect (the rest of the change applied)."""
        from rclpy.parameter import Parameter
        s = self.cycle.settings
        self.set_parameters([Parameter("mode", value=s.mode), Parameter("base", value=s.base),
                             Parameter("base_velocity_source", value=s.base_velocity_source)])

    def close(self) -> None:
        """Before the node is destroyed: stop a background compiler still running."""
        if getattr(self, "background", None) is not None:
            self.background.stop()


def main(args=None) -> int:
    return run(ControllerNode, NODE_NAME, args, quiet=(ConfigError,))


if __name__ == "__main__":
    sys.exit(main())
