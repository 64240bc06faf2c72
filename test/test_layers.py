"""The package's import structure: its top-level parts are layers that import downward only, no module
takes part in an import cycle, only ros imports ROS, nothing imports Pinocchio, and the library works on
a machine without ROS.

Layers, lowest first (``LAYERS``): kernel_cache -> model -> dynamics -> identification -> control -> ros
-> {compile, examples}. A module may import its own layer and the layers below; compile and examples
share the top rank, may import ros and everything below, and nothing imports them. The root
``rne_control/__init__.py`` (``import rne_control as rc``) counts as the highest layer it imports.

The import graph is built with ast from every ``rne_control/**/*.py``, whatever its layout: an edge from a
module to each rne_control module it imports (relative imports resolved; ``from package import name``
is an edge to the submodule ``name`` when there is one, else to the package; imports inside functions
count too). Importing a submodule runs its packages' ``__init__`` as well, but that is no edge here, so
a package's ``__init__`` may import its own submodules.
"""
import ast
import subprocess
import sys
from pathlib import Path

PKG = Path(__file__).parents[1] / "rne_control"
ROOT = PKG.name
LAYERS = [["kernel_cache"], ["model"], ["dynamics"], ["identification"], ["control"], ["ros"],
          ["compile", "examples"]]
RANK = {part: r for r, parts in enumerate(LAYERS) for part in parts}
ROS_PACKAGES = ("rclpy", "launch", "launch_ros", "rcl_interfaces", "builtin_interfaces", "ament_index_python")


def module_name(path: Path) -> str:
    parts = path.relative_to(PKG.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PKG.rglob("*.py"))}


def imported_names(path: Path):
    """Every absolute dotted name that the module at ``path`` imports, with the names it takes from it:
    (module, [names] or None for ``import module``)."""
    parts = path.relative_to(PKG.parent).with_suffix("").parts   # a package's __init__ resolves from itself
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, None
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(parts[:-node.level])
                yield ".".join(base + ([node.module] if node.module else [])), [a.name for a in node.names]
            else:
                yield node.module or "", [a.name for a in node.names]


def _owner(name: str):
    """The rne_control module that the dotted ``name`` is or lies in (None outside the package)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def graph() -> dict:
    """{module: {rne_control modules it imports}}."""
    out = {}
    for mod, path in MODULES.items():
        edges = set()
        for name, taken in imported_names(path):
            if taken is None:
                targets = [_owner(name)]
            else:
                targets = [f"{name}.{t}" if f"{name}.{t}" in MODULES else _owner(name) for t in taken]
            edges.update(t for t in targets if t is not None and t != mod)
        out[mod] = edges
    return out


def cycles(g: dict) -> list:
    """The strongly connected components of more than one module (Tarjan, iterative), sorted."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    for start in sorted(g):
        if start in index:
            continue
        work = [(start, iter(sorted(g[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(g.get(w, ())))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return sorted(found)


def layer(mod: str) -> str:
    """The top-level part of rne_control that ``mod`` belongs to (the root for ``rne_control`` itself)."""
    parts = mod.split(".")
    return parts[1] if len(parts) > 1 else ROOT


def test_every_top_level_part_is_a_listed_layer():
    parts = {p.stem if p.is_file() else p.name for p in PKG.iterdir()
             if (p.suffix == ".py" and p.name != "__init__.py") or (p / "__init__.py").is_file()}
    assert parts == set(RANK), f"unlisted: {sorted(parts - set(RANK))}; gone: {sorted(set(RANK) - parts)}"


def test_imports_flow_downward():
    g = graph()
    root_rank = max(RANK[layer(t)] for t in g[ROOT])    # what `import rne_control as rc` brings in
    rank = dict(RANK, **{ROOT: root_rank})
    bad = []
    for mod, targets in g.items():
        if mod == ROOT:
            continue
        a = layer(mod)
        for t in targets:
            b = layer(t)
            if b != a and rank[b] >= rank[a]:
                bad.append(f"{mod} ({a}) imports {t} ({b})")
    assert not bad, "upward imports:\n" + "\n".join(sorted(bad))


def test_no_import_cycle():
    found = cycles(graph())
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_cycle_finder_finds_a_cycle():
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(g) == [["a", "b", "c"]]


def test_only_ros_imports_ros_and_nothing_imports_pinocchio():
    bad = []
    for mod, path in MODULES.items():
        for name, _ in imported_names(path):
            parts = name.split(".")
            if "pinocchio" in parts:
                bad.append(f"{mod} imports Pinocchio")
            if layer(mod) != "ros" and (parts[0] in ROS_PACKAGES or parts[0].endswith(("_msgs", "_srvs"))):
                bad.append(f"{mod} imports {name}: only rne_control.ros may use ROS")
    assert not bad, "\n".join(bad)


def test_library_works_without_ros():
    code = ("import sys\n"
            "for m in ('rclpy', 'std_msgs', 'sensor_msgs', 'ament_index_python'):\n"
            "    sys.modules[m] = None  # importing any of them now fails\n"
            "import numpy as np, rne_control as rc, rne_control.control\n"
            "m = rc.load_dh('config/two_link.yaml')\n"
            "print(rc.inverse_dynamics(m, np.zeros(2), np.zeros(2), np.zeros(2)))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=PKG.parent, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "[" in out.stdout
