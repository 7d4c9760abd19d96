"""Counts the onnx backend test cases (node, simple, pytorch-converted,
pytorch-operator) that singa and onnxruntime pass, per suite, with the same
comparison as tests/conformance (each case's rtol/atol). bench/run.py puts
the counts in bench/RESULTS.md; not run by the tests.

    python bench/conformance_counts.py            # a Markdown table on stdout
"""
import collections
import os
import sys
import time

import numpy as np
import onnxruntime as ort

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "conformance"))
import backend_cases  # noqa: E402

from singa import sonnx  # noqa: E402


class OrtRep:
    def __init__(self, model):
        self.sess = ort.InferenceSession(model.SerializeToString(),
                                         providers=["CPUExecutionProvider"])

    def run(self, inputs):
        names = [i.name for i in self.sess.get_inputs()]
        return [np.asarray(o) for o in self.sess.run(None, dict(zip(names, inputs)))]


class OrtBackend:
    @classmethod
    def prepare(cls, model, device="CPU"):
        return OrtRep(model)


def count():
    """[(suite, cases, singa passes, onnxruntime passes)] for each suite, then "all"."""
    cases = backend_cases.load_cases()
    counts = collections.defaultdict(lambda: [0, 0, 0])  # suite -> [total, singa, ort]
    for name, case in cases.items():
        suite = name.split("/")[0]
        counts[suite][0] += 1
        counts[suite][1] += backend_cases.run_case(sonnx.SingaBackend, case) is None
        counts[suite][2] += backend_cases.run_case(OrtBackend, case) is None
    rows = [(suite, *counts[suite]) for suite in backend_cases.SUITES]
    return rows + [("all", *(sum(r[i] for r in rows) for i in (1, 2, 3)))]


def main():
    start = time.time()
    rows = count()
    print(f"onnx backend test cases passed (onnx {__import__('onnx').__version__}, onnxruntime "
          f"{ort.__version__}; {time.time() - start:.0f} s)\n")
    print("| suite | cases | singa | onnxruntime |")
    print("| --- | ---: | ---: | ---: |")
    for suite, total, ours, peer in rows:
        print(f"| {suite} | {total} | {ours} | {peer} |")


if __name__ == "__main__":
    main()
