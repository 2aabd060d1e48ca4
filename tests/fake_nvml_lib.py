"""Build the fake ``libnvidia-ml.so.1`` (tests/hardware/fake_nvml.c) and run GPUDesk against it.

The library is compiled with the system C compiler the first time a variant
is asked for, into one temporary folder per test session, and loaded by the
real nvidia-ml-py in a subprocess through ``LD_LIBRARY_PATH`` (the test
process itself never loads it, so its own pynvml keeps seeing no driver).
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

SOURCE = Path(__file__).resolve().parent / "hardware" / "fake_nvml.c"
REPOSITORY = Path(__file__).resolve().parents[1]

#: Symbols a pre-R510 driver lacks, and a driver older still.
NO_V3 = ("NO_PROCESSES_V3",)
OLD_DRIVER = ("NO_PROCESSES_V3", "NO_PROCESSES_V2", "NO_MEMORY_V2", "NO_NEW_QUERIES")
NO_PROCESS_QUERIES = ("NO_PROCESSES_V3", "NO_PROCESSES_V2", "NO_PROCESSES_V1")
#: nvidia-ml-py's nvmlInit calls nvmlInitWithFlags; before that, nvmlInit_v2.
NO_INIT_AT_ALL = ("NO_INIT_FLAGS", "NO_INIT_V2", "NO_INIT_V1")
ONLY_INIT_V2 = ("NO_INIT_FLAGS",)

_lock = threading.Lock()
_built: dict[tuple[str, ...], Path] = {}
_root: Path | None = None


def _compiler() -> str:
    for name in (os.environ.get("CC", ""), "cc", "gcc", "clang"):
        if name and shutil.which(name):
            return name
    pytest.fail(
        "no C compiler: the NVML tests build a fake libnvidia-ml.so.1 "
        "(install gcc and libc6-dev; .ci/run does)"
    )


def library_dir(flags: Sequence[str] = ()) -> Path:
    """The folder holding ``libnvidia-ml.so.1`` built without the symbols ``flags`` name."""
    global _root
    key = tuple(sorted(flags))
    with _lock:
        if key in _built:
            return _built[key]
        if _root is None:
            _root = Path(tempfile.mkdtemp(prefix="gpudesk-fake-nvml-"))
            atexit.register(shutil.rmtree, _root, True)
        folder = _root / ("plain" if not key else "-".join(key).lower())
        folder.mkdir()
        command = [
            _compiler(),
            "-shared",
            "-fPIC",
            "-O1",
            "-Wall",
            "-Werror",
            "-fvisibility=hidden",
            *(f"-D{flag}" for flag in key),
            "-o",
            str(folder / "libnvidia-ml.so.1"),
            str(SOURCE),
        ]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            pytest.fail(f"building the fake NVML failed:\n{done.stderr}")
        _built[key] = folder
        return folder


def environment(
    flags: Sequence[str] = (),
    scenario: str = "two_gpus",
    settings: Mapping[str, str] | None = None,
    base: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """A process environment whose ``libnvidia-ml.so.1`` is the fake."""
    env = dict(os.environ if base is None else base)
    for name in list(env):
        if name.startswith("FAKE_NVML_"):
            del env[name]
    folder = library_dir(flags)
    env["LD_LIBRARY_PATH"] = os.pathsep.join(
        part for part in (str(folder), env.get("LD_LIBRARY_PATH", "")) if part
    )
    env["PYTHONPATH"] = os.pathsep.join(
        part for part in (str(REPOSITORY), env.get("PYTHONPATH", "")) if part
    )
    env["FAKE_NVML_SCENARIO"] = scenario
    env.update(settings or {})
    return env


def run_gpudesk(
    arguments: Sequence[str],
    flags: Sequence[str] = (),
    scenario: str = "two_gpus",
    settings: Mapping[str, str] | None = None,
    timeout: float = 60.0,
) -> subprocess.CompletedProcess[str]:
    """``python -m gpudesk ARGUMENTS`` with the fake driver."""
    return subprocess.run(
        [sys.executable, "-m", "gpudesk", *arguments],
        env=environment(flags, scenario, settings),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def run_python(
    code: str,
    flags: Sequence[str] = (),
    scenario: str = "two_gpus",
    settings: Mapping[str, str] | None = None,
    timeout: float = 60.0,
) -> Any:
    """Run ``code`` with the fake driver; it prints one JSON document, which is returned."""
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=environment(flags, scenario, settings),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def detect_json(
    flags: Sequence[str] = (),
    scenario: str = "two_gpus",
    settings: Mapping[str, str] | None = None,
) -> tuple[int, dict[str, Any], str]:
    """``gpudesk detect --json`` against the fake: (exit code, document, stderr)."""
    done = run_gpudesk(["detect", "--json"], flags, scenario, settings)
    assert done.stdout, f"no output (exit {done.returncode}): {done.stderr}"
    return done.returncode, json.loads(done.stdout), done.stderr
