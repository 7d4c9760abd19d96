import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

import pytest  # noqa: E402

from singa import _singa  # noqa: E402


@pytest.fixture(autouse=True)
def _modes():
    """Each test starts with C++'s defaults (ops record while an input
    requires grad; inference behaviour), whatever an earlier test or the
    Python autograd module (SINGA's default: not training) left set."""
    _singa.set_grad_enabled(True)
    _singa.set_training_mode(False)
    yield
