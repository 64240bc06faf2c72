"""bench/bench_stalls.py: what it puts each interruption of the control CPU down to (synthetic traces)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import bench_stalls as bs  # noqa: E402

US = 1000


def test_each_gap_is_put_down_to_the_event_inside_it():
    events = sorted([
        (10_000 * US, "irq_vectors:local_timer_entry", ""),
        (10_001 * US, "timer:hrtimer_expire_entry", "tick_nohz_handler"),
        (20_000 * US, "irq_vectors:local_timer_entry", ""),
        (20_001 * US, "timer:hrtimer_expire_entry", "hrtimer_wakeup"),
        (30_005 * US, "irq:irq_handler_entry", ""),
        (40_000 * US - 500, "irq_vectors:reschedule_entry", ""),   # 0.5 µs before the gap: perf's rounding
        (50_010 * US, "exceptions:page_fault_user", ""),
        (60_002 * US, "irq_vectors:local_timer_entry", ""),
        (90_000 * US, "irq_vectors:local_timer_entry", ""),         # in no gap
    ])
    gaps = [(10_000 * US - 200, 20 * US), (20_000 * US, 30 * US), (30_000 * US, 12 * US), (40_000 * US, 8 * US),
            (50_000 * US, 25 * US), (60_000 * US, 40 * US), (70_000 * US, 17 * US), (80_000 * US, 50_000 * US)]
    by_cause = bs.attribute(gaps, events)
    assert by_cause == {
        "the scheduler tick": [20 * US],
        "a sleeping thread's timer": [30 * US],
        "a device interrupt": [12 * US],
        "an inter-processor interrupt": [8 * US],
        "a page fault": [25 * US],
        "another timer": [40 * US],
        bs.HOST: [17 * US],
        bs.THROTTLED: [50_000 * US],   # 50 ms: the kernel's real-time throttling, whatever it contains
    }


def test_a_gap_with_a_tick_and_another_timer_counts_as_the_tick():
    events = [(5 * US, "irq_vectors:local_timer_entry", ""), (6 * US, "timer:hrtimer_expire_entry", "hrtimer_wakeup"),
              (7 * US, "timer:hrtimer_expire_entry", "tick_nohz_handler")]
    assert bs.attribute([(4 * US, 30 * US)], events) == {"the scheduler tick": [30 * US]}
    assert bs.attribute([(100 * US, 30 * US)], events) == {bs.HOST: [30 * US]}
