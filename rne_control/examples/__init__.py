"""Runnable examples of the library (no ROS): ``python -m rne_control.examples.<name>``."""
