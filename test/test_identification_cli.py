"""Issue 11: ``rne_identify fit`` end to end on records of a simulated "true" arm7 (the nominal URDF with
scaled link parameters and friction): non-uniform stamps, 0.1 mrad quantisation, 1 % torque noise,
columns stored in another order than the model's."""
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import rne_control as rc
from rne_control.identification.cli import main
from rne_control.identification.parameters import model_with_parameters
from rne_control.identification.record import load_record, save_record
from test_identification_fit import true_parameters

ROOT = Path(__file__).parents[1]


def _record(path, model, truth, ex, T, seed):
    rng = np.random.default_rng(seed)
    t = np.cumsum(rng.uniform(0.8e-3, 1.2e-3, int(T / 1e-3)))
    q, qd, qdd = ex(t)
    tau = rc.inverse_dynamics(truth, q, qd, qdd)
    tau_meas = tau + 0.01 * np.sqrt((tau ** 2).mean(axis=0)) * rng.standard_normal(tau.shape)
    order = np.arange(model.n)[::-1]  # stored in reverse joint order: the loader must reorder
    q_meas = np.round(q / 1e-4) * 1e-4
    save_record(path, t, np.array(model.joint_names)[order], q_meas[:, order], tau_meas[:, order], "measured",
                tau_measured=tau_meas[:, order], model="urdf/arm7.urdf")
    return tau


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    d = tmp_path_factory.mktemp("ident")
    model = rc.load_model(str(ROOT / "urdf" / "arm7.urdf"))
    truth = model_with_parameters(model, true_parameters(model))
    bp = rc.base_parameters(model)
    ex = rc.excitation_trajectory(model, 10.0, 5, seed=0, base=bp, maxiter=5)
    ex2 = rc.excitation_trajectory(model, 8.0, 4, seed=3, base=bp, maxiter=0, restarts=1)
    _record(d / "fit.npz", model, truth, ex, 20.0, 1)
    _record(d / "check.npz", model, truth, ex2, 8.0, 2)
    return d, model


def test_record_round_trip(records):
    d, model = records
    rec = load_record(d / "fit.npz", model)
    assert rec.names == list(model.joint_names) and rec.effort_source == "measured"
    raw = np.load(d / "fit.npz")
    assert np.array_equal(rec.q[:, 0], raw["q"][:, -1])  # reordered to the model's joints
    with pytest.raises(rc.InputError, match="arm7_joint9|no data for joint"):
        with pytest.warns(UserWarning):  # the PUMA file warns about its published link-3 inertia
            puma = rc.load_model(str(ROOT / "config" / "puma560.yaml"))
        load_record(d / "fit.npz", puma)


def test_fit_writes_model_plots_and_cross_validates(records, capsys):
    d, model = records
    out = d / "arm7_identified.yaml"
    status = main(["fit", str(d / "fit.npz"), "--model", str(ROOT / "urdf" / "arm7.urdf"), "--out", str(out),
                   "--physical", "--cutoff", "15", "--validate", str(d / "check.npz")])
    text = capsys.readouterr().out
    assert status == 0, text
    assert "std dev" in text and "rel %" in text
    for f in ("arm7_identified.yaml", "arm7_identified.urdf", "arm7_identified_fit.png",
              "arm7_identified_validation.png"):
        assert (d / f).stat().st_size > 0, f
    assert (d / "arm7_identified_validation.png").read_bytes()[:4] == b"\x89PNG"
    loaded = rc.load_model(str(out))
    assert loaded.joint_names == model.joint_names
    m = re.search(r"all\s+([0-9.e+-]+)\s+([0-9.e+-]+)", text)
    nominal, identified = float(m.group(1)), float(m.group(2))
    assert identified < nominal / 5


def test_fit_refuses_inconsistent_and_bad_files(records, capsys, tmp_path):
    d, model = records
    status = main(["fit", str(d / "nothere.npz"), "--model", str(ROOT / "urdf" / "arm7.urdf"),
                   "--out", str(tmp_path / "x.yaml")])
    assert status == 2 and "cannot read the record" in capsys.readouterr().err
    status = main(["fit", str(d / "fit.npz"), "--model", str(ROOT / "config" / "puma560.yaml"),
                   "--out", str(tmp_path / "x.yaml")])
    assert status == 2 and "no data for joint" in capsys.readouterr().err


def test_console_script_help():
    out = subprocess.run([sys.executable, "-m", "rne_control.identification.cli", "fit", "--help"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "--physical" in out.stdout


def test_mismatched_robot_is_consistent_and_round_trips(tmp_path):
    """The demo's "true" robot: the PUMA's published link3 breaks the triangle inequality, so its nominal
    pi is refused by write_parameters (naming the link); mismatched_parameters makes every link a real body,
    adds the 2 kg payload, and the written DH-YAML loads back to the same pi."""
    import warnings

    from rne_control.examples.identification import mismatched_parameters
    from rne_control.identification.export import write_parameters
    from rne_control.identification.parameters import consistency_problems
    from rne_control.model.errors import InputError

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        puma = rc.load_model(str(Path(__file__).resolve().parents[1] / "config" / "puma560.yaml"))
    with pytest.raises(InputError, match="link3"):
        write_parameters(puma, rc.parameter_vector(puma), tmp_path / "nominal.yaml")
    pi = mismatched_parameters(puma)
    assert consistency_problems(puma, pi) == []
    nominal = rc.parameter_vector(puma)
    heavy = nominal[:60:10] > 0                                                   # base .. link5 with mass
    scale = pi[:60:10][heavy] / nominal[:60:10][heavy]
    assert heavy.sum() >= 3 and np.all((np.abs(scale - 1.0) >= 0.2 - 1e-12) & (np.abs(scale - 1.0) <= 0.4 + 1e-12))
    assert 0.6 * nominal[60] + 2.0 <= pi[60] <= 1.4 * nominal[60] + 2.0          # link6: scaled + 2 kg
    assert np.all(pi[70:].reshape(-1, 3)[:, 1:] > 0)                             # friction on every joint
    path = write_parameters(puma, pi, tmp_path / "true.yaml")[-1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        back = rc.parameter_vector(rc.load_model(str(path)))
    np.testing.assert_allclose(back, pi, rtol=1e-9, atol=1e-12)
