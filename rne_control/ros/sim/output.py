"""What ``rne_sim`` publishes of its state: ``/joint_states`` and, for a floating base, the base odometry."""
from __future__ import annotations

import numpy as np

from geometry_msgs.msg import WrenchStamped
from nav_msgs.msg import Odometry
from sensor_msgs.msg import JointState

from ..conversions import time_msg
from ..wire import SerializedMessage


LOCKSTEP_DEPTH = 2000   # states kept for reliable readers in lockstep (4 s of sim time at 500 Hz)


class StateOutput:
    """Publishes the simulation ``sim``'s joint states (``sim.joint_states()``: names, positions, velocities,
    applied efforts; positions and velocities with Gaussian noise of ``position_noise`` rad (m) and
    ``velocity_noise`` rad/s (m/s)), followed by the ``held`` joints (names, positions: the uncontrolled ones
    when published; zero velocity and effort), on ``joint_states_topic``; with ``base_frame`` (a floating
    base), the base pose in ``odom_frame`` and its twist in ``base_frame`` on ``odometry_topic``.
    ``p``: the node's parameters (rne_control.ros.sim.settings)."""

    def __init__(self, node, sim, p, held, base_frame=None):
        self.sim = sim
        self.noise = (p["position_noise"], p["velocity_noise"])
        self.rng = np.random.default_rng(p["noise_seed"] or None)
        names = sim.joint_states()[0]
        # in lockstep the simulation runs as fast as the controller answers, faster than real time: a deep
        # history, so that a slower reliable reader (a recorder, a test) still gets every state
        depth = LOCKSTEP_DEPTH if p["lockstep"] else 10
        self.js_pub = node.publishing.create(JointState, p["joint_states_topic"], depth)
        # serialised once; each publish rewrites its numbers (rne_control.ros.wire)
        n_all = len(names) + len(held[0])
        self.js_wire = SerializedMessage(JointState(name=list(names) + list(held[0])),
                                         {"position": n_all, "velocity": n_all, "effort": n_all}, stamped=True)
        n = len(names)
        v = self.js_wire.views
        self.position, self.velocity, self.effort = v["position"][:n], v["velocity"][:n], v["effort"][:n]
        v["position"][n:] = held[1]   # the held joints: at their positions, at rest, no effort
        self.contact_pub = None
        if sim.contact is not None:   # the contact plane's force on the frame's origin, base axes
            self.contact_pub = node.publishing.create(WrenchStamped, "~/contact_wrench", depth)
            self.contact_msg = WrenchStamped()
            self.contact_msg.header.frame_id = getattr(sim.model, "base_link", None) or ""
        self.odom_pub = None
        if base_frame is not None:
            self.odom_pub = node.publishing.create(Odometry, p["odometry_topic"], depth)
            self.odom_msg = Odometry()
            self.odom_msg.header.frame_id = p["odom_frame"]
            self.odom_msg.child_frame_id = base_frame

    def publish(self, stamp_ns: int) -> None:
        """Publish the state now, stamped ``stamp_ns`` (ROS time, ns)."""
        _, q, qd, effort = self.sim.joint_states()
        pn, vn = self.noise
        if pn > 0:
            q = q + self.rng.normal(0.0, pn, q.shape[0])
        if vn > 0:
            qd = qd + self.rng.normal(0.0, vn, qd.shape[0])
        self.position[:] = q
        self.velocity[:] = qd
        self.effort[:] = effort
        self.js_wire.stamp(stamp_ns)
        self.js_pub.publish(self.js_wire.bytes())
        if self.contact_pub is not None:
            F, _ = self.sim.contact_force(self.sim.state.q, self.sim.state.qd)
            c = self.contact_msg
            c.header.stamp = time_msg(stamp_ns)
            c.wrench.force.x, c.wrench.force.y, c.wrench.force.z = (float(x) for x in F)
            self.contact_pub.publish(c)
        if self.odom_pub is not None:
            st = self.sim.state
            o = self.odom_msg
            o.header.stamp = time_msg(stamp_ns)
            pp, qq, vv = o.pose.pose.position, o.pose.pose.orientation, st.twist
            pp.x, pp.y, pp.z = (float(x) for x in st.pos)
            qq.x, qq.y, qq.z, qq.w = (float(x) for x in st.quat)
            tl, ta = o.twist.twist.linear, o.twist.twist.angular
            tl.x, tl.y, tl.z, ta.x, ta.y, ta.z = (float(x) for x in vv)
            self.odom_pub.publish(o)
