"""Timing statistics of a fixed-rate control loop, kept in preallocated ring buffers (no allocation
per cycle), summarised once per diagnostics period."""
import time

import numpy as np

LATE_FACTOR = 1.5  # a period longer than 1.5 nominal periods is a late cycle


class LoopStats:
    """Periods between cycle entries, compute times (cycle entry to the hand-off of the command),
    publish-call times and latencies (arrival of the joint state a command used to the return of its
    publish call), in ns; late cycles; commands published."""

    def __init__(self, period_s, ring=8192):
        self.period = float(period_s)
        self.ring = ring
        self.periods = np.zeros(ring)
        self.computes = np.zeros(ring)
        self.publishes = np.zeros(ring)
        self.latencies = np.zeros(ring)
        self.k_period = self.k_publish = self.k_latency = 0
        self.late_cycles = self.published = 0
        self._last_entry = 0
        self._at = dict(k_period=0, k_publish=0, k_latency=0, late=0, published=0, wall=time.monotonic())

    def timer_entry(self, entry_ns):
        """Record a cycle's start (time.perf_counter_ns())."""
        if self._last_entry:
            p = entry_ns - self._last_entry
            self.periods[self.k_period % self.ring] = p
            self.k_period += 1
            if p > LATE_FACTOR * 1e9 * self.period:
                self.late_cycles += 1
        self._last_entry = entry_ns

    def published_command(self, entry_ns, handoff_ns, done_ns):
        """Record a command: cycle start, hand-off to rclpy, and the end of the publish call."""
        k = self.k_publish % self.ring
        self.computes[k] = handoff_ns - entry_ns
        self.publishes[k] = done_ns - handoff_ns
        self.k_publish += 1
        self.published += 1

    def latency(self, arrival_ns, done_ns):
        """Record a command's latency: from the arrival of its joint state to the end of its publish call."""
        self.latencies[self.k_latency % self.ring] = done_ns - arrival_ns
        self.k_latency += 1

    def _recent(self, buf, k, k0):
        cnt = min(k - k0, self.ring)
        return buf[np.arange(k - cnt, k) % self.ring] * 1e-9 if cnt > 0 else np.zeros(0)

    def window(self):
        """Figures since the previous call: a dict of rates (Hz), times (µs) and counts."""
        at, wall = self._at, time.monotonic()
        elapsed = max(wall - at["wall"], 1e-9)
        periods = self._recent(self.periods, self.k_period, at["k_period"])
        computes = self._recent(self.computes, self.k_publish, at["k_publish"])
        publishes = self._recent(self.publishes, self.k_publish, at["k_publish"])
        latencies = self._recent(self.latencies, self.k_latency, at["k_latency"])
        jitter = np.abs(periods - self.period) if periods.size else np.zeros(1)

        def pct(x, p):
            return 1e6 * float(np.percentile(x, p)) if x.size else 0.0

        out = dict(rate_achieved_hz=periods.size / elapsed,
                   commands_per_s=(self.published - at["published"]) / elapsed,
                   period_jitter_p99_us=pct(jitter, 99), period_jitter_max_us=1e6 * float(np.max(jitter)),
                   compute_time_p50_us=pct(computes, 50), compute_time_p99_us=pct(computes, 99),
                   publish_time_p50_us=pct(publishes, 50), publish_time_p99_us=pct(publishes, 99),
                   latency_p50_us=pct(latencies, 50), latency_p99_us=pct(latencies, 99),
                   latency_max_us=pct(latencies, 100),
                   late_cycles_last_period=self.late_cycles - at["late"])
        self._at = dict(k_period=self.k_period, k_publish=self.k_publish, k_latency=self.k_latency,
                        late=self.late_cycles,
                        published=self.published, wall=wall)
        return out
