"""The kernels that numba's dispatcher calls work on unmanaged views (dynamics/direct.py: unmanaged,
keep_alive): nothing they read or write may be freed under them.

keep_alive is tested directly on numba's allocation counters: numba frees an array after its last use,
so without keep_alive an unmanaged view outlives its buffer (the premise, checked first). The entry
points are then run many times between allocations of their scratch sizes, and every result must equal
the first bit for bit."""
from pathlib import Path

import numba as nb
import numpy as np
from numba.core.runtime import _nrt_python as nrt, rtsys

import rne_control as rc
from rne_control.dynamics.direct import keep_alive, unmanaged

ROOT = Path(__file__).resolve().parents[1]


def _meminfos_freed():
    return rtsys.get_allocation_stats().mi_free


@nb.njit
def _frees_while_viewed():
    """How many arrays numba frees between np.empty and a point where an unmanaged view of it is live."""
    with nb.objmode(before='int64'):
        before = _meminfos_freed()
    buf = np.empty(1000)
    v = unmanaged(buf)
    with nb.objmode(after='int64'):
        after = _meminfos_freed()
    return after - before, v.shape[0]   # v's shape only: its memory may be gone


@nb.njit
def _frees_while_viewed_kept():
    with nb.objmode(before='int64'):
        before = _meminfos_freed()
    buf = np.empty(1000)
    v = unmanaged(buf)
    with nb.objmode(after='int64'):
        after = _meminfos_freed()
    v[:] = 1.0
    return keep_alive(buf, (after - before, v.sum()))


def test_keep_alive_keeps_the_buffer_of_an_unmanaged_view():
    # NRT's own counters, not the allocator's reuse of the freed memory (which depends on the heap's history)
    was_enabled = nrt.memsys_stats_enabled()
    nrt.memsys_enable_stats()
    try:
        assert _frees_while_viewed() == (1, 1000)   # premise: buf is freed after its last use, under its view
        assert _frees_while_viewed_kept() == (0, 1000.0)
    finally:
        if not was_enabled:
            nrt.memsys_disable_stats()


def test_parallel_entry_points_are_repeatable():
    m = rc.load_parallel(ROOT / "config" / "gough_stewart.yaml")
    pose = np.array(m.home_pose)
    pose[:3] += [0.01, -0.02, 0.03]
    q = rc.platform_inverse_kinematics(m, pose)
    qd, x = np.linspace(-0.05, 0.05, 6), np.linspace(0.2, -0.2, 6)
    calls = [lambda: rc.parallel_joint_inverse_dynamics(m, q, qd, x, pose),
             lambda: rc.parallel_joint_forward_dynamics(m, q, qd, x, pose),
             lambda: rc.parallel_mass_matrix(m, q, pose),
             lambda: rc.platform_forward_kinematics(m, q, pose),
             lambda: rc.platform_jacobian(m, pose),
             lambda: rc.platform_inverse_kinematics(m, pose, leg_joints=True)[1],
             lambda: rc.parallel_inverse_dynamics(m, pose, np.full(6, 0.1), x),
             lambda: rc.parallel_forward_dynamics(m, pose, np.full(6, 0.1), x)]
    first = [np.array(f()) for f in calls]
    assert all(np.all(np.isfinite(r)) for r in first)
    for k in range(300):
        churn = [np.full(n, 1e300) for n in (183, 189, 195, 231, 327)]  # the scratch sizes, and a poison
        for f, ref in zip(calls, first):
            np.testing.assert_array_equal(f(), ref)
        del churn


def test_stacked_and_closed_loop_entry_points_are_repeatable():
    arm = rc.load_dh(ROOT / "config" / "arm7.yaml")
    Q = np.random.default_rng(1).uniform(-1, 1, (50, arm.n))
    pal = rc.load_dh(ROOT / "config" / "palletizer.yaml")
    qa = np.array([0.3, 0.2, -0.3])
    calls = [lambda: rc.inverse_dynamics(arm, Q, Q, Q), lambda: rc.mass_matrix(arm, Q),
             lambda: rc.forward_dynamics(arm, Q, Q, Q),
             lambda: rc.closed_loop_inverse_dynamics(pal, qa, qa, qa), lambda: rc.solve_loops(pal, qa),
             lambda: rc.closed_loop_mass_matrix(pal, qa)]
    first = [np.array(f()) for f in calls]
    for k in range(50):
        churn = [np.full(n, 1e300) for n in (7, 49, 350, 2450)]
        for f, ref in zip(calls, first):
            np.testing.assert_array_equal(f(), ref)
        del churn
