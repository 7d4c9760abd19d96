"""ShuffleNet-V2 (Ma et al., arXiv:1807.11164): ImageNet classification of a sample image.

    python examples/onnx/shufflenetv2.py [--model shufflenet-v2-10.onnx] [--check] [--size small]

Without --model the architecture is exported locally (zoo_models.py, random
weights), so the printed classes mean nothing until a trained zoo file is given.
Zoo files: https://github.com/onnx/models/tree/main/validated/vision/classification/shufflenet
"""
import sys

from zoo_cli import main

if __name__ == "__main__":
    sys.exit(main("shufflenetv2"))
