"""``rne_identify fit``: from a recorded trajectory to an identified model file.

    rne_identify fit data.npz --model robot.urdf --out identified.yaml [--physical] [--validate other.npz]

1. loads the record (rne_control.identification.record) and the model;
2. differentiates (resampling, Butterworth filtfilt, central differences, parallel filtering, decimation);
3. fits the base parameters (WLS by default) and prints them with their standard deviations;
4. writes the model (DH-YAML, or URDF + sidecar YAML) unless it is physically inconsistent;
5. saves ``<out>_fit.png``: measured against predicted torque per joint;
6. with ``--validate``, predicts the torques of a second record with the nominal and the identified model,
   prints both RMS errors per joint and saves ``<out>_validation.png``.

Exit status: 0 on success, 2 for bad input or a model it refuses to write.
"""
import argparse
import os
import sys
import warnings

import numpy as np

from ..dynamics import inverse_dynamics
from ..model import load_model
from .differentiate import differentiate
from .identify import identify
from .record import load_record


def _prepare(path, model, args):
    rec = load_record(path, model)
    fs = 1.0 / float(np.median(np.diff(rec.t)))
    decimate = args.decimate or max(1, int(fs / (5.0 * args.cutoff)))
    t, q, qd, qdd, tau = differentiate(rec.t, rec.q, rec.tau, args.cutoff, decimate)
    return rec, t, q, qd, qdd, tau


def _plot(path, t, measured, predicted, names, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    n = len(names)
    fig, axes = plt.subplots(n, 1, figsize=(10, 1.8 * n + 0.6), sharex=True, squeeze=False)
    for k, ax in enumerate(axes[:, 0]):
        ax.plot(t, measured[:, k], color="0.7", lw=3.0, label="measured (filtered)")
        for label, tau in predicted.items():
            ax.plot(t, tau[:, k], lw=0.9, label=label)
        ax.set_ylabel(f"{names[k]}\n[N m]", fontsize=8)
    axes[0, 0].legend(loc="upper right", fontsize=8, ncol=3)
    axes[0, 0].set_title(title)
    axes[-1, 0].set_xlabel("t [s]")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def _rms(a):
    return np.sqrt((a ** 2).mean(axis=0))


def fit(args, out=None):
    out = out or sys.stdout
    model = load_model(args.model)
    rec, t, q, qd, qdd, tau = _prepare(args.data, model, args)
    min_speed = args.min_speed * np.abs(qd).max(axis=0)
    res = identify(model, q, qd, qdd, tau, method=args.method, physical=args.physical, min_speed=min_speed)
    print(f"{args.data}: {len(rec.t)} samples, effort '{rec.effort_source}', {len(t)} after differentiation "
          f"(cut-off {args.cutoff:g} Hz)", file=out)
    print(res.table(), file=out)
    stem = os.path.splitext(args.out)[0]
    status = 0
    if res.physically_consistent:
        for f in res.to_yaml(args.out):
            print(f"wrote {f}", file=out)
    else:
        print("NOT WRITTEN: the identified parameters are not physically consistent:\n  "
              + "\n  ".join(res.problems) + "\nrun again with --physical", file=out)
        status = 2
    pred = inverse_dynamics(res.model, q, qd, qdd)
    print(f"wrote {_plot(stem + '_fit.png', t, tau, {'identified': pred}, model.joint_names, 'fit data')}",
          file=out)
    if args.validate:
        _, t2, q2, qd2, qdd2, tau2 = _prepare(args.validate, model, args)
        nominal, ident = inverse_dynamics(model, q2, qd2, qdd2), inverse_dynamics(res.model, q2, qd2, qdd2)
        e_nom, e_id = _rms(nominal - tau2), _rms(ident - tau2)
        print(f"cross-validation on {args.validate}: torque prediction RMS error [N m]", file=out)
        print(f"  {'joint':<16} {'nominal':>10} {'identified':>11}", file=out)
        for j, a, b in zip(model.joint_names, e_nom, e_id):
            print(f"  {j:<16} {a:10.4g} {b:11.4g}", file=out)
        tot_n, tot_i = np.sqrt((e_nom ** 2).mean()), np.sqrt((e_id ** 2).mean())
        print(f"  {'all':<16} {tot_n:10.4g} {tot_i:11.4g}   ({tot_n / max(tot_i, 1e-300):.3g}x better)", file=out)
        path = _plot(stem + "_validation.png", t2, tau2, {"nominal": nominal, "identified": ident},
                     model.joint_names, f"validation: {os.path.basename(args.validate)}")
        print(f"wrote {path}", file=out)
    return status


def parser():
    p = argparse.ArgumentParser(prog="rne_identify", description="Dynamic parameter identification for rne_control")
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("run", help="record an excitation trajectory over ROS (rne_control.ros.identify.run; "
                               "the rne_identify console script dispatches it)")
    sub.add_parser("thresholds", help="collision thresholds from a recorded free-motion run, as a parameter file "
                                      "(rne_control.control.thresholds; rne_identify thresholds --help)")
    f = sub.add_parser("fit", help="fit a model to a recorded trajectory (.npz)")
    f.add_argument("data", help="the record (.npz, rne_control.identification.record)")
    f.add_argument("--model", required=True, help="the nominal model file (URDF, DH-YAML or URDF sidecar)")
    f.add_argument("--out", required=True, help="the identified model (.yaml; a URDF model also writes .urdf)")
    f.add_argument("--physical", action="store_true", help="physically consistent fit (needs cvxpy)")
    f.add_argument("--method", choices=("wls", "ols"), default="wls")
    f.add_argument("--cutoff", type=float, default=10.0, help="Butterworth cut-off frequency, Hz (default 10)")
    f.add_argument("--decimate", type=int, default=0,
                   help="keep every k-th sample after filtering (default: down to 5x the cut-off)")
    f.add_argument("--min-speed", type=float, default=0.1,
                   help="leave out a joint's rows slower than this fraction of its peak speed (default 0.1)")
    f.add_argument("--validate", metavar="OTHER.npz", help="cross-validate on a second record")
    return p


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["thresholds"]:
        print("rne_identify: 'thresholds' runs the momentum observer of the control layer: use the rne_identify "
              "console script (or python -m rne_control.control.thresholds)", file=sys.stderr)
        return 2
    args = parser().parse_args(argv)
    if args.command == "run":
        print("rne_identify: 'run' needs ROS: use the rne_identify console script", file=sys.stderr)
        return 2
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # published inertias that break the triangle inequality
            return fit(args)
    except ValueError as exc:  # ModelError, InputError
        print(f"rne_identify: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
