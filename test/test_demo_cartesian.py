"""``rne_demo --cartesian`` end to end (spawns rne_sim and rne_controller through the console scripts; arm7 in
cartesian_impedance, lockstep at 1 kHz): its printed figures against truths the demo does not compute:

* the stiffness per axis, a constant wrench over the deflection it leaves, against the commanded K (the
  controller's default [200, 200, 200] N/m, [20, 20, 20] N m/rad, which the demo sets);
* the step: the tool moves 0.3 m and 90 deg (the issue's step); the shaped path from rest is a minimum-jerk
  path of T = 1.875 x distance / limit, the longer of the two (here the rotation's: 1.875 x (pi/2) / 1 rad/s),
  whose peak speeds are 1.875 x distance / T: the angular one the limit itself, the linear one 0.191 m/s; the
  tool peaks within 10 % of them and never above 1.1 x max_cartesian_velocity, settles to 1 mm and 1 deg no
  sooner than its target gets there and within 1.5 s of the path's end, and ends at the target;
* sigma_min(J) stays at least twice singular_damping (0.05): the damped pseudo-inverse never acts;
* pressing with F_d = 10 N: the force on the plane in steady state, measured by rne_sim (~/contact_wrench,
  the plane's spring-damper on the tool, an independent measurement), within 2 % of 10 N; no contact before;
* the plot is written; combining --cartesian with another demo, or another robot, is refused.
"""
import math
import subprocess

import pytest

import ros_util

pytestmark = pytest.mark.nodes   # rne_demo starts its nodes (conftest.py: run again after a failure)

K = [200.0, 200.0, 200.0, 20.0, 20.0, 20.0]
V_MAX, W_MAX = 0.25, 1.0
STEP, ANGLE = 0.3, math.pi / 2
F_D = 10.0


def test_demo_cartesian(tmp_path, compiled_kernels):
    stdout, text, number = ros_util.run_demo(tmp_path, "--cartesian")

    # the stiffness per axis within 2 % of the commanded K (all six axes are pushed)
    for axis, k in zip(("x", "y", "z", "rot x", "rot y", "rot z"), K):
        F, e, k_meas = number(rf"^{axis}\s+([-\d.]+) N(?: m)?\s+([-\d.]+) m(?:m|rad)\s+([\d.]+) N")
        assert abs(F) > 0.1 and abs(e) > 1.0, text                  # really pushed and deflected
        assert abs(k_meas / k - 1.0) <= 0.02, (axis, k_meas, text)

    # the step: 0.3 m and 90 deg, sent as such and made by the tool
    d, a = number(r"^2\. Step of the target: ([\d.]+) m and ([\d.]+) deg")
    assert abs(d - STEP) < 1e-6 and abs(a - 90.0) < 1e-3, text
    assert "joint limits: yes" in stdout, text
    moved, turned = number(r"tool moved ([\d.]+) m and ([\d.]+) deg")
    assert abs(moved - STEP) < 2e-3 and abs(turned - 90.0) < 0.5, text
    T = max(1.875 * STEP / V_MAX, 1.875 * ANGLE / W_MAX)        # the minimum-jerk path from rest
    duration, = number(r"shaped path: ([\d.]+) s")
    assert abs(duration - T) < 1e-3, text
    v, w = number(r"peak tool speed: linear ([\d.]+) m/s .* angular ([\d.]+) rad/s")
    assert v <= 1.1 * V_MAX and w <= 1.1 * W_MAX, text
    assert abs(v / (1.875 * STEP / T) - 1.0) < 0.1 and abs(w / (1.875 * ANGLE / T) - 1.0) < 0.1, text
    coarse, fine = number(r"settling time from sending: to 2 % .* deg\) ([\d.]+) s; to 1 mm and 1 deg ([\d.]+) s")
    # the target is within 1 mm of its end from 0.9 T on (0.3 m (1 - s(u)) < 1 mm: u > 0.9)
    assert 0.85 * T <= coarse <= fine <= T + 1.5, text
    err_p, err_r = number(r"final error: ([\d.]+) mm, ([\d.]+) deg")
    assert err_p < 0.5 and err_r < 0.1, text
    clipped, = number(r"clipped in (\d+) of \d+ cycles")
    assert clipped == 0, text
    s_js, s_ctl = number(r"sigma_min\(J\) during the step: min ([\d.]+) \(joint states.*\), ([\d.]+) \(~/task_state\)")
    assert s_js > 0.1 and abs(s_ctl - s_js) < 1e-3, text
    s_ik, = number(r"sigma_min along it ([\d.]+)")
    assert s_ik > 0.1, text

    # pressing with 10 N: rne_sim's measurement of the force on the plane
    before, = number(r"before the press: largest contact force ([\d.]+) N")
    assert before == 0.0, text
    mean, lo, hi, _ = number(r"contact force on the plane \(rne_sim's ~/contact_wrench\), last [\d.]+ s: "
                             r"mean ([\d.]+) N \(([\d.]+)-([\d.]+) N\), ([-+\d.]+) %")
    assert abs(mean / F_D - 1.0) < 0.02 and F_D * 0.98 < lo <= hi < F_D * 1.02, text
    tangential, rotation = number(r"within ([\d.]+) mm of the target along it, ([\d.]+) deg of its orientation")
    assert tangential < 0.5 and rotation < 0.1, text


def test_demo_cartesian_refusals(tmp_path):
    for argv, why in ((["--cartesian", "--collision"], "different demos"),
                      (["--identify", "--cartesian"], "different demos"),
                      (["--cartesian", "--robot", "puma560"], "runs on arm7")):
        r = subprocess.run(ros_util.console_command("rne_demo") + argv + ["--output", str(tmp_path / "x.png")],
                           capture_output=True, text=True, timeout=60, cwd=tmp_path)
        assert r.returncode != 0 and why in r.stderr + r.stdout, (argv, r.stdout[-2000:], r.stderr[-2000:])
        assert not (tmp_path / "x.png").exists()
