"""Issue 11: ``rne_identify run`` against the real nodes: rne_sim (lockstep) and rne_controller in
computed-torque mode on arm7. The record must hold the excitation the controller tracked, with the
simulator's applied efforts as measured efforts, and be good enough to fit: the simulated robot is the
nominal model, so the identified model predicts the recorded torques (R^2) and the fit is consistent
with the nominal base parameters."""
import time

import numpy as np

import rne_control as rc
import ros_util
from rne_control.identification.record import load_record

CFG = ros_util.config("arm7_controller.yaml")
ARGS = ["--period", "4", "--harmonics", "3", "--periods", "2", "--maxiter", "30"]


def test_run_records_an_excitation(ros_procs, tmp_path):
    out = tmp_path / "arm7_run.npz"
    ros_procs.start("rne_sim", params_file=CFG, params={"lockstep": True}, log_name="rne_sim")
    ros_procs.start("rne_controller", params_file=CFG, params={"use_sim_time": True}, log_name="rne_controller")
    run = ros_procs.start("rne_identify", args=["run", "--out", str(out), *ARGS], params_file=CFG,
                          log_name="rne_identify")
    deadline = time.monotonic() + 600
    while run.alive() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert run.returncode == 0, ros_procs.logs()
    assert "100.0 %" in run.log() and "effort 'measured'" in run.log()

    model = rc.load_model(str(ros_util.CONFIG_DIR.parent / "urdf" / "arm7.urdf"))
    rec = load_record(out, model)
    assert rec.effort_source == "measured"
    assert 7000 <= len(rec.t) <= 8100 and rec.t[-1] > 7.9  # 8 s of 1 kHz joint states
    # it is the excitation (recomputed with the same arguments), tracked by computed torque
    ex = rc.excitation_trajectory(model, 4.0, 3, seed=0, maxiter=30)
    q_des = ex(rec.t)[0]
    assert np.abs(rec.q - q_des).max() < 0.05
    assert np.all(np.isfinite(rec.tau_commanded[10:]))
    # the record identifies the simulated robot
    t, q, qd, qdd, tau = rc.differentiate(rec.t, rec.q, rec.tau, cutoff_hz=15.0, decimate=10)
    res = rc.identify(model, q, qd, qdd, tau, min_speed=0.1 * np.abs(qd).max(axis=0))
    assert res.r2.min() > 0.99
