"""The parameters of ``rne_controller``: their typed declarations, validated.

``STATIC_SPECS`` are read at start (changing them needs a restart; :class:`LoopSettings` validates the
loop's); ``RUNTIME_SPECS`` can change at run time (:class:`rne_control.control.settings.Settings`
validates one snapshot of them; a ``ValueError`` refuses the change with its reason and the running
values stay).

Parameters
----------
Model and loop (read-only; changing them needs a restart):

========================  ==========  ============================  ===========================================
name                      type        default                       meaning
========================  ==========  ============================  ===========================================
robot_description         string      ""                            URDF XML. If it and model_file are empty, the
                                                                    node waits for ``/robot_description``
                                                                    (std_msgs/String, transient local)
model_file                string      ""                            URDF or DH-YAML path: absolute, or relative
                                                                    to the share folder / source checkout
floating_base             bool        unset (from the model file)   load the model with a floating base (implied
                                                                    when ``base`` starts as moving/free_floating)
joints                    string[]    unset (the actuated joints)   controlled joints; also the output order: any
                                                                    subset of the model's actuated joints, for
                                                                    every kind of model; the rest is uncontrolled
locked.<joint>            double      the plant's (0.0 for a tree)  position of an uncontrolled actuated joint
                                                                    while /joint_states lacks it
loop_tolerance            double      0.01                          rad or m a published passive (or mimic) joint
                                                                    may differ from its closed value
rate                      double      500.0                         control rate, Hz (an integer is accepted);
                                                                    with trigger state, the nominal rate
trigger                   string      timer                         timer: a cycle every 1/rate with the newest
                                                                    state | state: a cycle per new joint state
trigger_joints            string[]    unset (the required joints)   trigger state: the joints whose update
                                                                    starts a cycle
command_topic             string      /effort_controller/commands   output topic
command_type              string      float64_multi_array           float64_multi_array | joint_state
state_publish_rate        double      100.0                         ~/controller_state rate, Hz (0: every cycle)
velocity_filter_cutoff    double      50.0                          Hz, filter of the velocity estimate used
                                                                    when /joint_states has no velocities
cpu_affinity              integer[]   unset                         CPUs for the control thread (the
                                                                    middleware's threads keep theirs)
sched_priority            integer     0                             SCHED_FIFO priority (1..99) if allowed; 0 off
gc_freeze                 bool        true                          gc.freeze() after start-up
executor                  string      events                        events (rclpy's EventsExecutor; the default
                                                                    where it imports, else single_threaded) |
                                                                    single_threaded
driver_adds_gravity       bool        false                         the driver adds g(q) to every command
                                                                    (Franka): g(q) is taken off the command
end_effector_frame        string      "" (last joint's child link)  frame of the task-space modes: a link or
                                                                    URDF frame the controlled joints move
========================  ==========  ============================  ===========================================

Control (changeable at run time; validated, a bad value is refused with a
reason and the running values stay):

========================  ==========  ============================  ===========================================
mode                      string      computed_torque               computed_torque | gravity | coriolis |
                                                                    gravity_coriolis | off
base                      string      fixed                         fixed | moving | free_floating
base_velocity_source      string      odometry                      odometry | momentum (free_floating)
kp, kd                    double[]    unset: 100, 20 per joint      computed-torque gains (omega = 10 rad/s,
                                                                    critically damped), 1/s^2 and 1/s
hold_kp, hold_kd          double[]    unset: 0 per joint            PD added to the compensation modes,
                                                                    N m/rad and N m s/rad
gravity                   double[3]   unset: the model's            m/s^2, world frame
payload_link              string      ""                            link carrying the payload ("" none)
payload_mass              double      0.0                           kg, >= 0
payload_com               double[3]   [0, 0, 0]                     m, link frame
payload_inertia           double[6]   [0]*6                         ixx iyy izz ixy ixz iyz about the COM, kg m^2
                                                                    (positive definite, or all 0: point mass)
friction_compensation     bool        false                         add the model's Fs sign(qd) + Fv qd
effort_limits             double[]    unset: the model's            N m or N, > 0; the output is clamped to them
state_timeout             double      0.05                          s: every controlled joint must have been
                                                                    received within it, else on_stale
on_stale                  string      hold                          hold | zero | stop
ramp_time                 double      0.5                           s of linear blend after a change
observer.enabled          bool        true                          the momentum observer (trees on a fixed base;
                                                                    elsewhere "not available" in diagnostics)
observer.gain             double[]    [50.0]                        K_O, 1/s: one value or one per joint;
                                                                    K_O / rate < 1
observer.torque_source    string      commanded                     commanded | measured (/joint_states efforts)
observer.wrench_frame     string      "" (last joint's child link)  frame of ~/external_wrench
observer.wrench_damping   double      0.001                         lambda of the damped pseudo-inverse (m, 1)
collision.thresholds      double[]    unset: 20 % of effort_limits  N m or N, one value or one per joint, > 0;
                                                                    unset: no test where a limit is infinite
collision.reaction        string      none                          none | gravity | damp | reflex
collision.damping         double[]    unset: 0.1 s x effort_limits  damp: D, N m s/rad or N s/m per joint;
                                                                    unset: none where a limit is infinite
                                                                    (damp is then refused)
collision.reflex_gain     double[]    [1.0]                         reflex: K_R per joint, >= 0
cartesian_stiffness       double[6]   [200, 200, 200, 20, 20, 20]   impedance K, N/m and N m/rad, base axes
cartesian_damping_ratio   double[]    [1.0]                         zeta, one or 6 values, > 0
damping_design            string      double_diagonalization        double_diagonalization | unit_mass
cartesian_kp              double[]    [100.0]                       operational space K_P, 1/s^2 (one or 6)
cartesian_kd              double[]    [20.0]                        operational space K_D, 1/s (one or 6)
nullspace_stiffness       double[]    [10.0]                        K_n: N m/rad (impedance), 1/s^2 (operational
                                                                    space); one or per joint
nullspace_damping_ratio   double[]    [1.0]                         zeta_n, one or per joint
nullspace_projector       string      dynamic                       dynamic (Nbar = I - Jbar J) | kinematic
nullspace_posture         double[]    unset: measured at activation q_n, rad or m per joint
error_clip                double[2]   [0.1, 0.5]                    m, rad: pose error norms clipped to these
max_cartesian_velocity    double[2]   [0.25, 1.0]                   m/s, rad/s of the shaped target path
                                                                    ([0, 0]: no shaping, targets step)
singular_damping          double      0.05                          sigma_min(J) below which the damped
                                                                    pseudo-inverse and Lambda act
max_effort_rate           double      1000.0                        N m/s per joint in the task modes (0: none)
========================  ==========  ============================  ===========================================
"""
from __future__ import annotations

import math

from ...control.laws import BASE_VELOCITY_SOURCES, BASES, MODES
from ...control.collision import REACTIONS
from ...control.task import DAMPING_DESIGNS, PROJECTORS
from ...control.settings import DEFAULTS, TORQUE_SOURCES
from ...control.watchdog import ON_STALE
from ..conversions import COMMAND_TYPES
from ..params import Spec, T
from ..runner import DEFAULT_EXECUTOR, EXECUTORS

TRIGGERS = ("timer", "state")


class ConfigError(RuntimeError):
    """A start-up configuration error (the node exits with code 1)."""


STATIC_SPECS = [
    Spec("robot_description", T.STRING, "", "URDF XML of the robot (else model_file, else /robot_description)",
         read_only=True),
    Spec("model_file", T.STRING, "", "URDF or DH-YAML model path (absolute, or relative to the share folder)",
         read_only=True),
    Spec("floating_base", T.BOOL, None, "load the model with a floating base (unset: from the model file)",
         read_only=True),
    Spec("joints", T.STRING_ARRAY, None, "controlled joints and output order (unset: the actuated joints)",
         read_only=True),
    Spec("rate", T.DOUBLE, 500.0, "control rate, Hz", read_only=True, constraints="> 0"),
    Spec("trigger", T.STRING, "timer", "what starts a cycle: the timer at rate, or each new joint state",
         read_only=True, choices=list(TRIGGERS)),
    Spec("trigger_joints", T.STRING_ARRAY, None, "trigger: state: the joints whose update starts a cycle "
         "(unset: every required joint)", read_only=True),
    Spec("command_topic", T.STRING, "/effort_controller/commands", "effort command topic", read_only=True),
    Spec("command_type", T.STRING, "float64_multi_array", "command message type", read_only=True,
         choices=list(COMMAND_TYPES)),
    Spec("state_publish_rate", T.DOUBLE, 100.0, "~/controller_state rate, Hz (0: every cycle)", read_only=True,
         constraints=">= 0"),
    Spec("loop_tolerance", T.DOUBLE, 0.01, "closed loops: how far a measured passive joint may be from the "
         "closed solution, rad or m", read_only=True, constraints="> 0"),
    Spec("velocity_filter_cutoff", T.DOUBLE, 50.0, "cut-off of the velocity estimate, Hz", read_only=True,
         constraints="> 0"),
    Spec("cpu_affinity", T.INTEGER_ARRAY, None, "CPUs for the control thread, the executor's (unset: no change)",
         read_only=True),
    Spec("sched_priority", T.INTEGER, 0, "SCHED_FIFO priority 1..99 where allowed (0: off)", read_only=True),
    Spec("gc_freeze", T.BOOL, True, "gc.freeze() after start-up", read_only=True),
    Spec("executor", T.STRING, DEFAULT_EXECUTOR, "rclpy executor that spins the node", read_only=True,
         choices=list(EXECUTORS)),
    Spec("driver_adds_gravity", T.BOOL, False, "the driver adds g(q) to every command: publish the command "
         "less g(q)", read_only=True),
    Spec("end_effector_frame", T.STRING, "", "frame of the task-space modes ('': the child link of the last "
         "joint)", read_only=True),
]

RUNTIME_SPECS = [
    Spec("mode", T.STRING, DEFAULTS["mode"], "control law", choices=list(MODES)),
    Spec("base", T.STRING, DEFAULTS["base"], "base motion model", choices=list(BASES)),
    Spec("base_velocity_source", T.STRING, DEFAULTS["base_velocity_source"], "base twist for free_floating",
         choices=list(BASE_VELOCITY_SOURCES)),
    Spec("kp", T.DOUBLE_ARRAY, DEFAULTS["kp"], "computed-torque stiffness per joint, 1/s^2 (unset: 100)"),
    Spec("kd", T.DOUBLE_ARRAY, DEFAULTS["kd"], "computed-torque damping per joint, 1/s (unset: 20)"),
    Spec("hold_kp", T.DOUBLE_ARRAY, DEFAULTS["hold_kp"], "PD stiffness of the compensation modes, N m/rad (unset: 0)"),
    Spec("hold_kd", T.DOUBLE_ARRAY, DEFAULTS["hold_kd"], "PD damping of the compensation modes, N m s/rad (unset: 0)"),
    Spec("gravity", T.DOUBLE_ARRAY, DEFAULTS["gravity"], "gravity [3], m/s^2, world frame (unset: the model's)"),
    Spec("payload_link", T.STRING, DEFAULTS["payload_link"], "link carrying the payload ('' = no payload)"),
    Spec("payload_mass", T.DOUBLE, DEFAULTS["payload_mass"], "payload mass, kg", constraints=">= 0"),
    Spec("payload_com", T.DOUBLE_ARRAY, DEFAULTS["payload_com"], "payload centre of mass [3] in the link frame, m"),
    Spec("payload_inertia", T.DOUBLE_ARRAY, DEFAULTS["payload_inertia"],
         "payload inertia [ixx, iyy, izz, ixy, ixz, iyz] about its COM, kg m^2"),
    Spec("friction_compensation", T.BOOL, DEFAULTS["friction_compensation"], "add the model's friction torques"),
    Spec("effort_limits", T.DOUBLE_ARRAY, DEFAULTS["effort_limits"], "output limits per joint (unset: the model's)",
         constraints="> 0"),
    Spec("state_timeout", T.DOUBLE, DEFAULTS["state_timeout"], "s without a valid joint state before on_stale",
         constraints="> 0"),
    Spec("on_stale", T.STRING, DEFAULTS["on_stale"], "behaviour on stale state", choices=list(ON_STALE)),
    Spec("ramp_time", T.DOUBLE, DEFAULTS["ramp_time"], "s of linear blend after a change", constraints=">= 0"),
    Spec("observer.enabled", T.BOOL, DEFAULTS["observer.enabled"], "momentum observer of external torques"),
    Spec("observer.gain", T.DOUBLE_ARRAY, DEFAULTS["observer.gain"], "observer gain K_O, 1/s (one or per joint)"),
    Spec("observer.torque_source", T.STRING, DEFAULTS["observer.torque_source"], "torque the observer takes",
         choices=list(TORQUE_SOURCES)),
    Spec("observer.wrench_frame", T.STRING, DEFAULTS["observer.wrench_frame"],
         "frame of ~/external_wrench ('': the child link of the last joint)"),
    Spec("observer.wrench_damping", T.DOUBLE, DEFAULTS["observer.wrench_damping"],
         "damping of the wrench's pseudo-inverse (m, 1)", constraints=">= 0"),
    Spec("collision.thresholds", T.DOUBLE_ARRAY, DEFAULTS["collision.thresholds"],
         "collision thresholds on |r|, N m or N (unset: 20 % of the effort limits; no test where one is infinite)"),
    Spec("collision.reaction", T.STRING, DEFAULTS["collision.reaction"], "reaction to a collision",
         choices=list(REACTIONS)),
    Spec("collision.damping", T.DOUBLE_ARRAY, DEFAULTS["collision.damping"],
         "damp reaction's D per joint (unset: 0.1 s x the effort limits; none where one is infinite)"),
    Spec("collision.reflex_gain", T.DOUBLE_ARRAY, DEFAULTS["collision.reflex_gain"],
         "reflex reaction's K_R per joint"),
    Spec("cartesian_stiffness", T.DOUBLE_ARRAY, DEFAULTS["cartesian_stiffness"],
         "Cartesian impedance K [6], N/m and N m/rad, base axes"),
    Spec("cartesian_damping_ratio", T.DOUBLE_ARRAY, DEFAULTS["cartesian_damping_ratio"],
         "Cartesian impedance damping ratio (one or 6)"),
    Spec("damping_design", T.STRING, DEFAULTS["damping_design"], "Cartesian impedance damping design",
         choices=list(DAMPING_DESIGNS)),
    Spec("cartesian_kp", T.DOUBLE_ARRAY, DEFAULTS["cartesian_kp"], "operational-space K_P, 1/s^2 (one or 6)"),
    Spec("cartesian_kd", T.DOUBLE_ARRAY, DEFAULTS["cartesian_kd"], "operational-space K_D, 1/s (one or 6)"),
    Spec("nullspace_stiffness", T.DOUBLE_ARRAY, DEFAULTS["nullspace_stiffness"],
         "null-space K_n: N m/rad (impedance) or 1/s^2 (operational space); one or per joint"),
    Spec("nullspace_damping_ratio", T.DOUBLE_ARRAY, DEFAULTS["nullspace_damping_ratio"],
         "null-space damping ratio, one or per joint"),
    Spec("nullspace_projector", T.STRING, DEFAULTS["nullspace_projector"], "null-space projector",
         choices=list(PROJECTORS)),
    Spec("nullspace_posture", T.DOUBLE_ARRAY, DEFAULTS["nullspace_posture"],
         "null-space posture per joint (unset: the configuration at activation)"),
    Spec("error_clip", T.DOUBLE_ARRAY, DEFAULTS["error_clip"], "pose error clip [m, rad]"),
    Spec("max_cartesian_velocity", T.DOUBLE_ARRAY, DEFAULTS["max_cartesian_velocity"],
         "shaped target's speed limits [m/s, rad/s] ([0, 0]: targets step)"),
    Spec("singular_damping", T.DOUBLE, DEFAULTS["singular_damping"],
         "sigma_min(J) below which damping acts", constraints=">= 0"),
    Spec("max_effort_rate", T.DOUBLE, DEFAULTS["max_effort_rate"], "task modes: N m/s per joint (0: none)",
         constraints=">= 0"),
]

RUNTIME_NAMES = tuple(s.name for s in RUNTIME_SPECS)
# changes of these blend the command from the old law to the new one
class LoopSettings:
    """The read-only parameters of the loop, validated (``get``: parameter name -> value): ``rate`` (Hz),
    ``trigger``, ``command_type``, ``state_every`` (cycles per ``~/controller_state``), ``trigger_joints``
    (None: every required joint) and ``velocity_filter_cutoff`` (Hz). Raises :class:`ConfigError`."""

    def __init__(self, get):
        self.rate = float(get("rate"))
        if not (self.rate > 0.0) or math.isinf(self.rate):
            raise ConfigError("rate must be a positive number of Hz (got %r)" % self.rate)
        self.trigger = get("trigger")
        if self.trigger not in TRIGGERS:
            raise ConfigError("trigger must be one of %s (got %r)" % (", ".join(TRIGGERS), self.trigger))
        self.command_type = get("command_type")
        if self.command_type not in COMMAND_TYPES:
            raise ConfigError("command_type must be one of %s (got %r)"
                              % (", ".join(COMMAND_TYPES), self.command_type))
        spr = float(get("state_publish_rate"))
        self.state_every = 1 if spr <= 0 or spr >= self.rate else max(1, int(round(self.rate / spr)))
        self.trigger_joints = get("trigger_joints") or None   # checked by the cycle
        self.velocity_filter_cutoff = float(get("velocity_filter_cutoff"))
