"""Every default derived from a limit works where that limit is infinite or absent (issue 37).

* without ROS: each shipped configuration's model with its effort, velocity and position limits removed
  (a modified copy of its file), in every mode, observer on and off: the settings build, and every cycle
  commands what the same model with its limits commands (where those do not clamp), finite;
* each parameter or value whose default derives from a limit, with the limit infinite or absent: the
  documented fallback;
* through the nodes: rne_controller beside rne_sim in lockstep on a tree DH YAML without effort limits, a
  URDF of continuous joints without <limit>, the closed-loop palletiser without effort limits and the
  Gough-Stewart platform without effort and velocity limits: finite commands, and tracking as good as the
  same model's with its limits (RMS within 10 %).
"""
import math
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import yaml

import rne_control as rc
from rne_control.control import make_plant
from rne_control.control import _kernels as K
from rne_control.control.collision import CollisionMonitor
from rne_control.control.cycle import ControlCycle
from rne_control.control.laws import MODES
from rne_control.control.limits import EffortLimiter, model_limits
from rne_control.control.settings import Settings
from rne_control.control.simulation import Simulation
from rne_control.control.task.law import TASK_MODES, task_unavailable
from rne_control.model.errors import ModelError

REPO = Path(__file__).resolve().parents[1]
CONFIGS = sorted((REPO / "config").glob("*_controller.yaml"))
# the shipped model files no configuration points at, run with their default joints from their reference state
MODELS = sorted((set((REPO / "config").glob("*.yaml")) | set((REPO / "urdf").glob("*.urdf"))) - set(CONFIGS)
                - {REPO / yaml.safe_load(c.read_text())["/**/rne_controller"]["ros__parameters"]["model_file"]
                   for c in CONFIGS})
LIMIT_KEYS = ("effort_limit", "velocity_limit", "lower_limit", "upper_limit")
# models whose position limits choose a loop's assembly mode (docs/closed_loops.md): they keep them here (without
# them the loop solver's guess, 0, is singular: case_loop_reference)
BRANCH_LIMITS = {"fourbar"}
NS = 1_000_000_000


def sections(config):
    """(rne_controller's, rne_sim's) parameters of a shipped configuration."""
    doc = yaml.safe_load(Path(config).read_text())
    return doc["/**/rne_controller"]["ros__parameters"], doc.get("/**/rne_sim", {}).get("ros__parameters", {})


def load(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # published inertias that break the triangle inequality
        return rc.load_model(str(path))


def unlimited_copy(path, out_dir, keys=LIMIT_KEYS) -> Path:
    """A copy of the model file ``path`` in ``out_dir`` without the limits ``keys``: a DH YAML's links lose
    them; a platform's legs lose their effort and velocity limits, and an "upper_limit" of their stroke
    becomes .inf (the schema needs a stroke's lower end, > 0); every <limit> of a URDF reads as unset
    (effort, velocity and lower = upper = 0, as a description that leaves them at 0 does)."""
    path = Path(path)
    out = Path(out_dir) / f"{path.stem}_unlimited{path.suffix}"
    if path.suffix == ".urdf":
        assert set(keys) == set(LIMIT_KEYS)
        out.write_text(re.sub(r"<limit\b[^>]*/>", '<limit effort="0" velocity="0" lower="0" upper="0"/>',
                              path.read_text()))
        return out
    doc = yaml.safe_load(path.read_text())
    if "legs" in doc:
        for leg in [doc.setdefault("leg_defaults", {}), *doc["legs"]]:
            for k in set(keys) - {"lower_limit", "upper_limit"}:
                leg.pop(k, None)
            if "upper_limit" in keys and "upper_limit" in leg:
                leg["upper_limit"] = math.inf
    else:
        for link in doc["links"]:
            for k in keys:
                link.pop(k, None)
    out.write_text(yaml.safe_dump(doc, sort_keys=False))
    return out


# ------------------------------------------------------------------------------------- without ROS
class Pair:
    """A ControlCycle and a Simulation of ``model``'s plant (state k stamped k h, command k held over one step)."""

    def __init__(self, model, joints, locked, q0, h, **settings):
        self.plant = make_plant(model, joints, locked)
        self.settings = Settings.of(self.plant, h, **settings)
        self.cycle = ControlCycle(self.plant, self.settings)
        sp = make_plant(model, joints, locked)
        self.sim = Simulation(sp, None if q0 is None else sp.sim_initial_positions(np.asarray(q0, float)))
        self.h, self.k = h, 0

    def step(self):
        names, q, qd, eff = self.sim.joint_states()
        t_ns = int(round(self.k * self.h * NS))
        c = self.cycle
        c.merge(list(names), np.asarray(q), np.asarray(qd), eff, t_ns, t_ns, 0)
        cmd = c.update(t_ns)
        assert cmd is not None
        cmd = cmd.copy()
        assert self.sim.step(c.total.copy(), self.h)
        self.k += 1
        return cmd, c.limiter.saturated.any()


@pytest.mark.parametrize("config", CONFIGS + MODELS, ids=lambda p: p.stem.replace("_controller", "") + (
    p.suffix if p in MODELS else ""))
def test_every_mode_runs_without_limits(config, tmp_path):
    """A shipped configuration's model, or another shipped model file, without limits (the controller's
    effort_limits parameter unset), in every mode and base it offers, observer on and off: the settings
    build with neither a collision test nor a damping (+inf), and 30 cycles against a simulation command
    finite torques, equal to those the same model with its limits commands where these do not clamp."""
    if config in MODELS:
        ctl, sim = {"model_file": config, "joints": None, "rate": 500.0}, {"initial_positions": None}
    else:
        ctl, sim = sections(config)
    source = REPO / ctl["model_file"]
    keys = LIMIT_KEYS if source.stem not in BRANCH_LIMITS else ("effort_limit", "velocity_limit")
    limited, free = load(source), load(unlimited_copy(source, tmp_path, keys))
    platform = getattr(free, "legs", None) is not None
    assert np.all(np.isinf(free.effort_limits)) and np.all(np.isinf(free.velocity_limits))
    lim = np.asarray(free.position_limits)
    assert source.stem in BRANCH_LIMITS or np.all(np.isinf(lim[:, 1])) and (platform or np.all(np.isinf(lim[:, 0])))
    joints = ctl["joints"]
    locked = {k[len("locked."):]: float(v) for k, v in ctl.items() if k.startswith("locked.")}
    h = 1.0 / float(ctl["rate"])
    q0 = sim["initial_positions"]
    plant = make_plant(free, joints, locked)
    cases = [(m, "fixed") for m in MODES if m not in TASK_MODES or not task_unavailable(plant)]
    cases += [(m, b) for b in plant.bases if b != "fixed" for m in MODES if m not in TASK_MODES]
    compared = 0
    for mode, base in cases:
        for observer in (True, False):
            values = {"mode": mode, "base": base, "observer.enabled": observer, "ramp_time": 0.0,
                      "base_velocity_source": "momentum"}
            a, b = Pair(free, joints, locked, q0, h, **values), Pair(limited, joints, locked, q0, h, **values)
            s = a.settings
            assert np.all(np.isinf(s.effort_limits)) and np.all(np.isinf(s.collision_thresholds))
            assert np.all(np.isinf(s.collision_damping))
            assert s.collision_off == tuple(plant.joint_names)
            assert np.all(np.isfinite(b.settings.collision_thresholds))
            same = True                       # until the limited model's command is clamped
            for _ in range(30):
                (cmd, _), (want, clamped) = a.step(), b.step()
                assert np.all(np.isfinite(cmd)), (mode, base, observer, cmd)
                same = same and not clamped
                if same:
                    np.testing.assert_allclose(cmd, want, rtol=1e-9, atol=1e-9, err_msg=f"{mode} {base} {observer}")
                    compared += 1
    assert compared > 0


# ------------------------------------------------------------------------------------- each derived default
THREE = """<robot name="three">
  <link name="base"/>
  <link name="l1"><inertial><mass value="2.0"/><origin xyz="0.2 0 0"/>
    <inertia ixx="0.01" iyy="0.05" izz="0.05" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="l2"><inertial><mass value="1.0"/><origin xyz="0.2 0 0"/>
    <inertia ixx="0.01" iyy="0.03" izz="0.03" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="l3"><inertial><mass value="0.5"/><origin xyz="0.1 0 0"/>
    <inertia ixx="0.01" iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>
    <limit effort="50" velocity="2" lower="-3" upper="3"/></joint>
  <joint name="j2" type="continuous"><parent link="l1"/><child link="l2"/><origin xyz="0.4 0 0"/>
    <axis xyz="0 1 0"/></joint>
  <joint name="j3" type="revolute"><parent link="l2"/><child link="l3"/><origin xyz="0.4 0 0"/>
    <axis xyz="0 1 0"/><limit effort="0" velocity="0" lower="0" upper="0"/></joint>
</robot>"""


def _three():
    """The plant of THREE: j1 limited (50 N m), j2 continuous without <limit>, j3 with its limits at 0."""
    return make_plant(rc.load_model(THREE))


def case_effort_limits():
    """effort_limits (rne_controller, rne_sim): the model's, none where absent or 0: no clamp there."""
    plant = _three()
    np.testing.assert_array_equal(model_limits(plant.effort_limits), [50.0, math.inf, math.inf])
    s = Settings.of(plant)
    np.testing.assert_array_equal(s.effort_limits, [50.0, math.inf, math.inf])
    lim = EffortLimiter(s.effort_limits)
    tau = np.array([1e6, -1e6, 1e6])
    assert lim.apply(tau) == 1
    np.testing.assert_array_equal(tau, [50.0, -1e6, 1e6])
    link = {"joint": "revolute", "a": 0.3, "alpha": 0.0, "d": 0.0, "theta": 0.0, "mass": 1.0, "com": [0.1, 0.0, 0.0]}
    for given in ({}, {"effort_limit": 0.0, "velocity_limit": 0.0}):
        model = rc.load_dh({"name": "one", "convention": "standard", "links": [{**link, **given}]})   # absent, 0
        assert math.isinf(model.effort_limits[0]) and math.isinf(model.velocity_limits[0])
    for key in ("effort_limit", "velocity_limit"):   # a negative limit is a mistake: refused, naming it
        with pytest.raises(ModelError, match=key + "' must be >= 0"):
            rc.load_dh({"name": "one", "convention": "standard", "links": [{**link, key: -1.0}]})


def case_collision_thresholds():
    """collision.thresholds: 20 % of the effort limit; none (+inf, no test) where it is infinite, logged once
    naming the joints; an explicit threshold works on such a joint. NaN counts on every joint."""
    plant = _three()
    s = Settings.of(plant)
    np.testing.assert_array_equal(s.collision_thresholds, [10.0, math.inf, math.inf])
    assert s.collision_off == ("j2", "j3")
    C = np.zeros((4, 3))
    C[0] = s.collision_thresholds
    idx = np.arange(3, dtype=np.int64)
    assert K.residual_check(np.array([9.9, 1e12, -1e12]), idx, C) == 0       # off: no test
    assert K.residual_check(np.array([10.1, 0.0, 0.0]), idx, C) == 1
    assert K.residual_check(np.array([0.0, math.nan, 0.0]), idx, C) == 1      # a broken observer counts
    m = CollisionMonitor(3, s.collision_thresholds)
    assert not m.check(np.array([0.0, 1e12, 0.0])) and not m.detected
    explicit = Settings.of(plant, **{"collision.thresholds": [10.0, 2.0, 3.0]})
    assert explicit.collision_off == ()
    C[0] = explicit.collision_thresholds
    assert K.residual_check(np.array([0.0, 2.5, 0.0]), idx, C) == 1
    with pytest.raises(ValueError, match="collision.thresholds must be finite"):
        Settings.of(plant, **{"collision.thresholds": [10.0, math.inf, 3.0]})
    # the log: once at start, not again for another change, again when the set changes back
    log = []

    class L:
        def info(self, msg, **_):
            pass

        def warning(self, msg, **_):
            log.append(msg)

        error = warning

    c = ControlCycle(plant, s, log=L())
    off = [m for m in log if m.startswith("collision detection off")]
    assert off == ["collision detection off for joints j2, j3: no finite effort limit; set collision.thresholds"]
    for values in ({"kp": [50.0] * 3}, {"collision.thresholds": [10.0, 2.0, 3.0]}, {}):
        c.apply_settings(Settings.of(plant, **values))
    assert len([m for m in log if m.startswith("collision detection off")]) == 2
    c.apply_settings(Settings.of(plant, **{"observer.enabled": False}))
    assert len([m for m in log if m.startswith("collision detection off")]) == 2


def case_collision_damping():
    """collision.damping: 0.1 s x the effort limit; none (+inf) where it is infinite: collision.reaction damp
    is refused naming the joints, never downgraded; an explicit damping, or another reaction, is accepted."""
    plant = _three()
    s = Settings.of(plant)
    np.testing.assert_array_equal(s.collision_damping, [5.0, math.inf, math.inf])
    with pytest.raises(ValueError, match=r"collision.reaction damp needs a finite collision.damping for every "
                                         r"controlled joint; j2, j3 have no finite effort limit to derive it "
                                         r"from: set collision.damping"):
        Settings.of(plant, **{"collision.reaction": "damp"})
    ok = Settings.of(plant, **{"collision.reaction": "damp", "collision.damping": [5.0, 1.0, 0.5]})
    m = CollisionMonitor(3, ok.collision_thresholds, "damp", ok.collision_damping)
    np.testing.assert_array_equal(m.torque(np.zeros(3), np.ones(3), np.zeros(3)), [-5.0, -1.0, -0.5])
    assert Settings.of(plant, **{"collision.reaction": "gravity"}).collision_reaction == "gravity"
    with pytest.raises(ValueError, match="collision.damping must be finite"):
        CollisionMonitor(3, 1.0, "damp", s.collision_damping)   # the monitor refuses it too


def case_identify_thresholds_floor(tmp_path):
    """rne_identify thresholds: max(1.5 max|r|, 2 % of the effort limit), no floor where the limit is
    infinite; a joint without limit that the record leaves at rest is refused with what to do."""
    from rne_control.control.thresholds import collision_thresholds
    from rne_control.identification.record import load_record, save_record

    doc = yaml.safe_load((REPO / "config" / "two_link.yaml").read_text())
    del doc["links"][1]["effort_limit"]
    path = tmp_path / "two_link.yaml"
    path.write_text(yaml.safe_dump(doc))
    model = load(path)
    q = np.array([0.3, -0.4])
    t = np.arange(400) * 1e-3
    g = rc.gravity_torques(model, q)
    save_record(tmp_path / "rest.npz", t, model.joint_names, np.tile(q, (len(t), 1)), np.tile(g, (len(t), 1)),
                "commanded", qd=np.zeros((len(t), 2)))
    rec = load_record(tmp_path / "rest.npz", model)
    with pytest.raises(ValueError, match="joint 'joint2'.*record a run that moves it, or give it a finite "
                                         "effort limit"):
        collision_thresholds(model, rec)
    doc["links"][1]["effort_limit"] = 10.0
    path.write_text(yaml.safe_dump(doc))
    model = load(path)
    res = collision_thresholds(model, load_record(tmp_path / "rest.npz", model))
    np.testing.assert_allclose(res.thresholds, 0.02 * np.asarray(model.effort_limits))
    assert res.rules == ["floor", "floor"]


def case_identify_move_speed():
    """rne_identify run's move to the excitation's start: at most half the velocity limit, of 1 rad/s (or
    m/s) where a joint has none; at least 2 s."""
    from rne_control.ros.identify.run import start_move_duration

    assert start_move_duration([2.0, math.inf], [0.0, 0.0], [1.0, 3.0]) == pytest.approx(1.875 * 3.0 / 0.5)
    assert start_move_duration([2.0, math.inf], [0.0, 0.0], [4.0, 0.0]) == pytest.approx(1.875 * 4.0 / 1.0)
    assert start_move_duration([math.inf], [0.0], [0.1]) == 2.0


def case_excitation(tmp_path):
    """The excitation trajectory: within the position limits, +-pi about the centre where a joint has none
    (no velocity limit then bounds it), less the margin; finite; every joint moves."""
    model = load(unlimited_copy(REPO / "config" / "two_link.yaml", tmp_path))
    with warnings.catch_warnings():
        warnings.simplefilter("error")              # no inf - inf on the way
        ex = rc.excitation_trajectory(model, 4.0, 3, restarts=1, maxiter=3)
    q, qd, qdd = ex(np.linspace(0.0, 4.0, 801))
    assert np.all(np.isfinite(q)) and np.all(np.isfinite(qd)) and np.all(np.isfinite(qdd))
    assert np.all(np.abs(q) < math.pi) and np.abs(q).max() > 0.9 * math.pi and np.all(np.ptp(q, axis=0) > 0.5)


def case_base_parameter_samples(tmp_path):
    """base_parameters' random configurations: within the limits, [-pi, pi] where a joint has none."""
    from rne_control.identification.base_parameters import random_states

    model = load(unlimited_copy(REPO / "config" / "two_link.yaml", tmp_path))
    q, qd, qdd = random_states(model, 500, np.random.default_rng(0))
    assert np.all(np.abs(q) <= math.pi) and np.ptp(q) > 5.0 and np.all(np.isfinite(qd))


def case_loop_reference(tmp_path):
    """A closed loop's default (locked, initial) positions and the loop solver's guess: mid-range, 0 where a
    joint has no limits; where 0 is a singular guess (the four-bar), the closure is refused naming the loop."""
    plant = make_plant(load(unlimited_copy(REPO / "config" / "palletizer.yaml", tmp_path)))
    limited = make_plant(load(REPO / "config" / "palletizer.yaml"))
    np.testing.assert_array_equal(plant.initial_state[:3], np.zeros(3))   # the shipped ranges are about 0 too
    np.testing.assert_allclose(plant.initial_state, limited.initial_state, atol=1e-12)
    fourbar = load(unlimited_copy(REPO / "config" / "fourbar.yaml", tmp_path))
    assert np.all(fourbar.loops.q_ref == 0.0)
    with pytest.raises(rc.LoopClosureError, match="loop of cut joint 'pin'.*singular configuration"):
        rc.solve_loops(fourbar, np.array([0.0]))


def case_platform_home(tmp_path):
    """A platform's default home: mid-stroke; an unbounded stroke without 'home' is refused naming it."""
    path = unlimited_copy(REPO / "config" / "gough_stewart.yaml", tmp_path)
    model = load(path)                                    # the shipped file gives 'home'
    assert np.all(np.isfinite(make_plant(model).initial_state))
    doc = yaml.safe_load(path.read_text())
    del doc["home"]
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(ModelError, match="'home' is needed where a stroke is unbounded"):
        load(path)


def case_demo_reports():
    """The demos' percentages of the effort limits: "no limit" (never 0 %) where it is infinite, and the
    largest fraction over the joints that have one."""
    from rne_control.ros.demo.report import largest_fraction, percent_of_limit

    assert percent_of_limit(0.5, 50.0) == "1.00" and percent_of_limit(0.5, math.inf) == "no limit"
    assert largest_fraction([[1.0, 100.0], [-2.0, 0.0]], [10.0, math.inf]) == 0.2
    assert math.isnan(largest_fraction([[1.0]], [math.inf]))


CASES = {name[len("case_"):]: f for name, f in dict(globals()).items() if name.startswith("case_")}


@pytest.mark.parametrize("name", sorted(CASES))
def test_derived_default_without_its_limit(name, tmp_path):
    f = CASES[name]
    f(tmp_path) if f.__code__.co_argcount else f()


# ------------------------------------------------------------------------------------- through the nodes
def continuous_copy(path, out_dir) -> Path:
    """A copy of the URDF ``path`` whose revolute joints are continuous, without any <limit>."""
    path = Path(path)
    out = Path(out_dir) / f"{path.stem}_continuous.urdf"
    text = re.sub(r"\s*<limit\b[^>]*/>", "", path.read_text())
    out.write_text(text.replace('type="revolute"', 'type="continuous"'))
    return out


def node_config(config, model_file, out) -> Path:
    """The shipped configuration ``config`` on ``model_file``, without either node's effort_limits parameter
    (the model's limits apply, and the defaults derived from them)."""
    doc = yaml.safe_load(Path(config).read_text())
    for section in doc.values():
        section["ros__parameters"]["model_file"] = str(model_file)
        section["ros__parameters"].pop("effort_limits", None)
    Path(out).write_text(yaml.safe_dump(doc, default_flow_style=None, sort_keys=False))
    return Path(out)


# kind: (shipped configuration, its model without limits (from tmp_path), motion amplitude (joints; platform:
# MOTION of test_kinds_node), duration s, whether the observer runs there)
KINDS = {
    "tree_dh": ("puma560_controller.yaml",
                lambda d: unlimited_copy(REPO / "config" / "puma560.yaml", d, ("effort_limit",)),
                [0.5, -0.4, 0.4, 0.6, 0.5, 0.8], 2.0, True),
    "urdf_continuous": ("arm7_controller.yaml", lambda d: continuous_copy(REPO / "urdf" / "arm7.urdf", d),
                        [0.3, 0.25, -0.25, 0.3, 0.4, 0.25, 0.5], 1.5, True),
    "closed_loop": ("palletizer_controller.yaml",
                    lambda d: unlimited_copy(REPO / "config" / "palletizer.yaml", d, ("effort_limit",)),
                    [0.6, 0.25, -0.3], 2.0, False),
    "platform": ("gough_stewart_controller.yaml",
                 lambda d: unlimited_copy(REPO / "config" / "gough_stewart.yaml", d,
                                          ("effort_limit", "velocity_limit", "upper_limit")), None, 1.5, False),
}


# s of sim time from sending a trajectory to its start: a trajectory that arrives before its start waits for it,
# one that arrives later starts part-way (lockstep runs faster than real time, and a loaded machine delays DDS)
LEAD = 1.5


def _track(ros_procs, ros_node, config, amp, T):
    """One lockstep run of ``config``: (RMS tracking error (joints: per joint, rad or m; platform: position m
    and rotation rad), every published command, the loop)."""
    from test_closed_loop import Loop, min_jerk_traj, tracking_error

    ctl, sim = sections(config)
    joints = ctl["joints"]
    loop = Loop(ros_procs, ros_node, config, n=len(joints))
    loop.names = list(joints)
    if amp is None:
        from trajectory_msgs.msg import MultiDOFJointTrajectory
        from test_kinds_node import platform_trajectory_msg, pose_error

        pub = ros_node.publisher(MultiDOFJointTrajectory, "/rne_controller/platform_trajectory", 10)
        loop.wait_running()
        assert ros_node.wait_for_subscribers(pub, 1, 20.0)
        t_start = loop.sim_now() + LEAD
        pub.publish(platform_trajectory_msg(T, t_start))
        loop.wait_sim_time(t_start + T + 0.6, wall_timeout=120.0)
        loop.wait_states(t_start + T + 0.5)
        model = load(ctl["model_file"])
        rms = np.array(pose_error(model, loop.states.snapshot()[0], t_start, T))
    else:
        loop.wait_running()
        f = min_jerk_traj(np.array(sim["initial_positions"])[:len(joints)], amp, T)
        t_start = loop.send_trajectory(joints, f, T, lead=LEAD)
        loop.wait_sim_time(t_start + T + 0.6, wall_timeout=120.0)
        rms, _ = tracking_error(loop, f, t_start, T)
    cmds = np.array([m.data for m in loop.cmds.snapshot()[0]])
    return rms, cmds, loop


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_nodes_start_and_track_without_limits(kind, ros_procs, ros_node, tmp_path):
    """rne_controller beside rne_sim in lockstep, the model with its limits and then without (neither node
    given effort_limits): both start, publish finite commands and track the same trajectory equally well
    (RMS within 10 %); without limits the controller says once which joints have no collision test (where
    the observer runs). On the tree: collision.reaction damp without collision.damping is refused at run
    time (the running value stays) and at start (the node exits naming the reason)."""
    config, unlimited, amp, T, observer = KINDS[kind]
    shipped = REPO / "config" / config
    source = REPO / sections(shipped)[0]["model_file"]
    runs = {}
    for label, model_file in (("limits", source), ("none", unlimited(tmp_path))):
        cfg = node_config(shipped, model_file, tmp_path / f"{label}.yaml")
        rms, cmds, loop = _track(ros_procs, ros_node, cfg, amp, T)
        assert len(cmds) > 100 and np.all(np.isfinite(cmds)), loop.ctl.log()[-3000:]
        log = loop.ctl.log()
        off = [ln for ln in log.splitlines() if "collision detection off for joints" in ln]
        assert len(off) == (1 if observer and label == "none" else 0), log[-3000:]
        if label == "none" and kind == "tree_dh":
            res = ros_node.set_parameters("/rne_controller", {"collision.reaction": "damp"})
            assert not res[0].successful and "set collision.damping" in res[0].reason, res[0].reason
            assert ros_node.get_parameters("/rne_controller", ["collision.reaction"]) == ["none"]
            assert "parameter change refused: collision.reaction damp needs" in loop.ctl.log()
        for p in (loop.ctl, loop.sim):
            assert p.stop() == 0, f"{p.name} did not exit cleanly:\n{p.log()[-3000:]}"
        runs[label] = rms
        print(f"{kind} ({label}): RMS {np.array2string(rms, precision=3)}; {len(cmds)} commands, largest "
              f"|command| {np.abs(cmds).max():.4g}")
    total = {k: float(np.sqrt(np.mean(np.square(v)))) for k, v in runs.items()}
    assert abs(total["none"] - total["limits"]) <= 0.1 * total["limits"], total
    if kind == "tree_dh":
        ctl = ros_procs.start("rne_controller", params_file=tmp_path / "none.yaml",
                              params={"collision.reaction": "damp"}, log_name="refused")
        assert ros_node.wait_for(lambda: not ctl.alive(), 60.0), ctl.log()
        assert ctl.returncode != 0 and "set collision.damping" in ctl.log(), ctl.log()
