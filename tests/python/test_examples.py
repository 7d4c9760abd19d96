"""The training examples run as documented and reach their accuracy."""
import os
import runpy
import sys

import pytest

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "python",
                       "train_digits.py")


@pytest.mark.parametrize("mode", [[], ["--eager"]], ids=["graph", "eager"])
def test_train_digits_reaches_97_percent(mode, tmp_path, monkeypatch, capsys):
    plot = tmp_path / "digits.png"
    monkeypatch.setattr(sys, "argv", [EXAMPLE, "--plot", str(plot)] + mode)
    with pytest.raises(SystemExit) as done:
        runpy.run_path(EXAMPLE, run_name="__main__")
    out = capsys.readouterr().out
    assert done.value.code == 0, out
    acc = float(out.strip().splitlines()[-2].rsplit(" ", 1)[1])
    assert acc >= 0.97, out
    assert plot.stat().st_size > 1000


def test_readme_python_quick_start_runs(capsys):
    import re
    readme = os.path.join(os.path.dirname(__file__), "..", "..", "README.md")
    code = re.findall(r"```python\n(.*?)```", open(readme).read(), re.S)[0]
    exec(compile(code, "README.md", "exec"), {})
    loss = float(capsys.readouterr().out.strip().strip("[]"))
    assert 0 <= loss < 1.0


def test_demo_runs_the_main_job(tmp_path, monkeypatch, capsys):
    demo = os.path.join(os.path.dirname(EXAMPLE), "demo.py")
    monkeypatch.setattr(sys, "argv", [demo, "--out", str(tmp_path)])
    with pytest.raises(SystemExit) as done:
        runpy.run_path(demo, run_name="__main__")
    out = capsys.readouterr().out
    assert done.value.code == 0, out
    assert "parity test accuracy" in out and (tmp_path / "demo.png").stat().st_size > 1000
    assert (tmp_path / "digits_cnn.onnx").exists()
