"""Collision detection on the momentum observer (rne_control.control.collision), on the simulation of
test_observer.py: a wrench whose joint torque is 2.5x a threshold is detected within ln 2 / K_O + 2 samples
of its onset; free motion is not detected at the default thresholds (20 % of the effort limits); the
latch, the reactions' torques and the settings' checks."""
import math

import numpy as np
import pytest

import rne_control as rc
from rne_control.control.collision import CollisionError, CollisionMonitor
from test_observer import DT, GAIN, arm, run_observer, simulate  # noqa: F401  (arm: the fixture)


def test_a_wrench_twice_the_threshold_is_detected_within_ln2_over_gain(arm):
    thresholds = 0.2 * np.asarray(arm.effort_limits, dtype=float)
    q0 = np.full(arm.n, 0.3)
    frame = arm.link_names[5]
    direction = np.array([0.2, -0.5, -1.0, 0.0, 0.0, 0.0])
    tau = rc.frame_jacobian(arm, q0, frame).T @ direction
    F = direction * 2.5 / np.max(np.abs(tau) / thresholds)     # the most loaded joint at 2.5x its threshold
    t_on = 0.05
    samples = simulate(arm, 0.15, t_on, frame, F, q0=q0, kp=2500.0, kd=100.0)
    r = run_observer(arm, samples)
    mon = CollisionMonitor(arm.n, thresholds, reaction="damp", damping=5.0)
    k_hit = next(k for k in range(len(r)) if mon.check(r[k]))
    delay = samples[k_hit][0] - t_on
    assert delay <= math.log(2) / GAIN + 2 * DT, delay
    assert delay > 0 and mon.events == 1
    loaded = int(np.argmax(np.abs(tau) / thresholds))
    assert loaded in mon.joints


def test_free_motion_is_not_a_collision(arm):
    q0 = np.full(arm.n, 0.2)
    w = 2 * np.pi

    def motion(t):
        return q0 + 0.3 * np.sin(w * t), 0.3 * w * np.cos(w * t) * np.ones(arm.n), -0.3 * w * w * np.sin(w * t) * np.ones(arm.n)
    r = run_observer(arm, simulate(arm, 1.0, motion=motion, q0=q0))
    mon = CollisionMonitor(arm.n, 0.2 * np.asarray(arm.effort_limits, dtype=float), reaction="gravity")
    assert not any(mon.check(x) for x in r) and mon.events == 0


def test_latch_reactions_and_intended_wrench():
    n = 3
    r_hit, r_low = np.array([0.0, 6.0, 0.0]), np.array([0.0, 1.0, 0.0])
    report = CollisionMonitor(n, 5.0)                            # reaction none: report only, no latch
    assert not report.check(r_hit) and report.joints == [1] and report.events == 1
    assert not report.check(r_hit) and report.events == 1      # the same episode
    report.check(r_low)
    report.check(r_hit)
    assert report.events == 2
    mon = CollisionMonitor(n, [5.0, 5.0, 5.0], reaction="reflex", reflex_gain=[0.5, 1.0, 2.0])
    assert not mon.check(r_low)
    assert not mon.check(r_hit, tau_ff=-r_hit)                   # pushing on purpose: r + J^T F_d = 0
    assert mon.check(r_hit) and mon.latched and mon.joints == [1]
    assert mon.check(r_low)                                      # latched until reset
    g, qd = np.array([1.0, 2.0, 3.0]), np.array([0.1, -0.2, 0.3])
    np.testing.assert_allclose(mon.torque(g, qd, r_hit), g + np.array([0.5, 1.0, 2.0]) * r_hit)
    mon.reset()
    assert not mon.latched and not mon.check(r_low)
    damp = CollisionMonitor(n, 5.0, reaction="damp", damping=4.0)
    np.testing.assert_allclose(damp.torque(g, qd, r_hit), g - 4.0 * qd)
    np.testing.assert_allclose(CollisionMonitor(n, 5.0, reaction="gravity").torque(g, qd, r_hit), g)


@pytest.mark.parametrize("kw, why", [
    (dict(thresholds=[1.0, 2.0]), "collision.thresholds must be one value or 3"),
    (dict(thresholds=-1.0), "collision.thresholds must be finite and > 0"),
    (dict(thresholds=float("nan")), "collision.thresholds"),
    (dict(thresholds=1.0, reaction="stop"), "collision.reaction must be one of"),
    (dict(thresholds=1.0, reaction="damp", damping=-1.0), "collision.damping"),
    (dict(thresholds=1.0, reaction="reflex", reflex_gain=[1.0, 1.0]), "collision.reflex_gain"),
])
def test_bad_settings_name_the_parameter(kw, why):
    with pytest.raises(CollisionError, match=why):
        CollisionMonitor(3, **kw)
