#!/usr/bin/env python3
"""``make bench-ab BASE=<commit>``: the control cycle and the single-call dynamics ratios of an older commit
against the working tree, measured side by side in one session.

The commit is checked out in a git worktree (``build/bench-ab/<commit>``), each side gets its own numba
cache (``build/bench-ab/cache-<side>``, filled by an untimed first pass), and the two sides take turns,
``--rounds`` times (the side that goes first alternates), so that the machine's drift hits both alike.

* The cycle: ``ab_probe.py`` runs ``rne_controller``'s cycle in one process, as ``bench_cycle.py`` does
  (``trigger: state``, 1 kHz, joint states fed directly, warm caches), for each case below; per side the
  median over the rounds of compute p50 / p99 and callback p50 / p99 (µs), and the ratio new / old.
* The dynamics: each side's own ``bench/bench_dynamics.py``; per robot and function the median over the
  rounds of its ratio to Pinocchio's time, and new / old of those ratios.

Read the ratios, not the microseconds: see docs/control_loop_speed.md ("Comparing with an older commit").

    .venv/bin/python bench/bench_ab.py --base d965a23 [--rounds 3] [--states 3000] [--cases arm7 ...]
                                       [--no-dynamics]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

PANDA_ARM = ["panda_joint%d" % i for i in range(1, 8)]
OFF = ("observer.enabled:=false",)
# name -> (config, parameters): the goals of "The control cycle costs twice what it did" (docs/control_loop_speed.md)
CASES = {
    "arm7 observer off": ("config/arm7_controller.yaml", OFF),
    "arm7": ("config/arm7_controller.yaml", ()),
    "panda observer off": ("config/panda_controller.yaml", OFF),
    "panda": ("config/panda_controller.yaml", ()),
    "palletizer": ("config/palletizer_controller.yaml", ()),
    "gough_stewart": ("config/gough_stewart_controller.yaml", ()),
}
METRICS = ("compute_p50", "compute_p99", "callback_p50", "callback_p99")
OBSERVER_US = 2.0   # the goal: defaults (observer on) at most the old cycle's compute p50 + this
RATIO_GOAL = 1.05   # observer off: compute and callback p50 at most this x the old


def run(cmd, cwd, env, check=True):
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if check and r.returncode:
        raise RuntimeError("%s failed (%d) in %s:\n%s" % (" ".join(map(str, cmd)), r.returncode, cwd,
                                                          (r.stdout + r.stderr)[-3000:]))
    return r


class Side:
    """A checkout (the working tree, or a worktree of ``commit``) with its own numba cache."""

    def __init__(self, label, tree, cache):
        self.label, self.tree, self.cache = label, Path(tree), Path(cache)
        self.cache.mkdir(parents=True, exist_ok=True)
        self.env = dict(os.environ, PYTHONPATH=str(self.tree), NUMBA_CACHE_DIR=str(self.cache),
                        ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST", ROS_DOMAIN_ID=str(150 + os.getpid() % 50))
        self.env.pop("RNE_CONTROL_NO_COMPILE", None)
        self.env["RNE_CONTROL_BACKGROUND_COMPILE"] = "0"   # the node warms every group up: nothing runs beside it

    def probe(self, config, params, states):
        cmd = [sys.executable, str(ROOT / "bench" / "ab_probe.py"), "--config", str(config), "--states", str(states)]
        for p in params:
            cmd += ["--param", p]
        out = run(cmd, self.tree, self.env).stdout.strip().splitlines()
        return json.loads(out[-1])

    def dynamics(self):
        """{(robot, function): ratio to Pinocchio} from this side's bench_dynamics.py."""
        out = run([sys.executable, "bench/bench_dynamics.py"], self.tree, self.env).stdout
        rows = {}
        for line in out.splitlines():
            m = re.match(r"^(.+?\(\d+\))\s+(\w+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\b", line)
            if m:
                rows[(m.group(1).strip(), m.group(2))] = float(m.group(5))
        return rows


def worktree(commit):
    sha = run(["git", "rev-parse", "--short", commit], ROOT, os.environ).stdout.strip()
    path = ROOT / "build" / "bench-ab" / sha
    if not (path / "rne_control").is_dir():
        run(["git", "worktree", "add", "--detach", "-f", str(path), sha], ROOT, os.environ)
    return sha, path


def case_args(side, name, bare_panda):
    """(config, params) of case ``name`` for ``side``: the working tree's config files, whose model paths are
    made absolute (an older checkout may lack the file); the Panda falls back to its hand removed where the
    older checkout cannot load the hand (``bare_panda``, a URDF path; the row says so)."""
    cfg, params = CASES[name]
    params = list(params)
    if name.startswith("panda"):
        model = bare_panda if side.label.endswith("(hand removed)") else ROOT / "urdf" / "panda.urdf"
        params.append("model_file:=%s" % model)
    else:
        import yaml
        doc = yaml.safe_load((ROOT / cfg).read_text())
        rel = doc["/**/rne_controller"]["ros__parameters"].get("model_file")
        if rel:
            params.append("model_file:=%s" % (ROOT / rel))
    return ROOT / cfg, params


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, help="the older commit (e.g. d965a23, or main before your issue)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--states", type=int, default=3000)
    ap.add_argument("--cases", nargs="*", default=list(CASES), choices=list(CASES))
    ap.add_argument("--no-dynamics", action="store_true", help="only the cycle")
    a = ap.parse_args()
    sha, base_tree = worktree(a.base)
    cache_root = ROOT / "build" / "bench-ab"
    old = Side("old %s" % sha, base_tree, cache_root / ("cache-" + sha))
    new = Side("new (working tree)", ROOT, cache_root / "cache-work")
    from bench_cycle import without_uncontrolled
    bare = without_uncontrolled(ROOT / "urdf" / "panda.urdf", PANDA_ARM,
                                Path(tempfile.mkdtemp()) / "panda_without_hand.urdf")
    # the untimed first pass: fills each side's cache, and finds whether the old side loads the Panda's hand
    print("bench-ab: %s against the working tree; first pass (compiles each side's kernels) ..." % sha, flush=True)
    panda_old = {}
    for side in (old, new):
        for name in a.cases:
            try:
                side.probe(*case_args(side, name, bare), states=200)
            except RuntimeError as e:
                if side is old and name.startswith("panda"):
                    panda_old[name] = "hand removed"
                    continue
                raise
    if panda_old:
        print("the old side cannot load the Panda with its hand: its Panda rows run the arm with the hand removed")
        old_bare = Side(old.label + " (hand removed)", old.tree, old.cache)
    results = {(s, c): {m: [] for m in METRICS} for s in ("old", "new") for c in a.cases}
    dyn = {"old": [], "new": []}
    for r in range(a.rounds):
        order = (("old", old), ("new", new)) if r % 2 == 0 else (("new", new), ("old", old))
        for name in a.cases:
            for key, side in order:
                s = old_bare if (key == "old" and name in panda_old) else side
                res = s.probe(*case_args(s, name, bare), states=a.states)
                for m in METRICS:
                    results[(key, name)][m].append(res[m])
        if not a.no_dynamics:
            for key, side in order:
                dyn[key].append(side.dynamics())
        print("round %d of %d done" % (r + 1, a.rounds), flush=True)
    print()
    print("cycle, µs: median of %d rounds (old %s, new the working tree); new/old" % (a.rounds, sha))
    print("%-22s%-14s%10s%10s%9s" % ("case", "figure", "old", "new", "new/old"))
    verdicts = []
    for name in a.cases:
        for m in METRICS:
            o, n = statistics.median(results[("old", name)][m]), statistics.median(results[("new", name)][m])
            print("%-22s%-14s%10.2f%10.2f%9.3f" % (name + (" *" if name in panda_old else ""), m, o, n, n / o))
        o = {m: statistics.median(results[("old", name)][m]) for m in METRICS}
        n = {m: statistics.median(results[("new", name)][m]) for m in METRICS}
        if name.endswith("observer off") or name in ("palletizer", "gough_stewart"):
            for m in ("compute_p50", "callback_p50"):
                ok = n[m] <= RATIO_GOAL * o[m]
                verdicts.append("%s %s %.3fx (goal <= %.2fx): %s" % (name, m, n[m] / o[m], RATIO_GOAL,
                                                                    "ok" if ok else "MISS"))
        if not name.endswith("observer off"):
            ok = n["compute_p50"] <= o["compute_p50"] + OBSERVER_US
            verdicts.append("%s compute_p50 %+.2f µs (goal <= +%.1f µs): %s"
                            % (name, n["compute_p50"] - o["compute_p50"], OBSERVER_US, "ok" if ok else "MISS"))
    if panda_old:
        print("* old: the Panda arm with its hand removed (that commit cannot load it); new: with its hand uncontrolled")
    if not a.no_dynamics and dyn["old"]:
        print()
        print("single calls (bench_dynamics.py), ratio to Pinocchio: median of %d rounds; new/old" % a.rounds)
        print("%-20s%-20s%8s%8s%9s" % ("robot", "function", "old", "new", "new/old"))
        keys = [k for k in dyn["new"][0] if all(k in d for d in dyn["old"] + dyn["new"])]
        for k in keys:
            o = statistics.median(d[k] for d in dyn["old"])
            n = statistics.median(d[k] for d in dyn["new"])
            print("%-20s%-20s%8.2f%8.2f%9.3f" % (k[0], k[1], o, n, n / o))
    print()
    print("goals (docs/control_loop_speed.md):")
    for v in verdicts:
        print("  " + v)
    return 0


if __name__ == "__main__":
    sys.exit(main())
