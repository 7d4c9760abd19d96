"""MobileNet-V2 (Sandler et al., arXiv:1801.04381): ImageNet classification of a sample image.

    python examples/onnx/mobilenetv2.py [--model mobilenetv2-7.onnx] [--check] [--size small]

Without --model the architecture is exported locally (zoo_models.py, random
weights), so the printed classes mean nothing until a trained zoo file is given.
Zoo files: https://github.com/onnx/models/tree/main/validated/vision/classification/mobilenet
"""
import sys

from zoo_cli import main

if __name__ == "__main__":
    sys.exit(main("mobilenetv2"))
