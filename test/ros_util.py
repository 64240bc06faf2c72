"""Utilities for the ROS tests: DDS isolation, node subprocesses, an in-test node.

Nothing here imports rclpy at module level (conftest imports this module for
every test session, including the pure-library ones).

Typical use::

    def test_x(ros_procs, ros_node):
        sim = ros_procs.start("rne_sim", params_file=config("puma560_controller.yaml"),
                              params={"lockstep": True})
        ctl = ros_procs.start("rne_controller", params_file=..., params={"use_sim_time": True})
        states = ros_node.collect(JointState, "/joint_states")
        ros_node.wait_for(lambda: len(states) > 10, timeout=20, procs=[sim, ctl])
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CONFIG_DIR = REPO / "config"

# console script -> module with main(), used when the script is not installed
_MODULES = {
    "rne_controller": "rne_control.ros.controller.node",
    "rne_sim": "rne_control.ros.sim.node",
    "rne_demo": "rne_control.ros.demo.cli",
}


# ----------------------------------------------------------------------------- environment
def isolate_ros_environment(environ=os.environ) -> int:
    """Give this test session its own DDS domain, discovery on localhost only.

    Must run before any ``rclpy.init``.  Subprocesses inherit os.environ.
    Idempotent: the first call of a session fixes the domain id.
    """
    if environ.get("RNE_TEST_DOMAIN_FIXED") != str(os.getpid()):
        domain = 1 + (os.getpid() % 200)  # 1..200; 0 (the default domain) is never used
        environ["ROS_DOMAIN_ID"] = str(domain)
        environ["RNE_TEST_DOMAIN_FIXED"] = str(os.getpid())
    environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    environ.pop("ROS_LOCALHOST_ONLY", None)  # deprecated; conflicts with the range variable
    environ.setdefault("RCUTILS_LOGGING_BUFFERED_STREAM", "1")
    environ.setdefault("PYTHONUNBUFFERED", "1")
    return int(environ["ROS_DOMAIN_ID"])


def domain_participants(environ=os.environ) -> str:
    """The DDS participants of this session's domain on this machine, as "id: process (pid)" from the UDP
    ports Fast DDS binds (metatraffic unicast 7400 + 250 domain + 10 + 2 id): for failure messages. With
    discovery on localhost, participants ping ids 0-3 only, so two participants that both got an id of
    4 or more never discover each other."""
    import re
    base = 7400 + 250 * int(environ.get("ROS_DOMAIN_ID", "0")) + 10
    try:
        out = subprocess.run(["ss", "-uanpH"], capture_output=True, text=True, timeout=5.0).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        return f"(ss failed: {exc})"
    found = {}
    for line in out.splitlines():
        m = re.search(r":(\d+)\s.*users:\(\(\"([^\"]+)\",pid=(\d+)", line)
        if m and base <= int(m.group(1)) < base + 240 and (int(m.group(1)) - base) % 2 == 0:
            found[(int(m.group(1)) - base) // 2] = f"{m.group(2)} ({m.group(3)})"
    return ", ".join(f"{k}: {v}" for k, v in sorted(found.items())) or "none"


def config(name: str) -> str:
    """Absolute path of a file in the repo's config/ folder."""
    return str(CONFIG_DIR / name)


def console_command(executable: str) -> list[str]:
    """argv prefix that runs a console script (installed script, else ``python -m``).

    ``RNE_TEST_EXE_<NAME>`` (e.g. RNE_TEST_EXE_RNE_CONTROLLER) in the environment, a
    whitespace-separated command, replaces the executable (to test another build of it).
    """
    override = os.environ.get("RNE_TEST_EXE_" + executable.upper())
    if override:
        return override.split()
    bindir = Path(sys.executable).parent
    cand = bindir / executable
    if cand.exists() and os.access(cand, os.X_OK):
        return [str(cand)]
    found = shutil.which(executable)
    if found and str(Path(found).parent) == str(bindir):
        return [found]
    if executable in _MODULES:
        return [sys.executable, "-m", _MODULES[executable]]
    if found:
        return [found]
    raise FileNotFoundError(executable)


# ----------------------------------------------------------------------------- control_msgs (built here)
def run_demo(tmp_path, flag: str):
    """``rne_demo <flag> --output <png>`` run in tmp_path, asserted to exit 0 and to write its plot. Returns
    (stdout, text, number): ``text``, the output's tails for assertion messages; ``number(pattern)``, the
    floats of the pattern's groups in stdout (asserted found)."""
    import re

    out = tmp_path / "demo.png"
    r = subprocess.run(console_command("rne_demo") + [flag, "--output", str(out)],
                       capture_output=True, text=True, timeout=300, cwd=tmp_path)
    text = r.stdout[-6000:] + r.stderr[-3000:]
    assert r.returncode == 0, text
    assert out.exists() and out.stat().st_size > 10000

    def number(pattern):
        m = re.search(pattern, r.stdout, re.M)
        assert m, (pattern, text)
        return [float(x) for x in m.groups()]

    return r.stdout, text, number


def _interfaces_build():
    """test/interfaces/build.py as a module (it builds the test-only control_msgs package)."""
    import importlib.util

    name = "rne_test_interfaces_build"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, REPO / "test" / "interfaces" / "build.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        sys.modules[name] = mod
    return sys.modules[name]


def build_interfaces():
    """Build control_msgs into build/interfaces/ unless it is up to date (``make test`` has done it)."""
    return _interfaces_build().build()


def interfaces_env(environ=os.environ) -> dict:
    """PYTHONPATH, LD_LIBRARY_PATH, AMENT_PREFIX_PATH and CMAKE_PREFIX_PATH with the built control_msgs
    prepended, as ``source build/interfaces/install/setup.bash`` would set them; {} if it is not built."""
    b = _interfaces_build()
    if not (b.python_site_dir(b.INSTALL) / "control_msgs").is_dir():
        return {}
    out = {}
    for k, v in b.env_vars().items():
        old = environ.get(k, "")
        out[k] = v + (os.pathsep + old if old else "")
    return out


def load_interfaces():
    """Make the built control_msgs importable in this (already running) process; returns the
    FollowJointTrajectory action type. Its libraries are loaded by absolute path, so that the type
    support lookup by library name finds them without LD_LIBRARY_PATH."""
    import ctypes

    b = _interfaces_build()
    site = str(b.python_site_dir(b.INSTALL))
    if site not in sys.path:
        sys.path.insert(0, site)
    for lib in sorted((b.INSTALL / "lib").glob("libcontrol_msgs__*.so")):
        ctypes.CDLL(str(lib), mode=ctypes.RTLD_GLOBAL)
    from control_msgs.action import FollowJointTrajectory

    return FollowJointTrajectory


# ----------------------------------------------------------------------------- parameter files
def _yaml_value(v):
    """Python value -> YAML-able value with rcl-friendly types (no mixed int/float arrays)."""
    try:
        import numpy as np

        if isinstance(v, np.ndarray):
            v = v.tolist()
        elif isinstance(v, np.generic):
            v = v.item()
    except ImportError:  # pragma: no cover
        pass
    if isinstance(v, (list, tuple)):
        items = [_yaml_value(x) for x in v]
        if any(isinstance(x, float) for x in items) and all(
            isinstance(x, (int, float)) and not isinstance(x, bool) for x in items
        ):
            items = [float(x) for x in items]
        return items
    return v


def write_params_file(path, params: dict, node_name: str = "/**") -> str:
    """Write ``params`` as a ROS 2 parameter file for ``node_name`` (default: any node)."""
    import yaml

    key = node_name if node_name.startswith("/") else "/**/" + node_name
    doc = {key: {"ros__parameters": {k: _yaml_value(v) for k, v in params.items()}}}
    Path(path).write_text(yaml.safe_dump(doc, default_flow_style=None, sort_keys=False))
    return str(path)


# ----------------------------------------------------------------------------- node processes
_STARTED: list = []   # every NodeProcess of this test process, for stop_leftovers()


def stop_leftovers() -> list[str]:
    """Stop every node process still running (one whose fixture never reached its teardown) and return
    their names: conftest calls this after each test module."""
    left = [p for p in _STARTED if p.alive()]
    for p in left:
        p.stop(timeout=8.0)
    _STARTED[:] = [p for p in _STARTED if p.alive()]
    return [repr(p) for p in left]


class NodeProcess:
    """A console-script subprocess in its own process group, with a log file."""

    env_override = None   # the environment given on top of the test's (ProcessLauncher.start's env)

    def __init__(self, name: str, argv: list[str], log_path: Path, env=None, cwd=None):
        self.name = name
        self.argv = argv
        self.log_path = Path(log_path)
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            argv,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=cwd,
            start_new_session=True,  # own process group: killpg reaches every child
        )
        self.pid = self.proc.pid
        _STARTED.append(self)

    @property
    def returncode(self):
        return self.proc.poll()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def log(self) -> str:
        try:
            if not self._log.closed:
                self._log.flush()
            return self.log_path.read_text(errors="replace")
        except (OSError, ValueError):
            return ""

    def _killpg(self, sig):
        try:
            os.killpg(self.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def stop(self, timeout: float = 10.0, sig=signal.SIGINT):
        """SIGINT the process group, wait, escalate to SIGTERM then SIGKILL. Returns the exit code."""
        if self.proc.poll() is None:
            self._killpg(sig)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self._killpg(signal.SIGTERM)
                try:
                    self.proc.wait(timeout=3.0)
                except subprocess.TimeoutExpired:
                    self._killpg(signal.SIGKILL)
                    self.proc.wait(timeout=5.0)
        # the group may still hold grandchildren: make sure nothing survives
        self._killpg(signal.SIGKILL)
        try:
            self._log.close()
        except OSError:
            pass
        return self.proc.returncode

    def kill(self):
        self._killpg(signal.SIGKILL)
        try:
            self.proc.wait(timeout=5.0)
        except subprocess.TimeoutExpired:  # pragma: no cover
            pass
        return self.proc.returncode

    def __repr__(self):
        return f"<NodeProcess {self.name} pid={self.pid} rc={self.proc.poll()}>"


class ProcessLauncher:
    """Starts console scripts with ``--ros-args --params-file ...`` and stops them all."""

    def __init__(self, workdir):
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.procs: list[NodeProcess] = []
        self._count = 0

    def start(
        self,
        executable: str,
        params_file=None,
        params: dict | None = None,
        node_name: str | None = None,
        remap: dict | None = None,
        args: list[str] | None = None,
        env: dict | None = None,
        log_name: str | None = None,
        interfaces: bool = True,
    ) -> NodeProcess:
        """Start ``executable``.

        params_file: path or list of paths (applied in order);
        params: overrides, written to an extra parameter file (typed like YAML);
        node_name: ``-r __node:=name``; remap: {from: to}; args: extra program arguments;
        interfaces: give the process the control_msgs built in build/interfaces/ (if built), as
        ``source install/setup.bash`` would (False: not that copy; one in the environment still applies).
        """
        self._count += 1
        tag = log_name or f"{executable}_{self._count}"
        argv = console_command(executable) + list(args or []) + ["--ros-args"]
        files = [] if params_file is None else (
            [params_file] if isinstance(params_file, (str, Path)) else list(params_file)
        )
        for f in files:
            argv += ["--params-file", str(f)]
        if params:
            pf = write_params_file(self.workdir / f"{tag}_params.yaml", params)
            argv += ["--params-file", pf]
        if node_name:
            argv += ["-r", f"__node:={node_name}"]
        for a, b in (remap or {}).items():
            argv += ["-r", f"{a}:={b}"]
        full_env = dict(os.environ)
        if interfaces:
            full_env.update(interfaces_env(full_env))
        if env:
            full_env.update(env)
        p = NodeProcess(tag, argv, self.workdir / f"{tag}.log", env=full_env, cwd=str(self.workdir))
        p.env_override = env
        self.procs.append(p)
        return p

    def stop_all(self):
        for p in reversed(self.procs):
            p.stop(timeout=8.0)

    def compiled_at_start(self) -> dict:
        """{process: kernels compiled in its warm-up} of the nodes started on the session's cache (no
        NUMBA_CACHE_DIR of their own) that compiled any (their "kernels ready ... (N compiled" line)."""
        out = {}
        for p in self.procs:
            if "NUMBA_CACHE_DIR" in (p.env_override or {}):
                continue
            m = re.findall(r"kernels ready in [\d.]+ s \((\d+) compiled", p.log())
            if m and int(m[-1]) > 0:
                out[p.name] = int(m[-1])
        return out

    def logs(self) -> str:
        out = []
        for p in self.procs:
            out.append(f"===== {p.name} (rc={p.proc.poll()}) {' '.join(p.argv)}\n{p.log()[-6000:]}")
        return "\n".join(out)


# ----------------------------------------------------------------------------- in-test node
class Collector:
    """Messages of one subscription, with their wall-clock receive times."""

    def __init__(self, keep=None):
        self.msgs = []
        self.times = []
        self.keep = keep
        self.count = 0          # messages received (len: those kept)
        self.lock = threading.Lock()

    def __call__(self, msg):
        with self.lock:
            self.count += 1
            self.msgs.append(msg)
            self.times.append(time.monotonic())
            if self.keep and len(self.msgs) > 2 * self.keep:
                del self.msgs[: -self.keep]
                del self.times[: -self.keep]

    def __len__(self):
        return len(self.msgs)

    def snapshot(self):
        with self.lock:
            return list(self.msgs), list(self.times)

    def last(self):
        with self.lock:
            return self.msgs[-1] if self.msgs else None

    def reached(self, t: float) -> bool:
        """True once the newest message read is stamped at or after t (s): a reader of a lockstep loop lags
        it, each reader by its own amount."""
        m = self.last()
        return m is not None and stamp_to_sec(m.header.stamp) >= t

    def clear(self):
        with self.lock:
            self.msgs.clear()
            self.times.clear()


class TestNode:
    """An rclpy node with its own context, spinning in a background thread."""

    __test__ = False  # not a pytest test class

    def __init__(self, name: str = "rne_test_node", use_sim_time: bool = False):
        import rclpy
        from rclpy.executors import SingleThreadedExecutor

        isolate_ros_environment()
        self.rclpy = rclpy
        self.context = rclpy.context.Context()
        rclpy.init(context=self.context)
        overrides = []
        if use_sim_time:
            overrides.append(rclpy.parameter.Parameter("use_sim_time", rclpy.Parameter.Type.BOOL, True))
        self.node = rclpy.create_node(name, context=self.context, parameter_overrides=overrides)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._stop = False
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _spin(self):
        while not self._stop and self.context.ok():
            try:
                self.executor.spin_once(timeout_sec=0.05)
            except Exception:  # context shut down under us
                if self._stop:
                    break
                raise

    # -- topics
    def collect(self, msg_type, topic: str, qos=100, keep=None) -> Collector:
        col = Collector(keep=keep)
        self.node.create_subscription(msg_type, topic, col, qos)
        return col

    def publisher(self, msg_type, topic: str, qos=10):
        return self.node.create_publisher(msg_type, topic, qos)

    def wait_for_subscribers(self, publisher, count=1, timeout=10.0):
        return self.wait_for(lambda: publisher.get_subscription_count() >= count, timeout)

    # -- waiting
    def wait_for(self, predicate, timeout: float, procs=None, interval: float = 0.01) -> bool:
        """Poll ``predicate`` until true or timeout; fail fast if one of ``procs`` died."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return True
            for p in procs or []:
                if not p.alive():
                    raise RuntimeError(f"{p.name} exited with {p.returncode}:\n{p.log()[-4000:]}")
            time.sleep(interval)
        return bool(predicate())

    def sleep(self, seconds: float):
        time.sleep(seconds)

    # -- parameters
    def set_parameters(self, node_name: str, params: dict, timeout: float = 10.0):
        """Set parameters on a remote node. Returns the list of SetParametersResult."""
        from rcl_interfaces.srv import SetParameters

        srv = node_name.rstrip("/") + "/set_parameters"
        if not srv.startswith("/"):
            srv = "/" + srv
        client = self.node.create_client(SetParameters, srv)
        try:
            if not client.wait_for_service(timeout_sec=timeout):
                raise TimeoutError(f"service {srv} not available")
            req = SetParameters.Request()
            req.parameters = [to_parameter_msg(k, v) for k, v in params.items()]
            fut = client.call_async(req)
            deadline = time.monotonic() + timeout
            while not fut.done() and time.monotonic() < deadline:
                time.sleep(0.005)
            if not fut.done():
                raise TimeoutError(f"{srv} did not answer")
            return list(fut.result().results)
        finally:
            self.node.destroy_client(client)

    def get_parameters(self, node_name: str, names: list[str], timeout: float = 10.0):
        from rcl_interfaces.srv import GetParameters

        srv = "/" + node_name.strip("/") + "/get_parameters"
        client = self.node.create_client(GetParameters, srv)
        try:
            if not client.wait_for_service(timeout_sec=timeout):
                raise TimeoutError(f"service {srv} not available")
            req = GetParameters.Request()
            req.names = list(names)
            fut = client.call_async(req)
            deadline = time.monotonic() + timeout
            while not fut.done() and time.monotonic() < deadline:
                time.sleep(0.005)
            if not fut.done():
                raise TimeoutError(f"{srv} did not answer")
            return [from_parameter_value(v) for v in fut.result().values]
        finally:
            self.node.destroy_client(client)

    def shutdown(self):
        self._stop = True
        self._thread.join(timeout=5.0)
        try:
            self.executor.shutdown(timeout_sec=1.0)
        except Exception:
            pass
        try:
            self.node.destroy_node()
        except Exception:
            pass
        try:
            self.rclpy.shutdown(context=self.context)
        except Exception:
            pass


def to_parameter_msg(name: str, value):
    """Python value -> rcl_interfaces/Parameter with the type rclpy would infer (floats stay floats)."""
    from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue

    v = _yaml_value(value)
    pv = ParameterValue()
    if isinstance(v, bool):
        pv.type, pv.bool_value = ParameterType.PARAMETER_BOOL, v
    elif isinstance(v, int):
        pv.type, pv.integer_value = ParameterType.PARAMETER_INTEGER, v
    elif isinstance(v, float):
        pv.type, pv.double_value = ParameterType.PARAMETER_DOUBLE, v
    elif isinstance(v, str):
        pv.type, pv.string_value = ParameterType.PARAMETER_STRING, v
    elif isinstance(v, list):
        if all(isinstance(x, bool) for x in v) and v:
            pv.type, pv.bool_array_value = ParameterType.PARAMETER_BOOL_ARRAY, v
        elif all(isinstance(x, int) and not isinstance(x, bool) for x in v) and v:
            pv.type, pv.integer_array_value = ParameterType.PARAMETER_INTEGER_ARRAY, v
        elif all(isinstance(x, (int, float)) for x in v) and v:
            pv.type, pv.double_array_value = ParameterType.PARAMETER_DOUBLE_ARRAY, [float(x) for x in v]
        elif all(isinstance(x, str) for x in v) and v:
            pv.type, pv.string_array_value = ParameterType.PARAMETER_STRING_ARRAY, v
        else:
            raise ValueError(f"cannot type parameter {name}={value!r}")
    else:
        raise ValueError(f"cannot type parameter {name}={value!r}")
    return Parameter(name=name, value=pv)


def from_parameter_value(pv):
    from rcl_interfaces.msg import ParameterType as T

    return {
        T.PARAMETER_NOT_SET: lambda: None,
        T.PARAMETER_BOOL: lambda: pv.bool_value,
        T.PARAMETER_INTEGER: lambda: pv.integer_value,
        T.PARAMETER_DOUBLE: lambda: pv.double_value,
        T.PARAMETER_STRING: lambda: pv.string_value,
        T.PARAMETER_BYTE_ARRAY: lambda: list(pv.byte_array_value),
        T.PARAMETER_BOOL_ARRAY: lambda: list(pv.bool_array_value),
        T.PARAMETER_INTEGER_ARRAY: lambda: list(pv.integer_array_value),
        T.PARAMETER_DOUBLE_ARRAY: lambda: list(pv.double_array_value),
        T.PARAMETER_STRING_ARRAY: lambda: list(pv.string_array_value),
    }[pv.type]()


# ----------------------------------------------------------------------------- trajectories
def min_jerk(t, T):
    """s, sd, sdd of the minimum-jerk profile 0 -> 1 over [0, T] (held outside)."""
    if t <= 0.0:
        return 0.0, 0.0, 0.0
    if t >= T:
        return 1.0, 0.0, 0.0
    x = t / T
    s = 10 * x**3 - 15 * x**4 + 6 * x**5
    sd = (30 * x**2 - 60 * x**3 + 30 * x**4) / T
    sdd = (60 * x - 180 * x**2 + 120 * x**3) / T**2
    return s, sd, sdd


def stamp_to_sec(stamp) -> float:
    return stamp.sec + stamp.nanosec * 1e-9


def stamp_ns(stamp) -> int:
    """A header stamp as integer nanoseconds: exact, for matching messages of the same instant."""
    return stamp.sec * 1000000000 + stamp.nanosec


def sec_to_stamp(t: float):
    from builtin_interfaces.msg import Time

    ns = int(round(t * 1e9))
    return Time(sec=ns // 1000000000, nanosec=ns % 1000000000)


def wrench_msg(frame: str, F):
    """geometry_msgs/WrenchStamped with ``frame`` as frame_id and F = [force; torque]."""
    from geometry_msgs.msg import WrenchStamped

    m = WrenchStamped()
    m.header.frame_id = frame
    (m.wrench.force.x, m.wrench.force.y, m.wrench.force.z,
     m.wrench.torque.x, m.wrench.torque.y, m.wrench.torque.z) = (float(x) for x in F)
    return m
