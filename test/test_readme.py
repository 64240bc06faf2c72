"""What the README and docs/*.md claim: every python block runs as written (from the repository root), their
relative links and anchors resolve, and the README's parameter tables match the nodes' declarations."""
import os
import re
import warnings
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).parents[1]
DOCS = sorted((ROOT / "docs").glob("*.md"))  # not docs/pending


def run_python_blocks(path):
    """Run the file's python blocks in order in one namespace, as a reader would; return how many."""
    text = path.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            namespace = {}  # blocks build on each other
            for block in blocks:
                exec(compile(block, str(path.relative_to(ROOT)), "exec"), namespace)
    finally:
        os.chdir(cwd)
    return len(blocks)


def test_readme_python_blocks_run():
    assert run_python_blocks(ROOT / "README.md")


def test_docs_have_python_blocks():
    assert sum("```python\n" in p.read_text() for p in DOCS) >= 3


@pytest.mark.parametrize("path", DOCS, ids=[p.name for p in DOCS])
def test_docs_python_blocks_run(path):
    run_python_blocks(path)


def test_relative_links_resolve():
    """Links to files of the repository from the README and docs/*.md point at files that exist."""
    for path in [ROOT / "README.md", *DOCS]:
        for target in re.findall(r"\]\(([^)\s]+)\)", path.read_text()):
            if "://" in target or target.startswith("#"):
                continue
            file = target.split("#")[0]
            assert (path.parent / file).exists(), f"{path.name}: {target}"


def _slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_anchors_resolve():
    """Every #anchor in a link of the README and docs/*.md names a heading of its target file."""
    files = [ROOT / "README.md", *DOCS]
    anchors = {}
    for path in files:
        text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)
        anchors[path.resolve()] = {_slug(h) for h in re.findall(r"^#+ (.*)$", text, re.M)}
    for path in files:
        for target in re.findall(r"\]\(([^)\s]+)\)", path.read_text()):
            if "://" in target or "#" not in target:
                continue
            file, anchor = target.split("#", 1)
            resolved = (path.parent / file).resolve() if file else path.resolve()
            assert anchor in anchors.get(resolved, set()), f"{path.name}: {target}"


# ---------------------------------------------------------------------------------------------------------
# The README's parameter tables against the nodes' declarations (one declaration per node: a list of Spec)

TABLE_HEADER = "| parameter | type | default | description |"
PROSE = object()   # a default cell that is neither a `literal` nor "unset ...": allowed for families only


def parameter_rows(text, heading):
    """The rows of the ``| parameter | type | default | description |`` tables in the section under the
    heading ``heading`` (down to the next heading of the same or a higher level), as
    ``(names, type, default, line)``: ``names`` the backticked names of the first cell, ``type`` with any
    size dropped (``double[3]`` -> ``double[]``), ``default`` the value of the cell's leading `literal`
    (YAML), None for "unset ...", else ``PROSE``."""
    m = re.search(r"^(#+) " + re.escape(heading) + r"[ \t]*$", text, re.M)
    assert m, f"no heading {heading!r}"
    end = re.compile(r"^#{1,%d} " % len(m.group(1)), re.M).search(text, m.end())
    section = text[m.end(): end.start() if end else len(text)]
    rows, in_table = [], False
    for line in section.splitlines():
        if line.strip() == TABLE_HEADER:
            in_table = True
            continue
        if not in_table:
            continue
        if not line.startswith("|"):
            in_table = False
            continue
        if set(line.strip()) <= set("|-: "):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        assert len(cells) == 4, f"{heading}: a row needs 4 cells: {line}"
        names = re.findall(r"`([^`]+)`", cells[0])
        assert names and re.fullmatch(r"`[^`]+`(, `[^`]+`)*", cells[0]), f"{heading}: names cell: {line}"
        ptype = re.sub(r"\[\d+\]", "[]", cells[1])
        lit = re.match(r"`([^`]*)`", cells[2])
        if lit:
            default = yaml.safe_load(lit.group(1))
        elif cells[2].startswith("unset"):
            default = None
        else:
            default = PROSE
        rows.append((names, ptype, default, line))
    assert rows, f"no parameter table under {heading!r}"
    return rows


def _same(a, b):
    """A table default equals a declared default: same kind (bool, number, string, list) and value."""
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b)
                and all(_same(x, y) for x, y in zip(a, b)))
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    return type(a) is type(b) and a == b


def parameter_table_errors(rows, specs, families):
    """What is wrong in the table ``rows`` (from :func:`parameter_rows`) against the declared ``specs``
    (objects with ``name``, ``type_name``, ``default``) and the ``families`` of parameters declared one
    per joint ({pattern name: type name}, their default the model's): a declared parameter missing, a row
    naming an undeclared one or one twice, a type or a default that differs. [] when the table is right."""
    errors, seen = [], {}
    declared = {s.name: s for s in specs}
    for names, ptype, default, line in rows:
        for name in names:
            if name in seen:
                errors.append(f"{name}: two rows")
            seen[name] = True
            if name in families:
                if ptype != families[name]:
                    errors.append(f"{name}: type {ptype} in the table, declared {families[name]}")
                continue
            spec = declared.get(name)
            if spec is None:
                errors.append(f"{name}: in the table, not declared")
                continue
            if ptype != spec.type_name:
                errors.append(f"{name}: type {ptype} in the table, declared {spec.type_name}")
            if default is PROSE:
                errors.append(f"{name}: the default cell needs a `literal` or 'unset': {line}")
            elif default is None or spec.default is None:
                if default is not spec.default:
                    errors.append(f"{name}: default {default!r} in the table, declared {spec.default!r}")
            elif not _same(default, spec.default):
                errors.append(f"{name}: default {default!r} in the table, declared {spec.default!r}")
    for name in list(declared) + list(families):
        if name not in seen:
            errors.append(f"{name}: declared, not in the table")
    return errors


def _joint_families():
    """The parameters both nodes declare per joint: ``locked.<joint>`` (each uncontrolled joint, the
    plant's default) and ``elastic.<joint>.<key>`` (from the parameter overrides, URDF models)."""
    from rne_control.model.series import URDF_ELASTIC_KEYS
    from rne_control.ros import model_params
    families = {"locked.<joint>": "double"}
    families.update({f"{model_params.PREFIX}<joint>.{k}": "double" for k in URDF_ELASTIC_KEYS})
    return families


def test_rne_controller_parameter_table():
    """The README's tables of rne_controller's parameters list exactly what the node declares: its static
    and run-time settings, the model parameters, the action's (per-joint ones as ``<joint>``), with the
    declared type and default."""
    from rne_control.ros import model_params
    from rne_control.ros.controller.follow_joint_trajectory import parameter_specs
    from rne_control.ros.controller.settings import RUNTIME_SPECS, STATIC_SPECS
    specs = [*STATIC_SPECS, *RUNTIME_SPECS, *model_params.SPECS, *parameter_specs(["<joint>"])]
    rows = parameter_rows((ROOT / "README.md").read_text(), "Parameters of `rne_controller`")
    assert parameter_table_errors(rows, specs, _joint_families()) == []


def test_rne_sim_parameter_table():
    """The README's table of rne_sim's parameters lists exactly what the node declares: its one list
    ``rne_control.ros.sim.settings.SPECS``, and the per-joint families."""
    from rne_control.ros.sim.settings import SPECS
    rows = parameter_rows((ROOT / "README.md").read_text(), "Parameters of `rne_sim`")
    assert parameter_table_errors(rows, SPECS, _joint_families()) == []


def test_parameter_table_check_finds_errors():
    """The table check itself: it reports a missing, an undeclared and a doubled parameter, a wrong type
    and a wrong default, and accepts a right table."""
    from types import SimpleNamespace as S

    specs = [S(name="rate", type_name="double", default=500.0), S(name="joints", type_name="string[]", default=None),
             S(name="mode", type_name="string", default="gravity"), S(name="on", type_name="bool", default=True),
             S(name="gains", type_name="double[]", default=[1.0, 2.0])]
    families = {"locked.<joint>": "double"}
    good = f"""## Params

{TABLE_HEADER}
|---|---|---|---|
| `rate` | double | `500` | Hz |
| `joints` | string[] | unset (all) | |
| `mode`, `on` | string | `gravity` | |
| `gains` | double[2] | `[1.0, 2.0]` | |
| `locked.<joint>` | double | the model's | |

## Next
"""
    good = good.replace("| `mode`, `on` | string | `gravity` | |", "| `mode` | string | `gravity` | |\n| `on` | bool | `true` | |")
    assert parameter_table_errors(parameter_rows(good, "Params"), specs, families) == []
    bad = (good.replace("`500`", "`50`").replace("| bool | `true`", "| bool | `1`")
           .replace("| `joints` | string[] |", "| `joints` | string |")
           .replace("| `locked.<joint>` | double | the model's | |\n", "| `extra` | double | `0.0` | |\n| `rate` | double | `500.0` | |\n"))
    errors = parameter_table_errors(parameter_rows(bad, "Params"), specs, families)
    for expected in ("rate: default 50", "on: default 1", "joints: type string", "extra: in the table, not declared",
                     "rate: two rows", "locked.<joint>: declared, not in the table"):
        assert any(e.startswith(expected) for e in errors), (expected, errors)
    with pytest.raises(AssertionError):
        parameter_rows(good, "Missing")
