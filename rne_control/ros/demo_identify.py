"""Deprecated: ``rne_demo --identify`` moved to :mod:`rne_control.ros.demo.identify`; this module re-exports it with a
DeprecationWarning."""
import warnings

from .demo.identify import EXCITATION, SERIAL, run

__all__ = ["EXCITATION", "SERIAL", "run"]

warnings.warn("rne_control.ros.demo_identify moved to rne_control.ros.demo.identify", DeprecationWarning, stacklevel=2)
