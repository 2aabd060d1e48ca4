"""The README's command table names every subcommand; the shell examples of the README and
of docs/ are runnable bash, and their relative links lead somewhere."""

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

CHECKOUT = Path(__file__).resolve().parents[2]
README = CHECKOUT / "README.md"
COMMANDS = CHECKOUT / "docs" / "commands.md"


def _subcommands() -> set[str]:
    parser = build_parser()
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return set(actions[0].choices)


def _documented(page: Path) -> set[str]:
    table_rows = [
        line
        for line in page.read_text(encoding="utf-8").splitlines()
        if line.startswith("| `gpudesk")
    ]
    return {
        match.group(1) for row in table_rows for match in re.finditer(r"`gpudesk (\w[\w-]*)", row)
    }


def test_every_subcommand_has_a_row_in_the_readme_command_table() -> None:
    missing = _subcommands() - _documented(README)
    assert not missing, f"README command table lacks: {sorted(missing)}"
    assert {"doctor", "validate", "speed", "fleet"} <= _subcommands()


def test_every_subcommand_has_its_flags_in_the_command_reference() -> None:
    missing = _subcommands() - _documented(COMMANDS)
    assert not missing, f"docs/commands.md's table lacks: {sorted(missing)}"


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


def _pages() -> list[Path]:
    pages: list[Path] = _readme_examples().documents(CHECKOUT)
    return pages


def test_the_check_reads_the_readme_and_every_docs_page() -> None:
    pages = {page.relative_to(CHECKOUT).as_posix() for page in _pages()}
    assert {"README.md", "docs/speed.md", "docs/validation/README.md"} <= pages
    assert pages == {"README.md"} | {
        page.relative_to(CHECKOUT).as_posix() for page in (CHECKOUT / "docs").rglob("*.md")
    }


def test_every_page_runs_in_its_own_folder_and_a_failure_names_its_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = tmp_path / "first.md"
    second = tmp_path / "second.md"
    first.write_text("```sh\nmkdir -p ~/made && touch here\ntest -e here\n```\n", encoding="utf-8")
    second.write_text(
        "```sh\ntest ! -e here  # a fresh folder\ntest ! -e ~/made  # a fresh HOME\nfalse\n```\n",
        encoding="utf-8",
    )
    assert _readme_examples().main([str(first), str(second)]) == 1
    out = capsys.readouterr().out
    assert f"FAIL  {second}:4: false  (exit 1)" in out
    assert out.count("ok    ") == 4
    assert "2 pages, 5 run, 0 skipped, 1 failed" in out


def test_every_shell_example_is_valid_bash_and_marked_when_it_installs() -> None:
    examples = [
        (page.relative_to(CHECKOUT).as_posix(), example)
        for page in _pages()
        for example in _readme_examples().extract(page.read_text(encoding="utf-8"))
    ]
    assert len(examples) >= 40
    assert len({page for page, _ in examples}) >= 8
    for page, example in examples:
        where = f"{page}:{example.line}"
        checked = subprocess.run(
            ["bash", "-n", "-c", example.command], capture_output=True, text=True, check=False
        )
        assert checked.returncode == 0, f"{where}: {checked.stderr}"
        if re.search(r"\b(pip|apt-get) install\b|\bsudo\b", example.command):
            assert example.skip, f"{where} installs: mark it '# needs: network'"
        assert "[--" not in example.command, f"{where}: a synopsis, use ```text"


def _anchors(page: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens."""
    anchors: set[str] = set()
    fenced = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        heading = re.match(r"#{1,6}\s+(.*?)\s*$", line)
        if heading and not fenced:
            slug = re.sub(r"[^\w\- ]", "", heading.group(1).lower()).replace(" ", "-")
            anchor, number = slug, 0
            while anchor in anchors:
                number += 1
                anchor = f"{slug}-{number}"
            anchors.add(anchor)
    return anchors


def test_every_relative_link_and_anchor_in_the_readme_and_docs_resolves() -> None:
    checked = 0
    for page in _pages():
        text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue  # a web address
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            where = f"{page.relative_to(CHECKOUT)}: ({target})"
            assert linked.exists(), f"{where} leads nowhere"
            if anchor:
                assert anchor in _anchors(linked), f"{where}: no such heading"
            checked += 1
    assert checked >= 30


def test_every_docs_page_can_be_reached_from_the_readme() -> None:
    """A page nobody links to is a page nobody reads: following relative links from the
    README reaches every docs/**/*.md page."""
    reached = {README.resolve()}
    todo = [README.resolve()]
    while todo:
        page = todo.pop()
        text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
        for target in re.findall(r"\]\(([^)#\s]+\.md)(?:#[^)\s]*)?\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            linked = (page.parent / target).resolve()
            if linked.is_file() and linked not in reached:
                reached.add(linked)
                todo.append(linked)
    pages = {page.resolve() for page in (CHECKOUT / "docs").rglob("*.md")}
    unreached = sorted(str(page.relative_to(CHECKOUT)) for page in pages - reached)
    assert not unreached, (
        f"no link leads to {unreached}: link them from the README's 'Where to read on'"
    )
    assert len(pages) >= 15
