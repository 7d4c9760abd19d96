"""BERT-Squad (Devlin et al., arXiv:1810.04805): the answer span of a question about a paragraph.

    python examples/onnx/bert.py [--model bertsquad-12.onnx] [--check] [--size small]

Without --model the architecture is exported locally (zoo_models.py, random
weights), so the printed spans mean nothing until a trained zoo file is given.
Zoo files: https://github.com/onnx/models/tree/main/validated/text/machine_comprehension/bert-squad
"""
import sys

from zoo_cli import main

if __name__ == "__main__":
    sys.exit(main("bert"))
