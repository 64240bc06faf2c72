"""Child processes of the tools (``rne_demo`` starts ``rne_sim``, ``rne_controller`` and ``rne_identify``;
the benchmarks start the nodes too): each in its own process group, stopped the way a node expects to be,
SIGINT to the group (the executables exit 0 on it), SIGKILL only if it does not exit in time. No rclpy.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Optional

# console script -> the module whose main() it runs, for a checkout without installed scripts
_MODULES = {"rne_sim": "rne_control.ros.sim.node",
            "rne_controller": "rne_control.ros.controller.node",
            "rne_identify": "rne_control.ros.identify.cli"}


def console(exe):
    """The argv prefix that runs console script ``exe``: the script beside this Python, else ``python -m``."""
    cand = Path(sys.executable).parent / exe
    if cand.exists():
        return [str(cand)]
    return [sys.executable, "-m", _MODULES[exe]]


def stop_group(proc: subprocess.Popen, timeout: float = 5.0, kill_timeout: float = 3.0) -> Optional[int]:
    """SIGINT to the process group of ``proc`` (started with ``start_new_session=True``), SIGKILL after
    ``timeout`` s; returns its exit code (None if it outlived ``kill_timeout`` s more)."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGINT)
            proc.wait(timeout=timeout)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=kill_timeout)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass
    return proc.returncode


class Spawned:
    """A child process ``argv`` in its own process group, stdout and stderr to ``<logdir>/<name>.log``."""

    def __init__(self, name, argv, logdir):
        self.name = name
        self.log_path = Path(logdir) / f"{name}.log"
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(argv, stdout=self._log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True)

    def alive(self):
        return self.proc.poll() is None

    def tail(self, n=2000):
        """The last ``n`` characters of its log."""
        try:
            return self.log_path.read_text(errors="replace")[-n:]
        except OSError:
            return ""

    def stop(self, timeout=5.0):
        """:func:`stop_group` with ``timeout``, then close the log; returns the exit code."""
        code = stop_group(self.proc, timeout)
        self._log.close()
        return code
