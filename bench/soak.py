#!/usr/bin/env python3
"""Soak benchmark (``make soak``): rne_controller at 1 kHz on the 7-DOF arm against rne_sim, in real
time, for 10 minutes, starting in computed-torque mode, with

  * a new trajectory every 2 s, alternating ~/joint_trajectory and ~/follow_joint_trajectory;
  * a parameter change every 5 s, cycling through gains, payload and mode;
  * one rne_sim restart per minute;

beside a bare rclpy timer publishing the same message at 1 kHz (this machine's baseline, as in
``make bench-loop``).

Reports the controller's resident memory every 10 s and its slope over minutes 2-10 (the last 80% of a
shorter run), with ``--tracemalloc`` a tracemalloc diff of its top allocations over that window (it
slows every allocation of the controller, which then no longer keeps 1 kHz on 2 cores), rne_sim's memory per
incarnation, late cycles against the baseline, stale events (one per restart expected), rejected
messages (0 expected), the worst command step outside ramps and stale periods, whether any non-finite
value was published, and whether every restart recovered with a ramp; then the issue's goals.

    bench/soak.py [--minutes 10] [--rate 1000] [--config config/arm7_controller.yaml] [--tracemalloc]

A benchmark, not a test: the figures depend on the machine (2 shared cores here).
"""
from __future__ import annotations

import argparse
import atexit
import importlib.util
import json
import math
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
from bench_loop import Proc, console, period_stats, proc_stat, spin_in_background  # noqa: E402

RAMP_MARGIN = 0.05      # s added to ramp windows (the change applies at the next cycle; arrival jitter)


# ----------------------------------------------------------------------------- the controller, traced
def controller_main(out: str, start_after: float, ros_args) -> int:
    """rne_controller with tracemalloc: a snapshot ``start_after`` s after start, and at exit the top
    allocation differences since then, written to ``out`` (JSON)."""
    import tracemalloc

    tracemalloc.start(1)
    snaps = {}

    def first():
        time.sleep(start_after)
        snaps["start"] = (time.monotonic(), tracemalloc.take_snapshot())

    threading.Thread(target=first, daemon=True).start()
    from rne_control.ros.controller import node as controller_node

    sys.argv = [sys.argv[0]] + list(ros_args)
    code = controller_node.main()
    if "start" in snaps:
        t0, a = snaps["start"]
        b = tracemalloc.take_snapshot()
        keep = (tracemalloc.Filter(False, tracemalloc.__file__), tracemalloc.Filter(False, "<frozen importlib*"),
                tracemalloc.Filter(False, "<unknown>"))
        diff = b.filter_traces(keep).compare_to(a.filter_traces(keep), "lineno")
        top = [{"where": "%s:%d" % (s.traceback[0].filename, s.traceback[0].lineno), "size_diff": s.size_diff,
                "count_diff": s.count_diff, "size": s.size} for s in diff[:15]]
        total = sum(s.size_diff for s in diff)
        Path(out).write_text(json.dumps({"seconds": time.monotonic() - t0, "total_diff": total, "top": top}))
    return code


# ----------------------------------------------------------------------------- helpers
def interfaces_env() -> dict:
    """The variables that make control_msgs usable by the node processes: {} if it is importable here
    (a ROS 2 installation), else those of the test-built copy (test/interfaces/build.py), which is then
    also loaded into this process."""
    try:
        import control_msgs.action  # noqa: F401
        return {}
    except ImportError:
        pass
    import ctypes

    spec = importlib.util.spec_from_file_location("rne_interfaces_build", REPO / "test" / "interfaces" / "build.py")
    b = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(b)
    if not (b.python_site_dir(b.INSTALL) / "control_msgs").is_dir():
        b.build()
    out = {}
    for k, v in b.env_vars().items():
        out[k] = v + (os.pathsep + os.environ[k] if os.environ.get(k) else "")
    sys.path.insert(0, str(b.python_site_dir(b.INSTALL)))
    for lib in sorted((b.INSTALL / "lib").glob("libcontrol_msgs__*.so")):   # found by name without LD_LIBRARY_PATH
        ctypes.CDLL(str(lib), mode=ctypes.RTLD_GLOBAL)
    return out


def trajectory(joints, q0, q1, T, dt=0.1):
    """A JointTrajectory starting on receipt (zero stamp): min-jerk from q0 to q1 in T s, a point every dt s."""
    from rne_control.control.profiles import min_jerk
    from rne_control.ros.conversions import joint_trajectory_message

    return joint_trajectory_message(joints, 0, [(lambda t: min_jerk(t, T, q0, q1), T)], dt)


def fit_slope(t, y):
    """Least-squares slope dy/dt."""
    t, y = np.asarray(t, float), np.asarray(y, float)
    if len(t) < 2:
        return float("nan")
    return float(np.polyfit(t, y, 1)[0])


def stop_slowly(p, timeout=120.0):
    """SIGINT, with ``timeout`` s to write the tracemalloc diff before the SIGKILL; then Proc.stop closes
    the log."""
    from rne_control.ros.process import stop_group

    stop_group(p.p, timeout)
    return p.stop()


# ----------------------------------------------------------------------------- the soak
def run(args) -> int:
    os.environ.setdefault("ROS_DOMAIN_ID", str(171 + os.getpid() % 25))
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    os.environ.pop("ROS_LOCALHOST_ONLY", None)
    import yaml

    duration = 60.0 * args.minutes
    cfg_path = Path(args.config) if Path(args.config).is_absolute() else REPO / args.config
    cfg = yaml.safe_load(cfg_path.read_text())
    cp = dict(cfg["/**/rne_controller"]["ros__parameters"],
              **{k: yaml.safe_load(v) for k, v in (p.split("=", 1) for p in args.ctl_param)})
    sp = cfg["/**/rne_sim"]["ros__parameters"]
    joints = list(cp["joints"])
    n = len(joints)
    q_ready = np.array(cfg["/**/rne_sim"]["ros__parameters"]["initial_positions"], dtype=float)
    kp0, kd0 = list(cp["kp"]), list(cp["kd"])
    ramp_time = float(cp.get("ramp_time", 0.5))
    tmp = Path(tempfile.mkdtemp(prefix="rne_soak_"))
    over = tmp / "override.yaml"
    over.write_text(yaml.safe_dump({
        "/**/rne_controller": {"ros__parameters": {"rate": float(args.rate), "mode": "computed_torque", **{
            k: yaml.safe_load(v) for k, v in (p.split("=", 1) for p in args.ctl_param)}}},
        "/**/rne_sim": {"ros__parameters": {"integrator": "semi_implicit", "sim_rate": float(args.rate)}}}))
    ros_args = ["--ros-args", "--params-file", str(cfg_path), "--params-file", str(over)]
    window0 = 120.0 if duration >= 600.0 else 0.2 * duration     # minutes 2-10 of the full run
    trace_out = tmp / "tracemalloc.json"
    env = dict(os.environ)
    env.update(interfaces_env())
    os.environ.update(env)      # the baseline and the restarted simulators too
    import rclpy
    from rclpy.action import ActionClient
    from rclpy.parameter import Parameter
    from rcl_interfaces.srv import SetParameters
    from diagnostic_msgs.msg import DiagnosticArray
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    from trajectory_msgs.msg import JointTrajectory
    from control_msgs.action import FollowJointTrajectory


    import rne_control as rc

    from rne_control.ros.demo.robots import config_plant, mass_diagonal

    # the model before any process starts: a config it cannot load stops the soak with nothing running
    model_file = Path(cp["model_file"]) if Path(cp["model_file"]).is_absolute() else REPO / cp["model_file"]
    plant = config_plant(rc.load_model(str(model_file)), cp)
    m_diag = mass_diagonal(plant, q_ready)
    # the trajectories' targets: within 0.3 (rad or m) of the ready pose and a tenth of each joint's range
    span = np.diff(plant.position_limits, axis=1)[:, 0]
    reach = np.where(np.isfinite(span), np.minimum(0.3, 0.1 * span), 0.3)
    payload_link = plant.link_names[-1]     # the last link of the model (a URDF's last leaf, the platform)
    changes = [
        ("gains", {"kp": [64.0] * n, "kd": [16.0] * n}),
        ("payload", {"payload_link": payload_link, "payload_mass": 1.0, "payload_com": [0.0, 0.0, 0.05],
                     "payload_inertia": [1e-3, 1e-3, 1e-3, 0.0, 0.0, 0.0]}),
        # a soft PD scaled to each joint's inertia (omega = 4 rad/s, critically damped): being diagonal, it
        # does not decouple the joints as computed torque does, and stiffer ones go unstable here once the
        # commands come late (seen with omega = 10 on a saturated machine)
        ("mode", {"mode": "gravity_coriolis", "hold_kp": (16.0 * m_diag).tolist(), "hold_kd": (8.0 * m_diag).tolist()}),
        ("mode", {"mode": "computed_torque"}),
        ("gains", {"kp": kp0, "kd": kd0}),
        ("payload", {"payload_mass": 0.0, "payload_link": ""}),
    ]
    print("[soak] %s: %d joints at %.0f Hz for %.1f min; ROS_DOMAIN_ID=%s; logs in %s"
          % (cfg_path.name, n, args.rate, args.minutes, os.environ["ROS_DOMAIN_ID"], tmp), flush=True)
    sims = []

    def start_sim():
        p = Proc("rne_sim_%d" % len(sims), console("rne_sim") + ros_args, tmp)
        sims.append({"proc": p, "rss": []})
        return p

    sim = start_sim()
    if not args.tracemalloc:
        ctl_argv = console("rne_controller") + ros_args
    else:
        ctl_argv = [sys.executable, str(Path(__file__).resolve()), "--controller-node", "--trace-out", str(trace_out),
                    # the first snapshot (it holds every trace, tens of MB) before the RSS window opens; the
                    # soak's clock starts after the controller's start-up, so this is earlier still
                    "--trace-start", str(max(5.0, window0 - 15.0)), "--"] + ros_args
    ctl = Proc("rne_controller", ctl_argv, tmp)
    base_json = tmp / "baseline.json"
    base = Proc("baseline", [sys.executable, str(HERE / "bench_loop.py"), "--baseline-node", "--rate", str(args.rate),
                             "--n", str(n), "--out", str(base_json), "--duration", str(duration + 120)], tmp)
    # should the soak end on an error, its processes end with it (stop() leaves a stopped one alone)
    atexit.register(lambda: [p.stop() for p in [ctl, base] + [s["proc"] for s in sims]])

    rclpy.init()
    node = rclpy.create_node("soak_monitor")
    cap = int(args.rate * (duration + 180)) + 1000
    cmd_t = np.zeros(cap)
    cmd_u = np.zeros((cap, n))
    ncmd = [0]
    base_t = np.zeros(cap)
    nbase = [0]
    recording = [False]
    last_js = [None]
    diag = {}
    nonfinite = {"commands": 0, "controller_state": 0}

    def on_cmd(m):
        t = time.perf_counter()
        if not recording[0]:
            return
        k = ncmd[0]
        if k < cap:
            cmd_t[k] = t
            cmd_u[k] = m.data
            ncmd[0] = k + 1

    def on_base(_m):
        if recording[0] and nbase[0] < cap:
            base_t[nbase[0]] = time.perf_counter()
            nbase[0] += 1

    js_t = np.zeros(cap)
    njs = [0]

    def on_js(m):
        q = np.array(m.position[:n])
        last_js[0] = q
        if recording[0] and njs[0] < cap and np.all(np.isfinite(q)) and np.all(np.isfinite(m.velocity)):
            js_t[njs[0]] = time.perf_counter()      # the valid states, as the controller counts them
            njs[0] += 1

    from rne_control.ros.conversions import STATE_FIELDS

    def on_state(m):
        d = np.asarray(m.data)
        if not np.all(np.isfinite(d)):
            nonfinite["controller_state"] += 1
            for f in np.flatnonzero(~np.all(np.isfinite(d.reshape(len(STATE_FIELDS), -1)), axis=1)):
                key = "controller_state." + STATE_FIELDS[f]
                nonfinite[key] = nonfinite.get(key, 0) + 1

    def on_diag(m):
        for st in m.status:
            if "rne_controller" in st.name:
                diag.clear()
                diag.update({kv.key: kv.value for kv in st.values})

    node.create_subscription(Float64MultiArray, cp.get("command_topic", "/effort_controller/commands"), on_cmd, 1000)
    node.create_subscription(Float64MultiArray, "/bench/baseline", on_base, 1000)
    node.create_subscription(JointState, "/joint_states", on_js, 10)
    node.create_subscription(Float64MultiArray, "/rne_controller/controller_state", on_state, 100)
    node.create_subscription(DiagnosticArray, "/diagnostics", on_diag, 10)
    ext_t, ext_r, next_ = np.zeros(cap), np.zeros((cap, n)), [0]
    wall_minus_perf = time.time() - time.perf_counter()

    def on_external(m):   # the momentum observer's r, at state_publish_rate
        if recording[0] and next_[0] < cap and len(m.effort) == n:
            # when the state r comes from was taken (its stamp, on this clock): this node may read it late
            ext_t[next_[0]] = m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec - wall_minus_perf
            ext_r[next_[0]] = m.effort
            next_[0] += 1

    node.create_subscription(JointState, "/rne_controller/external_torque", on_external, 1000)
    traj_pub = node.create_publisher(JointTrajectory, "/rne_controller/joint_trajectory", 10)
    action = ActionClient(node, FollowJointTrajectory, "/rne_controller/follow_joint_trajectory")
    param_client = node.create_client(SetParameters, "/rne_controller/set_parameters")
    halt = spin_in_background(node)

    def set_params(values: dict):
        req = SetParameters.Request()
        req.parameters = [Parameter(k, value=v).to_parameter_msg() for k, v in values.items()]
        fut = param_client.call_async(req)
        t0 = time.monotonic()
        while not fut.done() and time.monotonic() - t0 < 5.0:
            time.sleep(0.005)
        return fut.done() and all(r.successful for r in fut.result().results)

    lock = threading.Lock()

    def count(key):
        with lock:
            goal_results[key] = goal_results.get(key, 0) + 1

    def on_result(f):
        r = f.result()
        key = {4: "succeeded", 5: "canceled", 6: "aborted"}.get(r.status, "status %d" % r.status)
        if r.status == 6:
            key += " (%s)" % r.result.error_string.split(":")[0][:70]
        count(key)

    def on_goal_answer(f):
        h = f.result()
        if not h.accepted:
            count("rejected")
            return
        h.get_result_async().add_done_callback(on_result)

    rng = np.random.default_rng(1)
    events = {"param": [], "restart_stop": [], "restart_start": [], "topic": 0, "goals": 0}
    goal_results = {}
    rss = []                # (t, controller rss)
    code = 0
    try:
        t0 = time.monotonic()
        recording[0] = True
        while ncmd[0] < 500 or not action.server_is_ready() or not param_client.service_is_ready():
            for p in (sim, ctl, base):
                if not p.alive():
                    raise RuntimeError("%s exited: %s" % (p.name, p.log.read_text()[-3000:]))
            if time.monotonic() - t0 > 120:
                raise RuntimeError("the loop did not start within 120 s")
            time.sleep(0.05)
        ncmd[0] = 0
        nbase[0] = 0
        njs[0] = 0
        print("[soak] running after %.1f s" % (time.monotonic() - t0), flush=True)
        start = time.perf_counter()
        t_next = {"traj": 0.5, "param": 5.0, "restart": 60.0, "sample": 0.0}
        k_traj = k_param = 0
        while True:
            now = time.perf_counter() - start
            if now >= duration:
                break
            for p in (ctl, base):
                if not p.alive():
                    raise RuntimeError("%s exited during the soak: %s" % (p.name, p.log.read_text()[-3000:]))
            if now >= t_next["sample"]:
                rss.append((now, proc_stat(ctl.p.pid)[1]))
                sims[-1]["rss"].append((now, proc_stat(sim.p.pid)[1]))
                t_next["sample"] += 10.0
                print("[soak] %6.1f s  controller RSS %.2f MB, %d commands, stale events %s, rejected %s"
                      % (now, rss[-1][1] / 2**20, ncmd[0], diag.get("stale_events"), diag.get("rejected_messages")),
                      flush=True)
            if now >= t_next["restart"] and now < duration - 5.0:
                sims[-1]["rss"].append((now, proc_stat(sim.p.pid)[1]))
                events["restart_stop"].append(time.perf_counter())
                sim.stop()
                time.sleep(0.5)
                sim = start_sim()
                events["restart_start"].append(time.perf_counter())
                t_next["restart"] += 60.0
            if now >= t_next["param"]:
                name, values = changes[k_param % len(changes)]
                k_param += 1
                events["param"].append((time.perf_counter(), name, set_params(values)))
                t_next["param"] += 5.0
            if now >= t_next["traj"] and last_js[0] is not None and np.all(np.isfinite(last_js[0])):
                q0 = last_js[0]
                q1 = q_ready + rng.uniform(-1.0, 1.0, n) * reach
                msg = trajectory(joints, q0, q1, 1.5)
                if k_traj % 2 == 0:
                    traj_pub.publish(msg)
                    events["topic"] += 1
                else:
                    goal = FollowJointTrajectory.Goal(trajectory=msg)
                    sent = action.send_goal_async(goal)
                    sent.add_done_callback(on_goal_answer)
                    events["goals"] += 1
                k_traj += 1
                t_next["traj"] += 2.0
            time.sleep(0.01)
        recording[0] = False
        wall = time.perf_counter() - start
        rss.append((wall, proc_stat(ctl.p.pid)[1]))
        sims[-1]["rss"].append((wall, proc_stat(sim.p.pid)[1]))
        time.sleep(1.5)                      # a last /diagnostics
        diag_end = dict(diag)
    except Exception as e:
        print("[soak] error: %s" % e, file=sys.stderr)
        code = 1
    finally:
        halt()
        rcs = {"rne_controller": stop_slowly(ctl), "baseline": base.stop(), "rne_sim": sim.stop()}
        node.destroy_node()
        rclpy.try_shutdown()
    if code:
        return code

    # ------------------------------------------------------------------ report
    ctl_log = ctl.log.read_text(errors="replace")
    T = cmd_t[:ncmd[0]] - start
    U = cmd_u[:ncmd[0]]
    ctl_rx = period_stats(cmd_t[:ncmd[0]])
    base_rx = period_stats(base_t[:nbase[0]])
    print()
    print("=== soak: rne_controller %.0f Hz, %s, %.1f min (wall %.1f s) ===" % (args.rate, cfg_path.name, args.minutes,
                                                                             wall))
    print("trajectories: %d on the topic, %d goals (%s); %d parameter changes (%d refused); %d rne_sim restarts"
          % (events["topic"], events["goals"], ", ".join("%d %s" % (v, k) for k, v in sorted(goal_results.items())),
             len(events["param"]), sum(1 for e in events["param"] if not e[2]), len(events["restart_stop"])))
    # memory
    print()
    print("controller resident memory every 10 s [MB]:")
    print("  " + " ".join("%.2f" % (r / 2**20) for _, r in rss))
    win = [(t, r) for t, r in rss if t >= window0]
    slope = fit_slope([t / 60.0 for t, _ in win], [r / 1024.0 for _, r in win])
    print("  slope over %.1f-%.1f min: %.1f kB/min (%d samples)" % (window0 / 60, wall / 60, slope, len(win)))
    if trace_out.exists():
        tr = json.loads(trace_out.read_text())
        print("tracemalloc, over the last %.0f s of the controller: %+.1f kB in all; top allocation differences:"
              % (tr["seconds"], tr["total_diff"] / 1024))
        for s in tr["top"][:10]:
            where = s["where"].replace(str(REPO) + "/", "").replace(sys.prefix + "/", "")
            print("  %+9.1f kB %+7d blocks  %s" % (s["size_diff"] / 1024, s["count_diff"], where))
    print("rne_sim resident memory per incarnation [MB] (first sample / last):")
    print("  " + ", ".join("%.1f/%.1f" % (s["rss"][0][1] / 2**20, s["rss"][-1][1] / 2**20) for s in sims if s["rss"]))
    # timing
    print()
    print("%-28s%10s%10s%10s%12s" % ("period at the monitor", "p50 us", "p99 us", "max ms", "late>1.5ms"))
    for name, s in (("rne_controller commands", ctl_rx), ("baseline rclpy timer", base_rx)):
        if s:
            print("%-28s%10.1f%10.1f%10.1f%11.2f%%" % (name, s["p50"] * 1e6, s["p99"] * 1e6, s["max"] * 1e3,
                                                     100 * s["late"]))
    late_ratio = ctl_rx["late"] / base_rx["late"] if base_rx and base_rx["late"] > 0 else float("nan")
    print("late cycles: controller %s, baseline %.2f%%, ratio %.2fx; diagnostics late_cycles %s"
          % ("%.2f%%" % (100 * ctl_rx["late"]), 100 * base_rx["late"], late_ratio, diag_end.get("late_cycles")))
    # events
    restarts = len(events["restart_stop"])
    stale = int(diag_end.get("stale_events", -1))
    rejected = int(diag_end.get("rejected_messages", -1))
    recovered = ctl_log.count("joint states fresh again")
    print()
    print("stale events: %d (restarts: %d)" % (stale, restarts))
    print("rejected messages: %d (%s)" % (rejected, ", ".join("%s %s" % (k[9:], v) for k, v in diag_end.items()
                                                             if k.startswith("rejected_") and v != "0")))
    print("recoveries logged as ramping in: %d, for %d stale events" % (recovered, stale))
    # command steps outside ramps and stale periods
    windows = [(t - start, t - start + ramp_time + RAMP_MARGIN) for t, _, _ in events["param"]]
    for a, b in zip(events["restart_stop"], events["restart_start"] + [math.inf]):
        windows.append((a - start - 0.1, b - start + 3.0 + ramp_time))   # stale, restart, recovery ramp
    # any other stale period: valid joint states more than state_timeout apart, and its recovery ramp
    state_timeout = float(cp.get("state_timeout", 0.05))
    J = js_t[:njs[0]] - start
    gaps = np.flatnonzero(np.diff(J) > state_timeout) if len(J) > 1 else []
    for g in gaps:
        windows.append((J[g], J[g + 1] + ramp_time + RAMP_MARGIN))
    print("stale periods seen at the monitor (valid joint states > %.3f s apart): %d" % (state_timeout, len(gaps)))
    steps = np.abs(np.diff(U, axis=0)) if len(U) > 1 else np.zeros((0, n))
    inside = np.zeros(len(steps), dtype=bool)
    for a, b in windows:
        inside |= (T[1:] >= a) & (T[1:] <= b)
    outside = steps[~inside] if len(steps) else steps
    worst = float(outside.max()) if outside.size else float("nan")
    if outside.size:
        k = np.flatnonzero(~inside)[int(np.argmax(outside.max(axis=1)))]
        j = int(np.argmax(steps[k]))
        print("worst command step outside ramps and stale periods: %.3f N m (joint %s at %.2f s); "
              "inside them: %.3f N m" % (worst, joints[j], T[k + 1], float(steps[inside].max()) if inside.any() else 0))
    # the observer's r: the largest |r| with the controller's model as the simulation's (outside the payload the
    # simulation does not carry, and outside ramps and stale periods), and over the whole run; each r at the
    # time of its state
    RT, RV = ext_t[:next_[0]] - start, np.abs(ext_r[:next_[0]])
    payload_on = [(t - start, "payload_mass" in v and v["payload_mass"] > 0)
                  for (t, name, _), (_, v) in zip(events["param"], (changes[i % len(changes)]
                                                                  for i in range(len(events["param"]))))
                  if name == "payload"]
    # commands more than rne_sim's command_timeout apart (the controller held up by the machine): the simulation
    # brakes, and its brakes' torque is external to the model; r decays over about 5 / K_O after
    sim_timeout = float(sp.get("command_timeout", 0.1))
    gains = [float(x) for x in cp.get("observer.gain", [50.0])]
    brake_gaps = np.flatnonzero(np.diff(T) > sim_timeout) if len(T) > 1 else []
    brakes = [(T[g], T[g + 1] + 5.0 / min(gains)) for g in brake_gaps]
    clean = np.ones(len(RT), dtype=bool)
    for a, b in windows + brakes:
        clean &= ~((RT >= a) & (RT <= b))
    loaded = np.zeros(len(RT), dtype=bool)
    for (t0, on), t1 in zip(payload_on, [t for t, _ in payload_on[1:]] + [math.inf]):
        if on:
            loaded |= (RT >= t0) & (RT < t1 + ramp_time + RAMP_MARGIN)
    from rne_control.ros.demo.report import percent_of_limit
    limits = np.asarray(plant.effort_limits, dtype=float)
    r_clean = RV[clean & ~loaded].max(axis=0) if np.any(clean & ~loaded) else np.full(n, np.nan)
    r_all = RV.max(axis=0) if len(RV) else np.full(n, np.nan)
    print("observer r, largest |r| per joint [N m or N] (%% of the effort limit), %d samples:" % len(RT))
    print("  model as simulated, outside ramps, stale periods and %d braking periods of rne_sim (commands more "
          "than %.3f s apart): " % (len(brakes), sim_timeout) + ", ".join(
        "%.3f (%s)" % (x, percent_of_limit(x, l, "%.2f%%")) for x, l in zip(r_clean, limits)))
    print("  whole run (a payload the simulation lacks reads as external): " + ", ".join("%.3f" % x for x in r_all))
    print("collision events (collision.reaction %s: %s): %s" % (
        diag_end.get("collision_reaction", "?"), "report only" if diag_end.get("collision_reaction") == "none"
        else "latched", diag_end.get("collision_events", "?")))
    nf = int(np.sum(~np.isfinite(U)))
    print("non-finite values published: %d in commands, %d controller_state messages with one%s"
          % (nf, nonfinite["controller_state"], "".join(" (%s: %d)" % (k[17:], v) for k, v in nonfinite.items()
                                                        if k.startswith("controller_state."))))
    print("exit codes: %s" % rcs)
    print()
    goals = [("controller memory slope < 100 kB/min over minutes 2-10", slope < 100.0),
             ("no non-finite value", nf == 0 and nonfinite["controller_state"] == 0),
             ("one stale event per restart", stale == restarts),
             ("every stale event (restarts included) recovered with a ramp", recovered >= stale),
             ("no rejected message", rejected == 0)]
    print("goals:")
    for g, ok in goals:
        print("  [%s] %s" % ("ok" if ok else "MISS", g))
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=10.0, help="length of the soak (default 10)")
    ap.add_argument("--rate", type=float, default=1000.0)
    ap.add_argument("--config", default="config/arm7_controller.yaml")
    ap.add_argument("--ctl-param", action="append", default=[], metavar="NAME=YAML",
                    help="an rne_controller parameter over the config's, e.g. observer.torque_source=measured")
    ap.add_argument("--tracemalloc", action="store_true",
                    help="run the controller under tracemalloc (a diff of its top allocations; slows it down)")
    ap.add_argument("--controller-node", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--trace-out", default="", help=argparse.SUPPRESS)
    ap.add_argument("--trace-start", type=float, default=120.0, help=argparse.SUPPRESS)
    args, rest = ap.parse_known_args(argv)
    if args.controller_node:
        return controller_main(args.trace_out, args.trace_start, [a for a in rest if a != "--"])
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
