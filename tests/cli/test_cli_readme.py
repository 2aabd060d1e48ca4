"""The README's command table names every subcommand; its shell examples are runnable bash."""

from __future__ import annotations

import argparse
import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gpudesk.cli import build_parser

README = Path(__file__).resolve().parents[2] / "README.md"


def _subcommands() -> set[str]:
    parser = build_parser()
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return set(actions[0].choices)


def test_every_subcommand_has_a_row_in_the_readme_command_table() -> None:
    table_rows = [
        line
        for line in README.read_text(encoding="utf-8").splitlines()
        if line.startswith("| `gpudesk")
    ]
    documented = {
        match.group(1) for row in table_rows for match in re.finditer(r"`gpudesk (\w[\w-]*)", row)
    }
    missing = _subcommands() - documented
    assert not missing, f"README command table lacks: {sorted(missing)}"
    assert {"doctor", "validate", "speed", "fleet"} <= _subcommands()


def _readme_examples() -> Any:
    spec = importlib.util.spec_from_file_location(
        "readme_examples", README.parent / "tests" / "readme_examples.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["readme_examples"] = module
    spec.loader.exec_module(module)
    return module


def test_the_example_extractor_reads_markers() -> None:
    examples = _readme_examples().extract(
        "text\n```sh\n# needs: gpu\ngpudesk doctor\n```\n"
        "```bash\ngpudesk list\n# needs: cluster\ngpudesk fleet survey\n"
        "gpudesk detect --json  # exit: 0 or 3\ngpudesk bench \\\n  --json  # needs: display\n"
        "# skip: slow\npython run.py\n```\n```text\ngpudesk [--x]\n```\n"
    )
    assert [(e.command.split("#")[0].strip(), e.skip, sorted(e.exits)) for e in examples] == [
        ("gpudesk doctor", "needs gpu", [0]),
        ("gpudesk list", None, [0]),
        ("gpudesk fleet survey", "needs cluster", [0]),
        ("gpudesk detect --json", None, [0, 3]),
        ("gpudesk bench --json", "needs display", [0]),
        ("python run.py", "slow", [0]),
    ]


def test_an_unknown_needs_word_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown '# needs:'"):
        _readme_examples().extract("```sh\n# needs: gpus\ngpudesk list\n```\n")


def test_every_readme_shell_example_is_valid_bash_and_marked_when_it_installs() -> None:
    examples = _readme_examples().extract(README.read_text(encoding="utf-8"))
    assert len(examples) >= 20
    for example in examples:
        checked = subprocess.run(
            ["bash", "-n", "-c", example.command], capture_output=True, text=True, check=False
        )
        assert checked.returncode == 0, f"README:{example.line}: {checked.stderr}"
        if re.search(r"\b(pip|apt-get) install\b|\bsudo\b", example.command):
            assert example.skip, f"README:{example.line} installs: mark it '# needs: network'"
        assert "[--" not in example.command, f"README:{example.line}: a synopsis, use ```text"
