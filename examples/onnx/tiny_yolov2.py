"""Tiny YOLOv2 (Redmon et al., arXiv:1612.08242): the 20 VOC classes' best boxes in a sample image.

    python examples/onnx/tiny_yolov2.py [--model tinyyolov2-8.onnx] [--check] [--size small]

Without --model the architecture is exported locally (zoo_models.py, random
weights), so the printed boxes mean nothing until a trained zoo file is given.
Zoo files: https://github.com/onnx/models/tree/main/validated/vision/object_detection_segmentation/tiny-yolov2
"""
import sys

from zoo_cli import main

if __name__ == "__main__":
    sys.exit(main("tiny_yolov2"))
