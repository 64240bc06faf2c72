"""LoopStats: periods, late cycles, compute and publish times over a diagnostics window."""
import numpy as np

from rne_control.ros.controller.loop_stats import LoopStats


def test_window_figures():
    s = LoopStats(period_s=0.001, ring=64)
    t = 0
    for i in range(101):                        # 100 periods of 1 ms, one of them 2 ms (late)
        t += 2_000_000 if i == 50 else 1_000_000
        s.timer_entry(t)
        s.published_command(t, t + 10_000 + 100 * i, t + 20_000 + 100 * i)  # compute 10..20 µs, publish 10 µs
    w = s.window()
    assert s.late_cycles == 1 and w["late_cycles_last_period"] == 1
    # the ring keeps the last 64 samples: computes 10 + 0.1 i µs for i = 37..100
    assert np.isclose(w["compute_time_p50_us"], np.percentile(10 + 0.1 * np.arange(37, 101), 50))
    assert np.isclose(w["publish_time_p99_us"], 10.0)
    assert np.isclose(w["period_jitter_max_us"], 1000.0)  # the late period, 1 ms over (periods 36..99 kept)
    w2 = s.window()                                     # a new window starts empty
    assert w2["late_cycles_last_period"] == 0 and w2["compute_time_p50_us"] == 0.0
