"""GPT-2 (Radford et al., 2019): the most likely next tokens after a prompt.

    python examples/onnx/gpt2.py [--model gpt2-10.onnx] [--check] [--size small]

Without --model the architecture is exported locally (zoo_models.py, random
weights), so the printed tokens mean nothing until a trained zoo file is given.
Zoo files: https://github.com/onnx/models/tree/main/validated/text/machine_comprehension/gpt-2
"""
import sys

from zoo_cli import main

if __name__ == "__main__":
    sys.exit(main("gpt2"))
