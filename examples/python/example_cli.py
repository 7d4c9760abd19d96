"""What every example's command line shares: a --help that shows the
script's whole description and each option's default, and a failure the
script can expect (a missing or malformed file, a model it cannot take, an
array of the wrong dtype) printed as one line with exit status 2 instead of
a traceback."""
import argparse
import os
import sys

import onnx
from google.protobuf.message import DecodeError

import singa


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """The description as written; an option's default after its help
    unless the help already says it or there is none to say."""

    def _get_help_string(self, action):
        text = action.help or ""
        if action.default in (None, False, argparse.SUPPRESS) or "default" in text:
            return text
        return f"{text} (default: %(default)s)"


def parser(doc):
    """An ArgumentParser whose --help shows `doc` as written."""
    return argparse.ArgumentParser(description=doc, formatter_class=_HelpFormatter)


def load_model(path):
    """onnx.load(path), with an error that names the file when it is not an
    ONNX model."""
    try:
        return onnx.load(path)
    except DecodeError as e:
        raise ValueError(f"{path} is not an ONNX model ({e})") from None


# The failures of bad input: singa's own errors (each also a ValueError,
# OSError, ... ), files that are missing or not what they claim to be.
EXPECTED = (singa.Error, OSError, ValueError, NotImplementedError, DecodeError)


def run(main):
    """main()'s exit status; an expected failure is one line on stderr."""
    try:
        return main()
    except EXPECTED as e:
        text = str(e).strip().splitlines()
        print(f"{os.path.basename(sys.argv[0])}: error: {text[0] if text else type(e).__name__}",
              file=sys.stderr)
        return 2
