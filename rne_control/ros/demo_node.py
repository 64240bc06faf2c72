"""Deprecated: ``rne_demo``'s node moved to :mod:`rne_control.ros.demo.node`, its processes to
:mod:`rne_control.ros.process` and ``spin_in_background`` to :mod:`rne_control.ros.runner`; this module
re-exports them with a DeprecationWarning."""
import warnings

from .demo.node import DemoNode, spawn, wait_running, write_params
from .process import Spawned, console
from .runner import spin_in_background

__all__ = ["DemoNode", "spawn", "wait_running", "write_params", "Spawned", "console", "spin_in_background"]

warnings.warn("rne_control.ros.demo_node moved to rne_control.ros.demo.node (processes: rne_control.ros.process, "
              "spin_in_background: rne_control.ros.runner)", DeprecationWarning, stacklevel=2)
