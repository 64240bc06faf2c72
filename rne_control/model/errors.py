"""Exception types. Both derive from ValueError so callers can catch either broadly."""


class ModelError(ValueError):
    """A robot description is invalid; the message names the joint, link or field."""


class InputError(ValueError):
    """A call received bad numbers (shape, NaN/inf, unknown name); the message names the joint or field."""


class LoopClosureError(InputError):
    """Kinematic loops cannot be closed: no configuration satisfies the loop constraints (e.g. the forward
    kinematics of a parallel platform did not converge for the given leg lengths)."""


class SingularConfigurationError(InputError):
    """A kinematic Jacobian is singular at the given configuration (e.g. a parallel platform's J_p^-1,
    a type II singularity, or a universal joint with the leg along its first axis)."""
