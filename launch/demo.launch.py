"""The rne_control demo: rne_sim + rne_controller for a robot, driven through a demo trajectory by rne_demo.

    ros2 launch rne_control demo.launch.py               # PUMA 560
    ros2 launch rne_control demo.launch.py robot:=ffsr   # free-flying space robot

Arguments:
    robot   puma560 | ffsr | arm7 (default puma560): selects config/<robot>_controller.yaml
    output  path of the plot rne_demo writes (default rne_demo.png in the working directory)

rne_demo runs with --no-spawn: it drives the two nodes started here instead of starting its own.
(`rne_demo` alone, without launch, starts both nodes itself.)
"""
import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription, OpaqueFunction
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node


def _demo(context, *args, **kwargs):
    share = get_package_share_directory("rne_control")
    robot = LaunchConfiguration("robot").perform(context)
    output = LaunchConfiguration("output").perform(context)
    control = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(os.path.join(share, "launch", "rne_control.launch.py")),
        launch_arguments={
            "config": f"{robot}_controller.yaml",
            "use_sim": "true",
        }.items(),
    )
    demo = Node(
        package="rne_control",
        executable="rne_demo",
        name="rne_demo",
        arguments=["--no-spawn", "--robot", robot, "--output", output],
        parameters=[{"use_sim_time": False}],
        remappings=[("/joint_states", "/joint_states")],
        output="screen",
        emulate_tty=True,
    )
    return [control, demo]


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument("robot", default_value="puma560", description="puma560 | ffsr | arm7"),
        DeclareLaunchArgument("output", default_value="rne_demo.png", description="plot file"),
        OpaqueFunction(function=_demo),
    ])
