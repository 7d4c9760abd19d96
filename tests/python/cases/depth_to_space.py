"""Rows for src/ops/depth_to_space.cc (DepthToSpace, SpaceToDepth)."""
from op_harness import Case, ErrorCase, T

F = ["float32", "float64"]
CASES = [
    Case("DepthToSpace", [T((1, 8, 2, 3))], {"blocksize": 2}),
    Case("DepthToSpace", [T((2, 8, 2, 3))], {"blocksize": 2, "mode": "CRD"}, id="crd"),
    Case("DepthToSpace", [T((2, 18, 2, 2))], {"blocksize": 3, "mode": "DCR"}, dtypes=F, id="b3"),
    Case("DepthToSpace", [T((1, 4, 1, 1))], {"blocksize": 1, "mode": "CRD"}, dtypes=F, id="b1"),
    Case("DepthToSpace", [T((0, 8, 2, 3))], {"blocksize": 2}, dtypes=F, id="empty"),
    Case("DepthToSpace", [T((1, 8, 0, 3))], {"blocksize": 2, "mode": "CRD"}, dtypes=F,
         id="empty_h"),
    Case("DepthToSpace", [T((2, 64, 16, 16))], {"blocksize": 4}, dtypes=["float32"], id="large"),
    Case("DepthToSpace", [T((1, 8, 2, 3))], {"blocksize": 2, "mode": "CRD"}, opset=11,
         dtypes=F, id="opset11"),
    Case("DepthToSpace", [T((1, 8, 2, 3))], {"blocksize": 2}, opset=1, dtypes=F, id="opset1"),
    Case("SpaceToDepth", [T((1, 2, 4, 6))], {"blocksize": 2}),
    Case("SpaceToDepth", [T((2, 3, 6, 3))], {"blocksize": 3}, dtypes=F, id="b3"),
    Case("SpaceToDepth", [T((0, 2, 4, 6))], {"blocksize": 2}, dtypes=F, id="empty"),
    Case("SpaceToDepth", [T((2, 16, 64, 64))], {"blocksize": 4}, dtypes=["float32"], id="large"),
    Case("SpaceToDepth", [T((1, 2, 4, 6))], {"blocksize": 2}, opset=1, dtypes=F, id="opset1"),
    Case("SpaceToDepth", [T((2, 3, 4, 6))], {"blocksize": 2, "mode": "CRD"}, opset=28, id="crd"),
    Case("SpaceToDepth", [T((1, 2, 6, 3))], {"blocksize": 3, "mode": "DCR"}, opset=28, dtypes=F,
         id="dcr28"),
    Case("SpaceToDepth", [T((0, 2, 4, 6))], {"blocksize": 2, "mode": "CRD"}, opset=28, dtypes=F,
         id="crd_empty"),
]
ERROR_CASES = [
    ErrorCase("DepthToSpace", [T((1, 6, 2, 2))], {"blocksize": 2}, match="divisible"),
    ErrorCase("DepthToSpace", [T((8, 2, 2))], {"blocksize": 2}, match="4-D"),
    ErrorCase("DepthToSpace", [T((1, 8, 2, 2))], {"blocksize": 2, "mode": "XYZ"}, match="mode"),
    ErrorCase("DepthToSpace", [T((1, 8, 2, 2))], {"blocksize": 0}, match="positive"),
    ErrorCase("DepthToSpace", [T((1, 8, 2, 2))], match="blocksize"),
    ErrorCase("SpaceToDepth", [T((1, 2, 5, 4))], {"blocksize": 2}, match="divisible"),
    ErrorCase("SpaceToDepth", [T((1, 2, 4))], {"blocksize": 2}, match="4-D"),
]
