"""The real-time options of a node process: CPU affinity, SCHED_FIFO priority, a frozen garbage collector.

Each is best effort: what the system refuses is logged as a warning and the node runs on without it.
"""
from __future__ import annotations

import gc
import os


def apply_realtime_options(params, log) -> None:
    """Apply ``cpu_affinity`` (CPU indices), ``sched_priority`` (SCHED_FIFO 1..99; 0 off) and ``gc_freeze``
    (``gc.freeze()`` after start-up, so that the collector never walks the start-up objects) from the
    node's typed parameters ``params``.

    Affinity and priority apply to the calling thread, the executor's, which runs the control cycle, and
    to threads it starts later. The middleware's threads, started with the node, keep the system's
    placement and priority: pinning them to the control CPU as well gave no better latency in
    ``make bench-loop`` here, and at normal priority beside a SCHED_FIFO thread they would only wait."""
    cpus = params.get("cpu_affinity")
    if cpus:
        try:
            os.sched_setaffinity(0, set(int(c) for c in cpus))
            log.info("CPU affinity: %s" % sorted(os.sched_getaffinity(0)))
        except (OSError, AttributeError, ValueError) as e:
            log.warning("cannot set cpu_affinity %s: %s" % (cpus, e))
    prio = int(params.get("sched_priority") or 0)
    if prio > 0:
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(min(prio, 99)))
            log.info("SCHED_FIFO priority %d" % prio)
        except (OSError, AttributeError) as e:
            log.warning("SCHED_FIFO priority %d not allowed (%s): running with the default scheduler"
                        % (prio, e))
    if params.get("gc_freeze"):
        gc.collect()
        gc.freeze()
