"""Effort clamping, torque ramps and the state watchdog."""
import math

import numpy as np
import pytest

from rne_control.control import (FRESH, NO_STATE, STALE, EffortLimiter, OffsetRamp, Ramp, Watchdog,
                                 check_limits)


# ----------------------------------------------------------------------------- limits
def test_clamp_to_limits_and_flags():
    lim = EffortLimiter([10.0, 5.0, 1.0, math.inf])
    tau = np.array([12.0, -7.0, 0.5, 1e12])
    out = np.empty(4)
    n = lim.apply(tau, out)
    np.testing.assert_array_equal(out, [10.0, -5.0, 0.5, 1e12])
    np.testing.assert_array_equal(lim.saturated, [1, 1, 0, 0])
    assert n == 2 and lim.saturated_cycles == 1
    np.testing.assert_array_equal(tau, [12.0, -7.0, 0.5, 1e12])   # input untouched when out is given


def test_non_finite_never_leaves_the_limiter():
    lim = EffortLimiter([10.0, 10.0, 10.0, math.inf])
    tau = np.array([np.nan, np.inf, -np.inf, np.inf])
    n = lim.apply(tau)                                              # in place
    np.testing.assert_array_equal(tau, [0.0, 0.0, 0.0, 0.0])
    assert n == 4 and lim.nonfinite == 1
    np.testing.assert_array_equal(lim.saturated, [2, 2, 2, 2])


def test_random_outputs_are_finite_and_within_limits():
    rng = np.random.default_rng(3)
    limits = rng.uniform(0.5, 50.0, 7)
    lim = EffortLimiter(limits)
    for _ in range(200):
        tau = rng.normal(scale=100.0, size=7)
        tau[rng.integers(0, 7)] = rng.choice([np.nan, np.inf, -np.inf, 1e300])
        lim.apply(tau)
        assert np.all(np.isfinite(tau))
        assert np.all(np.abs(tau) <= limits)


@pytest.mark.parametrize("bad", [[1.0, 2.0], [1.0, -1.0, 1.0], [1.0, 0.0, 1.0], [1.0, float("nan"), 1.0]])
def test_limit_validation(bad):
    with pytest.raises(ValueError):
        check_limits(bad, 3)


# ----------------------------------------------------------------------------- ramps
def test_ramp_fraction():
    r = Ramp(0.5)
    assert r.fraction(0.0) == 1.0                 # inactive: fully on
    r.start(2.0)
    assert r.fraction(2.0) == 0.0
    assert r.fraction(2.25) == pytest.approx(0.5)
    assert r.fraction(2.5) == 1.0 and not r.active
    r0 = Ramp(0.0)
    r0.start(1.0)
    assert r0.fraction(1.0) == 1.0


def test_offset_ramp_has_no_step_and_reaches_new_law():
    T, dt = 0.5, 0.002
    old = np.array([10.0, -4.0, 0.0])
    new = np.array([-2.0, 6.0, 1.0])
    r = OffsetRamp(3, T)
    t0 = 7.0
    r.start_blend(t0, old, new)
    outs = []
    k = 0
    while True:
        t = t0 + k * dt
        tau = new.copy()
        r.apply(t, tau)
        outs.append(tau)
        if t > t0 + T + 2 * dt:
            break
        k += 1
    outs = np.array(outs)
    np.testing.assert_allclose(outs[0], old)               # first command is the old one: no step
    np.testing.assert_allclose(outs[-1], new)              # ends at the new law
    steps = np.abs(np.diff(outs, axis=0))
    slope_dt = np.abs(old - new) * dt / T
    assert np.all(steps <= slope_dt + 1e-9)                # never more than the ramp slope per cycle
    assert r.max_step(dt) == pytest.approx(np.max(slope_dt))
    # halfway: the mean of the two laws
    np.testing.assert_allclose(outs[int(round(T / 2 / dt))], 0.5 * (old + new), atol=1e-9)


def test_offset_ramp_with_a_moving_new_law_tracks_blend():
    T = 0.4
    r = OffsetRamp(1, T)
    r.start_blend(0.0, np.array([3.0]), np.array([1.0]))
    for t in np.linspace(0.0, 0.6, 31):
        new = np.array([1.0 + 2.0 * t])                  # the new law changes over time
        out = new.copy()
        r.apply(t, out)
        s = min(t / T, 1.0)
        assert out[0] == pytest.approx(new[0] + (1 - s) * 2.0)


def test_ramps_compose_without_step():
    T, dt = 0.5, 0.002
    r = OffsetRamp(1, T)
    law_a, law_b, law_c = np.array([0.0]), np.array([10.0]), np.array([-5.0])
    r.start_blend(0.0, law_a, law_b)
    last = None
    cur_law = law_b
    for k in range(400):
        t = k * dt
        if k == 100:                                   # switch again mid-ramp, from what was sent
            r.start_blend(t, last, law_c)
            cur_law = law_c
        out = cur_law.copy()
        r.apply(t, out)
        if last is not None:
            assert abs(out[0] - last[0]) <= max(abs(r.offset[0]), 10.0) * dt / T + 1e-9
        last = out
    assert last[0] == pytest.approx(-5.0)


def test_zero_ramp_time_switches_at_once():
    r = OffsetRamp(1, 0.0)
    r.start_blend(1.0, np.array([5.0]), np.array([1.0]))
    out = np.array([1.0])
    r.apply(1.0, out)
    assert out[0] == 1.0


# ----------------------------------------------------------------------------- watchdog
def test_watchdog_transitions_and_counts():
    w = Watchdog(0.05, "hold")
    assert w.check(0.0) == NO_STATE
    w.feed(1.0)
    assert w.check(1.03) == FRESH
    assert w.check(1.0501) == STALE and w.went_stale and w.stale_events == 1
    assert w.check(1.2) == STALE and not w.went_stale and w.stale_events == 1
    w.feed(1.3)
    assert w.check(1.31) == FRESH and w.recovered and w.recoveries == 1
    assert w.check(1.32) == FRESH and not w.recovered
    assert w.check(2.0) == STALE and w.stale_events == 2
    assert w.age(2.0) == pytest.approx(0.7)


@pytest.mark.parametrize("timeout, on_stale", [(0.0, "hold"), (-1.0, "hold"), (math.inf, "hold"),
                                               (float("nan"), "hold"), (0.05, "brake")])
def test_watchdog_validation(timeout, on_stale):
    with pytest.raises(ValueError):
        Watchdog(timeout, on_stale)
