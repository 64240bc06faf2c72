"""Models with fewer joints than a model: ``restricted`` drops bodies (what a fixed-base torque does not
depend on), ``welded`` fixes joints at given positions (what Pinocchio calls a reduced model,
``buildReducedModel``; a simulation of a floating-base robot whose uncontrolled joints are held still
integrates it). Both keep the model's inertial parameters, friction, limits, gravity, payload (where its
link is kept) and base."""
import numpy as np

from .errors import ModelError
from .layout import PRISMATIC
from .loops import loop_groups
from .model import Model
from .spatial import rot_z, transform, transform_params


def restricted(model, joints):
    """The model of the bodies of ``joints`` alone: the other bodies are dropped, every kept joint stays
    movable, in ``model``'s joint order.

    ``joints`` must hold, with each joint, every joint between it and the base. On a fixed base the torque of
    a joint depends only on the joints between it and the base and on its subtree, so a restricted model that
    keeps those gives that torque exactly, whatever the dropped joints do. Raises ModelError naming a joint
    whose parent joint is missing."""
    keep = {model.joint_index(j) for j in joints}
    tree = model._tree
    topo = tree[:, 15:18]                                # parent, joint type, joint index per body
    bodies = [i for i in range(model.nb) if int(topo[i, 2]) in keep]
    new_body = {b: r for r, b in enumerate(bodies)}
    names = [j for k, j in enumerate(model.joint_names) if k in keep]
    new_joint = {model.index[j]: r for r, j in enumerate(names)}
    rows = []
    for b in bodies:
        parent = int(topo[b, 0])
        if parent >= 0 and parent not in new_body:
            raise ModelError(f"restricted model of '{model.name}': joint "
                             f"'{model.joint_names[int(topo[b, 2])]}' is kept but the joint before it, "
                             f"'{model.joint_names[int(topo[parent, 2])]}', is not")
        rows.append((new_body.get(parent, -1), topo[b, 1], new_joint[int(topo[b, 2])]))
    frames = {k: (new_body.get(b, -1), T) for k, (b, T) in model.link_frames.items() if b < 0 or b in new_body}
    params = np.vstack([model._params[bodies], model._params[model.nb:model.nb + 1]])
    return _reduced(model, names, rows, tree[bodies, 0:15], params, frames)


def welded(model, joints, q):
    """``model`` with only ``joints`` movable (in that order), every other joint welded at its position in
    ``q`` (rad or m, ``model.joint_names`` order): each welded body is folded into the nearest kept body
    above it (or the base), its inertia carried there, its links' frames with it. Friction, rotor inertia,
    limits, gravity, payload and the floating base are kept; the welded joints' are dropped.

    The kept joints must be rigid joints outside every loop and mimic coupling: raises ModelError naming them otherwise, or an unknown joint."""
    joints = list(joints)
    keep = [model.joint_index(j) for j in joints]
    if len(set(keep)) != len(keep):
        raise ModelError(f"welded model of '{model.name}': joints {joints} repeat a joint")
    in_loops = {model.joint_names[k] for group in loop_groups(model) for k in group[0] + group[1]}
    bad = [j for j in joints if j in in_loops or j in model.unactuated_joint_names]
    if bad:
        raise ModelError(f"welded model of '{model.name}': joints {bad} are elastic or free joints, or joints of a "
                         "loop or a mimic coupling, which a welded model cannot keep")
    q = np.asarray(q, float)
    if q.shape != (model.n,) or not np.isfinite(q).all():
        raise ModelError(f"welded model of '{model.name}': q needs {model.n} finite positions "
                         f"({list(model.joint_names)})")
    tree, params = model._tree, model._params
    new_joint = {k: r for r, k in enumerate(keep)}
    # per body: the kept body it ends in (new index, -1 = the base) and its pose in that body's frame
    anchor, pose = [], []
    topo, kin, new_params = [], [], []
    base = np.array(params[model.nb])
    for b in range(model.nb):
        parent, jtype, k = int(tree[b, 15]), tree[b, 16], int(tree[b, 17])
        a, T_ap = (-1, np.eye(4)) if parent < 0 else (anchor[parent], pose[parent])
        # the pre-joint frame in the anchor's: X_tree = rot(E) xlt(r) is the pose (E^T, r) in the parent's
        T_pre = T_ap @ transform(R=tree[b, 0:9].reshape(3, 3).T, p=tree[b, 9:12])
        if k in new_joint:
            anchor.append(len(topo))
            pose.append(np.eye(4))
            topo.append((a, jtype, new_joint[k]))
            kin.append(np.concatenate([T_pre[:3, :3].T.ravel(), T_pre[:3, 3], tree[b, 12:15]]))
            new_params.append(np.array(params[b]))
            continue
        motion = transform(p=(0.0, 0.0, q[k])) if jtype == PRISMATIC else transform(R=rot_z(q[k]))
        T = T_pre @ motion
        anchor.append(a)
        pose.append(T)
        if a < 0:
            base += transform_params(params[b], T)
        else:
            new_params[a] += transform_params(params[b], T)
    if not topo:
        raise ModelError(f"welded model of '{model.name}': no joint is kept")
    frames = {name: ((-1, T) if b < 0 else (anchor[b], pose[b] @ T)) for name, (b, T) in model.link_frames.items()}
    return _reduced(model, joints, topo, kin, new_params + [base], frames)



def _reduced(model, names, topo, kin, params, frames):
    """The Model of joints ``names`` (in that order) with the given body rows, parameters (the base's last)
    and link frames, carrying over ``model``'s limits, gravity, base, links' own parameters and payload."""
    old = [model.index[j] for j in names]
    new = Model(model.name, names, list(frames), topo, kin, params, frames, model.gravity, model.effort_limits[old],
                model.velocity_limits[old], model.floating_base, model.base_link, model.position_limits[old])
    new.link_params = {k: v for k, v in model.link_params.items() if k in frames}
    if model._payload is not None and model._payload[0] in frames:
        new.set_payload(*model._payload)
    return new


__all__ = ["restricted", "welded"]
