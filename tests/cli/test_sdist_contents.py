"""The source distribution carries what the README links to: every relative link of the
README lies under one of the sdist's ``include`` roots in pyproject.toml (hatchling builds
the sdist from that list alone, so a linked folder left off it is missing from the
tarball; ``docs/`` was, issue 42)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[2]
_LINK = re.compile(r"\]\(([^)#\s]+)")


def _sdist_roots() -> list[str]:
    config = tomllib.loads((CHECKOUT / "pyproject.toml").read_text(encoding="utf-8"))
    include = config["tool"]["hatch"]["build"]["targets"]["sdist"]["include"]
    return [str(path).strip("/") for path in include]


def _readme_links() -> list[str]:
    text = (CHECKOUT / "README.md").read_text(encoding="utf-8")
    return [
        link for link in _LINK.findall(text) if "://" not in link and not link.startswith("mailto:")
    ]


def test_every_file_the_readme_links_to_is_in_the_sdist() -> None:
    roots = _sdist_roots()
    links = _readme_links()
    assert len(links) >= 10, links  # the README links into docs/ throughout
    left_out = [
        link
        for link in links
        if not any(link == root or link.startswith(f"{root}/") for root in roots)
    ]
    assert left_out == [], f"linked from README.md but not in the sdist's include: {left_out}"
    assert all((CHECKOUT / link).exists() for link in links)
