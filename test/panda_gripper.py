"""The Franka Panda with its hand (example-robot-data, unedited) as an elastic arm, and the same arm
without its hand, the hand folded into link 7 by Pinocchio: the truths of test_elastic_gripper*.py.

Stiffness, damping and rotor inertia are config/arm7_elastic.yaml's (its comments give the sources):
K = 6.7e4 N m/rad (joints 1-4) and 9.2e3 (5-7), D = 14 and 3 N m s/rad, rotor inertia 0.3 and 0.1 kg m^2.

Two ways to make a Panda joint elastic, both through ``load_urdf(elastic=...)`` (the nodes' ``elastic.<joint>.*``
parameters) on the unedited URDF:

- ``passive``: ``stiffness`` and ``damping``: the joint becomes a spring with no motor (its rest position the
  ready pose's), the other arm joints are controlled;
- ``series``: ``rotor_inertia`` too: a series-elastic drive (model/series.py), as config/arm7_elastic.yaml
  writes one in DH: ``panda_jointI`` keeps its name, limits and friction and becomes the gear output (rigid,
  controlled, the reflected rotor inertia its joint's, Khalil's Ia), its child the massless body
  ``panda_jointI_gear``, and ``panda_jointI_deflection`` (elastic, the link side minus the gear output)
  carries the link. Every arm joint stays controlled.
"""
import xml.etree.ElementTree as ET

import numpy as np

from oracle import erd

PANDA = erd("panda_description/urdf/panda.urdf")
ARM = [f"panda_joint{i}" for i in range(1, 8)]
FINGER, FOLLOWER = "panda_finger_joint1", "panda_finger_joint2"
HAND_JOINTS = ["panda_joint8", "panda_hand_joint", "panda_hand_tcp_joint", FINGER, FOLLOWER]
HAND_LINKS = ["panda_link8", "panda_hand", "panda_hand_tcp", "panda_leftfinger", "panda_rightfinger"]
FINGER_LOCKED = 0.03            # m: the fingers' locked position (half open; range 0 to 0.04)
READY = [0.0, -0.7854, 0.0, -2.3562, 0.0, 1.5708, 0.7854]
STIFFNESS = [6.7e4] * 4 + [9.2e3] * 3
DAMPING = [14.0] * 4 + [3.0] * 3
ROTOR = [0.3] * 4 + [0.1] * 3

# name -> (series joints, elastic joints as numbers 1..7): the arms of the tests
CASES = {
    "passive_2_4": ((), (2, 4)),
    "series_2_4": ((2, 4), (2, 4)),
    "series_all": (tuple(range(1, 8)), tuple(range(1, 8))),
}


def case(name, hand=True):
    """(URDF XML, elastic map, controlled joints) of arm ``name`` (CASES) with its hand, or without it
    (the hand folded into link 7)."""
    series, springs = CASES[name]
    xml = hand_xml() if hand else handless_xml()
    elastic = {}
    for i in springs:
        spec = {"stiffness": STIFFNESS[i - 1], "damping": DAMPING[i - 1]}
        elastic[ARM[i - 1]] = dict(spec, rotor_inertia=ROTOR[i - 1]) if i in series else \
            dict(spec, rest_position=READY[i - 1])
    joints = [j for k, j in enumerate(ARM) if k + 1 in series or k + 1 not in springs]
    return xml, elastic, joints


def hand_xml():
    with open(PANDA) as f:
        return f.read()


def hand_inertia(finger=FINGER_LOCKED):
    """(mass kg, com m, inertia about the com kg m^2) of link 7 with everything below it (link 8, the hand,
    its TCP frame and the fingers at ``finger``, the second by its rule), in link 7's frame: Pinocchio's
    buildReducedModel, the fingers locked."""
    import pinocchio as pin

    pm = pin.buildModelFromUrdf(PANDA)
    root = ET.parse(PANDA).getroot()
    mimic = root.find(f"joint[@name='{FOLLOWER}']/mimic")
    q = pin.neutral(pm)
    q[pm.joints[pm.getJointId(FINGER)].idx_q] = finger
    q[pm.joints[pm.getJointId(FOLLOWER)].idx_q] = (float(mimic.get("multiplier", 1.0)) * finger
                                                   + float(mimic.get("offset", 0.0)))
    reduced = pin.buildReducedModel(pm, [pm.getJointId(FINGER), pm.getJointId(FOLLOWER)], q)
    I = reduced.inertias[reduced.getJointId("panda_joint7")]
    return float(I.mass), np.array(I.lever), np.array(I.inertia)


def handless_xml(finger=FINGER_LOCKED):
    """The Panda URDF without link 8 and the hand, link 7's inertial the composite of :func:`hand_inertia`."""
    root = ET.parse(PANDA).getroot()
    for tag, names in (("joint", HAND_JOINTS), ("link", HAND_LINKS)):
        for name in names:
            root.remove(root.find(f"{tag}[@name='{name}']"))
    link7 = root.find("link[@name='panda_link7']")
    link7.remove(link7.find("inertial"))
    m, c, I = hand_inertia(finger)
    inertial = ET.SubElement(link7, "inertial")
    ET.SubElement(inertial, "origin", xyz=" ".join(repr(float(x)) for x in c), rpy="0 0 0")
    ET.SubElement(inertial, "mass", value=repr(m))
    ET.SubElement(inertial, "inertia", **{k: repr(float(I[a, b])) for k, (a, b) in zip(
        ("ixx", "iyy", "izz", "ixy", "ixz", "iyz"), ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2)))})
    return ET.tostring(root, encoding="unicode")

