"""External torques and collisions in the control cycle (rne_control.control.external), without ROS: the
cycle in lockstep with the library's simulation (RK4 at 1 kHz, the exact model), a wrench applied at a link.

Independent truths: the wrench's joint torques J^T F from the simulation's own frame kinematics, the
commands the cycle published, and the closed forms of the reactions (g, g - D qd, g + K_R r)."""
import math
import os

import numpy as np
import pytest

import rne_control as rc
from rne_control.control import make_plant
from rne_control.control.cycle import LAW, REACTION, ControlCycle
from rne_control.control.external import NO_EFFORT, RUNNING, UNAVAILABLE
from rne_control.control.settings import Settings
from rne_control.control.simulation import Simulation
from rne_control.control.trajectory import TrajectoryError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NS = 1_000_000_000
H = 0.001
LIMITS = np.array([87.0, 87.0, 87.0, 87.0, 12.0, 12.0, 12.0])


@pytest.fixture(scope="module")
def arm():
    return rc.load_model(os.path.join(ROOT, "urdf", "arm7.urdf"))


Q0 = np.array([0.0, -0.4, 0.1, -2.0, 0.1, 1.6, 0.5])


class Rig:
    """A ControlCycle and a Simulation of the same plant in lockstep: state k stamped k h, command k
    answering it, held over [k h, (k+1) h]."""

    def __init__(self, model, q0=Q0, joints=None, driver_adds_gravity=False, period=H, **settings):
        self.plant = make_plant(model, joints)
        settings.setdefault("effort_limits", list(LIMITS) if self.plant.n == 7 else None)
        settings.setdefault("ramp_time", 0.0)
        self.cycle = ControlCycle(self.plant, Settings.of(self.plant, period, **settings),
                                  driver_adds_gravity=driver_adds_gravity)
        sim_plant = make_plant(model, joints)
        self.sim = Simulation(sim_plant, sim_plant.sim_initial_positions(q0))
        self.k = 0
        self.cmds, self.r, self.t, self.truth, self.outcomes, self.sim_q = [], [], [], [], [], []

    def step(self, efforts=True, publish=True):
        names, q, qd, eff = self.sim.joint_states()
        t = self.k * H
        c = self.cycle
        c.merge(list(names), np.asarray(q), np.asarray(qd), eff if efforts else (), int(round(t * NS)),
                int(round(t * NS)), 0)
        cmd = c.update(int(round(t * NS)))
        assert cmd is not None and np.all(np.isfinite(cmd))
        total = c.total.copy()
        self.cmds.append(cmd.copy())
        self.outcomes.append(c.outcome)
        self.r.append(c.external.r.copy())
        self.t.append(t)
        self.truth.append(self.sim.external_torques(self.sim.state.q) if self.sim.wrench else np.zeros(len(cmd)))
        self.sim_q.append(np.asarray(q)[:len(cmd)].copy())
        assert self.sim.step(total, H)
        self.k += 1

    def run(self, seconds, **kw):
        for _ in range(int(round(seconds / H))):
            self.step(**kw)


def test_a_constant_wrench_is_estimated_to_2_percent_within_5_over_gain(arm):
    rig = Rig(arm, **{"observer.gain": [50.0]})
    rig.run(0.3)
    assert max(abs(r).max() for r in rig.r[50:]) < 0.02 * LIMITS.min()     # holding still: nothing external
    rig.sim.set_wrench("arm7_link4", [8.0, -5.0, 12.0, 0.5, -0.3, 0.2])
    k0 = rig.k
    rig.run(0.4)
    r, truth = np.array(rig.r[k0:]), np.array(rig.truth[k0:])
    settle = int(round(5 / 50.0 / H))
    err = np.abs(r[settle:] - truth[settle:]).max(axis=0)
    scale = np.abs(truth[settle:]).max(axis=0)
    loaded = scale > 1e-9
    assert np.all(err[loaded] <= 0.02 * scale[loaded]), (err, scale)
    assert loaded[:4].all() and not loaded[4:].any()                        # link 4's wrench: joints 1-4 only
    assert np.abs(r[:, 4:]).max() <= 0.01 * LIMITS[4:].min()                # beyond the loaded link: ~0
    # first order with bandwidth K_O: 1 - e^-1 of the way after 1/K_O (within a cycle and the arm's yield)
    j = int(np.argmax(scale))
    k_tau = int(round(1 / 50.0 / H))
    assert r[k_tau, j] / truth[k_tau, j] == pytest.approx(1 - math.exp(-1), abs=0.05)
    assert rig.outcomes[-1] == LAW and rig.cycle.external.status == RUNNING


def test_free_motion_reads_no_external_torque(arm):
    rig = Rig(arm)
    rig.run(0.05)
    c = rig.cycle
    q1 = Q0 + np.array([0.5, 0.3, -0.4, 0.5, 0.6, -0.5, 0.8])
    c.accept_trajectory(list(c.joints), np.array([0.8]), q1[None, :], None, None, None, rig.k * H)
    k0 = rig.k
    rig.run(1.0)
    r = np.array(rig.r[k0:])
    assert np.abs(r).max(axis=0).max() > 0 and np.all(np.abs(r).max(axis=0) <= 0.02 * LIMITS)
    np.testing.assert_allclose(rig.sim.state.q, q1, atol=0.05)          # it did move (no friction compensation)
    assert c.external.monitor.events == 0


def test_detection_within_ln2_over_gain_and_the_damp_reaction(arm):
    K_O = 40.0
    rig = Rig(arm, **{"observer.gain": [K_O], "collision.thresholds": [1.5] * 4 + [1.0] * 3,
                      "collision.reaction": "damp", "collision.damping": [5.0] * 7})
    rig.run(0.1)
    c = rig.cycle
    c.accept_trajectory(list(c.joints), np.array([2.0]), (Q0 + 0.3)[None, :], None, None, None, rig.k * H)
    rig.run(0.05)
    rig.sim.set_wrench("arm7_link4", [0.0, 0.0, 40.0, 0.0, 0.0, 0.0])   # at least twice the threshold
    k0 = rig.k
    tau_ext = rig.sim.external_torques(rig.sim.state.q)
    assert np.abs(tau_ext[:4]).max() >= 2 * 1.5
    for _ in range(200):
        rig.step()
        if c.outcome == REACTION:
            break
    delay = rig.k - 1 - k0   # cycles from the onset to the state that crossed
    assert c.external.monitor.latched and c.collision_started
    assert delay * H <= math.log(2) / K_O + 2 * H, delay
    # the reaction: g - D qd at the state that crossed, without a ramp, clamped
    plant = make_plant(arm)
    plant.set_state(c.mapper.q, c.mapper.qd)
    expected = np.clip(plant.gravity_torques(np.zeros(7)) - 5.0 * c.plant.qd, -LIMITS, LIMITS)
    np.testing.assert_allclose(rig.cmds[-1], expected, rtol=1e-9, atol=1e-9)
    assert not c.traj.running                                           # the trajectory was dropped
    with pytest.raises(TrajectoryError, match="reset_collision"):
        c.accept_trajectory(list(c.joints), np.array([1.0]), Q0[None, :], None, None, None, rig.k * H)
    # pushed on, the damped arm yields at about tau_ext / D; pushed no more, it stops, still latched
    rig.sim.set_wrench(None)
    speed = np.abs(rig.sim.state.qd).max()
    rig.run(1.0)
    assert all(o == REACTION for o in rig.outcomes[-1000:]) and np.abs(rig.sim.state.qd).max() < 0.05 * speed
    # reset: hold the measured position, ramp back in; with the wrench gone nothing latches again
    assert c.reset_collision()
    q_reset = rig.sim.state.q.copy()
    rig.run(0.5)
    assert rig.outcomes[-1] == LAW and not c.external.monitor.latched
    np.testing.assert_allclose(c.traj.q, q_reset, atol=1e-6)
    assert not c.reset_collision()


def test_reflex_and_gravity_reactions_and_report_only(arm):
    for reaction, extra in (("reflex", {"collision.reflex_gain": [0.5] * 7}), ("gravity", {}), ("none", {})):
        rig = Rig(arm, **{"collision.thresholds": [3.0] * 7, "collision.reaction": reaction, **extra})
        rig.run(0.1)
        rig.sim.set_wrench("arm7_link4", [0.0, 30.0, 0.0, 0.0, 0.0, 0.0])
        rig.run(0.15)
        c = rig.cycle
        plant = make_plant(arm)
        plant.set_state(c.mapper.q, c.mapper.qd)
        g = plant.gravity_torques(np.zeros(7))
        if reaction == "none":
            assert rig.outcomes[-1] == LAW and c.external.monitor.detected and not c.external.monitor.latched
            assert c.external.monitor.events == 1
        else:
            assert rig.outcomes[-1] == REACTION
            expected = g + 0.5 * c.external.r if reaction == "reflex" else g
            np.testing.assert_allclose(rig.cmds[-1], np.clip(expected, -LIMITS, LIMITS), rtol=1e-9, atol=1e-9)


def test_driver_adds_gravity(arm):
    """The driver adds g(q): the node publishes the law's torque less g, and the observer still sees the
    joints' whole torque (the estimate matches the normal case)."""
    a, b = Rig(arm), Rig(arm, driver_adds_gravity=True)
    for rig in (a, b):
        rig.run(0.05)
        rig.sim.set_wrench("arm7_link3", [5.0, 3.0, -6.0, 0.0, 0.0, 0.0])
        rig.run(0.2)
    plant = make_plant(arm)
    plant.set_state(b.cycle.mapper.q, b.cycle.mapper.qd)
    g = plant.gravity_torques(np.zeros(7))
    np.testing.assert_allclose(b.cmds[-1] + g, b.cycle.total, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(b.cmds[-1] + g, a.cmds[-1], atol=1e-6)
    np.testing.assert_allclose(b.r[-1], a.r[-1], atol=1e-6)
    assert np.abs(g).max() > 10 * np.abs(b.cmds[-1]).max() or np.abs(b.cmds[-1] - a.cmds[-1]).max() > 1.0


def test_measured_efforts_and_a_state_without_them_pauses(arm):
    rig = Rig(arm, **{"observer.torque_source": "measured"})
    rig.run(0.05)
    rig.sim.set_wrench("arm7_link4", [0.0, 0.0, 20.0, 0.0, 0.0, 0.0])
    rig.run(0.3)
    np.testing.assert_allclose(rig.r[-1], rig.truth[-1], atol=0.02 * np.abs(rig.truth[-1]).max())
    rig.step(efforts=False)
    assert rig.cycle.external.status == NO_EFFORT and np.all(rig.r[-1] == 0.0)
    rig.run(0.3)
    assert rig.cycle.external.status == RUNNING
    np.testing.assert_allclose(rig.r[-1], rig.truth[-1], atol=0.02 * np.abs(rig.truth[-1]).max())


def test_timer_commands_between_states_are_weighted_by_time(arm):
    """States at 500 Hz, commands at 1 kHz: the torque in force over a state interval is the time-weighted
    mean of the commands (each held H); the estimate is as good as in lockstep."""
    rig = Rig(arm)
    c, sim = rig.cycle, rig.sim
    sim.set_wrench("arm7_link4", [6.0, 0.0, 10.0, 0.0, 0.0, 0.0])
    r = None
    for k in range(600):
        t = k * H
        if k % 2 == 0:
            names, q, qd, eff = sim.joint_states()
            c.merge(list(names), np.asarray(q), np.asarray(qd), eff, int(round(t * NS)), int(round(t * NS)), 0)
        c.update(int(round(t * NS)))
        assert sim.step(c.total.copy(), H)
        r = c.external.r.copy()
    truth = sim.external_torques(sim.state.q)
    np.testing.assert_allclose(r, truth, atol=0.02 * np.abs(truth).max())


def test_stale_period_and_payload_change_restart_from_zero(arm):
    rig = Rig(arm)
    rig.sim.set_wrench("arm7_link4", [0.0, 0.0, 20.0, 0.0, 0.0, 0.0])
    rig.run(0.2)
    c = rig.cycle
    assert np.abs(c.external.r).max() > 1.0
    c.apply_settings(Settings.of(c.plant, H, effort_limits=list(LIMITS), ramp_time=0.0, payload_link="arm7_link7",
                                 payload_mass=0.5))
    assert np.all(c.external.r == 0.0)


def test_bad_settings_are_refused_with_the_field_named(arm):
    plant = make_plant(arm)
    for values, match in (({"observer.gain": [0.0]}, "observer.gain"), ({"observer.gain": [math.nan]}, "observer.gain"),
                          ({"observer.gain": [1.0] * 3}, "observer.gain"),
                          ({"observer.gain": [1500.0]}, "cycle time"),
                          ({"collision.thresholds": [1.0, 2.0]}, "collision.thresholds"),
                          ({"collision.thresholds": [-1.0]}, "collision.thresholds"),
                          ({"collision.damping": [-1.0]}, "collision.damping"),
                          ({"observer.wrench_frame": "nowhere"}, "wrench_frame"),
                          ({"observer.torque_source": "guess"}, "torque_source"),
                          ({"collision.reaction": "flee"}, "collision.reaction"),
                          ({"collision.reaction": "damp", "observer.enabled": False}, "disabled")):
        with pytest.raises(ValueError, match=match):
            Settings.of(plant, H, **values)
    s = Settings.of(plant, H)
    np.testing.assert_allclose(s.collision_thresholds, 0.2 * np.asarray(plant.effort_limits))
    assert s.wrench_frame == "arm7_link7"


def test_not_available_for_a_closed_loop_plant():
    model = rc.load_model(os.path.join(ROOT, "config", "palletizer.yaml"))
    plant = make_plant(model)
    s = Settings.of(plant, H)
    c = ControlCycle(plant, s)
    assert c.external.status == UNAVAILABLE and c.external.unavailable
    with pytest.raises(ValueError, match="needs the momentum observer"):
        Settings.of(plant, H, **{"collision.reaction": "gravity"})


def test_a_gap_in_the_states_restarts_the_observer_and_says_so(arm):
    """K_O T >= 1 after a gap of 30 ms (K_O = 50): the observer restarts from this state (counted, logged)
    and then estimates again."""
    rig = Rig(arm, state_timeout=0.1)
    rig.sim.set_wrench("arm7_link4", [0.0, 0.0, 20.0, 0.0, 0.0, 0.0])
    rig.run(0.2)
    c = rig.cycle
    for _ in range(30):            # the states stop for 30 ms; the simulation goes on under the last command
        assert rig.sim.step(c.total.copy(), H)
        rig.k += 1
    rig.step()
    assert c.external.restarts == 1 and np.all(c.external.r == 0.0)
    rig.run(0.2)
    assert c.external.restarts == 1
    np.testing.assert_allclose(rig.r[-1], rig.truth[-1], atol=0.02 * np.abs(rig.truth[-1]).max())


def test_panda_with_its_hand_uncontrolled(arm):
    """The Panda URDF as franka_description publishes it (the hand's fingers uncontrolled, one a <mimic> of
    the other): r at the arm's joints against J^T F of a wrench on the hand, whose fingers the simulation
    holds and the observer's model carries."""
    model = rc.load_model(os.path.join(ROOT, "urdf", "panda.urdf"))
    joints = ["panda_joint%d" % i for i in range(1, 8)]
    rig = Rig(model, joints=joints, effort_limits=list(LIMITS))
    assert rig.cycle.external.status == RUNNING and rig.cycle.external.model.n == 9
    rig.run(0.1)
    rig.sim.set_wrench("panda_hand", [5.0, -8.0, 10.0, 0.4, 0.3, -0.2])
    rig.run(0.3)
    assert rig.cycle.external.settings.wrench_frame == "panda_link7"
    names = rig.sim.names
    for r, truth in zip(rig.r[-50:], rig.truth[-50:]):
        t = np.array([truth[names.index(j)] for j in joints]) if len(truth) != 7 else truth
        np.testing.assert_allclose(r, t, atol=0.02 * np.abs(t).max())


@pytest.mark.parametrize("robot", ["arm7", "panda", "puma560"])
def test_free_motion_over_the_demo_trajectories(robot):
    """rne_demo's out-and-back motion of each shipped tree robot, under its two laws (gravity + PD with the
    demo's gains, then computed torque), at its configuration's rate in lockstep with the simulation (friction
    included, as rne_sim simulates it): |r| <= 2 % of the effort limits throughout."""
    import warnings

    import yaml

    from rne_control.ros.demo.motions import out_and_back
    from rne_control.ros.demo.robots import ROBOTS, config_plant, mass_diagonal
    global H
    spec = ROBOTS[robot]
    with open(os.path.join(ROOT, spec["config"])) as f:
        cfg = yaml.safe_load(f)
    ctl, sim = cfg["/**/rne_controller"]["ros__parameters"], cfg["/**/rne_sim"]["ros__parameters"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = rc.load_model(os.path.join(ROOT, ctl["model_file"]))
    plant = config_plant(model, ctl)
    limits = np.asarray(ctl.get("effort_limits", plant.effort_limits), float)
    kp, kd = np.asarray(ctl["kp"], float), np.asarray(ctl["kd"], float)
    q_start = np.asarray(sim["initial_positions"], float)
    mdiag = mass_diagonal(config_plant(model, ctl), q_start)
    h_saved, H = H, 1.0 / float(ctl["rate"])
    try:
        rig = Rig(model, q0=q_start, joints=list(ctl["joints"]), period=H, effort_limits=list(limits),
                  mode="gravity", hold_kp=list(mdiag * kp), hold_kd=list(mdiag * kd))
        rig.run(0.2)
        c = rig.cycle
        worst = np.zeros(plant.n)
        for mode in ("gravity", "computed_torque"):
            if mode == "computed_torque":
                c.request(Settings.of(c.plant, H, effort_limits=list(limits), ramp_time=0.0, kp=list(kp),
                                      kd=list(kd)))
            q0 = c.mapper.q[:plant.n].copy()
            f = out_and_back(q0, np.asarray(spec["amp"], float), spec["T"])
            times = np.arange(0.05, spec["T"] + 1e-9, 0.05)
            P, V, A = (np.array([f(t)[i] for t in times]) for i in range(3))
            c.accept_trajectory(list(c.joints), times, P, V, A, None, rig.k * H)
            k0 = rig.k
            rig.run(spec["T"] + 0.3)
            worst = np.maximum(worst, np.abs(np.array(rig.r[k0:])).max(axis=0))
            path = np.array(rig.sim_q[k0:])
            assert np.all(np.abs(path - q0).max(axis=0) >= 0.8 * np.abs(spec["amp"]))   # it went out and back
        assert c.external.monitor.events == 0
        assert np.all(worst <= 0.02 * limits), (worst / limits)
        print(robot, "largest |r| / effort limit:", np.round(worst / limits, 4))
    finally:
        H = h_saved


def test_states_no_cycle_took_are_observed(arm):
    """Two states per cycle (a controller that fell behind its driver), measured efforts that change between
    them: the observer still takes every state (at the merge of the next), so r matches J^T F as in lockstep;
    observing only the newest would stretch one state's effort over both intervals."""
    rig = Rig(arm, **{"observer.torque_source": "measured"})
    c, sim = rig.cycle, rig.sim
    sim.set_wrench("arm7_link4", [6.0, 0.0, 10.0, 0.0, 0.0, 0.0])
    rng = np.random.default_rng(3)
    for k in range(400):
        t = k * H
        names, q, qd, eff = sim.joint_states()
        c.merge(list(names), np.asarray(q), np.asarray(qd), eff, int(round(t * NS)), int(round(t * NS)), 0)
        if k % 2 == 0:
            c.update(int(round(t * NS)))
            tau = c.total.copy()
        # the driver applies the command with a random extra torque each step (an effort the node measures)
        assert sim.step(tau + rng.uniform(-2.0, 2.0, 7), H)
    truth = sim.external_torques(sim.state.q)
    assert c.external.t == pytest.approx(399 * H) or c.external.t == pytest.approx(398 * H)
    np.testing.assert_allclose(c.external.r, truth, atol=0.02 * np.abs(truth).max())
