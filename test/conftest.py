"""Session-wide test setup.

Kept deliberately light: the pure-library tests must run without rclpy, so
nothing here imports rclpy at module level.  What it does:

* isolates DDS for the whole test session *before* any rclpy.init: a unique
  ROS_DOMAIN_ID derived from the pid (1..200) and
  ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST.  Both are set in os.environ, so the
  node subprocesses started by the tests inherit them;
* makes ``test/`` importable (``import ros_util``);
* provides the ROS fixtures ``ros_node`` (an in-test rclpy node spinning in a
  background thread) and ``ros_procs`` (starts console scripts as
  subprocesses and kills them, with their process groups, at teardown).
  Both import rclpy lazily, only when a test requests them.
"""
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

import ros_util  # noqa: E402  (no rclpy import at module level)

ros_util.isolate_ros_environment()

import pytest  # noqa: E402


@pytest.fixture(scope="session")
def compiled_kernels():
    """Compile every numba kernel once, in this process, before any node starts: the node processes
    then load them from the on-disk cache instead of compiling the same code side by side (on a fresh
    clone that takes tens of seconds on two cores, and would eat into the tests' start-up timeouts)."""
    import warnings

    import numpy as np

    import rne_control as rc
    from rne_control.control import _kernels

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = rc.load_dh(os.path.join(os.path.dirname(_HERE), "config", "ffsr.yaml"))
    q = np.zeros(m.n)
    for x in (q, np.zeros((2, m.n))):  # single samples and stacked ones
        rc.inverse_dynamics(m, x, q, q)
        rc.gravity_torques(m, x)
        rc.coriolis_torques(m, x, q)
        rc.mass_matrix(m, x)
        rc.forward_dynamics(m, x, q, q)
        rc.moving_base_inverse_dynamics(m, x, q, q, np.zeros(6), np.zeros(6))
        rc.free_floating_inverse_dynamics(m, x, q, q, np.zeros(6))
        rc.base_twist_from_momentum(m, x, q)
        rc.floating_forward_dynamics(m, x, q, q, np.zeros(6))
    _kernels.warm_up()
    # and what rne_compile compiles, as a user runs it (its groups in processes of their own): the other kinds'
    # paths, which the node processes then load; its manifest lets them load the deferrable groups at start
    import subprocess
    r = subprocess.run([sys.executable, "-m", "rne_control.compile", "-q"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


# A test that starts node processes and talks to them over DDS shares the two cores with them: on a loaded
# machine a reader can fall behind a lockstep loop or a discovery can come late, and such a test then fails
# at random (full runs from a fresh clone failed one or two such tests, each time others, each passing when
# run again).
# Such a test is run again after a failure, at most RERUNS times, as ROS 2's own CI does (colcon test
# --retest-until-pass). A defect that fails every time still fails; every rerun is listed with its failure
# at the end of the session ("failures that were run again"), so a test that needed one stays in sight.
RERUNS = 2


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "nodes: starts node processes talking over DDS (run again after a failure, at most "
        f"{RERUNS} times); given to every test using the ros_procs or ros_node fixture")


_reruns = []


# every test's seconds (setup, call and teardown), and whether it starts node processes: written to
# build/test_times.json at the end of the session, which test/suite_table.py makes into docs/tests.md's table
_times = {}
TIMES = os.path.join(os.path.dirname(_HERE), "build", "test_times.json")


def pytest_runtest_logreport(report):
    _times.setdefault(report.nodeid, [0.0, "nodes" in report.keywords])[0] += report.duration
    if report.outcome == "rerun":
        crash = getattr(report.longrepr, "reprcrash", None)
        _reruns.append((report.nodeid, report.when, crash.message.splitlines()[0] if crash else str(report.longrepr)[:200]))


def pytest_sessionfinish(session):
    if _times:
        import json
        os.makedirs(os.path.dirname(TIMES), exist_ok=True)
        with open(TIMES, "w") as f:
            json.dump({k: {"seconds": v[0], "nodes": v[1]} for k, v in _times.items()}, f, indent=0)


def pytest_terminal_summary(terminalreporter):
    if _reruns:
        terminalreporter.section("failures that were run again")
        for nodeid, when, why in _reruns:
            terminalreporter.write_line(f"{nodeid} ({when}): {why}")


def pytest_collection_modifyitems(items):
    for item in items:
        if {"ros_procs", "ros_node"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.nodes)
        if item.get_closest_marker("nodes") is not None:
            item.add_marker(pytest.mark.flaky(reruns=RERUNS, reruns_delay=5))


@pytest.fixture(scope="module", autouse=True)
def no_node_outlives_its_module():
    """Nodes a module left running (a fixture that failed before its teardown was set up) would talk to
    the next modules' nodes in the same ROS domain: stop them, and say so."""
    yield
    left = ros_util.stop_leftovers()
    if left:
        import warnings
        warnings.warn(f"stopped node processes left running by this module: {left}", stacklevel=1)


@pytest.fixture
def ros_procs(tmp_path, compiled_kernels):
    """Start ROS console scripts as subprocesses; all are stopped at teardown.

    ``ros_procs.start("rne_sim", params_file=..., params={...})`` returns a
    :class:`ros_util.NodeProcess`.
    """
    launcher = ros_util.ProcessLauncher(tmp_path)
    try:
        yield launcher
    finally:
        launcher.stop_all()
    # after rne_compile (compiled_kernels), no node compiles anything at start, whatever its kind, mode or base
    compiled = launcher.compiled_at_start()
    assert not compiled, "nodes compiled kernels at start after rne_compile: %s\n%s" % (compiled, launcher.logs())


@pytest.fixture
def ros_node(request):
    """An in-test rclpy node (own context), spun in a background thread.

    Yields a :class:`ros_util.TestNode`; use ``ros_node.collect(...)``,
    ``ros_node.wait_for(...)``, ``ros_node.node`` for raw rclpy access.
    """
    name = "rne_test_" + "".join(c if c.isalnum() else "_" for c in request.node.name)[:60]
    node = ros_util.TestNode(name)
    try:
        yield node
    finally:
        node.shutdown()
