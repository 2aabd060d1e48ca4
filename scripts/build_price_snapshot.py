"""Build the bundled cloud-rate snapshot from the bundled SkyPilot catalog excerpts.

    python scripts/build_price_snapshot.py            # rewrite resources/prices/skypilot_rates.json
    python scripts/build_price_snapshot.py --check    # exit 1 if the committed file differs
    python scripts/build_price_snapshot.py --git DIR --commit C [--clouds a,b] [--out FOLDER]
        # cut resources/prices/skypilot/<commit date>/ from commit C of a local git copy
        # of skypilot-org/skypilot-catalog (clone or bare), then rebuild the JSON

Input: resources/prices/skypilot/<date>/ folders, each with a SNAPSHOT.toml naming
the SkyPilot catalog commit of every <cloud>/vms.csv excerpt (verbatim rows).
The same importer as ``gpudesk prices update`` reads them, so the bundled rates
are exactly what an import of those folders gives. The output is stable: the
same excerpts give the same bytes (tests check it).
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from pathlib import Path

from gpudesk.catalog.price_snapshots import (
    bundle_json,
    bundled_json_path,
    bundled_snapshot_dir,
    read_folder,
)


def build() -> str:
    # ``today`` only dates a folder without a manifest; every bundled folder has one.
    report = read_folder(bundled_snapshot_dir(), today=dt.date(1970, 1, 1))
    if report.problems or report.failed_clouds:
        problems = "; ".join(str(problem) for problem in report.problems)
        raise SystemExit(f"build_price_snapshot: the excerpts have problems: {problems}")
    return bundle_json(report)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    parser.add_argument("--git", type=Path, help="a local git copy of skypilot-catalog")
    parser.add_argument("--commit", help="the commit to cut a snapshot from (with --git)")
    parser.add_argument("--clouds", help="only these clouds, comma-separated (with --git)")
    parser.add_argument("--out", type=Path, help="where the dated folder goes (with --git)")
    args = parser.parse_args()
    if args.git is not None or args.commit is not None:
        if args.git is None or args.commit is None or args.check:
            parser.error("--git and --commit go together, without --check")
        from gpudesk.catalog.skypilot_git import GitSourceError, extract_snapshot

        clouds = [c.strip() for c in args.clouds.split(",") if c.strip()] if args.clouds else None
        try:
            folder = extract_snapshot(
                args.git, args.commit, args.out or bundled_snapshot_dir(), clouds=clouds
            )
        except GitSourceError as exc:
            print(f"build_price_snapshot: {exc}", file=sys.stderr)
            return 2
        print(f"wrote {folder}")
        if args.out is not None:
            return 0
    text = build()
    target = bundled_json_path()
    if args.check:
        current = target.read_text(encoding="utf-8") if target.is_file() else ""
        if current != text:
            print(f"{target} is out of date: run scripts/build_price_snapshot.py", file=sys.stderr)
            return 1
        return 0
    target.write_text(text, encoding="utf-8")
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
