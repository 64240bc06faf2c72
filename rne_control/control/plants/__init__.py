"""The :class:`~rne_control.control.plant.Plant` of each kind of model, and :func:`make_plant`, which picks it."""
from .closed_loop import DEFAULT_LOOP_TOLERANCE, ClosedLoopPlant
from .elastic import ElasticPlant
from .parallel import ParallelPlant
from .tree import TreePlant


def make_plant(model, joints=None, locked=None, loop_tolerance=DEFAULT_LOOP_TOLERANCE):
    """The Plant of ``model``: a parallel platform, a closed-loop robot, a tree with elastic or free passive
    joints, or a plain tree (fixed or floating base).

    ``joints``: the controlled coordinates in output order. A tree accepts any subset of its movable
    joints (the others take their ``locked`` value until measured); the other kinds control exactly their
    actuated joints, so ``joints`` may only list those, in any order the plant accepts (its own).
    Raises ValueError naming the offending joints.
    """
    if getattr(model, "legs", None) is not None:
        plant = ParallelPlant(model)
    elif model.is_closed_loop:
        plant = ClosedLoopPlant(model, loop_tolerance=loop_tolerance)
    elif len(model.unactuated_joint_names) > 0:
        plant = ElasticPlant(model)
    else:
        return TreePlant(model, joints, locked)
    if locked:
        raise ValueError("locked joints %s: only a tree robot has uncontrolled joints to lock" % sorted(locked))
    if joints and tuple(joints) != tuple(plant.joint_names):
        raise ValueError("joints %s: the %s model %r controls exactly its actuated joints %s, in that order"
                         % (list(joints), plant.kind, model.name, list(plant.joint_names)))
    return plant


__all__ = ["ClosedLoopPlant", "ElasticPlant", "ParallelPlant", "TreePlant", "make_plant", "DEFAULT_LOOP_TOLERANCE"]
