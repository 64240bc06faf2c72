"""The :class:`~rne_control.control.plant.Plant` of each kind of model, and :func:`make_plant`, which picks it."""
from ..plant import DEFAULT_LOOP_TOLERANCE
from .closed_loop import ClosedLoopPlant
from .elastic import ElasticPlant
from .parallel import ParallelPlant
from .tree import TreePlant, driven_mimic_joints


def make_plant(model, joints=None, locked=None, loop_tolerance=DEFAULT_LOOP_TOLERANCE):
    """The Plant of ``model``: a parallel platform, a closed-loop robot, a tree with elastic or free passive
    joints, or a plain tree (fixed or floating base).

    ``joints``: the controlled coordinates in output order, any subset of the model's actuated joints (the
    active joints of a closed loop, the rigid joints of an elastic robot, the legs of a platform); default:
    all of them, in the model's order. The rest of the mechanism is uncontrolled: an uncontrolled actuated
    joint takes its measured position and velocity, else its ``locked`` position (rad or m) at rest, and
    zero acceleration, and gets no command; a mimic joint follows its leader; a loop closes from its active
    joints. ``loop_tolerance`` (rad or m): how far a published passive joint may be from its closed value
    (farther: a loop with a controlled joint rejects the state, an uncontrolled one ignores the value).

    A closed-loop model whose loops are all mimic couplings that no controlled joint drives (a gripper's
    fingers beside a controlled arm) runs as a tree, its mimic joints completed from their leaders; with elastic
    joints, as an elastic tree the same way (other loops with elastic joints are refused). Raises
    ValueError naming the joints that cannot be controlled as asked, and why.
    """
    if getattr(model, "legs", None) is not None:
        return ParallelPlant(model, joints, locked)
    if model.is_closed_loop:
        if len(model.elastic_joint_names) > 0:   # mimic joints of uncontrolled leaders only (ElasticPlant says)
            return ElasticPlant(model, joints, locked, loop_tolerance)
        if len(model.loops.cut) == 0 and not driven_mimic_joints(model, joints or model.active_joint_names):
            return TreePlant(model, joints, locked, loop_tolerance)
        return ClosedLoopPlant(model, joints, locked, loop_tolerance)
    if len(model.unactuated_joint_names) > 0:
        return ElasticPlant(model, joints, locked)
    return TreePlant(model, joints, locked, loop_tolerance)


__all__ = ["ClosedLoopPlant", "ElasticPlant", "ParallelPlant", "TreePlant", "make_plant", "DEFAULT_LOOP_TOLERANCE"]
