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


@pytest.fixture
def ros_procs(tmp_path):
    """Start ROS console scripts as subprocesses; all are stopped at teardown.

    ``ros_procs.start("rne_sim", params_file=..., params={...})`` returns a
    :class:`ros_util.NodeProcess`.
    """
    launcher = ros_util.ProcessLauncher(tmp_path)
    try:
        yield launcher
    finally:
        launcher.stop_all()


@pytest.fixture
def ros_node(request):
    """An in-test rclpy node (own context), spun in a background thread.

    Yields a :class:`ros_util.TestNode`; use ``ros_node.collect(...)``,
    ``ros_node.wait_for(...)``, ``ros_node.node`` for raw rclpy access.
    """
    pytest.importorskip("rclpy")
    name = "rne_test_" + "".join(c if c.isalnum() else "_" for c in request.node.name)[:60]
    node = ros_util.TestNode(name)
    try:
        yield node
    finally:
        node.shutdown()
