"""Emotion FerPlus (Barsoum et al., arXiv:1608.01041): emotion scores of a grey 64x64 face.

    python examples/onnx/emotion_ferplus.py [--model emotion-ferplus-8.onnx] [--check] [--size small]

Without --model the architecture is exported locally (zoo_models.py, random
weights), so the printed emotions mean nothing until a trained zoo file is given.
Zoo files: https://github.com/onnx/models/tree/main/validated/vision/body_analysis/emotion_ferplus
"""
import sys

from zoo_cli import main

if __name__ == "__main__":
    sys.exit(main("emotion_ferplus"))
