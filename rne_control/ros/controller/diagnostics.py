"""``/diagnostics`` of ``rne_controller``: one DiagnosticStatus per second with the loop's timing (rates,
jitter, compute, publish and state-to-command latency percentiles over the last period), the state's
freshness, saturation, rejected messages, kernels compiled after the warm-up, kernels still compiling in the
background (``mode`` and ``base`` are those in effect; a change waiting for kernels is in
``waiting_for_kernels``), and the momentum observer
(its status, the largest |r| per joint over the period) and collisions, and in a task-space mode sigma_min(J)
and the clip and singularity flags of the last cycle."""
from __future__ import annotations

import math

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue

from ...control.external import UNAVAILABLE
from ...control.watchdog import FRESH, NO_STATE, STALE

TIMING_KEYS = ("rate_achieved_hz", "commands_per_s", "period_jitter_p99_us", "period_jitter_max_us",
               "compute_time_p50_us", "compute_time_p99_us", "publish_time_p50_us", "publish_time_p99_us",
               "latency_p50_us", "latency_p99_us", "latency_max_us")


def message(node) -> DiagnosticArray:
    """The diagnostics of the ControllerNode ``node`` since the previous call (which resets the window)."""
    w = node.stats.window()
    late_now = w["late_cycles_last_period"]
    now = node._now()
    cycle = node.cycle
    wd = cycle.watchdog
    st = {NO_STATE: "waiting for /joint_states", FRESH: "fresh", STALE: "stale"}[wd.status]
    sat = [j for j, f in zip(node.joints, cycle.saturated) if f]
    cycle.saturated[:] = False
    rejected = dict(joint_states=cycle.rejected_states, **node._rejected)
    rej = sum(rejected.values())
    late_jit = node.jit_monitor.new_signatures()
    refused_now = node.publishing.new_refusals()
    for name in set(late_jit) | set(node.jit_monitor.compiles):
        if name not in node._jit_reported:
            node._jit_reported.add(name)
            node.get_logger().warning("%s was compiled after the warm-up, on the cycle path" % name)
    ignored = node.plant.ignored_passive
    if ignored and not node._warned_ignored:
        node._warned_ignored = True
        node.get_logger().warning("published positions of %s are off their closed values by more than "
                                  "loop_tolerance: ignored, the joints follow their leaders (counted in "
                                  "ignored_passive_positions)" % ", ".join(sorted(ignored)))
    missing = cycle.stale_joints(node._now_ns()) if wd.status != FRESH else []
    ext = cycle.external
    mon = ext.monitor
    hit = ", ".join(node.joints[j] for j in mon.joints)
    peak = ",".join("%.3f" % x for x in ext.peak)
    ext.peak[:] = 0.0
    if mon.latched:
        level, text = DiagnosticStatus.ERROR, "collision at %s: reaction %s until ~/reset_collision" % (
            hit, mon.reaction)
    elif wd.status != FRESH:
        level, text = DiagnosticStatus.ERROR if wd.status == STALE else DiagnosticStatus.WARN, \
            "joint state %s: %s" % (st, ", ".join(missing))
    elif mon.detected:
        level, text = DiagnosticStatus.WARN, "collision detected at %s (collision.reaction none)" % hit
    elif late_now or sat or late_jit or refused_now:
        level, text = DiagnosticStatus.WARN, ("%d late cycles" % late_now if late_now else
                                              "saturated: " + ", ".join(sat) if sat else
                                              "compiled on the cycle path: " + ", ".join(sorted(late_jit))
                                              if late_jit else "the middleware refused %d samples (%s)" % (
                                                  refused_now, ", ".join(sorted(node.publishing.refused))))
    else:
        level, text = DiagnosticStatus.OK, "running"

    def kv(k, v):
        return KeyValue(key=k, value=str(v))

    age = wd.age(now) if wd.last != -math.inf else float("nan")
    values = [
        kv("mode", cycle.settings.mode), kv("base", cycle.settings.base), kv("trigger", node.trigger),
        kv("rate_nominal_hz", "%.1f" % node.rate),
    ] + [kv(k, "%.1f" % w[k]) for k in TIMING_KEYS] + [
        kv("late_cycles", node.stats.late_cycles), kv("late_cycles_last_period", late_now),
        kv("state", st), kv("state_age_ms", "%.2f" % (1e3 * age)),
        kv("stale_joints", ",".join(missing)), kv("ignored_joint_states", cycle.ignored_states),
        kv("stale_events", wd.stale_events),
        kv("saturated_joints", ",".join(sat)), kv("saturated_cycles", cycle.limiter.saturated_cycles),
        kv("rejected_messages", rej), kv("refused_samples", node.publishing.refused_total),
        kv("ignored_passive_positions", sum(ignored.values())),
    ] + [kv("rejected_" + k, v) for k, v in rejected.items()] + [
        kv("trajectory_running", cycle.traj.running),
        kv("velocity_estimated", cycle.mapper.estimating_velocity),
        kv("ramp_active", cycle.output_ramp.active or cycle.feedback_ramp.active),
        kv("jit_signatures_after_ready", sum(late_jit.values())),
        kv("jit_compiles_after_ready", len(node.jit_monitor.compiles)),
        kv("kernels_in_background", ",".join(node.background.pending) if node.background is not None else ""),
        kv("kernels_failed", ",".join(sorted(cycle.failed_groups))),
        kv("waiting_for_kernels", ",".join(cycle.waiting_for)),
        kv("observer", ext.status + (": " + ext.unavailable if ext.status == UNAVAILABLE else "")),
        kv("external_torque_max_abs", peak), kv("collision", "latched" if mon.latched else
                                                "detected" if mon.detected else "clear"),
        kv("collision_joints", hit if mon.latched or mon.detected else ""),
        kv("observer_restarts", ext.restarts),
        kv("collision_events", mon.events), kv("collision_reaction", mon.reaction),
    ] + _task(cycle, kv)
    if cycle.task_running and cycle.task.singular and level == DiagnosticStatus.OK:
        level, text = DiagnosticStatus.WARN, "near a singularity: sigma_min(J) %.4f < singular_damping" % (
            cycle.task.sigma_min)
    arr = DiagnosticArray()
    arr.header.stamp = node.get_clock().now().to_msg()
    arr.status = [DiagnosticStatus(level=level, name="%s: control loop" % node.get_fully_qualified_name(),
                                   message=text, hardware_id=str(node.model.name), values=values)]
    return arr


def _task(cycle, kv) -> list:
    """The task-space keys: the frame, and in a task-space mode the last cycle's sigma_min(J) and flags."""
    task = cycle.task
    if task is None:
        return [kv("end_effector_frame", "")]
    running = cycle.task_running
    clipped = task.clipped
    return [kv("end_effector_frame", task.frame),
            kv("task_sigma_min", "%.5f" % task.sigma_min if running else ""),
            kv("task_singular", task.singular if running else ""),
            kv("task_position_clipped", clipped[0] if running else ""),
            kv("task_rotation_clipped", clipped[1] if running else "")]
