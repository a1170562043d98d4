"""Every Python block of docs/guide/python.md runs as written, each in a folder of its own; a block that
defines tests runs under pytest, with the plugin the wheel installed."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guide" / "python.md"
BLOCKS = re.findall(r"```python\n(.*?)```", GUIDE.read_text(encoding="utf-8"), flags=re.S)


def test_the_guide_has_blocks() -> None:
    assert len(BLOCKS) >= 5


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_a_guide_block_runs(index: int, tmp_path: Path) -> None:
    block = BLOCKS[index]
    if "def test_" in block:
        (tmp_path / "test_block.py").write_text(block, encoding="utf-8")
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_block.py"]
    else:
        (tmp_path / "block.py").write_text(block, encoding="utf-8")
        command = [sys.executable, "block.py"]
    ran = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert ran.returncode == 0, f"block {index}:\n{block}\n--- stdout\n{ran.stdout}\n--- stderr\n{ran.stderr}"
