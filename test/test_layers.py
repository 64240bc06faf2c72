"""The layers import one way only (model -> dynamics -> control -> ros), only ros imports rclpy, nothing
imports Pinocchio, and the library works on a machine without ROS."""
import ast
import subprocess
import sys
from pathlib import Path

PKG = Path(__file__).parents[1] / "rne_control"
ORDER = ["model", "dynamics", "identification", "control", "ros"]


def imports_of(path):
    tree = ast.parse(path.read_text())
    pkg = path.relative_to(PKG.parent).with_suffix("").parts
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # resolve relative imports against the module's package
                base = list(pkg[:-node.level]) if node.level <= len(pkg) - 1 else []
                yield ".".join(base + ([node.module] if node.module else []))
            else:
                yield node.module or ""


def test_imports_flow_one_way():
    for layer in ORDER:
        later = ORDER[ORDER.index(layer) + 1:]
        for path in (PKG / layer).rglob("*.py"):
            for name in imports_of(path):
                parts = name.split(".")
                assert "pinocchio" not in parts, f"{path} imports Pinocchio"
                if layer != "ros":
                    assert parts[0] not in ("rclpy", "launch", "launch_ros") and not name.endswith("_msgs"), \
                        f"{path} imports {name}: only rne_control.ros may use ROS"
                if parts[0] == "rne_control" and len(parts) > 1:
                    assert parts[1] not in later, f"{path} ({layer}) imports {name}"


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
