"""Every python block of the README runs as written (from the repository root)."""
import os
import re
import warnings
from pathlib import Path

ROOT = Path(__file__).parents[1]


def test_readme_python_blocks_run():
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            namespace = {}  # blocks build on each other, as a reader would run them
            for block in blocks:
                exec(compile(block, "README.md", "exec"), namespace)
    finally:
        os.chdir(cwd)
