"""rne_demo end to end, in real time, on the kinds of model beyond a tree (spawns rne_sim and rne_controller
through the console scripts), and on the Panda with its hand uncontrolled: it runs, reports its table and
writes its plot."""
import re
import subprocess

import pytest

import ros_util


@pytest.mark.parametrize("robot", ["palletizer", "gough_stewart", "arm7_sea", "panda"])
def test_demo_runs(robot, tmp_path, compiled_kernels):
    out = tmp_path / f"{robot}.png"
    r = subprocess.run(ros_util.console_command("rne_demo") + ["--robot", robot, "--output", str(out)],
                       capture_output=True, text=True, timeout=240, cwd=tmp_path)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert out.exists() and out.stat().st_size > 10000
    assert "tracks" in r.stdout and "better than" in r.stdout, r.stdout[-3000:]
    # the better run's error is small in absolute terms (milli-units: mrad or mm)
    rows = re.findall(r"^all\s+m\w+\s+([\d.]+)\s+[\d.]+\s+([\d.]+)\s+[\d.]+", r.stdout, re.M)
    assert rows, r.stdout[-3000:]
    for a, b in rows:
        assert min(float(a), float(b)) < 10.0, r.stdout[-3000:]
