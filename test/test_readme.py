"""Every python block of the README and of docs/*.md runs as written (from the repository root)."""
import os
import re
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
DOCS = sorted((ROOT / "docs").glob("*.md"))  # not docs/pending


def run_python_blocks(path):
    """Run the file's python blocks in order in one namespace, as a reader would; return how many."""
    text = path.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            namespace = {}  # blocks build on each other
            for block in blocks:
                exec(compile(block, str(path.relative_to(ROOT)), "exec"), namespace)
    finally:
        os.chdir(cwd)
    return len(blocks)


def test_readme_python_blocks_run():
    assert run_python_blocks(ROOT / "README.md")


def test_docs_have_python_blocks():
    assert sum("```python\n" in p.read_text() for p in DOCS) >= 3


@pytest.mark.parametrize("path", DOCS, ids=[p.name for p in DOCS])
def test_docs_python_blocks_run(path):
    run_python_blocks(path)


def test_relative_links_resolve():
    """Links to files of the repository from the README and docs/*.md point at files that exist."""
    for path in [ROOT / "README.md", *DOCS]:
        for target in re.findall(r"\]\(([^)\s]+)\)", path.read_text()):
            if "://" in target or target.startswith("#"):
                continue
            file = target.split("#")[0]
            assert (path.parent / file).exists(), f"{path.name}: {target}"


def _slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_anchors_resolve():
    """Every #anchor in a link of the README and docs/*.md names a heading of its target file."""
    files = [ROOT / "README.md", *DOCS]
    anchors = {}
    for path in files:
        text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)
        anchors[path.resolve()] = {_slug(h) for h in re.findall(r"^#+ (.*)$", text, re.M)}
    for path in files:
        for target in re.findall(r"\]\(([^)\s]+)\)", path.read_text()):
            if "://" in target or "#" not in target:
                continue
            file, anchor = target.split("#", 1)
            resolved = (path.parent / file).resolve() if file else path.resolve()
            assert anchor in anchors.get(resolved, set()), f"{path.name}: {target}"
