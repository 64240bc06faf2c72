"""Deprecated: ``rne_identify run`` moved to :mod:`rne_control.ros.identify.run`; this module re-exports it with a
DeprecationWarning."""
import warnings

from .identify.run import TRAJ_DT, Recorder, controller_section, parser, record

__all__ = ["TRAJ_DT", "Recorder", "controller_section", "parser", "record"]

warnings.warn("rne_control.ros.identify_run moved to rne_control.ros.identify.run", DeprecationWarning, stacklevel=2)
