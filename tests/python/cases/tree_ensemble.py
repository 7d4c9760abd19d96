"""Rows for src/ops/tree_ensemble.cc (domain ai.onnx.ml opset 5).

onnx's reference evaluator ignores post_transform and leaves the dtype's
max/lowest in targets no leaf reached under MIN/MAX (we give 0, as
onnxruntime does): rows keep post_transform NONE and let every tree reach
every target under MIN/MAX. Its set-membership parser also stops a set at a
member equal to 0, so the member sets hold no 0; and it cannot run an empty
batch (numpy's apply_along_axis refuses one), so no row has one."""
import numpy as np

from op_harness import Case, ErrorCase, T, V

ML = {"opset": 5, "domain": "ai.onnx.ml"}


def _t(values, dt=np.float32):
    return np.array(values, dt)


# Two trees over 3 features: tree 0 (nodes 0-2) and tree 1 (nodes 3-4).
FOREST = {
    "tree_roots": [0, 3],
    "nodes_featureids": [0, 1, 2, 2, 0],
    "nodes_modes": _t([0, 1, 3, 4, 5], np.uint8),  # LEQ, LT, GT, EQ, NEQ
    "nodes_splits": _t([0.5, -1.0, 1.25, 2.0, 0.0]),
    "nodes_truenodeids": [1, 0, 1, 4, 2],
    "nodes_trueleafs": [0, 1, 1, 0, 1],
    "nodes_falsenodeids": [2, 1, 2, 3, 4],
    "nodes_falseleafs": [0, 1, 1, 1, 1],
    "leaf_targetids": [0, 1, 0, 2, 1, 0],
    "leaf_weights": _t([1.5, -2.0, 3.0, 0.25, 4.0, -0.5]),
    "n_targets": 3,
}
# Every leaf feeds target 0: MIN and MAX see a value from each tree.
ONE_TARGET = {**FOREST, "leaf_targetids": [0] * 6, "n_targets": 1}
MEMBERSHIP = {
    "tree_roots": [0],
    "nodes_featureids": [0, 0, 0],
    "nodes_modes": _t([0, 6, 6], np.uint8),
    "nodes_splits": _t([11, 232344, np.nan]),
    "nodes_truenodeids": [1, 0, 1],
    "nodes_trueleafs": [0, 1, 1],
    "nodes_falsenodeids": [2, 2, 3],
    "nodes_falseleafs": [1, 0, 1],
    "leaf_targetids": [0, 1, 2, 3],
    "leaf_weights": _t([1, 10, 1000, 100]),
    "membership_values": _t([1.2, 3.7, 8, 9, np.nan, 12, 7, np.nan]),
    "n_targets": 4,
}
_MEMBER_X = V([[1.2], [3.4], [-0.12], [np.nan], [12.0], [7.0]], np.float32)

CASES = [
    Case("TreeEnsemble", [T((6, 3))], FOREST, **ML),
    Case("TreeEnsemble", [T((6, 3))], {**FOREST, "aggregate_function": 0}, **ML, id="average"),
    Case("TreeEnsemble", [T((6, 3))], {**ONE_TARGET, "aggregate_function": 2}, **ML, id="min"),
    Case("TreeEnsemble", [T((6, 3))], {**ONE_TARGET, "aggregate_function": 3}, **ML, id="max"),
    Case("TreeEnsemble", [T((6, 3), values=[0, 0, 2, 9, -3, 1, 0.5, 1, 2, -1, -1, 0.5,
                                            0.25, 4, 3, 1, 2, 1.25])],
         FOREST, **ML, id="at-splits"),
    # A NaN feature follows nodes_missing_value_tracks_true.
    Case("TreeEnsemble", [V([[np.nan, 0, 2], [np.nan, np.nan, np.nan], [1, np.nan, 0]],
                            np.float32)],
         {**FOREST, "nodes_missing_value_tracks_true": [1, 0, 1, 0, 1]}, **ML, id="missing"),
    Case("TreeEnsemble", [_MEMBER_X], MEMBERSHIP, **ML, id="membership"),
    Case("TreeEnsemble", [V([[1.2, 3.4], [-0.12, 1.66], [4.14, 1.77]], np.float64)],
         {"tree_roots": [0], "nodes_featureids": [0, 0, 0],
          "nodes_modes": _t([0, 0, 0], np.uint8),
          "nodes_splits": _t([3.14, 1.2, 4.2], np.float64),
          "nodes_truenodeids": [1, 0, 1], "nodes_trueleafs": [0, 1, 1],
          "nodes_falsenodeids": [2, 2, 3], "nodes_falseleafs": [0, 1, 1],
          "leaf_targetids": [0, 1, 0, 1],
          "leaf_weights": _t([5.23, 12.12, -12.23, 7.21], np.float64), "n_targets": 2},
         **ML, id="double-weights"),
    # A tree that is one leaf: both branches of its root name the same leaf.
    Case("TreeEnsemble", [T((4, 3))],
         {**FOREST, "tree_roots": [0, 3, 5], "nodes_featureids": [0, 1, 2, 2, 0, 0],
          "nodes_modes": _t([0, 1, 3, 4, 5, 0], np.uint8),
          "nodes_splits": _t([0.5, -1.0, 1.25, 2.0, 0.0, 0.0]),
          "nodes_truenodeids": [1, 0, 1, 4, 2, 5], "nodes_trueleafs": [0, 1, 1, 0, 1, 1],
          "nodes_falsenodeids": [2, 1, 2, 3, 4, 5], "nodes_falseleafs": [0, 1, 1, 1, 1, 1],
          "leaf_targetids": [0, 1, 0, 2, 1, 0, 2], "leaf_weights": _t([1.5, -2, 3, 0.25, 4, -0.5, 9])},
         **ML, id="leaf-tree"),
    Case("TreeEnsemble", [T((500, 3))], FOREST, **ML, id="large"),
]


def _bad(**changes):
    return {**FOREST, **changes}


ERROR_CASES = [
    ErrorCase("TreeEnsemble", [T((2, 3))], _bad(nodes_truenodeids=[1, 0, 1, 7, 2]),
              match="node 3's true branch refers to node 7, which does not exist", **ML),
    ErrorCase("TreeEnsemble", [T((2, 3))], _bad(nodes_falsenodeids=[2, 1, 9, 3, 4]),
              match="refers to leaf 9, which does not exist", **ML),
    ErrorCase("TreeEnsemble", [T((2, 3))],
              _bad(nodes_falsenodeids=[2, 1, 0, 3, 4], nodes_falseleafs=[0, 1, 0, 1, 1]),
              match="must not have cycles", **ML),
    ErrorCase("TreeEnsemble", [T((2, 3))], _bad(nodes_featureids=[0, 1, 2, 2]),
              match="nodes_modes has 5 entries, nodes_featureids 4", **ML),
    ErrorCase("TreeEnsemble", [T((2, 2))], FOREST, match="tests feature 2 but X has 2", **ML),
    ErrorCase("TreeEnsemble", [T((2, 3))], _bad(tree_roots=[0, 5]),
              match="tree root 5 does not exist", **ML),
    ErrorCase("TreeEnsemble", [T((2, 3))], _bad(n_targets=2), match="out of range for n_targets",
              **ML),
    ErrorCase("TreeEnsemble", [T((2, 3))], _bad(nodes_modes=_t([0, 1, 3, 4, 6], np.uint8)),
              match="membership_values has no set left", **ML),
    ErrorCase("TreeEnsemble", [T((2, 3))], _bad(nodes_modes=_t([0, 1, 3, 4, 9], np.uint8)),
              match="mode 9", **ML),
    ErrorCase("TreeEnsemble", [T((2, 3))], _bad(aggregate_function=7),
              match="aggregate_function", **ML),
    ErrorCase("TreeEnsemble", [T((2, 3))], FOREST, dtype="int32", match="not supported", **ML),
    ErrorCase("TreeEnsemble", [T((6,))], FOREST, match="X must be", **ML),
]
