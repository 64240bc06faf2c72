"""``rne_controller``: the node (:mod:`.node`), its parameters (:mod:`.settings`), diagnostics, loop
statistics, the FollowJointTrajectory action server and the parallel platform's topics. The cycle itself
is ROS-free: :mod:`rne_control.control.cycle`."""
