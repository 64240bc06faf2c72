"""`pip install .` (not editable): the package and its data files install, and a relative model_file
resolves to the installed copy, not to the source checkout."""
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).parents[1]


def test_pip_install_non_editable(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels),
                    str(ROOT)], check=True, timeout=300, cwd=tmp_path)
    subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps",
                    *map(str, wheels.glob("rne_control-*.whl"))], check=True, timeout=300, cwd=tmp_path)
    # dependencies from the test environment's site-packages (a plain path entry: its .pth files, such as
    # an editable install of this package, do not run)
    env = dict(os.environ, PYTHONPATH=sysconfig.get_paths()["purelib"])
    env.pop("AMENT_PREFIX_PATH", None)
    code = ("import rne_control, rne_control.ros.paths as p\n"
            "print(rne_control.__file__)\n"
            "print(p.resolve_model_file('config/puma560.yaml'))\n"
            "print(p.resolve_model_file('urdf/ffsr.urdf'))\n"
            "m = rne_control.load_model(str(p.resolve_model_file('config/arm7.yaml')))\n"
            "print(m.n)\n")
    out = subprocess.run([str(py), "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    module, puma, ffsr, n = out.stdout.split()
    assert str(venv) in module and str(ROOT) not in module
    assert puma == str(venv / "share" / "rne_control" / "config" / "puma560.yaml")
    assert ffsr == str(venv / "share" / "rne_control" / "urdf" / "ffsr.urdf")
    assert n == "7"
    for exe in ("rne_controller", "rne_sim", "rne_demo", "rne_compile"):
        assert (venv / "bin" / exe).is_file()
