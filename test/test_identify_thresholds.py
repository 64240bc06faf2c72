"""``rne_identify thresholds`` (rne_control.control.thresholds) against an independent truth.

Free-motion runs of a "true" robot (the nominal model with its links scaled by 0.8-1.2 and friction on every
joint) tracking a known trajectory by computed torque with the nominal model, integrated by RK4 on the
library's forward dynamics (the articulated-body algorithm), the torque held per 1-ms sample as a
controller's is. What the observer must see is the nominal model's error along the motion,
e = ID_nominal(q, qd, qdd) - tau with qdd the true robot's acceleration (plus any external torque), low-passed
at K_O (dr/dt = K_O (e - r), integrated exactly per RK4 substep): no observer code. The thresholds must be
max(margin * max|r_true|, floor_fraction * effort_limit) over t >= 5/K_O. Robots: the project's 7-DOF arm
(config/arm7.yaml) and the UR5 of the example-robot-data wheel.
"""
import math
import os
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pytest
import yaml

import rne_control as rc
from rne_control.control.thresholds import collision_thresholds, controlled_joints, yaml_float
from rne_control.identification.parameters import model_with_parameters
from rne_control.identification.record import load_record, save_record
from rne_control.ros.identify.cli import main
from ros_util import console_command

ROOT = Path(__file__).parents[1]
ERD = Path(__import__("sysconfig").get_paths()["purelib"]) / "cmeel.prefix" / "share" / "example-robot-data" / "robots"
DT, SUB = 1e-3, 4
GAIN = 50.0
SKIP = 5.0 / GAIN
TOL = 0.03          # relative agreement of the observer's max |r| with the truth's


def _load(path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rc.load_model(str(path), **kw)


def true_robot(model, seed=0):
    """The nominal model with every link's parameters scaled by U(0.8, 1.2) (a scaled body stays physically
    consistent) and viscous and Coulomb friction on every joint."""
    rng = np.random.default_rng(seed)
    pi = rc.parameter_vector(model).copy()
    nl = len(model.link_names)
    for li in range(nl):
        pi[10 * li:10 * li + 10] *= rng.uniform(0.8, 1.2)
    fr = pi[10 * nl:].reshape(model.n, 3)
    fr[:, 1] += rng.uniform(0.2, 0.5, model.n)     # viscous, N m s/rad
    fr[:, 2] += rng.uniform(0.2, 0.5, model.n)     # Coulomb, N m
    return model_with_parameters(model, pi)


def simulate(nominal, truth, seconds, amp, q0=0.3, ext=None, kp=400.0, kd=40.0, dither=0.0, seen=None):
    """(t, q, qd, tau, r_true) per 1-ms sample (tau: the torque held since the previous sample): the true robot follows q0 + amp (1 - cos(w_j t)) by computed
    torque with the nominal model (tau held over the sample), plus a random ``dither`` (N m, uniform, new each
    sample). ``ext(t)``: external joint torques. r_true: e low-passed at K_O, e = ID_seen(q, qd, qdd_true) - tau
    (``seen``: the observer's model, default the nominal), qdd_true the true robot's under tau + ext."""
    n = nominal.n
    seen = nominal if seen is None else seen
    rng = np.random.default_rng(7)
    w = 2 * np.pi * (0.6 + 0.15 * np.arange(n))
    q = np.full(n, q0, dtype=float)
    qd = np.zeros(n)
    r = np.zeros(n)
    h = DT / SUB
    decay = math.exp(-GAIN * h)
    rows = []
    tau = np.zeros(n)
    for k in range(int(round(seconds / DT)) + 1):
        held = tau   # recorded with state k: the torque held over [t_{k-1}, t_k] (as rne_identify run records)
        t = k * DT
        qr, qdr, qddr = q0 + amp * (1 - np.cos(w * t)), amp * w * np.sin(w * t), amp * w ** 2 * np.cos(w * t)
        tau = rc.inverse_dynamics(nominal, q, qd, qddr + kp * (qr - q) + kd * (qdr - qd))
        tau = tau + dither * rng.uniform(-1.0, 1.0, n)
        rows.append((t, q.copy(), qd.copy(), held, r.copy()))
        for s in range(SUB):
            ts = t + s * h
            push = tau + (ext(ts) if ext is not None else 0.0)

            def f(q_, qd_):
                return qd_, rc.forward_dynamics(truth, q_, qd_, push)
            k1 = f(q, qd)
            e = rc.inverse_dynamics(seen, q, qd, k1[1]) - tau
            r = decay * r + (1 - decay) * e
            k2 = f(q + h / 2 * k1[0], qd + h / 2 * k1[1])
            k3 = f(q + h / 2 * k2[0], qd + h / 2 * k2[1])
            k4 = f(q + h * k3[0], qd + h * k3[1])
            q = q + h / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
            qd = qd + h / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
    t, q, qd, tau, r = (np.array(x) for x in zip(*rows))
    return t, q, qd, tau, r


def truth_peak(run, edge=0.0):
    """max |r_true| after the observer's transient; ``edge``: s left out at each end (differentiated
    velocities: the replay starts ``edge`` after the differentiated grid's first stamp, t[1])."""
    t, r = run[0], run[4]
    start, end = (t[0] + SKIP, t[-1]) if not edge else (t[1] + edge + SKIP, t[-2] - edge)
    return np.abs(r[(t >= start - 1e-9) & (t <= end + 1e-9)]).max(axis=0)


def write(path, model, run, qd=True, effort_source="commanded", tau=None, **extra):
    t, q, qdot, tau_c = run[:4]
    tau_c = tau_c if tau is None else tau
    save_record(path, t, model.joint_names, q, tau_c, effort_source,
                **dict(dict(qd=qdot if qd else np.full(q.shape, np.nan), tau_commanded=tau_c), **extra))
    return str(path)


def run_cli(capsys, record, model_path, *options):
    status = main(["thresholds", str(record), "--model", str(model_path), *options])
    out, err = capsys.readouterr()
    return status, out, err


def parsed(out, node="rne_controller"):
    doc = yaml.safe_load(out)
    assert list(doc) == [node] and list(doc[node]) == ["ros__parameters"]
    assert list(doc[node]["ros__parameters"]) == ["collision"]
    assert list(doc[node]["ros__parameters"]["collision"]) == ["thresholds"]
    values = doc[node]["ros__parameters"]["collision"]["thresholds"]
    assert all(isinstance(v, float) for v in values), values
    return np.array(values)


def expected(model, peak, margin=1.5, floor_fraction=0.02):
    floor = floor_fraction * np.asarray(model.effort_limits, float)
    return np.maximum(margin * peak, floor), np.where(margin * peak >= floor, "margin", "floor")


@pytest.fixture(scope="module")
def arm7():
    path = ROOT / "config" / "arm7.yaml"
    model = _load(path)
    truth = true_robot(model)
    return path, model, truth, simulate(model, truth, 1.5, 0.25)


@pytest.fixture(scope="module")
def arm7_record(arm7, tmp_path_factory):
    path, model, truth, run = arm7
    return write(tmp_path_factory.mktemp("thr") / "free.npz", model, run)


def test_arm7_thresholds_are_margin_times_the_true_residual(arm7, arm7_record, capsys, tmp_path):
    """The default settings: every joint's threshold is max(1.5 max|r_true|, 2 % of its effort limit), the
    rule named per joint in the header; --out holds the same file; the stderr table lists every joint."""
    path, model, truth, run = arm7
    peak = truth_peak(run)
    assert peak.min() > 0.05                   # the mismatch is felt on every joint
    out_file = tmp_path / "sub" / "thresholds.yaml"
    status, out, err = run_cli(capsys, arm7_record, path, "--out", str(out_file))
    assert status == 0, err
    got = parsed(out)
    want, rules = expected(model, peak)
    assert len(got) == model.n
    np.testing.assert_allclose(got, want, rtol=TOL)
    assert "margin" in rules                  # the large residuals set it here (the floor: below)
    assert out_file.read_text() == out
    header = [ln for ln in out.splitlines() if ln.startswith("#")]
    assert any(arm7_record in ln for ln in header) and any(str(path) in ln for ln in header)
    assert any("K_O: 50 1/s" in ln for ln in header) and any("margin: 1.5" in ln for ln in header)
    assert any("floor: 2 % of the effort limit" in ln for ln in header)
    for j, rule in zip(model.joint_names, rules):
        line = next(ln for ln in header if ln.split()[1:2] == [j])
        assert line.rstrip().endswith(rule), line
        assert math.isclose(float(line.split()[2]), peak[list(model.joint_names).index(j)], rel_tol=TOL)
        assert j in err
    assert out_file.name in err


def test_floor_sets_the_threshold_where_it_exceeds_the_margin(arm7, arm7_record, capsys):
    """--floor-fraction between two joints' 1.5 max|r| / effort limit: the joints below take the floor, the
    others the margin rule, each named so."""
    path, model, truth, run = arm7
    peak = truth_peak(run)
    ratio = np.sort(1.5 * peak / np.asarray(model.effort_limits))
    gaps = ratio[1:] / ratio[:-1]
    i = int(np.argmax(gaps[1:-1])) + 1          # a gap with joints on both sides
    assert gaps[i] > 1.2
    ff = math.sqrt(ratio[i] * ratio[i + 1])
    status, out, err = run_cli(capsys, arm7_record, path, "--floor-fraction", repr(ff))
    assert status == 0, err
    want, rules = expected(model, peak, floor_fraction=ff)
    assert {"margin", "floor"} <= set(rules)
    np.testing.assert_allclose(parsed(out), want, rtol=TOL)
    header = [ln for ln in out.splitlines() if ln.startswith("#")]
    for j, rule in zip(model.joint_names, rules):
        assert next(ln for ln in header if ln.split()[1:2] == [j]).rstrip().endswith(rule)


def test_tiny_motion_gets_the_floor_everywhere(arm7, capsys, tmp_path):
    """The exact model and a 1-mrad motion under a commanded torque dithered by +-5 N m per sample: r is ~0,
    every threshold is 2 % of the effort limit (and written as a float: 1.74 and 0.24 N m); a margin of 3
    changes nothing. The torque in force over [t_k-1, t_k] is sample k's: read one sample off, the
    dither would show as a residual of K_O T |tau_k - tau_k-1| ~ 0.5 N m."""
    path, model, _, _ = arm7
    run = simulate(model, model, 0.6, 1e-3, dither=5.0)
    assert truth_peak(run).max() < 1e-3
    rec = write(tmp_path / "tiny.npz", model, run)
    assert collision_thresholds(model, load_record(rec, model)).max_residual.max() < 0.01
    for margin in ("1.5", "3"):
        status, out, err = run_cli(capsys, rec, path, "--margin", margin)
        assert status == 0, err
        np.testing.assert_allclose(parsed(out), 0.02 * np.asarray(model.effort_limits), rtol=1e-9)
        assert all(ln.rstrip().endswith("floor") for ln in out.splitlines() if ln.startswith("# arm7_joint"))


def test_driver_adds_gravity(arm7, arm7_record, capsys, tmp_path):
    """A record of the commanded efforts without g(q) (a driver adding gravity itself): with
    --driver-adds-gravity the thresholds are those of the full efforts; without it, far off."""
    path, model, truth, run = arm7
    g = rc.gravity_torques(model, run[1])
    tau_no_g = run[3] - np.vstack([g[:1], g[:-1]])   # the command at sample k answered state k-1
    rec = write(tmp_path / "nog.npz", model, run, tau=tau_no_g)
    status, out, err = run_cli(capsys, rec, path, "--driver-adds-gravity")
    assert status == 0, err
    status, ref, err = run_cli(capsys, arm7_record, path)
    np.testing.assert_allclose(parsed(out), parsed(ref), rtol=1e-5)
    a = collision_thresholds(model, load_record(rec, model), driver_adds_gravity=True)
    b = collision_thresholds(model, load_record(arm7_record, model))
    np.testing.assert_allclose(a.max_residual, b.max_residual, rtol=1e-9)
    status, out, _ = run_cli(capsys, rec, path)
    assert status == 0 and np.abs(parsed(out) - parsed(ref)).max() > 5.0


def test_external_pulse_raises_the_loaded_joints(arm7, arm7_record, capsys, tmp_path):
    """An external torque pulse on joints 2 and 4 (20 and -12 N m for 0.2 s) during the run: their
    thresholds follow the true residual, which now includes the pulse, and exceed the free-motion ones.
    A 10 N m pulse on joint 1 over the observer's transient (0-0.06 s) counts only by its tail after
    5/K_O = 0.1 s (r reached 8.5 N m), as in the truth over t >= 0.1 s."""
    path, model, truth, free = arm7
    pulse, early = np.zeros(model.n), np.zeros(model.n)
    pulse[[1, 3]] = [20.0, -12.0]
    early[0] = 10.0
    run = simulate(model, truth, 1.5, 0.25, ext=lambda t: pulse if 0.6 <= t < 0.8 else early if t < 0.06 else 0.0)
    reached = np.abs(run[4][:100, 0]).max()
    assert reached > 8.0
    rec = write(tmp_path / "pulse.npz", model, run)
    status, out, err = run_cli(capsys, rec, path)
    assert status == 0, err
    got = parsed(out)
    np.testing.assert_allclose(got, expected(model, truth_peak(run))[0], rtol=TOL)
    status, ref, _ = run_cli(capsys, arm7_record, path)
    ref = parsed(ref)
    assert got[1] > ref[1] + 0.5 * 1.5 * 20.0 and got[3] > ref[3] + 0.5 * 1.5 * 12.0
    assert got[0] < 0.5 * 1.5 * reached


def test_differentiated_velocities(arm7, capsys, tmp_path):
    """The same run without qd (NaN, as a driver that publishes none): q differentiated as fit does (10 Hz),
    0.2 s left out at each end; the thresholds follow the truth over that window. Half the joints' qd
    recorded: all of them differentiated, the same thresholds."""
    path, model, truth, run = arm7
    rec = write(tmp_path / "noqd.npz", model, run, qd=False)
    status, out, err = run_cli(capsys, rec, path)
    assert status == 0, err
    assert "q differentiated" in out and "q differentiated" in err
    want = expected(model, truth_peak(run, edge=0.2))[0]          # 2 / cutoff left out at each end
    np.testing.assert_allclose(parsed(out), want, rtol=TOL)
    qd = run[2].copy()
    qd[:, ::2] = np.nan
    rec = str(tmp_path / "halfqd.npz")
    save_record(rec, run[0], model.joint_names, run[1], run[3], "commanded", qd=qd)   # tau: commanded, no key
    status, half, err = run_cli(capsys, rec, path)
    assert status == 0, err
    assert "NaN or inf in 4 of 7 joints" in half and "torque 'tau'" in half
    np.testing.assert_array_equal(parsed(half), parsed(out))   # every joint differentiated, not a mix


def test_joint_subset_order_and_node(arm7, arm7_record, capsys):
    """--joints picks and orders the thresholds (the same values as the whole arm's); --node names the
    parameter file's node."""
    path, model, _, _ = arm7
    status, full, _ = run_cli(capsys, arm7_record, path)
    full = parsed(full)
    pick = ["arm7_joint6", "arm7_joint2", "arm7_joint4"]
    status, out, err = run_cli(capsys, arm7_record, path, "--joints", *pick, "--node", "/arm/rne_controller")
    assert status == 0, err
    idx = [list(model.joint_names).index(j) for j in pick]
    np.testing.assert_allclose(parsed(out, "/arm/rne_controller"), full[idx], rtol=1e-9)


def test_record_of_the_controlled_joints_only(capsys, tmp_path):
    """A record of joints 1-6 only (rne_identify run with the controller's joints): replayed on the model
    reduced to them, joint 7 locked at 0, as rne_identify run loads it; a note says so."""
    path = ROOT / "config" / "arm7.yaml"
    pick = [f"arm7_joint{i}" for i in range(1, 7)]
    model = _load(path, joints=pick)
    run = simulate(model, true_robot(model, seed=3), 0.8, 0.2)
    rec = write(tmp_path / "six.npz", model, run)
    status, out, err = run_cli(capsys, rec, path, "--joints", *pick)
    assert status == 0, err
    assert "reduced" in err and "arm7_joint7" in err
    np.testing.assert_allclose(parsed(out), expected(model, truth_peak(run))[0], rtol=TOL)
    status, _, err = run_cli(capsys, rec, path)             # without --joints: the record lacks joint 7
    assert status == 2 and "arm7_joint7" in err


def test_ur5_console_script(capsys, tmp_path):
    """The UR5 of example-robot-data through the installed console script (a subprocess), and the same in
    process."""
    path = ERD / "ur_description" / "urdf" / "ur5_robot.urdf"
    model = _load(path)
    run = simulate(model, true_robot(model, seed=1), 1.0, 0.2, q0=np.array([0.0, -1.2, 1.2, -1.5, -1.5, 0.3]))
    rec = write(tmp_path / "ur5.npz", model, run)
    want = expected(model, truth_peak(run))[0]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT)] + [p for p in os.environ.get(
        "PYTHONPATH", "").split(os.pathsep) if p]))
    proc = subprocess.run(console_command("rne_identify") + ["thresholds", rec, "--model", str(path),
                                                             "--out", str(tmp_path / "ur5.yaml")],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    got = parsed(proc.stdout)
    assert len(got) == 6 and "shoulder_lift_joint" in proc.stderr
    np.testing.assert_allclose(got, want, rtol=TOL)
    status, out, err = run_cli(capsys, rec, path)
    assert status == 0 and out == proc.stdout


def test_no_effort_limit_and_friction(capsys, tmp_path):
    """The two-link arm with friction in its model and joint2's effort limit removed: joint2's threshold is
    1.5 max|r_true|, rule "margin, no effort limit", and stderr warns naming it. The observer subtracts the
    model's friction; with --no-friction the truth is the error of the model without it."""
    doc = yaml.safe_load((ROOT / "config" / "two_link.yaml").read_text())
    del doc["links"][1]["effort_limit"]
    for link in doc["links"]:
        link.update(viscous=0.8, coulomb=1.5)
    path = tmp_path / "two_link.yaml"
    path.write_text(yaml.safe_dump(doc))
    model = _load(path)
    assert not np.isfinite(model.effort_limits[1])
    pi = rc.parameter_vector(model).copy()
    pi[-3 * model.n:].reshape(model.n, 3)[:, 1:] = 0.0
    frictionless = model_with_parameters(model, pi)
    truth = true_robot(model, seed=2)
    for options, seen in (([], model), (["--no-friction"], frictionless)):
        run = simulate(model, truth, 0.8, 0.2, seen=seen)
        rec = write(tmp_path / "two.npz", model, run)
        status, out, err = run_cli(capsys, rec, path, "--floor-fraction", "0.01", *options)
        assert status == 0, err
        got = parsed(out)
        peak = truth_peak(run)
        np.testing.assert_allclose(got, np.maximum(1.5 * peak, [0.8, 0.0]), rtol=TOL)
        assert "warning" in err and "'joint2' has no finite effort limit" in err
        assert "margin, no effort limit" in out
        assert ("friction off" in out) == bool(options)
    assert not np.allclose(peak, truth_peak(simulate(model, truth, 0.8, 0.2)), rtol=0.2)


def test_default_joints_leave_out_mimic_joints():
    """The UR5 with a Robotiq 2F-85: the default controlled joints are the arm's and the gripper's leader,
    not its mimic joints, as the controller's plant picks them; a mimic joint is refused by name."""
    model = _load(ROOT / "test" / "urdf" / "ur5_robotiq_2f85.urdf")
    assert controlled_joints(model) == list(model.active_joint_names)
    assert controlled_joints(model)[-1] == "finger_joint" and len(controlled_joints(model)) == 7
    with pytest.raises(ValueError, match="right_outer_knuckle_joint"):
        controlled_joints(model, ["shoulder_pan_joint", "right_outer_knuckle_joint"])
    from rne_control.control import make_plant
    assert list(make_plant(model, ["shoulder_pan_joint", "elbow_joint"]).joint_names) == \
        controlled_joints(model, ["shoulder_pan_joint", "elbow_joint"])


def test_yaml_float():
    assert [yaml_float(x) for x in (12.0, 1.5, 1e-5, 2e20, 0.123456789)] == \
        ["12.0", "1.5", "1.0e-05", "2.0e+20", "0.123457"]
    assert yaml.safe_load("[" + ", ".join(yaml_float(x) for x in (12.0, 1e-5, 2e20)) + "]") == [12.0, 1e-5, 2e20]


@pytest.mark.parametrize("case, options, message", [
    ("no_q", [], "lacks the key(s) ['q']"),
    ("commanded", ["--torque-source", "measured"], "no 'tau_measured'"),
    ("nan_measured", ["--torque-source", "measured"], "'tau_measured' is NaN or inf for joint 'arm7_joint1'"),
    ("measured_only", [], "no 'tau_commanded'"),
    ("t_back", [], "'t' must be strictly increasing (t[101]"),
    ("commanded", ["--gain", "1000"], "--gain 1000 1/s times the record's largest sample interval 0.001 s"),
    ("commanded", ["--joints", "arm7_joint1", "wrist_9"], "['wrist_9'] are not joints of model"),
    ("commanded", ["--joints", "arm7_joint1", "arm7_joint1"], "more than once"),
    ("commanded", ["--margin", "0.9"], "--margin must be >= 1 (got 0.9)"),
    ("commanded", ["--floor-fraction", "-0.01"], "--floor-fraction must be >= 0"),
    ("commanded", ["--torque-source", "measured", "--driver-adds-gravity"], "--driver-adds-gravity applies"),
    ("short", [], "nothing is left after the observer's transient of 5/K_O = 0.1 s"),
    ("missing", [], "cannot read the record"),
])
def test_bad_input_exits_2_naming_it(arm7, case, options, message, capsys, tmp_path):
    path, model, _, run = arm7
    t, q, qd, tau, _ = run
    rec = tmp_path / f"{case}.npz"
    names = model.joint_names
    if case == "no_q":
        np.savez(rec, t=t, names=np.array(names), tau=tau, effort_source="commanded")
    elif case == "commanded":
        write(rec, model, run)
    elif case == "nan_measured":
        write(rec, model, run, tau_measured=np.full(q.shape, np.nan))
    elif case == "measured_only":
        save_record(rec, t, names, q, tau, "measured", tau_measured=tau)
    elif case == "t_back":
        t2 = t.copy()
        t2[101] = t2[100]
        save_record(rec, t2, names, q, tau, "commanded", qd=qd)
    elif case == "short":
        save_record(rec, t[:50], names, q[:50], tau[:50], "commanded", qd=qd[:50])
    status, out, err = run_cli(capsys, rec, path, *options)
    assert status == 2 and message in err, err
    assert out == ""


def test_fit_cli_points_to_the_console_script(capsys):
    from rne_control.identification import cli
    assert cli.main(["thresholds", "x.npz", "--model", "m.yaml"]) == 2
    assert "rne_identify console script" in capsys.readouterr().err
