"""ResNet-18 (He et al., arXiv:1512.03385): ImageNet classification of a sample image.

    python examples/onnx/resnet18.py [--model resnet18-v1-7.onnx] [--check] [--size small]

Without --model the architecture is exported locally (zoo_models.py, random
weights), so the printed classes mean nothing until a trained zoo file is given.
Zoo files: https://github.com/onnx/models/tree/main/validated/vision/classification/resnet
"""
import sys

from zoo_cli import main

if __name__ == "__main__":
    sys.exit(main("resnet18"))
