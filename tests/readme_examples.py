"""Run the documentation's shell examples as pasted: ``python tests/readme_examples.py [FILE...]``.

Without arguments it reads ``README.md`` and every ``docs/**/*.md`` page (what a reader
pastes from); with arguments, those Markdown files. Every fenced block tagged ``sh``,
``bash``, ``shell`` or ``console`` is read command by command (a line ending in ``\\``
continues) and run with bash, one after another. Each page runs in its own throwaway
folder that links to the checkout's top-level files (so ``catalog`` and ``tests``
resolve, and whatever a command writes lands in the throwaway folder) with its own
throwaway ``HOME`` (a new user: no catalog folder, no history, no settings), as a reader
who opens that page alone would paste it. ``gpudesk`` is found on ``PATH`` as after
``source .venv/bin/activate``: this interpreter's folder comes first.

Markers, as shell comments (so a pasted block still runs):

- ``# needs: gpu`` (or ``cluster``, ``display``, ``network``, ``root``; several with
  commas) on a line of its own skips the command after it; as the first line of a block,
  the whole block. At the end of a command's own line it skips that command.
- ``# skip: REASON`` skips the same way, for anything else (``bash .ci/run`` itself).
- ``# exit: 0 or 3`` accepts those exit codes (default: 0 only), e.g. for ``detect`` on a
  machine without a GPU.

Blocks tagged ``text`` (or with no tag) are never run: use them for output samples and
usage synopses with ``[OPTIONAL]`` parts. Exit status: 0 when every command that ran
exited as accepted, 1 otherwise, 2 for a file that cannot be read.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

SHELL_TAGS = frozenset({"sh", "bash", "shell", "console"})
NEEDS = frozenset({"gpu", "cluster", "display", "network", "root"})
_FENCE = re.compile(r"^(\s*)```+\s*([\w+-]*)")
_NEEDS = re.compile(r"#\s*needs:\s*([\w, -]+?)\s*$")
_SKIP = re.compile(r"#\s*skip:\s*(.+?)\s*$")
_EXIT = re.compile(r"#\s*exit:\s*([\d ,or]+?)\s*$")
TIMEOUT_S = 180


@dataclass
class Example:
    """One command from the README, where it is, and what its markers say."""

    line: int
    command: str
    skip: str | None = None
    exits: frozenset[int] = field(default_factory=lambda: frozenset({0}))


def _marker(text: str) -> tuple[str | None, frozenset[int] | None]:
    """(why to skip, accepted exit codes) from one comment or trailing comment."""
    skip: str | None = None
    exits: frozenset[int] | None = None
    needs = _NEEDS.search(text)
    if needs:
        words = [word.strip() for word in needs.group(1).split(",") if word.strip()]
        unknown = [word for word in words if word not in NEEDS]
        if unknown:
            raise ValueError(f"unknown '# needs:' word(s) {unknown}; known: {sorted(NEEDS)}")
        skip = "needs " + ", ".join(words)
    reason = _SKIP.search(text)
    if reason:
        skip = reason.group(1)
    codes = _EXIT.search(text)
    if codes:
        exits = frozenset(int(code) for code in re.findall(r"\d+", codes.group(1)))
    return skip, exits


def extract(markdown: str) -> list[Example]:
    """The README's shell commands in order, with their markers applied."""
    examples: list[Example] = []
    lines = markdown.splitlines()
    index = 0
    while index < len(lines):
        fence = _FENCE.match(lines[index])
        if not fence:
            index += 1
            continue
        tag = fence.group(2).lower()
        body: list[tuple[int, str]] = []
        index += 1
        while index < len(lines) and not _FENCE.match(lines[index]):
            body.append((index + 1, lines[index].strip()))
            index += 1
        index += 1  # the closing fence
        if tag in SHELL_TAGS:
            examples.extend(_block_examples(body))
    return examples


def _block_examples(body: list[tuple[int, str]]) -> list[Example]:
    examples: list[Example] = []
    first = next((number for number, text in body if text), None)
    block_skip: str | None = None
    pending_skip: str | None = None
    pending_exits: frozenset[int] | None = None
    command: list[str] = []
    start = 0
    for number, text in body:
        if not command and (not text or text.startswith("#")):
            skip, exits = _marker(text)
            if skip is not None and number == first:
                block_skip = skip  # the block's first line: every command in it
            elif skip is not None:
                pending_skip = skip
            if exits is not None:
                pending_exits = exits
            continue
        if not command:
            start = number
        command.append(text[:-1] if text.endswith("\\") else text)
        if text.endswith("\\"):
            continue
        whole = " ".join(part.strip() for part in command)
        own_skip, own_exits = _marker(whole)
        examples.append(
            Example(
                line=start,
                command=whole,
                skip=block_skip or own_skip or pending_skip,
                exits=own_exits or pending_exits or frozenset({0}),
            )
        )
        command, pending_skip, pending_exits = [], None, None
    if command:
        raise ValueError(f"line {start}: the block ends inside a continued command")
    return examples


def run(examples: list[Example], checkout: Path, label: str = "README.md") -> int:
    """Run what is not skipped, in a fresh folder and HOME; one line per command; the
    failures' count. ``label`` names the page in each line (``docs/fit.md:12``)."""
    failures = 0
    bin_dir = str(Path(sys.executable).parent)
    with tempfile.TemporaryDirectory(prefix="gpudesk-readme-") as scratch:
        work = Path(scratch) / "checkout"
        home = Path(scratch) / "home"
        work.mkdir()
        home.mkdir()
        for item in checkout.iterdir():
            if item.name not in {".git"}:
                (work / item.name).symlink_to(item)
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("XDG_", "QT_", "GPUDESK_")) and key != "DISPLAY"
        }
        env.update(HOME=str(home), PATH=bin_dir + os.pathsep + env.get("PATH", ""))
        env.pop("WAYLAND_DISPLAY", None)
        for example in examples:
            if example.skip:
                print(f"skip  {label}:{example.line}: {example.command}  ({example.skip})")
                continue
            started = time.monotonic()
            try:
                done = subprocess.run(
                    ["bash", "-o", "pipefail", "-c", example.command],
                    cwd=work,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    capture_output=True,
                    text=True,
                    timeout=TIMEOUT_S,
                )
            except subprocess.TimeoutExpired:
                failures += 1
                print(f"FAIL  {label}:{example.line}: {example.command}  (over {TIMEOUT_S} s)")
                continue
            took = time.monotonic() - started
            if done.returncode in example.exits:
                print(f"ok    {label}:{example.line}: {example.command}  ({took:.1f} s)")
                continue
            failures += 1
            print(f"FAIL  {label}:{example.line}: {example.command}  (exit {done.returncode})")
            for stream in (done.stdout, done.stderr):
                tail = stream.strip().splitlines()[-8:]
                for line in tail:
                    print(f"      {line}")
    return failures


def documents(checkout: Path) -> list[Path]:
    """The pages a reader pastes from: ``README.md``, then ``docs/**/*.md`` in path order."""
    return [checkout / "README.md", *sorted((checkout / "docs").rglob("*.md"))]


def _label(path: Path, checkout: Path) -> str:
    try:
        return path.resolve().relative_to(checkout).as_posix()
    except ValueError:
        return str(path)


def main(argv: list[str]) -> int:
    checkout = Path(__file__).resolve().parents[1]
    pages = [Path(arg) for arg in argv] if argv else documents(checkout)
    read: list[tuple[Path, list[Example]]] = []
    for page in pages:
        try:
            read.append((page, extract(page.read_text(encoding="utf-8"))))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            print(f"readme_examples: {page}: {exc}", file=sys.stderr)
            return 2
    if shutil.which("bash") is None:
        print("readme_examples: bash is needed", file=sys.stderr)
        return 2
    failures = ran = skipped = 0
    for page, examples in read:
        failures += run(examples, checkout, _label(page, checkout))
        ran += sum(1 for example in examples if not example.skip)
        skipped += sum(1 for example in examples if example.skip)
    print(f"readme_examples: {len(read)} pages, {ran} run, {skipped} skipped, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
