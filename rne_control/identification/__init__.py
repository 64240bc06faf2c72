"""Dynamic parameter identification: regressor, base parameters, excitation, estimation, export.

Layering: model -> dynamics -> identification -> control -> ros; this package never imports control or ros.
"""
from .regressor import regressor
from .parameters import parameter_names, parameter_vector

__all__ = ["regressor", "parameter_vector", "parameter_names"]
