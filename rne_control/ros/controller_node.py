"""Deprecated module path: ``rne_controller`` is :mod:`rne_control.ros.controller.node`."""
import warnings

from .controller.node import NODE_NAME, ControllerNode, main  # noqa: F401

warnings.warn("rne_control.ros.controller_node moved to rne_control.ros.controller.node", DeprecationWarning,
              stacklevel=2)
