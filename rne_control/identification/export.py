"""Write an identified model as files that ``load_model`` (and the controller's ``model_file``) accept.

- A model loaded from a DH YAML file is written as the same YAML with every link's ``mass``, ``com``,
  ``inertia`` (about the COM, link-frame axes), ``rotor_inertia``, ``viscous`` and ``coulomb`` replaced.
- A model loaded from a URDF is written as a full URDF (``<name>.urdf`` next to the YAML path: every
  ``<inertial>`` replaced, ``<dynamics damping friction>`` set) plus the YAML path itself as a *sidecar*
  (rne_control.model.sidecar) that names the URDF and holds what URDF cannot (rotor inertia; viscous and
  Coulomb friction are repeated there and take precedence).

A result that is not physically consistent is refused: such a model can make the mass matrix indefinite.
"""
import copy
import os
import xml.etree.ElementTree as ET

import numpy as np
import yaml

from ..model.errors import InputError
from ..model.spatial import skew
from .parameters import consistency_problems, split_vector

HEADER = "# Written by rne_control identification (rne_identify fit); units SI, inertia about the COM.\n"


def com_form(p):
    """(mass, com, I_com 3x3) of an internal 10-vector about the link origin."""
    m = float(p[0])
    I_o = np.array([[p[4], p[7], p[8]], [p[7], p[5], p[9]], [p[8], p[9], p[6]]])
    if m <= 1e-12:
        return 0.0, np.zeros(3), I_o
    c = np.asarray(p[1:4]) / m
    return m, c, I_o + m * skew(c) @ skew(c)


def _inertia_dict(I):
    return {"ixx": float(I[0, 0]), "iyy": float(I[1, 1]), "izz": float(I[2, 2]),
            "ixy": float(I[0, 1]), "ixz": float(I[0, 2]), "iyz": float(I[1, 2])}


def write_model(result, path):
    """Write ``result.model`` to ``path`` (.yaml/.yml); returns the list of files written."""
    if not result.physically_consistent:
        raise InputError("refusing to write a physically inconsistent model (" + "; ".join(result.problems[:3])
                         + "): fit with physical=True (rne_identify fit --physical)")
    return _write(result.model, result.pi, path)


def write_parameters(model, pi, path):
    """Write ``model`` with the parameter vector ``pi`` (rc.parameter_names order) to ``path`` (.yaml/.yml),
    in the form of the file it was loaded from; returns the list of files written. Refuses a ``pi`` that is
    not physically consistent."""
    problems = consistency_problems(model, pi)
    if problems:
        raise InputError("refusing to write a physically inconsistent model (" + "; ".join(problems[:3]) + ")")
    return _write(model, pi, path)


def _write(model, pi, path):
    path = os.fspath(path)
    if os.path.splitext(path)[1].lower() not in (".yaml", ".yml"):
        raise InputError(f"the output path must end in .yaml or .yml, got '{path}'")
    if model.source is None:
        raise InputError(f"model '{model.name}' was not loaded from a file: nothing to write it as")
    kind, src, _ = model.source
    links, Ia, Fv, Fs = split_vector(model, pi)
    joints = {j: (float(Ia[k]), float(Fv[k]), float(Fs[k])) for k, j in enumerate(model.joint_names)}
    if kind == "dh":
        return [_write_dh(src, links, joints, path)]
    return _write_urdf(src, links, joints, path)


def _write_dh(doc, links, joints, path):
    doc = copy.deepcopy(doc)
    entries = [("base_link", doc.get("base_link"))] + [(None, e) for e in doc["links"]]
    for i, (_, e) in enumerate(entries):
        name = str((e or {}).get("name", "base" if i == 0 else f"link{i}"))
        if name not in links or (i == 0 and not e):
            continue
        m, c, I = com_form(links[name])
        e.update(mass=m, com=[float(x) for x in c], inertia=_inertia_dict(I))
        jn = str(e.get("joint_name", f"joint{i}")) if i else None
        if jn in joints:
            e.update(rotor_inertia=joints[jn][0], viscous=joints[jn][1], coulomb=joints[jn][2])
    with open(path, "w") as fh:
        fh.write(HEADER)
        yaml.safe_dump(doc, fh, sort_keys=False)
    return path


def _write_urdf(src, links, joints, path):
    if isinstance(src, str) and src.lstrip().startswith("<"):
        root = ET.fromstring(src)
    else:
        root = ET.parse(os.fspath(src)).getroot()
    for el in root.findall("link"):
        name = el.get("name")
        if name not in links:
            continue
        m, c, I = com_form(links[name])
        old = el.find("inertial")
        if old is not None:
            el.remove(old)
        if m == 0.0 and not np.any(I):
            continue
        inertial = ET.SubElement(el, "inertial")
        ET.SubElement(inertial, "origin", xyz=" ".join(f"{x:.12g}" for x in c), rpy="0 0 0")
        ET.SubElement(inertial, "mass", value=f"{m:.12g}")
        ET.SubElement(inertial, "inertia", **{k: f"{v:.12g}" for k, v in _inertia_dict(I).items()})
    for el in root.findall("joint"):
        if el.get("name") in joints:
            _, fv, fs = joints[el.get("name")]
            dyn = el.find("dynamics")
            if dyn is None:
                dyn = ET.SubElement(el, "dynamics")
            dyn.set("damping", f"{fv:.12g}")
            dyn.set("friction", f"{fs:.12g}")
    urdf_path = os.path.splitext(path)[0] + ".urdf"
    ET.ElementTree(root).write(urdf_path, encoding="unicode", xml_declaration=True)
    side = {"urdf": os.path.basename(urdf_path),
            "joints": {j: {"rotor_inertia": v[0], "viscous": v[1], "coulomb": v[2]} for j, v in joints.items()}}
    with open(path, "w") as fh:
        fh.write(HEADER + "# Sidecar of a URDF (rne_control.model.sidecar): what URDF cannot hold.\n")
        yaml.safe_dump(side, fh, sort_keys=False)
    return [urdf_path, path]
