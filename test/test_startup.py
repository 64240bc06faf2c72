"""Start-up: nothing compiles on the cycle path, and the ahead-of-time compile step fills numba's cache.

The lockstep test starts rne_controller with NUMBA_CACHE_DIR set to an empty folder (a fresh install),
so the node compiles every kernel itself at start. It then drives every mode, base, base-velocity
source, friction setting, trajectory kind, ramp and on_stale path, and reads the node's own count of
the signatures that rne_control's numba dispatchers gained after "kernels ready" (dispatcher
signatures and numba's compile events, reported in /diagnostics).
"""
import contextlib
import fcntl
import gc
import os
import re
import signal
import subprocess
import sys

import numpy as np
import pytest

from rne_control.ros.runner import EXECUTORS
from ros_util import config
from test_controller_node import Lockstep

FFSR = config("ffsr.yaml")
J = ["joint1", "joint2", "joint3", "joint4", "joint5", "joint6"]
MODES = ("computed_torque", "gravity", "coriolis", "gravity_coriolis", "off")


def _diag(diags):
    m = diags.last()
    return {kv.key: kv.value for kv in m.status[0].values} if m else {}


def _trajectory(q0, kind, t_end=0.05):
    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    msg = JointTrajectory()
    msg.joint_names = list(J)
    for k, t in enumerate((t_end / 2, t_end)):
        pt = JointTrajectoryPoint()
        pt.positions = [float(x) + 0.05 * (k + 1) for x in q0]
        if kind in ("cubic", "quintic"):
            pt.velocities = [0.0] * len(J)
        if kind == "quintic":
            pt.accelerations = [0.0] * len(J)
        sec = int(t)
        pt.time_from_start = Duration(sec=sec, nanosec=int(round((t - sec) * 1e9)))
        msg.points.append(pt)
    return msg


@pytest.fixture(scope="module")
def cold_cache(tmp_path_factory):
    """An empty NUMBA_CACHE_DIR shared by this module's cold starts (a later one loads what an earlier one
    compiled for the same kinds of kernels)."""
    return tmp_path_factory.mktemp("numba_cache")


def _background_lock(cache):
    """The file whose lock a node's background compiler takes in ``cache`` (rne_control.compile.background)."""
    code = "from rne_control.kernel_cache import manifest_path; print(manifest_path())"
    r = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, NUMBA_CACHE_DIR=str(cache)),
                       capture_output=True, text=True, check=True)
    d = os.path.dirname(r.stdout.strip().splitlines()[-1])
    os.makedirs(d, exist_ok=True)
    from rne_control.kernel_cache import LOCK
    return os.path.join(d, "rne_compile_background." + LOCK)


@contextlib.contextmanager
def holding(path):
    """Hold the flock of ``path`` (as another background compiler would): a node's background compiler waits."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def test_nothing_compiles_after_kernels_ready(ros_procs, ros_node, cold_cache):
    """Cold (an empty cache), the free-floating robot: the node starts with the kernels of its base and defers
    the other bases' to its background compiler; a switch to another base waits for them (the base in effect
    stays, the log says why) and comes in once they are loaded. Then every mode, base, velocity source,
    friction setting, trajectory kind and on_stale path: nothing compiles after "kernels ready"."""
    from diagnostic_msgs.msg import DiagnosticArray
    from trajectory_msgs.msg import JointTrajectory

    rate = 100.0
    lock = _background_lock(cold_cache)
    diags = ros_node.collect(DiagnosticArray, "/diagnostics")
    ls = Lockstep(ros_node, rate)
    traj_pub = ros_node.publisher(JointTrajectory, "/rne_controller/joint_trajectory", 10)
    q = np.array([0.1, 0.5, -0.8, 0.2, 0.4, -0.1])
    qd = np.array([0.2, -0.1, 0.3, 0.1, -0.2, 0.1])

    def set_params(**p):
        res = ros_node.set_parameters("/rne_controller", p)
        assert all(r.successful for r in res), [r.reason for r in res]

    def run(steps, with_velocity=True):
        for _ in range(steps):
            ls.step(J, q, qd if with_velocity else None)

    def diag_after_now():
        n0 = len(diags)
        assert ros_node.wait_for(lambda: len(diags) > n0 + 1, 10.0, procs=[ctl])
        return _diag(diags)

    with holding(lock):     # the background compiler waits: the switch below must wait for it
        ctl = ros_procs.start("rne_controller", params={
            "model_file": FFSR, "use_sim_time": True, "gc_freeze": False, "rate": rate, "base": "fixed",
            "ramp_time": 0.03, "state_timeout": 0.05, "on_stale": "hold", "effort_limits": [1e3] * 6,
            "state_publish_rate": 0.0}, env={"NUMBA_CACHE_DIR": str(cold_cache)})
        ls.start(J, q, qd, timeout=400.0, procs=[ctl])       # compiles its base's kernels from scratch
        assert "kernels ready" in ctl.log()
        assert "compiling the kernels of bases in the background" in ctl.log(), ctl.log()[-3000:]
        set_params(base="moving")
        run(4)
        assert _diagnostics_base(diag_after_now()) == ("fixed", "bases")
        assert "waiting for the kernels of bases" in ctl.log(), ctl.log()[-3000:]
    assert ros_node.wait_for(lambda: "the kernels of bases are loaded" in ctl.log(), 600.0, procs=[ctl]), \
        ctl.log()[-3000:]
    run(2)
    assert _diagnostics_base(diag_after_now()) == ("moving", "")

    cmds = []
    for base in ("fixed", "moving", "free_floating"):
        for source in (("odometry", "momentum") if base != "fixed" else ("odometry",)):
            for mode in MODES:
                for friction in (False, True):
                    set_params(base=base, base_velocity_source=source, mode=mode, friction_compensation=friction)
                    run(4)                                   # a ramp from the previous law, and past it
                    cmds.append(ls.command(ls.cmds.last()))
    set_params(base="fixed", mode="computed_torque", friction_compensation=False)
    run(5, with_velocity=False)                          # velocities estimated by the node
    for kind in ("linear", "cubic", "quintic"):
        traj_pub.publish(_trajectory(q, kind))
        run(8)                                           # inside the trajectory and past its end
    set_params(payload_link="link6", payload_mass=1.5, gravity=[0.0, 0.0, -9.81])
    run(5)
    def stale_events():
        n0 = len(diags)
        assert ros_node.wait_for(lambda: len(diags) > n0 + 1, 10.0, procs=[ctl])
        return int(_diag(diags)["stale_events"])

    for on_stale in ("hold", "zero", "stop"):
        # counted per phase: a state the middleware holds up for 5 steps (state_timeout) on a loaded
        # machine is a stale event too
        before = stale_events()
        set_params(on_stale=on_stale)
        run(3)
        for _ in range(8):                               # no states: stale
            ls.step(expect=on_stale != "stop")
        run(5)                                           # fresh again: ramp back in
        assert stale_events() > before, on_stale
    assert np.all(np.isfinite(np.array(cmds)))
    assert not all(np.allclose(c, cmds[0]) for c in cmds)   # the modes and bases did produce different laws

    n0 = len(diags)
    assert ros_node.wait_for(lambda: len(diags) > n0 + 1, 10.0, procs=[ctl])
    d = _diag(diags)
    assert int(d["jit_signatures_after_ready"]) == 0, ctl.log()[-3000:]
    assert int(d["jit_compiles_after_ready"]) == 0, ctl.log()[-3000:]
    assert "compiled after the warm-up" not in ctl.log()


def _diagnostics_base(d):
    """(the base in effect, the kernels a requested change waits for) from the diagnostics' key-values."""
    return d["base"], d["waiting_for_kernels"]


def test_a_failed_background_compile_refuses_the_switch_and_the_loop_goes_on(ros_procs, ros_node, cold_cache):
    """Cold, the PUMA 560 (a tree with a task space): its task-space kernels are deferred to the background
    compiler; killed (as the OOM killer would), the group is marked failed with the reason, a switch to a
    task-space mode is refused with it, computed torque runs on."""
    from std_msgs.msg import Float64MultiArray

    lock = _background_lock(cold_cache)
    cmds = ros_node.collect(Float64MultiArray, "/effort_controller/commands")
    with holding(lock):
        sim = ros_procs.start("rne_sim", params_file=config("puma560_controller.yaml"),
                              env={"NUMBA_CACHE_DIR": str(cold_cache)})
        ctl = ros_procs.start("rne_controller", params_file=config("puma560_controller.yaml"),
                              params={"gc_freeze": False}, env={"NUMBA_CACHE_DIR": str(cold_cache)})
        assert ros_node.wait_for(lambda: len(cmds) > 20, 600.0, procs=[sim, ctl]), ros_procs.logs()
        m = re.search(r"compiling the kernels of task in the background \(pid (\d+)\)", ctl.log())
        assert m, ctl.log()[-3000:]
        # a switch while they compile waits for them ...
        assert ros_node.set_parameters("/rne_controller", {"mode": "cartesian_impedance"})[0].successful
        assert ros_node.wait_for(lambda: "waiting for the kernels of task" in ctl.log(), 30.0, procs=[sim, ctl])
        os.kill(int(m.group(1)), signal.SIGKILL)
        # ... and is refused when they fail: the parameter goes back to the mode in effect
        assert ros_node.wait_for(lambda: "background compile of the task kernels failed" in ctl.log()
                                 and "mode cartesian_impedance, base fixed refused" in ctl.log(), 30.0,
                                 procs=[sim, ctl]), ctl.log()[-3000:]
        assert ros_node.wait_for(lambda: ros_node.get_parameters("/rne_controller", ["mode"])[0]
                                 == "computed_torque", 10.0, procs=[sim, ctl])
    # a switch after the failure is refused at once, with the reason
    res = ros_node.set_parameters("/rne_controller", {"mode": "cartesian_impedance"})
    assert not res[0].successful and "failed to compile" in res[0].reason, res[0].reason
    n = len(cmds)
    assert ros_node.wait_for(lambda: len(cmds) > n + 50, 10.0, procs=[sim, ctl])
    assert ros_node.get_parameters("/rne_controller", ["mode"])[0] == "computed_torque"


def test_compile_step_fills_the_cache_for_a_fresh_process(tmp_path):
    """After ``python -m rne_control.compile``, a new process finds every kernel in the cache: numba
    compiles nothing while that process compiles all kernels again."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    r = subprocess.run([sys.executable, "-m", "rne_control.compile"], env=env, capture_output=True, text=True,
                       timeout=900)
    assert r.returncode == 0, r.stderr
    assert " 0 compiled" not in r.stdout                      # the empty cache: everything compiled
    r = subprocess.run([sys.executable, "-m", "rne_control.compile"], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert "(0 compiled," in r.stdout, r.stdout
    assert "Warning" not in r.stderr, r.stderr                # e.g. runpy's "found in sys.modules" for -m


def test_cold_start_in_real_time_has_no_gap_after_the_first_command(ros_procs, ros_node, tmp_path):
    """Smoke test: rne_sim and rne_controller started cold (each with an empty NUMBA_CACHE_DIR) in
    real time; after the first command, commands keep coming (no gap over 1 s), through trajectories of
    each kind and mode switches (ramps)."""
    from std_msgs.msg import Float64MultiArray
    from trajectory_msgs.msg import JointTrajectory

    cfg = config("puma560_controller.yaml")
    cmds = ros_node.collect(Float64MultiArray, "/effort_controller/commands", keep=100000)
    sim = ros_procs.start("rne_sim", params_file=cfg, params={"integrator": "semi_implicit", "sim_rate": 1000.0,
                                                              "publish_rate": 250.0},
                          env={"NUMBA_CACHE_DIR": str(tmp_path / "cache_sim")})
    ctl = ros_procs.start("rne_controller", params_file=cfg, params={"rate": 250.0, "gc_freeze": False},
                          env={"NUMBA_CACHE_DIR": str(tmp_path / "cache_ctl")})
    # the commands are timed where this process receives them, so a pause of this process reads as a gap
    # in the controller's output: keep its garbage collector, which walks the whole test session's heap,
    # from running meanwhile
    gc.disable()
    try:
        assert ros_node.wait_for(lambda: len(cmds) > 0, 600.0, procs=[sim, ctl]), ros_procs.logs()
        assert ros_node.wait_for(lambda: len(cmds) > 250, 20.0, procs=[sim, ctl]), ros_procs.logs()
        traj_pub = ros_node.publisher(JointTrajectory, "/rne_controller/joint_trajectory", 10)
        for kind in ("linear", "cubic", "quintic"):
            traj_pub.publish(_trajectory([0.0, 0.7854, -0.7854, 0.0, 0.7854, 0.0], kind, t_end=0.4))
            ros_node.sleep(0.6)
        for mode in ("gravity_coriolis", "computed_torque"):
            assert ros_node.set_parameters("/rne_controller", {"mode": mode})[0].successful
            ros_node.sleep(0.7)
        ros_node.sleep(1.0)
    finally:
        gc.enable()
    _, times = cmds.snapshot()
    gaps = np.diff(np.array(times))
    assert len(times) > 500
    assert gaps.max() <= 1.0, "gap of %.2f s after %d commands\n%s" % (gaps.max(), int(gaps.argmax()),
                                                                        ros_procs.logs())
    assert sim.alive() and ctl.alive()


def test_compile_monitor_sees_a_new_signature(tmp_path):
    """The monitor the node uses: a kernel called with new argument types after start() is reported,
    by its gained signature and by numba's compile event (in a fresh process with an empty cache)."""
    code = """if True:
        import numpy as np
        from rne_control.control.warmup import CompileMonitor
        from rne_control.kernel_cache import dispatchers
        from rne_control.control import _kernels as K
        names = [n for n, _ in dispatchers()]
        assert "rne_control.control._kernels.take" in names and "rne_control.dynamics.rnea.rnea_one" in names
        K.take(np.zeros(3), np.arange(3), np.zeros(3))
        mon = CompileMonitor()
        mon.start()
        K.take(np.zeros(3), np.arange(3), np.zeros(3))          # the types it has: nothing new
        print(mon.new_signatures(), mon.compiles)
        out = np.zeros(3, dtype=np.float32)
        K.take(np.ones(3, dtype=np.float32), np.arange(3), out)  # float32: compiles on the spot
        mon.stop()
        print(mon.new_signatures(), mon.compiles, out.tolist())
    """
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "{} []",
        "{'rne_control.control._kernels.take': 1} ['rne_control.control._kernels.take'] [1.0, 1.0, 1.0]"]


def test_sigint_while_compiling_exits_0(ros_procs, ros_node, tmp_path):
    """A node that gets SIGINT while it compiles its kernels (an empty cache) exits with code 0."""
    import time

    ctl = ros_procs.start("rne_controller", params={"model_file": config("puma560.yaml"), "gc_freeze": False},
                          env={"NUMBA_CACHE_DIR": str(tmp_path / "cache")})
    deadline = time.monotonic() + 120.0
    while "loading the kernels" not in ctl.log() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)                                   # into the compilation (a minute with an empty cache)
    assert "loading the kernels" in ctl.log() and "kernels ready" not in ctl.log(), ctl.log()
    assert ctl.stop(timeout=60.0) == 0, ctl.log()[-3000:]
    assert "kernels ready" not in ctl.log()


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_signals_exit_0_on_each_executor(ros_procs, ros_node, executor, sig):
    """rne_controller and rne_sim spinning on ``executor`` (its own signal handlers must not replace the
    nodes') exit with code 0 on SIGINT and SIGTERM, and both publish before that."""
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    states = ros_node.collect(JointState, "/joint_states")
    cmds = ros_node.collect(Float64MultiArray, "/effort_controller/commands")
    common = {"gc_freeze": False, "executor": executor}
    sim = ros_procs.start("rne_sim", params_file=config("puma560_controller.yaml"), params=common)
    ctl = ros_procs.start("rne_controller", params_file=config("puma560_controller.yaml"), params=common)
    assert ros_node.wait_for(lambda: len(cmds) > 20 and len(states) > 20, 60.0, procs=[sim, ctl]), \
        ctl.log()[-3000:] + sim.log()[-3000:]
    assert ctl.stop(timeout=10.0, sig=sig) == 0, ctl.log()[-3000:]
    assert sim.stop(timeout=10.0, sig=sig) == 0, sim.log()[-3000:]


def test_sigterm_while_compiling_exits_0_single_threaded(ros_procs, ros_node, tmp_path):
    """As :func:`test_sigint_while_compiling_exits_0` (on the default executor, SIGINT), with SIGTERM and
    ``executor: single_threaded``."""
    import time

    ctl = ros_procs.start("rne_controller", params={"model_file": config("puma560.yaml"), "gc_freeze": False,
                                                    "executor": "single_threaded"},
                          env={"NUMBA_CACHE_DIR": str(tmp_path / "cache")})
    deadline = time.monotonic() + 120.0
    while "loading the kernels" not in ctl.log() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)
    assert "loading the kernels" in ctl.log() and "kernels ready" not in ctl.log(), ctl.log()
    assert ctl.stop(timeout=60.0, sig=signal.SIGTERM) == 0, ctl.log()[-3000:]
    assert "kernels ready" not in ctl.log()
