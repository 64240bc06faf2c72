"""Launch rne_controller (and optionally the rne_sim simulated robot) with a parameter file.

    ros2 launch rne_control rne_control.launch.py config:=puma560_controller.yaml use_sim:=true
    ros2 launch rne_control rne_control.launch.py config:=/abs/my_robot.yaml namespace:=arm \
        command_topic:=/arm/effort_controller/commands

Arguments:
    config         parameter file: a name in the package's config/ folder or a path
                   (default puma560_controller.yaml); it holds `/**/rne_controller:` and
                   `/**/rne_sim:` sections
    model_file     overrides the model_file of both nodes when not empty (URDF or DH YAML; absolute,
                   or relative to the package's share folder)
    namespace      namespace of both nodes (the config's `/**/` keys still match)
    command_topic  effort command topic (default /effort_controller/commands, the topic of a
                   ros2_control forward_command_controller named effort_controller)
    joint_states_topic  joint state topic (default /joint_states)
    use_sim        also start rne_sim with the same model (default false)
    use_sim_time   run on /clock (default false)
"""
import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node


def _resolve_config(share, name):
    if os.path.isabs(name) or os.path.exists(name):
        return name
    return os.path.join(share, "config", name)


def _nodes(context, *args, **kwargs):
    share = get_package_share_directory("rne_control")
    config = _resolve_config(share, LaunchConfiguration("config").perform(context))
    model_file = LaunchConfiguration("model_file").perform(context)
    command_topic = LaunchConfiguration("command_topic").perform(context)
    joint_states_topic = LaunchConfiguration("joint_states_topic").perform(context)
    use_sim_time = LaunchConfiguration("use_sim_time").perform(context).lower() in ("true", "1", "yes")

    overrides = {"command_topic": command_topic, "use_sim_time": use_sim_time}
    if model_file:
        overrides["model_file"] = model_file
    remappings = [("/joint_states", joint_states_topic)]

    controller = Node(
        package="rne_control",
        executable="rne_controller",
        name="rne_controller",
        namespace=LaunchConfiguration("namespace"),
        parameters=[config, overrides],
        remappings=remappings,
        output="screen",
        emulate_tty=True,
    )
    sim = Node(
        package="rne_control",
        executable="rne_sim",
        name="rne_sim",
        namespace=LaunchConfiguration("namespace"),
        parameters=[config, overrides],
        remappings=remappings,
        output="screen",
        emulate_tty=True,
        condition=IfCondition(LaunchConfiguration("use_sim")),
    )
    return [sim, controller]


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument(
            "config", default_value="puma560_controller.yaml",
            description="parameter file: name in share/rne_control/config or a path"),
        DeclareLaunchArgument(
            "model_file", default_value="",
            description="overrides the config's model_file when not empty"),
        DeclareLaunchArgument("namespace", default_value="", description="namespace of the nodes"),
        DeclareLaunchArgument(
            "command_topic", default_value="/effort_controller/commands",
            description="effort command topic (std_msgs/Float64MultiArray in joints order)"),
        DeclareLaunchArgument(
            "joint_states_topic", default_value="/joint_states",
            description="joint state topic (sensor_msgs/JointState)"),
        DeclareLaunchArgument(
            "use_sim", default_value="false",
            description="also start rne_sim, the simulated robot, with the same model"),
        DeclareLaunchArgument("use_sim_time", default_value="false", description="run on /clock"),
        OpaqueFunction(function=_nodes),
    ])
