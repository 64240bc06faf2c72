"""Load a model from a path or string, choosing the parser by content or file suffix."""
import os

from .dh import load_dh
from .errors import ModelError
from .sidecar import load_sidecar
from .urdf import load_urdf


def _peek(path):
    """The parsed YAML document, or None if it cannot be read (load_dh then reports the problem)."""
    import yaml
    try:
        with open(path) as fh:
            return yaml.safe_load(fh)
    except (OSError, yaml.YAMLError):
        return None


def load_model(source, joints=None, locked=None, floating_base=None, **kw):
    """Load a URDF (path or XML string), a DH YAML file (``.yaml``/``.yml``), or a URDF sidecar YAML (a
    ``.yaml`` with a ``urdf`` key, see rne_control.model.sidecar) into a Model, or a parallel-platform YAML
    (``platform`` and ``legs`` keys, see :func:`rne_control.load_parallel`) into a ParallelModel.

    ``floating_base=None`` keeps the file's own choice (DH YAML ``base:``; URDF: fixed).
    """
    if isinstance(source, str) and source.lstrip().startswith("<"):
        return load_urdf(source, joints=joints, locked=locked, floating_base=bool(floating_base), **kw)
    path = os.fspath(source)
    ext = os.path.splitext(path)[1].lower()
    if ext in (".yaml", ".yml"):
        if kw:
            raise ModelError(f"options {sorted(kw)} apply to URDF models only")
        doc = _peek(path)
        if isinstance(doc, dict) and "legs" in doc and "platform" in doc:
            if joints or locked or floating_base:
                raise ModelError(f"'{path}' is a parallel platform: joints, locked and floating_base do not apply")
            from .parallel_load import load_parallel
            return load_parallel(path)
        if isinstance(doc, dict) and "urdf" in doc:
            return load_sidecar(path, doc, joints=joints, locked=locked, floating_base=floating_base)
        return load_dh(path, floating_base=floating_base, joints=joints, locked=locked)
    if ext in (".urdf", ".xml"):
        return load_urdf(path, joints=joints, locked=locked, floating_base=bool(floating_base), **kw)
    raise ModelError(f"cannot tell the model format of '{path}' (expected .urdf, .xml, .yaml or .yml)")
