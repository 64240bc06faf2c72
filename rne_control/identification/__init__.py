"""Dynamic parameter identification: regressor, base parameters, excitation, estimation, export.

Layering: model -> dynamics -> identification -> control -> ros; this package never imports control or ros.
"""
from .base_parameters import BaseParameters, base_parameters
from .differentiate import differentiate
from .excitation import Excitation, excitation_trajectory
from .identify import IdentificationResult, identify
from .parameters import parameter_names, parameter_vector
from .regressor import regressor

__all__ = ["regressor", "parameter_vector", "parameter_names", "base_parameters", "BaseParameters",
           "excitation_trajectory", "Excitation", "identify", "IdentificationResult", "differentiate"]
