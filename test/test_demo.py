"""rne_demo end to end, in real time, on the kinds of model beyond a tree (spawns rne_sim and rne_controller
through the console scripts), and on the Panda with its hand uncontrolled: it runs, reports its table and
writes its plot; and ``rne_demo --collision`` in lockstep (arm7 into a contact plane without and with the damp
reaction), whose printed figures are checked."""
import re
import subprocess

import pytest

import ros_util

pytestmark = pytest.mark.nodes   # rne_demo starts its nodes (conftest.py: run again after a failure)


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


def test_demo_collision(tmp_path, compiled_kernels):
    """rne_demo --collision (arm7, lockstep): a constant wrench at twice a threshold is detected within
    ln 2 / K_O + 2 cycles of its onset; the contact is detected in both runs, and with the damp reaction the
    arm presses less and, at the end, not at all, while without it computed torque keeps pressing; r agrees
    with the true external torque J_lin^T F (J_lin of the flange, F from rne_sim's ~/contact_wrench) in steady
    contact; no false detection in free motion."""
    import math

    stdout, text, number = ros_util.run_demo(tmp_path, "--collision")

    k_o, dt = 50.0, 1e-3
    bound_ms = 1e3 * (math.log(2) / k_o + 2 * dt)
    # the constant wrench: at least twice the threshold, detected within the bound of its onset
    ratio, = number(r"joint torque ([\d.]+)x the threshold on its most loaded joint")
    assert ratio >= 2.0 - 1e-6, text
    cycles, delay = number(r"^  wrench detection delay: (\d+) cycles = ([\d.]+) ms")
    assert 0 < delay <= bound_ms + 1e-6 and cycles == round(delay), text
    err, = number(r"r against J\^T F after 5 / K_O: largest error ([\d.]+) %")
    assert err < 3.0, text
    # the contact: detected in both runs; the reaction lowers the peak and ends the pressing
    runs = {}
    for label in ("none", "damp"):
        d, peak, final = number(rf"^reaction {label}: contact detection delay (\d+) cycles = [\d.]+ ms; "
                                r"peak contact force ([\d.]+) N; final contact force ([\d.]+) N; ~/collision went true")
        free, = number(rf"^reaction {label}\s+[\d.]+\s+[\d.]+\s+\d+ cyc \w+\s+\d+ cyc\s+[\d.]+\s+[\d.]+\s+([\d.]+)%")
        assert 0 < d < 100 and free < 2.0, text        # detected within 0.1 s; |r| <= 2 % of the limits before
        runs[label] = peak, final
    assert runs["none"][1] > 10.0, text                 # computed torque keeps pressing
    assert runs["damp"][0] < 0.8 * runs["none"][0], text
    assert runs["damp"][1] < 0.1 * runs["none"][1], text
    # r against the true external torque in steady contact
    err, = number(r"^r vs true external torque, steady contact \(reaction none, .*largest error ([\d.]+) %")
    assert err < 3.0, text
