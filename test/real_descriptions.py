"""Real robot descriptions as robots publish them, unedited: an arm with its gripper (or two arms, a head,
legs), the arm controlled and the rest uncontrolled. The Franka Panda with its hand, Baxter, PR2 and
Talos come from the example-robot-data wheel; the UR5 with a Robotiq 2F-85 is test/urdf's own, written
from the published kinematics.

The truth is Pinocchio's RNE on the whole description, every <mimic> joint an independent joint placed
by its rule (Pinocchio's default), restricted to the arm.
"""
from pathlib import Path

import numpy as np

from oracle import Oracle, erd

HERE = Path(__file__).parent

# name -> (URDF path, the controlled arm, the gripper's actuated joint and its range)
DESCRIPTIONS = {
    "panda": (erd("panda_description/urdf/panda.urdf"), [f"panda_joint{i}" for i in range(1, 8)],
              "panda_finger_joint1", (0.0, 0.04)),
    "baxter": (erd("baxter_description/urdf/baxter.urdf"),
               ["left_s0", "left_s1", "left_e0", "left_e1", "left_w0", "left_w1", "left_w2"],
               "l_gripper_l_finger_joint", (0.0, 0.02)),
    "pr2": (erd("pr2_description/urdf/pr2.urdf"),
            ["r_shoulder_pan_joint", "r_shoulder_lift_joint", "r_upper_arm_roll_joint", "r_elbow_flex_joint",
             "r_forearm_roll_joint", "r_wrist_flex_joint", "r_wrist_roll_joint"],
            "r_gripper_l_finger_joint", (0.0, 0.5)),
    "talos": (erd("talos_data/robots/talos_full_v2.urdf"), [f"arm_left_{i}_joint" for i in range(1, 8)],
              "gripper_left_joint", (-0.9, 0.0)),
    "ur5_2f85": (str(HERE / "urdf" / "ur5_robotiq_2f85.urdf"),
                 ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint",
                  "wrist_3_joint"], "finger_joint", (0.0, 0.8)),
}

# a configuration of each arm away from singular poses and joint limits, its gravity torques within 2/3 of
# the effort limits (rad)
ARM_Q = {
    "panda": [0.3, -0.5, 0.2, -2.0, 0.1, 1.6, 0.7],
    "baxter": [0.4, 0.9, 0.3, 0.6, -0.4, 0.8, 0.2],
    "pr2": [-0.2, 1.2, -1.5, -1.2, 0.6, -0.7, 0.4],
    "talos": [0.3, 0.4, 0.2, -1.0, 0.3, -0.2, 0.1],
    "ur5_2f85": [0.5, -1.2, 1.4, -0.8, 1.1, 0.3],
}


def full_state(model, arm, q_arm, qd_arm, fixed=None, fixed_qd=None):
    """Every joint of ``model`` (its order): the arm at q_arm, qd_arm; the other actuated joints at ``fixed``
    (name -> value, default 0) with velocities ``fixed_qd``; mimic joints by their rules."""
    from rne_control.control.plants.tree import mimic_rules
    from rne_control.model.loops import mimic_roots

    names = model.joint_names
    q, qd = np.zeros(model.n), np.zeros(model.n)
    for j, v in (fixed or {}).items():
        q[names.index(j)] = v
    for j, v in (fixed_qd or {}).items():
        qd[names.index(j)] = v
    for k, j in enumerate(arm):
        q[names.index(j)], qd[names.index(j)] = q_arm[k], qd_arm[k]
    for f, (root, mult, off) in mimic_roots(mimic_rules(model)).items():
        q[names.index(f)] = mult * q[names.index(root)] + off
        qd[names.index(f)] = mult * qd[names.index(root)]
    return q, qd


def oracle(name, model):
    return Oracle(DESCRIPTIONS[name][0], model)
