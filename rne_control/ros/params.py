"""Typed parameter declarations for the ROS nodes.

Every parameter is declared with an explicit type (``ParameterDescriptor``
with ``dynamic_typing`` off). Two conveniences on top of rclpy:

* a double parameter accepts an integer (``rate: 500`` in a YAML file, or
  ``ros2 param set ... rate 500``), and a double array accepts an integer
  array: parameter-file overrides are converted before declaration, and run
  time changes by a pre-set callback;
* an array without a default is declared *unset* (``Parameter.Type``
  instead of an empty list, which rclpy would type as a byte array). Its
  value reads as ``None``, meaning "take it from the model".
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional

from rcl_interfaces.msg import ParameterDescriptor
from rclpy.exceptions import ParameterUninitializedException
from rclpy.node import Node
from rclpy.parameter import Parameter

T = Parameter.Type

_TYPE_NAMES = {
    T.BOOL: "bool", T.INTEGER: "integer", T.DOUBLE: "double", T.STRING: "string",
    T.BOOL_ARRAY: "bool[]", T.INTEGER_ARRAY: "integer[]", T.DOUBLE_ARRAY: "double[]", T.STRING_ARRAY: "string[]",
}


@dataclass
class Spec:
    name: str
    type: Parameter.Type
    default: Any = None          # None: declared unset ("from the model")
    description: str = ""
    read_only: bool = False
    constraints: str = ""
    choices: Optional[List[str]] = field(default=None)

    def descriptor(self) -> ParameterDescriptor:
        d = ParameterDescriptor()
        d.name = self.name
        d.type = self.type.value
        d.description = self.description
        d.read_only = self.read_only
        d.dynamic_typing = False
        c = self.constraints
        if self.choices:
            c = ("one of: " + ", ".join(self.choices) + ("; " + c if c else ""))
        d.additional_constraints = c
        return d

    @property
    def type_name(self) -> str:
        return _TYPE_NAMES.get(self.type, str(self.type))


def _int_to_double(p: Parameter, want: Parameter.Type) -> Parameter:
    if want == T.DOUBLE and p.type_ == T.INTEGER:
        return Parameter(p.name, T.DOUBLE, float(p.value))
    if want == T.DOUBLE_ARRAY and p.type_ == T.INTEGER_ARRAY:
        return Parameter(p.name, T.DOUBLE_ARRAY, [float(x) for x in p.value])
    return p


class TypedParameters:
    """Declares :class:`Spec` parameters on a node and reads them back."""

    def __init__(self, node: Node):
        self.node = node
        self.specs: Dict[str, Spec] = {}
        node.add_pre_set_parameters_callback(self._pre_set)

    def _pre_set(self, params: List[Parameter]) -> List[Parameter]:
        out = []
        for p in params:
            s = self.specs.get(p.name)
            out.append(_int_to_double(p, s.type) if s is not None else p)
        return out

    def declare(self, specs: Iterable[Spec]) -> None:
        node = self.node
        overrides = getattr(node, "_parameter_overrides", None)
        for s in specs:
            self.specs[s.name] = s
            if isinstance(overrides, dict) and s.name in overrides:
                overrides[s.name] = _int_to_double(overrides[s.name], s.type)
            value = s.type if s.default is None else s.default
            node.declare_parameter(s.name, value, s.descriptor())

    def get(self, name: str):
        try:
            p = self.node.get_parameter(name)
        except ParameterUninitializedException:  # declared with a type, no value: "unset"
            return None
        if p.type_ == T.NOT_SET:
            return None
        v = p.value
        if isinstance(v, (list, tuple)) or type(v).__name__ == "array":
            return list(v)
        return v

    def table(self) -> str:
        """Markdown table of the declared parameters (for documentation)."""
        rows = ["| name | type | default | read-only | description |", "|---|---|---|---|---|"]
        for s in self.specs.values():
            d = "unset" if s.default is None else repr(s.default)
            rows.append("| `%s` | %s | %s | %s | %s |" % (s.name, s.type_name, d, "yes" if s.read_only else "",
                                                         s.description))
        return "\n".join(rows)


def parameter_type_name(ptype: int) -> str:
    for t, n in _TYPE_NAMES.items():
        if t.value == ptype:
            return n
    return str(ptype)


__all__ = ["Spec", "TypedParameters", "T", "parameter_type_name"]
