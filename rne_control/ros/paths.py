"""Resolve ``model_file`` paths.

Absolute paths are used as they are. A relative path (e.g. ``config/puma560.yaml``
or ``urdf/puma560.urdf``) is looked up, in this order, under

1. the package's installed share folder found through the ament index
   (``get_package_share_directory('rne_control')``: colcon workspaces and ROS installs);
2. ``<sys.prefix>/share/rne_control`` (``pip install .`` puts the data files there);
3. the source checkout (the folder holding the ``rne_control`` package: ``pip install -e .``
   and running from a clone);
4. the current directory.

A ``package://rne_control/...`` URI is accepted as a path relative to the share folder.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import List

PACKAGE = "rne_control"


def search_roots() -> List[Path]:
    roots: List[Path] = []
    try:
        from ament_index_python.packages import get_package_share_directory
        roots.append(Path(get_package_share_directory(PACKAGE)))
    except Exception:  # not installed through ament, or ament_index_python missing
        pass
    roots.append(Path(sys.prefix) / "share" / PACKAGE)
    import rne_control
    roots.append(Path(rne_control.__file__).resolve().parents[1])
    roots.append(Path.cwd())
    out: List[Path] = []
    for r in roots:
        if r not in out:
            out.append(r)
    return out


def resolve_model_file(path: str) -> Path:
    """The existing file that ``path`` names; FileNotFoundError listing where it looked."""
    if not path:
        raise FileNotFoundError("empty model_file")
    p = str(path)
    prefix = "package://%s/" % PACKAGE
    if p.startswith(prefix):
        p = p[len(prefix):]
    pp = Path(os.path.expandvars(os.path.expanduser(p)))
    if pp.is_absolute():
        if pp.is_file():
            return pp
        raise FileNotFoundError("model_file %s does not exist" % pp)
    tried = []
    for root in search_roots():
        cand = root / pp
        tried.append(str(cand))
        if cand.is_file():
            return cand
    raise FileNotFoundError("model_file %r not found; looked in: %s" % (str(path), ", ".join(tried)))
