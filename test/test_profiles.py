"""rne_control.control.profiles.min_jerk: the rest-to-rest quintic, its derivatives, its hold outside [0, T]
and its shapes (scalar or array time, any shape of end points)."""
import numpy as np

from rne_control.control.profiles import min_jerk


def test_min_jerk_ends_at_rest_and_holds_outside():
    q0, q1, T = np.array([0.2, -1.0]), np.array([1.0, 0.5]), 2.5
    for t, q in ((-1.0, q0), (0.0, q0), (T, q1), (T + 3.0, q1)):
        p, v, a = min_jerk(t, T, q0, q1)
        assert np.allclose(p, q) and np.allclose(v, 0.0) and np.allclose(a, 0.0)
    p, v, a = min_jerk(T / 2, T, q0, q1)
    assert np.allclose(p, (q0 + q1) / 2) and np.allclose(v, 1.875 * (q1 - q0) / T) and np.allclose(a, 0.0)


def test_min_jerk_derivatives_and_shapes():
    T, h = 1.7, 1e-6
    t = np.linspace(0.05, 1.65, 9)
    q0, q1 = np.zeros((2, 3)), np.arange(6.0).reshape(2, 3)
    p, v, a = min_jerk(t, T, q0, q1)
    assert p.shape == v.shape == a.shape == (9, 2, 3)
    assert np.allclose(v, (min_jerk(t + h, T, q0, q1)[0] - min_jerk(t - h, T, q0, q1)[0]) / (2 * h), atol=1e-6)
    assert np.allclose(a, (min_jerk(t + h, T, q0, q1)[1] - min_jerk(t - h, T, q0, q1)[1]) / (2 * h), atol=1e-5)
    s, sd, sdd = min_jerk(0.3, 1.0)          # the normalised profile: scalars
    assert np.ndim(s) == np.ndim(sd) == np.ndim(sdd) == 0 and 0.0 < s < 1.0
