"""Deprecated: ``rne_identify`` moved to :mod:`rne_control.ros.identify.cli`; this module re-exports it with a
DeprecationWarning."""
import warnings

from .identify.cli import main

__all__ = ["main"]

warnings.warn("rne_control.ros.identify_cli moved to rne_control.ros.identify.cli", DeprecationWarning, stacklevel=2)
