"""``rne_demo --identify``: computed torque on a robot whose parameters differ from the controller's
model, before and after identifying them with ``rne_identify``.

1. ``rne_sim`` simulates a "true" robot (rne_control.identification.mismatch.mismatched_parameters: links
   1 +/- 20-40 %, a 2 kg payload on the last link, viscous and Coulomb friction on every joint), written
   as ``<stem>_true.yaml``; ``rne_controller`` runs computed torque with ``friction_compensation: true``
   on the nominal model of the robot's configuration.
2. The test trajectory (out and back, as in the other demos) is tracked: run "nominal model". Its joint
   states, with the simulator's applied efforts, are the cross-validation record ``<stem>_test.npz``.
3. ``rne_identify run`` records an excitation trajectory (``<stem>_excitation.npz``), tracked by the same
   controller; ``rne_identify fit --physical --validate <stem>_test.npz`` writes ``<stem>_identified.yaml``
   (+ ``.urdf`` for a URDF robot), ``<stem>_identified_fit.png`` and ``<stem>_identified_validation.png``.
4. ``rne_controller`` restarts with ``model_file: <stem>_identified.yaml`` and the same gains; the robot
   returns to the start and tracks the test trajectory again: run "identified model".

It prints the tracking table (and how many times better the identified model tracks), the torque
prediction error of both models on the test trajectory, and writes the tracking plot. ``--lockstep``
runs the simulator in lockstep with the controller (sim time, deterministic), as the tests do.

It runs on the PUMA 560. On arm7 the light wrist, which has no rotor inertia in its model, sticks under the
true robot's Coulomb friction: computed torque with the nominal model does not move it, so the excitation
does not excite it (``rne_identify run`` warns) and the fit is wrong for that joint.
"""
from __future__ import annotations

import re
import tempfile
import time
from pathlib import Path

import numpy as np

from ...identification.export import write_parameters
from ...identification.mismatch import mismatched_parameters
from ...identification.record import save_record
from ..paths import resolve_model_file
from ..process import Spawned, console
from .motions import out_and_back
from .node import DemoNode, spawn, wait_running
from .report import plot, print_report
from .session import Session, log, phase, return_to
from .robots import demo_setup

SERIAL = ("puma560",)
EXCITATION = ["--period", "5", "--harmonics", "4", "--periods", "2", "--maxiter", "40"]


def _true_model_file(model, out):
    return write_parameters(model, mismatched_parameters(model), out)[-1]


def _save_test_record(res, joints, path, model_file):
    t = res["t_stamp"]
    keep = np.r_[True, np.diff(t) > 0]   # a state republished with its stamp
    save_record(path, t[keep], joints, res["q"][keep], res["tau"][keep], "measured",
                tau_measured=res["tau"][keep], model=model_file)


def _run_tool(argv, logdir, name, timeout):
    p = Spawned(name, console("rne_identify") + argv, logdir)
    t0 = time.monotonic()
    while p.alive() and time.monotonic() - t0 < timeout:
        time.sleep(0.2)
    code = p.stop()
    text = p.log_path.read_text(errors="replace")
    if code != 0:
        raise RuntimeError(f"rne_identify {argv[0]} exited with {code}:\n{text[-3000:]}")
    return text


def run(args, spec, cfg_path, cfg):
    """The identification demo (see the module docstring); returns the exit code."""
    ctl_cfg, _, joints, model = demo_setup(args, cfg, "--identify", SERIAL, "the true robot")
    model_file = str(resolve_model_file(ctl_cfg["model_file"]))

    t_begin = time.monotonic()
    out = Path(args.output).resolve()
    stem = out.with_suffix("")
    files = {k: Path(f"{stem}_{k}") for k in ("true.yaml", "test.npz", "excitation.npz", "identified.yaml")}
    tmp = tempfile.mkdtemp(prefix="rne_demo_")
    true_file = _true_model_file(model, files["true.yaml"])
    log(f"true robot written to {true_file} (links 1 +/- 20-40 %, 2 kg payload, friction on every joint)")
    ctl = {"mode": "computed_torque", "friction_compensation": True}
    sim = {"model_file": str(true_file)}
    if args.lockstep:
        ctl["use_sim_time"], sim["lockstep"] = True, True
    with Session() as session:
        procs = session.procs
        procs.append(spawn("rne_sim", cfg_path, tmp, sim))
        procs.append(spawn("rne_controller", cfg_path, tmp, ctl))
        dn = session.dn = DemoNode(joints, sim_time=args.lockstep)
        wait_running(dn, procs)
        q0 = dn.last_state[1].copy()
        f = out_and_back(q0, np.asarray(spec["amp"], float), spec["T"])
        results = [phase(dn, "nominal model", f, spec["T"])]
        _save_test_record(results[0], joints, files["test.npz"], model_file)

        log("rne_identify run: recording an excitation trajectory")
        ctl_files = [x for f in procs[-1].params_files for x in ("--params-file", f)]
        rec = _run_tool(["run", "--out", str(files["excitation.npz"]), *EXCITATION, "--ros-args", *ctl_files],
                        tmp, "rne_identify_run", 600)
        print("\n".join(x for x in rec.splitlines() if "tracking" in x or "warning" in x))
        log("rne_identify fit --physical: fitting the base parameters")
        fit = _run_tool(["fit", str(files["excitation.npz"]), "--model", model_file, "--out",
                         str(files["identified.yaml"]), "--physical", "--cutoff", "10", "--decimate", "4",
                         "--validate", str(files["test.npz"])], tmp, "rne_identify_fit", 600)
        print(fit[fit.index("cross-validation"):] if "cross-validation" in fit else fit[-2000:])

        procs.pop().stop()
        procs.append(spawn("rne_controller", cfg_path, tmp, dict(ctl, model_file=str(files["identified.yaml"])), 1))
        wait_running(dn, procs, dn.ncmd)
        log(f"restarted rne_controller with model_file {files['identified.yaml']}")
        return_to(dn, q0)
        results.append(phase(dn, "identified model", f, spec["T"]))

        print_report(results, joints, None, (), dn.diag)
        e = [float(np.sqrt(np.mean(np.square(r["err"])))) for r in results]
        m = re.search(r"^\s+all\s+(\S+)\s+(\S+)", fit[fit.find("cross-validation"):], re.M)
        print(f"computed torque RMS error: nominal model {1e3 * e[0]:.3f} mrad, identified model "
              f"{1e3 * e[1]:.3f} mrad: {e[0] / max(e[1], 1e-15):.1f}x better (goal: 5x)")
        if m:
            print(f"torque prediction RMS error on the test trajectory: nominal {m.group(1)} N m, "
                  f"identified {m.group(2)} N m")
        plot(results, joints, out, f"{args.robot}: computed torque with the nominal vs the identified model")
        log(f"plots: {out}, {stem}_identified_fit.png, {stem}_identified_validation.png")
        log(f"done in {time.monotonic() - t_begin:.1f} s")
    return session.code
