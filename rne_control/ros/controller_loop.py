"""The control cycle of ``rne_controller`` (a mixin of :class:`~rne_control.ros.controller_node.ControllerNode`,
which owns the state it uses): what starts a cycle (the timer, or a joint state with ``trigger: state``),
the cycle itself (watchdog, activation, settings, trajectory sample, control law, ramps, clamp), and
publishing the command and ``~/controller_state``.

With ``use_sim_time`` the timer runs on ``/clock``; each cycle first takes the joint states still
queued and, when the latest is older than the timer's time (a lockstep simulator publishes the state of
step k, then /clock = t_k), waits up to ``SIM_STATE_WAIT`` (wall) for that state, so that lockstep
simulation is deterministic. In the diagnostics, ``compute_time`` runs from the start of the cycle proper
(the joint states merged: with ``trigger: timer`` after the queued ones are taken and any lockstep wait,
with ``trigger: state`` after the message that triggers it) to the hand-off of the command to rclpy;
``publish_time`` is the publish call; ``latency`` runs from the arrival of the joint state used to the
return of the publish call. The timer's period (late cycles) is taken at the timer callback's entry.
"""
from __future__ import annotations

import math
import time

import numpy as np
from sensor_msgs.msg import JointState

from ..control.plant import StateError
from ..control.laws import SPLIT_PARTS
from ..control.watchdog import FRESH, NO_STATE, STALE

# with use_sim_time: how long (wall s) a cycle waits for the joint state stamped with its own time
SIM_STATE_WAIT = 0.005
# trigger: state: the watchdog timer's period (s) while the state is fresh (at most 1/rate), so that the
# executor is not woken at rate on top of the states: a stale state is seen within this of state_timeout
WATCH_PERIOD = 0.005


class ControlLoop:
    """The cycle's methods; the node's ``_setup`` creates every attribute they use."""

    def _drain_joint_states(self) -> bool:
        """Process joint states that have arrived but not been dispatched yet; True if any."""
        sub = self._js_sub
        took = False
        while True:
            with sub.handle:
                info = sub.handle.take_message(sub.msg_type, sub.raw)
            if info is None:
                return took
            took = True
            self._on_joint_state(info[0])

    def _on_state_trigger(self, msg: JointState) -> None:
        """trigger: state. Merge this message and any queued behind it (the newest state wins), then run
        one cycle if a trigger joint was updated and every required joint is fresh."""
        self._on_joint_state(msg)
        self._drain_joint_states()
        self._triggered_cycle()

    def _triggered_cycle(self) -> bool:
        """A cycle for a new state of the trigger joints, if every required joint is fresh."""
        if not (self._new_state and self._ready):
            return False
        wd = self.watchdog
        now_ns = self._now_ns()
        if now_ns * 1e-9 - wd.last > wd.timeout:
            return False
        entry = time.perf_counter_ns()
        self.stats.timer_entry(entry)
        self._cycle(entry, now_ns)
        return True

    def _watchdog_tick(self) -> bool:
        """trigger: state: the timer watches the state. While it is fresh (or missing) the timer runs at
        ``WATCH_PERIOD`` (a state the executor has not handed over yet gets its cycle here) and no cycle
        is due: True. When it goes stale the timer runs at ``rate`` and each tick is a cycle (on_stale)."""
        self._drain_joint_states()
        wd = self.watchdog
        if wd.last == -math.inf or self._now() - wd.last <= wd.timeout:
            self._triggered_cycle()
            self._set_timer_period(self._watch_period_ns)
            return True
        self._set_timer_period(self._period_ns)
        return False

    def _set_timer_period(self, ns: int) -> None:
        if self._timer.timer_period_ns != ns:
            self._timer.timer_period_ns = ns

    def _on_timer(self) -> None:
        if self._trigger_state and self._watchdog_tick():
            return
        self.stats.timer_entry(time.perf_counter_ns())
        now_ns = self._now_ns()
        # take the joint states still queued: the executor hands the timer and the subscription one
        # callback each in turn, so a backlog built up once (at start-up, a hiccup) would otherwise
        # stay, and every cycle would compute from a state that old (100 ms of a 1 kHz driver)
        self._drain_joint_states()
        if self._sim_time:
            # lockstep simulation: wait for the state of this step (published before /clock), so that
            # the run is deterministic
            if self._active and self.watchdog.status == FRESH and 0 < self._state_stamp_ns < now_ns:
                deadline = time.perf_counter() + SIM_STATE_WAIT
                while self._state_stamp_ns < now_ns and time.perf_counter() < deadline:
                    if not self._drain_joint_states():
                        time.sleep(0.0001)
        self._cycle(time.perf_counter_ns(), now_ns)   # compute starts here, as with trigger: state

    def _activate(self, now: float, recovered: bool) -> None:
        self.traj.reset(self.mapper.q[self.ctrl_idx])
        self.feedback_ramp.start(now)
        self._active = True
        self._ramp_from_last = recovered and self._have_published and not self._stopped
        if recovered:
            self.get_logger().info("joint states fresh again: holding the measured position, ramping in")

    def _cycle(self, entry_ns: int, now_ns: int) -> None:
        self._cycles += 1
        now = now_ns * 1e-9
        ramp_request = False
        if self._pending is not None:
            s, self._pending = self._pending, None
            ramp_request = self._apply_settings(s, now)
        wd = self.watchdog
        status = wd.check(now)
        self.mapper.expire(now, wd.timeout)   # an optional joint no longer published: at rest, or solved again
        if status == NO_STATE:
            if self._state_count:   # some joints came, not all the required ones
                self.get_logger().warning("joint state incomplete: no %s received yet (required: %s)"
                                          % (", ".join(self.stale_joints(now_ns)), ", ".join(self.mapper.required)),
                                          throttle_duration_sec=5.0)
            return
        cmd = self._cmd
        if status == STALE:
            if wd.went_stale:
                self.get_logger().warning("no valid joint state for %.3f s (state_timeout %.3f s) from %s: %s"
                                          % (wd.age(now), wd.timeout, ", ".join(self.stale_joints(now_ns)),
                                             wd.on_stale))
                try:  # hold the newest state received (else the last accepted one)
                    self.plant.set_state(self.mapper.q, self.mapper.qd)
                except StateError:
                    pass
                self.law.hold_torque(self._hold_cmd)
            if wd.on_stale == "stop":
                self._stopped = True
                return
            if wd.on_stale == "zero":
                cmd.fill(0.0)
            else:
                self.limiter.apply(self._hold_cmd, out=cmd)
            self._publish_command(entry_ns, now_ns)
            return
        if not self._active or wd.recovered:
            self._activate(now, wd.recovered)
            if self._ramp_from_last:
                ramp_request = True
            self._stopped = False
        self._q_d, self._qd_d, self._qdd_d = self.traj.sample(now)
        s = self.feedback_ramp.fraction(now)
        try:
            sel = self.law.compute(self.mapper.q, self.mapper.qd, self._q_d, self._qd_d, self._qdd_d, s)
        except StateError as e:  # e.g. a loop that does not close at the measured state: hold the last good one
            if self._state_count != self._state_rejected_at:   # count each received state once
                self._state_rejected_at = self._state_count
                self._reject("joint_states", "/joint_states", e)
            self._hold(entry_ns, now_ns, reset=False)
            return
        except ValueError as e:  # a non-finite reference must never stop the loop nor reach the output
            self.get_logger().error("control law failed (%s): holding the measured position" % e,
                                    throttle_duration_sec=1.0)
            self._hold(entry_ns, now_ns, reset=True)
            return
        if ramp_request and self._have_published:
            self.output_ramp.start_blend(now, self._last_cmd, sel)
        self.output_ramp.apply(now, sel)
        if self.limiter.apply(sel, out=cmd):
            self._sat_mask |= self.limiter.saturated.astype(bool)
        self.stats.latency(self._arrival_ns, self._publish_command(entry_ns, now_ns))
        self._new_state = False
        if self._fjt is not None:
            self._fjt.update(now)
        if self._cycles % self._state_every == 0:
            self._publish_state(s, sel_law=None)
            if self._platform is not None:
                self._platform.publish_state(now_ns)

    def _hold(self, entry_ns: int, now_ns: int, reset: bool) -> None:
        """Publish the gravity torques of the last accepted state, clamped; ``reset``: the desired state
        holds the measured position from now on."""
        if reset:
            self.traj.reset(self.mapper.q[self.ctrl_idx])
        self.limiter.apply(self.law.hold_torque(self._hold_cmd), out=self._cmd)
        self._publish_command(entry_ns, now_ns)

    def _publish_command(self, entry_ns: int, now_ns: int) -> int:
        """Publish self._cmd; returns the time the publish call returned (time.perf_counter_ns())."""
        if self._cmd_is_js:
            st = self._cmd_msg.header.stamp
            st.sec = now_ns // 1000000000
            st.nanosec = now_ns % 1000000000
        handoff = time.perf_counter_ns()
        self._cmd_pub.publish(self._cmd_msg)
        done = time.perf_counter_ns()
        self.stats.published_command(entry_ns, handoff, done)
        np.copyto(self._last_cmd, self._cmd)
        self._have_published = True
        return done

    def _publish_state(self, s: float, sel_law=None) -> None:
        try:
            parts = self.law.split(self.mapper.q, self.mapper.qd, self._q_d, self._qd_d, self._qdd_d, s, None,
                                   self._parts)
            extra = self.plant.extra_state()
        except Exception as e:  # never let the diagnostics path kill the loop
            self.get_logger().warning("controller_state: %s" % e, throttle_duration_sec=5.0)
            return
        S = self._state2d
        S[0] = self._q_d
        S[1] = self._qd_d
        S[2] = self._qdd_d
        S[3] = self.plant.q
        S[4] = self.plant.qd
        S[5] = S[0] - S[3]
        S[6] = S[1] - S[4]
        S[7] = self._cmd
        for r, k in enumerate(SPLIT_PARTS):
            S[9 + r] = parts[k]
        S[8] = S[9:15].sum(axis=0)
        for k, view in self._state_extra.items():
            view[:] = extra[k]
        self._state_pub.publish(self._state_msg)
