"""Every case of onnx's backend test suites (node, simple, pytorch-converted,
pytorch-operator) through SingaBackend.prepare(...).run(...), compared with
the expected outputs using each case's rtol/atol.

tests/conformance/skip_list.txt lists the cases singa does not pass yet,
each with its reason. A case fails the suite when it fails and is not listed,
and also when it is listed but passes (remove it from the list).
"""
import faulthandler
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import backend_cases  # noqa: E402

from singa import _singa, autograd, sonnx  # noqa: E402

CASES = backend_cases.load_cases()
SKIPS = backend_cases.read_skip_list()
# A hung kernel cannot be interrupted from Python: after this long the
# process dumps every thread's stack (naming the case) and exits.
CASE_TIMEOUT_S = 120
# A build without the codec libraries (SINGA_IMAGE=OFF) decodes BMP and PNM
# images only.
CODECS = _singa.build_info()["image_codecs"]


def test_skip_list_names_real_cases():
    unknown = sorted(set(SKIPS) - set(CASES))
    assert not unknown, f"skip_list.txt names cases that do not exist: {unknown[:10]}"


@pytest.fixture(autouse=True)
def _inference():
    """The backend suites are inference: SINGA's default mode after import
    (nothing recorded), where runs use the static plan."""
    autograd.training = False


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name):
    case = CASES[name]
    if (not CODECS and "test_image_decoder" in name
            and not name.endswith(("_bmp_rgb", "_pnm_rgb"))):
        pytest.skip("singa was built without the image codecs (SINGA_IMAGE=OFF)")
    faulthandler.dump_traceback_later(CASE_TIMEOUT_S, exit=True)
    try:
        failure = backend_cases.run_case(sonnx.SingaBackend, case)
    finally:
        faulthandler.cancel_dump_traceback_later()
    if name in SKIPS:
        if failure is None:
            pytest.fail(f"{name} passes now: remove it from the skip list "
                        f"(tests/conformance/skip_list.txt)")
        pytest.xfail(SKIPS[name])
    if failure is not None:
        kind, msg = failure
        pytest.fail(f"{name}: {kind}: {msg}\n(a new failure: fix it, or list it in "
                    f"tests/conformance/skip_list.txt with the reason)")
