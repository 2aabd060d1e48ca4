"""``gpudesk monitor`` on a terminal (a pty) and for scripts, over the fake NVML."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import sys
import termios
import time
from pathlib import Path

import fake_nvml_lib
from signal_dispositions import default_sigint_in_child

from gpudesk.cli.textwidth import display_width


def _read_until(descriptor: int, needles: tuple[str, ...], timeout_s: float) -> str:
    seen = b""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        ready, _, _ = select.select([descriptor], [], [], 0.2)
        if ready:
            try:
                seen += os.read(descriptor, 65536)
            except OSError:
                break
            text = seen.decode("utf-8", errors="replace")
            if all(needle in text for needle in needles):
                return text
    raise AssertionError(f"never showed {needles}:\n{seen.decode('utf-8', errors='replace')}")


def _exit_code(process: subprocess.Popen[bytes], descriptor: int, timeout_s: float) -> int:
    """The process's exit code, reading what it still writes meanwhile, as a terminal
    does: a pty nobody reads fills up, and a monitor blocked writing its last screen
    (or draining it before restoring the terminal) would not exit."""
    deadline = time.monotonic() + timeout_s
    while process.poll() is None and time.monotonic() < deadline:
        ready, _, _ = select.select([descriptor], [], [], 0.1)
        if ready:
            try:
                os.read(descriptor, 65536)
            except OSError:
                break
    return process.wait(max(deadline - time.monotonic(), 0.1))


def _start_on_pty(pids: Path) -> tuple[subprocess.Popen[bytes], int, int]:
    primary, secondary = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "gpudesk", "monitor"],
        env=fake_nvml_lib.environment(),
        stdin=secondary,
        stdout=secondary,
        stderr=secondary,
        # a suite started in the background inherits SIGINT ignored: the monitor at a
        # terminal has it at its default, so Ctrl-C becomes KeyboardInterrupt there
        preexec_fn=default_sigint_in_child,
    )
    with pids.open("a") as file:
        file.write(f"{process.pid}\n")
    return process, primary, secondary


def _close(*descriptors: int) -> None:
    for descriptor in descriptors:
        os.close(descriptor)


def test_the_monitor_shows_both_gpus_in_80_columns_and_quits_on_q(pids: Path) -> None:
    process, primary, secondary = _start_on_pty(pids)
    try:
        text = _read_until(primary, ("NVIDIA H100 80GB HBM3", "RTX 4090", "33°C"), 60)
        os.write(primary, b"q")
        assert _exit_code(process, primary, 10) == 0
        # The terminal is back in line mode (cbreak was undone).
        assert termios.tcgetattr(secondary)[3] & termios.ICANON
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(5)
        _close(primary, secondary)
    screen = text.rsplit("\x1b[2J", 1)[-1]
    lines = [line for line in screen.replace("\r", "").split("\n") if line]
    assert len(lines) >= 6  # title, header, two lines per GPU
    assert all(display_width(line) <= 80 for line in lines), lines


def test_ctrl_c_quits_cleanly(pids: Path) -> None:
    process, primary, secondary = _start_on_pty(pids)
    try:
        _read_until(primary, ("NVIDIA H100 80GB HBM3",), 60)
        process.send_signal(signal.SIGINT)
        assert _exit_code(process, primary, 10) == 0
        assert termios.tcgetattr(secondary)[3] & termios.ICANON
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(5)
        _close(primary, secondary)


def test_json_lines_for_scripts() -> None:
    done = fake_nvml_lib.run_gpudesk(["monitor", "--json", "--count", "2", "--interval", "0.2"])
    assert done.returncode == 0, done.stderr
    documents = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(documents) == 2
    devices = documents[-1]["devices"]
    assert [device["identity"]["name"] for device in devices] == [
        "NVIDIA H100 80GB HBM3",
        "NVIDIA GeForce RTX 4090",
    ]
    assert devices[0]["up"] is True
    assert devices[0]["power_watts"] == 72.0
    assert devices[0]["fan_ratio"] is None  # the H100 has no fan reading: null, not 0
    assert devices[1]["fan_ratio"] == 0.3
