"""`colcon build` of the package in a temporary workspace, and what it installs.

`ros2 launch` cannot run here (launch/launch_ros have no wheels), so this checks the ROS packaging:
the executables in lib/rne_control (what `ros2 run` uses), the share folder with package.xml,
launch/, config/, urdf/, and the ament index marker.  The launch files are checked to be valid
Python declaring their launch arguments.
"""
import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
COLCON = Path(sys.executable).parent / "colcon"

EXECUTABLES = ("rne_controller", "rne_sim", "rne_demo")
_IGNORE = shutil.ignore_patterns(
    ".venv", ".git", "build", "install", "log", "__pycache__", "*.egg-info", ".pytest_cache", "*.png"
)


def _colcon():
    if COLCON.exists():
        return str(COLCON)
    found = shutil.which("colcon")
    assert found, "colcon is not installed (pip install '.[colcon]'; make test does)"
    return found


@pytest.fixture(scope="module")
def colcon_install(tmp_path_factory):
    colcon = _colcon()
    ws = tmp_path_factory.mktemp("colcon_ws")
    src = ws / "src" / "rne_control"
    # a copy, not a symlink: the build must not write egg-info or build dirs into the checkout
    shutil.copytree(REPO, src, ignore=_IGNORE, symlinks=False)
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.pop("COLCON_HOME", None)
    env["COLCON_HOME"] = str(ws / ".colcon")  # ignore any user-level colcon defaults
    env.pop("NUMBA_CACHE_DIR", None)          # the build fills the cache next to the installed files
    env.pop("RNE_CONTROL_NO_COMPILE", None)
    cmd = [colcon, "build", "--base-paths", "src", "--event-handlers", "console_cohesion+"]
    # the build compiles every numba kernel (rne_control.compile): 1-3 min on two busy cores
    r = subprocess.run(cmd, cwd=ws, env=env, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, f"colcon build failed:\n{r.stdout[-6000:]}\n{r.stderr[-4000:]}"
    return ws / "install"


def test_colcon_installs_executables(colcon_install):
    lib = colcon_install / "rne_control" / "lib" / "rne_control"
    for exe in EXECUTABLES:
        path = lib / exe
        assert path.is_file(), f"missing {path} (contents: {sorted(os.listdir(lib)) if lib.exists() else 'none'})"
        assert os.access(path, os.X_OK), f"{path} is not executable"
        text = path.read_text(errors="replace")
        assert exe in text and "console_scripts" in text


def test_colcon_installs_share(colcon_install):
    share = colcon_install / "rne_control" / "share" / "rne_control"
    assert (share / "package.xml").is_file()
    for d in ("launch", "config", "urdf"):
        assert (share / d).is_dir(), f"missing share/rne_control/{d}"
    launch = sorted(p.name for p in (share / "launch").iterdir())
    assert "rne_control.launch.py" in launch and "demo.launch.py" in launch, launch
    config = sorted(p.name for p in (share / "config").iterdir())
    for name in ("puma560_controller.yaml", "ffsr_controller.yaml", "arm7_controller.yaml", "puma560.yaml"):
        assert name in config, config
    assert any(p.suffix == ".urdf" for p in (share / "urdf").iterdir())
    marker = colcon_install / "rne_control" / "share" / "ament_index" / "resource_index" / "packages" / "rne_control"
    assert marker.is_file(), f"missing ament index marker {marker}"


def test_colcon_installed_package_importable(colcon_install):
    """The installed Python package is the one the executables import, with its share folder found."""
    site = list((colcon_install / "rne_control" / "lib").glob("python3*/site-packages"))
    assert site, "no site-packages in the colcon install"
    assert (site[0] / "rne_control" / "ros" / "sim" / "node.py").is_file()
    assert (site[0] / "rne_control" / "ros" / "controller" / "node.py").is_file()


def test_colcon_build_fills_the_numba_cache_of_the_installed_files(colcon_install):
    """numba's cache is keyed to the source path: the build compiled against install/, and a fresh
    process that imports the installed package compiles nothing."""
    site = next((colcon_install / "rne_control" / "lib").glob("python3*/site-packages"))
    index = sorted(p.name for p in (site / "rne_control" / "dynamics" / "__pycache__").glob("rnea.*.nbi"))
    assert index, "no numba cache next to the installed dynamics/rnea.py"
    assert not list((colcon_install.parent / "build").rglob("*.nbi")), "kernels were cached for build/"
    env = dict(os.environ, PYTHONPATH=str(site))
    env.pop("NUMBA_CACHE_DIR", None)
    r = subprocess.run([sys.executable, "-m", "rne_control.compile"], env=env, capture_output=True, text=True,
                       timeout=600, cwd=str(colcon_install))
    assert r.returncode == 0, r.stderr
    assert str(site) in r.stdout and "(0 compiled," in r.stdout, r.stdout


# ----------------------------------------------------------------------------- launch files (no launch here)
def _launch_args(path):
    tree = ast.parse(path.read_text(), filename=str(path))
    names = set()
    funcs = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            fname = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if fname == "DeclareLaunchArgument" and node.args and isinstance(node.args[0], ast.Constant):
                names.add(node.args[0].value)
    return funcs, names


@pytest.mark.parametrize("name,required", [
    ("rne_control.launch.py", {"config", "model_file", "namespace", "command_topic", "use_sim"}),
    ("demo.launch.py", {"robot"}),
])
def test_launch_files_declare_arguments(name, required):
    path = REPO / "launch" / name
    compile(path.read_text(), str(path), "exec")
    funcs, args = _launch_args(path)
    assert "generate_launch_description" in funcs
    assert required <= args, f"{name} declares {sorted(args)}, needs {sorted(required)}"
    text = path.read_text()
    for token in ("LaunchConfiguration", "launch_ros.actions", "get_package_share_directory"):
        assert token in text


def test_controller_configs_are_ros_parameter_files():
    """Shipped configs: `/**/node: ros__parameters:` layout, float arrays, finite effort limits."""
    import yaml
    for name in ("puma560_controller.yaml", "ffsr_controller.yaml", "arm7_controller.yaml"):
        doc = yaml.safe_load((REPO / "config" / name).read_text())
        assert set(doc) == {"/**/rne_controller", "/**/rne_sim"}, name
        for section in doc.values():
            params = section["ros__parameters"]
            assert (REPO / params["model_file"]).is_file(), params["model_file"]
            for key, value in params.items():
                if isinstance(value, list) and value and not isinstance(value[0], str):
                    assert all(isinstance(v, float) for v in value), f"{name}: {key} mixes ints/floats"
            lim = params["effort_limits"]
            assert len(lim) == len(params["joints"]) and all(0 < v < float("inf") for v in lim)
