"""The layout of the kernel arrays: the one place for the codes and offsets that the model layer writes
and the dynamics kernels read.

Model.K (see model.py), rows 0:nb, one per body (``tree``, TREE_W columns), then ``dyn`` and the
workspace, KW columns in all. A ``tree`` row holds X_tree (0:12: E row-major, then r; Featherstone's
X_tree = rot(E) xlt(r)), then the joint's rotor inertia, friction, parent, type and index, then its lumped
elasticity (elastic.py; Khalil 2010, §6): role, stiffness, rest position, damping and index among the
rigid joints or among the other ones.

Model.loops.LK (see loops.py and dynamics/closed_loop/arrays.py): one row per cut joint (CUT_COLS),
per body (BODY_COLS) and VEC_ROWS vector rows; cut-joint codes as Khalil's eq. (3) conditions.

ParallelModel's platform array PK (see parallel.py and dynamics/parallel/kinematics.py): N_LEGS leg
rows, then the platform row and the gravity row, PW columns.

Edits here change the kernels: rne_control.kernel_cache hashes this file with the kernels' sources.
"""
# Joint types: every joint axis is the body's z axis (Featherstone Table 4.1: S = e_3 or e_6).
REVOLUTE, PRISMATIC = 0, 1
KW = 162  # columns of a model's kernel array K: the widest per-body workspace and scratch of any kernel
# Columns of a row of model.tree after X_tree (0:12).
IA, FV, FS, PARENT, JTYPE, QIDX = 12, 13, 14, 15, 16, 17
# Then the joint's lumped elasticity: role, stiffness K, rest position q0, damping D, index among the
# rigid joints (role RIGID_JOINT) or among the other joints (ELASTIC_JOINT, FREE_JOINT).
ROLE, STIFFNESS, REST, DAMPING, SUBIDX = 18, 19, 20, 21, 22
RIGID_JOINT, ELASTIC_JOINT, FREE_JOINT = 0, 1, 2
TREE_W = 23

# Loop kernel array LK: cut-joint types (the closure conditions of each: 5, 5, 3 and the planar 2).
REVOLUTE_CUT, PRISMATIC_CUT, SPHERICAL_CUT, PLANAR_CUT = 0, 1, 2, 3
CUT_COLS = 28      # type, body_i, body_j, R_i (9), p_i (3), R_j (9), p_j (3), first residual row
BODY_COLS = 38     # per body: R_0b (9), p_0b (3), w (3), v (3), dw (3), a (3), X_up (12), q of the pose, moved
VEC_ROWS = 18      # vector rows of the workspace
# columns of a body row; B_QX: the joint position of the pose and X_up in the row, B_MOVED: 1 if the
# last body_poses call recomputed them (the model initialises B_QX to NaN: no pose yet)
B_R, B_P, B_W, B_V, B_DW, B_A, B_X, B_QX, B_MOVED = 0, 9, 12, 15, 18, 21, 24, 36, 37
# columns of a cut-joint row
C_TYPE, C_BI, C_BJ, C_RI, C_PI, C_RJ, C_PJ, C_ROW = 0, 1, 2, 3, 12, 15, 24, 27

# Platform kernel array PK of a Gough-Stewart platform.
N_LEGS = 6
PW = 17
ROW_PLATFORM, ROW_GRAVITY = N_LEGS, N_LEGS + 1
