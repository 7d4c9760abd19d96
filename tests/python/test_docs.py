"""The documentation that is generated or copied from code stays in step with it."""
import os
import re
import runpy

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def test_op_table_matches_the_registry():
    gen = runpy.run_path(os.path.join(ROOT, "tools", "gen_op_table.py"))
    with open(os.path.join(ROOT, "docs", "ops.md")) as f:
        assert f.read() == gen["render"](), (
            "docs/ops.md is out of date: run `make docs` (python tools/gen_op_table.py)")


def test_readme_cpp_quick_start_is_the_compiled_example():
    """examples/cpp/quickstart.cc is built and run by ctest; the README shows its body."""
    readme = open(os.path.join(ROOT, "README.md")).read()
    shown = re.findall(r"```cpp\n(.*?)```", readme, re.S)[0]
    source = open(os.path.join(ROOT, "examples", "cpp", "quickstart.cc")).read()

    def code(text):
        lines = [re.sub(r"\s*//.*", "", line).rstrip() for line in text.splitlines()]
        return [line for line in lines if line]
    assert code(shown) == code(source)
