"""VGG-16 (Simonyan et al., arXiv:1409.1556): ImageNet classification of a sample image.

    python examples/onnx/vgg16.py [--model vgg16-7.onnx] [--check] [--size small]

Without --model the architecture is exported locally (zoo_models.py, random
weights), so the printed classes mean nothing until a trained zoo file is given.
Zoo files: https://github.com/onnx/models/tree/main/validated/vision/classification/vgg
"""
import sys

from zoo_cli import main

if __name__ == "__main__":
    sys.exit(main("vgg16"))
