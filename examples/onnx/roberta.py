"""RoBERTa (Liu et al., arXiv:1907.11692): the sentiment of a sentence.

    python examples/onnx/roberta.py [--model roberta-sequence-classification-9.onnx] [--check] [--size small]

Without --model the architecture is exported locally (zoo_models.py, random
weights), so the printed sentiments mean nothing until a trained zoo file is given.
Zoo files: https://github.com/onnx/models/tree/main/validated/text/machine_comprehension/roberta
"""
import sys

from zoo_cli import main

if __name__ == "__main__":
    sys.exit(main("roberta"))
