"""Start-up latency of the installed rne_controller: time from process start to its first command.

Three installs, each measured by starting the installed console script against a joint-state publisher
that is already running (as a robot driver would be), twice: the first start after the install and
its set-up step, then a warm start (the OS caches warm too):

* ``colcon``: ``colcon build`` of a copy of this checkout in a temporary workspace (its
  ``setup.py install`` runs ``rne_control.compile`` against the installed files);
* ``pip``: ``pip install .`` (a wheel) into a temporary venv, then the documented set-up step
  ``rne_compile``;
* ``dev`` (with ``--dev``): this checkout's own console script and cache (after ``make install``);
* ``cold`` (with ``--cold``): this checkout with an empty NUMBA_CACHE_DIR, no set-up step (what a
  node pays without ahead-of-time compilation);
* ``--cold-sim puma560,arm7,panda:cartesian_impedance``: the same cold start of ``rne_controller`` (in the mode
  given after the colon) with ``rne_sim`` from the same config starting beside it, also cold, feeding the
  states: what a fresh install meets. It watches the commands until the controller's background compiler has
  loaded the kernels it deferred (the task-space modes: ``rne_control.control.background``), and reports the
  largest gap between commands meanwhile.

After the first command it records every command for ``--watch`` seconds and reports the largest gap.

    .venv/bin/python bench/bench_startup.py [--only colcon,pip] [--cold] [--watch 3]
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "test"))
import ros_util  # noqa: E402

ros_util.isolate_ros_environment()

PUMA_J = ["joint1", "joint2", "joint3", "joint4", "joint5", "joint6"]
IGNORE = shutil.ignore_patterns(".venv", ".git", "build", "install", "log", "__pycache__", "*.egg-info",
                                ".pytest_cache", "*.png", "*.nbi", "*.nbc")


def sh(cmd, **kw):
    t0 = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode:
        raise RuntimeError("%s failed:\n%s\n%s" % (" ".join(map(str, cmd)), r.stdout[-3000:], r.stderr[-3000:]))
    return time.monotonic() - t0, r.stdout


class Probe:
    """Publishes puma560 joint states at 200 Hz and records the arrival time of every command."""

    def __init__(self, publish=True):
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray

        self.ctx = rclpy.Context()
        rclpy.init(context=self.ctx)
        self.node = rclpy.create_node("bench_startup", context=self.ctx)
        self.times = []
        self.node.create_subscription(Float64MultiArray, "/effort_controller/commands",
                                      lambda m: self.times.append(time.monotonic()), 1000)
        if publish:
            pub = self.node.create_publisher(JointState, "/joint_states", 10)
            js = JointState(name=PUMA_J, position=[0.1, 0.5, -0.3, 0.0, 0.2, 0.0], velocity=[0.0] * 6)
            self.node.create_timer(0.005, lambda: pub.publish(js))
        self.ex = SingleThreadedExecutor(context=self.ctx)
        self.ex.add_node(self.node)
        self._stop = False
        self.th = threading.Thread(target=self._spin, daemon=True)
        self.th.start()

    def _spin(self):
        while not self._stop:
            self.ex.spin_once(timeout_sec=0.05)

    def close(self):
        self._stop = True
        self.th.join()
        self.node.destroy_node()
        self.ctx.try_shutdown()


def first_command(probe, argv, env, watch, timeout=300.0):
    """Start argv; (seconds to the first command, largest gap between commands in the next ``watch`` s)."""
    probe.times.clear()
    log = tempfile.TemporaryFile()
    t0 = time.monotonic()
    p = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        while not probe.times:
            if p.poll() is not None:
                log.seek(0)
                raise RuntimeError("controller exited: " + log.read().decode()[-3000:])
            if time.monotonic() - t0 > timeout:
                raise TimeoutError("no command within %.0f s" % timeout)
            time.sleep(0.002)
        t_first = probe.times[0] - t0
        time.sleep(watch)
        ts = list(probe.times)
        gap = max((b - a for a, b in zip(ts, ts[1:])), default=float("nan"))
        return t_first, gap, len(ts)
    finally:
        os.killpg(p.pid, signal.SIGINT)
        p.wait(timeout=20)


def cold_with_sim(probe, config, mode, watch_max=600.0):
    """rne_sim and rne_controller (``mode``) from ``config``, both cold (an empty NUMBA_CACHE_DIR): (seconds to
    the first command, seconds to the controller's background kernels loaded (None: none deferred), largest gap
    between commands from the first one until then (at least 5 s of commands), commands)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=tempfile.mkdtemp(prefix="bench_startup_cold_"))
    bindir = Path(sys.executable).parent
    cfg = REPO / "config" / config
    logs = [tempfile.NamedTemporaryFile(prefix=name, suffix=".log", delete=False) for name in ("sim", "ctl")]
    probe.times.clear()
    t0 = time.monotonic()
    procs = [subprocess.Popen([str(bindir / exe), "--ros-args", "--params-file", str(cfg)] + extra, env=env,
                              stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
             for exe, extra, log in (("rne_sim", [], logs[0]),
                                     ("rne_controller", ["-p", "mode:=%s" % mode, "-p", "gc_freeze:=false"], logs[1]))]
    t_loaded = None
    try:
        while not probe.times:
            if any(p.poll() is not None for p in procs):
                raise RuntimeError("a node exited: " + Path(logs[1].name).read_text()[-3000:])
            if time.monotonic() - t0 > watch_max:
                raise TimeoutError("no command within %.0f s" % watch_max)
            time.sleep(0.01)
        t_first = probe.times[0] - t0
        while time.monotonic() - t0 < watch_max:
            text = Path(logs[1].name).read_text(errors="replace")
            deferred = "in the background (pid" in text
            if t_loaded is None and deferred and "are loaded (" in text:
                t_loaded = time.monotonic() - t0
            if "background compile of the" in text:
                raise RuntimeError("the background compile failed: " + text[-3000:])
            if (t_loaded is not None or not deferred) and time.monotonic() - t0 > t_first + 5.0:
                break
            time.sleep(0.1)
        ts = list(probe.times)
        gap = max((b - a for a, b in zip(ts, ts[1:])), default=float("nan"))
        return t_first, t_loaded, gap, len(ts)
    finally:
        for p in procs:
            os.killpg(p.pid, signal.SIGINT)
        for p in procs:
            p.wait(timeout=30)


def controller_argv(exe, params):
    return [str(exe), "--ros-args", "--params-file", str(params), "-p", "gc_freeze:=false"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="colcon,pip", help="comma-separated: colcon, pip (or none)")
    ap.add_argument("--dev", action="store_true", help="also start this checkout's installed console script")
    ap.add_argument("--cold", action="store_true", help="also start this checkout with an empty cache")
    ap.add_argument("--watch", type=float, default=3.0, help="s of commands to record after the first")
    ap.add_argument("--cold-sim", default="", help="comma-separated robot[:mode], e.g. puma560,arm7,"
                    "panda:cartesian_impedance: cold starts beside rne_sim (see the module docstring)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary installs")
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench_startup_"))
    base_env = dict(os.environ)
    base_env.pop("NUMBA_CACHE_DIR", None)
    bindir = Path(sys.executable).parent
    base_env["PATH"] = "%s%s%s" % (bindir, os.pathsep, base_env.get("PATH", ""))
    if a.cold_sim:
        probe = Probe(publish=False)
        print("| config | mode | first command after start (s) | deferred kernels loaded (s) | largest gap from the "
              "first command until then (ms) | commands | load average |")
        print("|---|---|---|---|---|---|---|")
        try:
            for item in a.cold_sim.split(","):
                robot, _, mode = item.partition(":")
                t, tl, gap, n = cold_with_sim(probe, "%s_controller.yaml" % robot, mode or "computed_torque")
                print("| %s | %s | %.1f | %s | %.1f | %d | %.1f |" % (robot, mode or "computed_torque", t,
                      "-" if tl is None else "%.1f" % tl, 1e3 * gap, n, os.getloadavg()[0]), flush=True)
        finally:
            probe.close()
        return
    probe = Probe()
    rows = []

    def floor(env):
        """The part no node can avoid on this machine now: a bare interpreter importing numpy, numba and
        rclpy with a message package, and initialising numba's compiler (one trivial cached function)."""
        code = ("import numpy, numba, rclpy, sensor_msgs.msg\n"
                "numba.njit(cache=False)(lambda: 0)()\n")
        t0 = time.monotonic()
        subprocess.run([sys.executable, "-c", code], env=env, check=True)
        return time.monotonic() - t0

    def measure(label, argv, env, setup_s):
        for run in ("first", "warm"):
            t, gap, n = first_command(probe, argv, env, a.watch)
            f = floor(env)
            rows.append((label, run, setup_s if run == "first" else None, t, gap, f))
            print("%-7s %-5s first command %.2f s after start; largest gap in the next %.0f s: %.3f s (%d commands); "
                  "bare imports %.2f s; load average %.1f" % (label, run, t, a.watch, gap, n, f, os.getloadavg()[0]),
                  flush=True)

    try:
        for what in [w for w in a.only.split(",") if w and w != "none"]:
            if what == "colcon":
                ws = work / "colcon_ws"
                shutil.copytree(REPO, ws / "src" / "rne_control", ignore=IGNORE)
                env = dict(base_env, COLCON_HOME=str(ws / ".colcon"))
                s, _ = sh([str(bindir / "colcon"), "build", "--base-paths", "src"], cwd=ws, env=env, timeout=1200)
                print("colcon build (with rne_control.compile): %.1f s" % s, flush=True)
                inst = ws / "install" / "rne_control"
                site = next((inst / "lib").glob("python3*/site-packages"))
                env = dict(base_env, PYTHONPATH="%s%s%s" % (site, os.pathsep, sysconfig.get_paths()["purelib"]),
                           AMENT_PREFIX_PATH=str(inst))
                measure("colcon", controller_argv(inst / "lib" / "rne_control" / "rne_controller",
                                                  inst / "share" / "rne_control" / "config" /
                                                  "puma560_controller.yaml"), env, s)
            elif what == "pip":
                venv = work / "venv"
                sh([sys.executable, "-m", "venv", "--without-pip", str(venv)], timeout=120)
                sh([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(work / "wheels"), str(REPO)],
                   cwd=work, timeout=600)
                sh([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q",
                    "--no-deps", *map(str, (work / "wheels").glob("rne_control-*.whl"))], cwd=work, timeout=600)
                env = dict(base_env, PYTHONPATH=sysconfig.get_paths()["purelib"])
                env.pop("AMENT_PREFIX_PATH", None)
                s, out = sh([str(venv / "bin" / "rne_compile")], env=env, timeout=1200)
                print("rne_compile: %.1f s (%s)" % (s, out.strip()), flush=True)
                measure("pip", controller_argv(venv / "bin" / "rne_controller",
                                               venv / "share" / "rne_control" / "config" / "puma560_controller.yaml"),
                        env, s)
        if a.dev:
            measure("dev", controller_argv(bindir / "rne_controller", REPO / "config" / "puma560_controller.yaml"),
                    base_env, None)
        if a.cold:
            env = dict(base_env, NUMBA_CACHE_DIR=str(work / "empty_cache"))
            t, gap, n = first_command(probe, controller_argv(bindir / "rne_controller",
                                                             REPO / "config" / "puma560_controller.yaml"),
                                      env, a.watch, timeout=900)
            rows.append(("cold", "first", None, t, gap, floor(env)))
            print("cold    first command %.2f s after start (no set-up step); largest gap %.3f s" % (t, gap))
    finally:
        probe.close()
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    print("\n| install | start | set-up step (s) | first command after start (s) | largest gap after it (s) "
          "| bare imports (s) |")
    print("|---|---|---|---|---|---|")
    for label, run, s, t, gap, f in rows:
        print("| %s | %s | %s | %.2f | %.3f | %.2f |" % (label, run, "-" if s is None else "%.1f" % s, t, gap, f))


if __name__ == "__main__":
    main()
