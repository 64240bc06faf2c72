"""State watchdog: decides when the measured state is too old to control with.

``on_stale`` says what the controller does while the state is stale:

* ``hold`` (default): gravity torques of the last valid configuration, with
  no velocity or feedback terms;
* ``zero``: zero torques;
* ``stop``: publish nothing.

When fresh states come back the controller resumes with a ramp.
"""
from __future__ import annotations

import math

ON_STALE = ("hold", "zero", "stop")

NO_STATE, FRESH, STALE = 0, 1, 2


class Watchdog:
    def __init__(self, timeout: float = 0.05, on_stale: str = "hold"):
        self.timeout = check_timeout(timeout)
        self.on_stale = check_on_stale(on_stale)
        self.last = -math.inf
        self.status = NO_STATE
        self.stale_events = 0
        self.recoveries = 0

    def feed(self, t: float) -> None:
        """A valid state was received at time t."""
        self.last = float(t)

    def age(self, t: float) -> float:
        return t - self.last

    def fresh(self, t: float) -> bool:
        """A valid state was received within ``timeout`` of time t (never: False)."""
        return t - self.last <= self.timeout

    def check(self, t: float) -> int:
        """Update and return the status at time t (NO_STATE, FRESH or STALE).

        ``went_stale`` / ``recovered`` tell whether this call changed it.
        """
        self.went_stale = False
        self.recovered = False
        if self.last == -math.inf:
            self.status = NO_STATE
            return NO_STATE
        if not self.fresh(t):
            if self.status != STALE:
                self.stale_events += 1
                self.went_stale = True
            self.status = STALE
        else:
            if self.status == STALE:
                self.recoveries += 1
                self.recovered = True
            self.status = FRESH
        return self.status


def check_timeout(x) -> float:
    x = float(x)
    if not (x > 0.0) or math.isinf(x):
        raise ValueError("state_timeout must be a positive finite number of seconds")
    return x


def check_on_stale(x) -> str:
    if x not in ON_STALE:
        raise ValueError("unknown on_stale %r (one of %s)" % (x, ", ".join(ON_STALE)))
    return x
