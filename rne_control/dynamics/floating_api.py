"""Kept for ``rne_control/examples/ffsr.py``, which imports centroidal_momentum from here: the floating-base
functions live in rne_control.dynamics.floating (api.py)."""
from .floating.api import centroidal_momentum

__all__ = ["centroidal_momentum"]
