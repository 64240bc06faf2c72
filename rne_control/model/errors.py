"""Exception types. Both derive from ValueError so callers can catch either broadly."""


class ModelError(ValueError):
    """A robot description is invalid; the message names the joint, link or field."""


class InputError(ValueError):
    """A call received bad numbers (shape, NaN/inf, unknown name); the message names the joint or field."""
