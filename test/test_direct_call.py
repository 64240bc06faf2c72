"""The direct call of the one-sample kernels (rne_control/dynamics/direct.py) against bad and unusual input.

Each public function that uses it is checked in its own Python process (direct_call_checks.py), so that a
crash of the interpreter fails the test instead of ending the run: wrong ranks, lengths and dtypes raise
ValueError naming the argument; lists, float32, integers, strided views, Fortran-ordered stacks, read-only,
big-endian and zero-imaginary complex arrays give the same bytes as a clean float64 array; the entry point
refuses every other object without touching it. Functional only: nothing here is timed.
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@pytest.mark.parametrize("function", ["inverse_dynamics", "gravity_torques", "coriolis_torques", "mass_matrix",
                                      "forward_dynamics"])
def test_direct_call_inputs(function, compiled_kernels):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, str(HERE / "direct_call_checks.py"), function], env=env, cwd=HERE,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("DONE"), \
        f"exit {r.returncode}\n{r.stdout[-4000:]}\n{r.stderr[-4000:]}"


def test_direct_call_elastic_inverse_dynamics(compiled_kernels):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, str(HERE / "direct_call_elastic.py")], env=env, cwd=HERE,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("DONE"), \
        f"exit {r.returncode}\n{r.stdout[-4000:]}\n{r.stderr[-4000:]}"
