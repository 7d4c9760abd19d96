"""ArcFace (Deng et al., arXiv:1801.07698): a face embedding and cosine similarities.

    python examples/onnx/arcface.py [--model arcfaceresnet100-8.onnx] [--check] [--size small]

Without --model the architecture is exported locally (zoo_models.py, random
weights), so the printed similarities mean nothing until a trained zoo file is given.
Zoo files: https://github.com/onnx/models/tree/main/validated/vision/body_analysis/arcface
"""
import sys

from zoo_cli import main

if __name__ == "__main__":
    sys.exit(main("arcface"))
