"""ROS 2 layer of rne_control: the only part that imports rclpy."""
