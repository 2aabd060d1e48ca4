"""Issue 30: Ctrl-C during `compare --pdf/--png/--svg` exits 130 cleanly; the old file survives.

Qt objects (the application, a painter on a PDF writer, pictures being
recorded) must not be torn down by a KeyboardInterrupt unwinding through them,
nor left to the interpreter's shutdown: that was a SIGABRT, a SIGSEGV or a
traceback. Each case sends SIGINT at one exact point (the function there is
wrapped to signal its own process first), plus one real Ctrl-C from outside
at a random moment.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from signal_dispositions import default_sigint_in_child

pytest.importorskip("PySide6")

_INTERRUPT_AT = """
import os, signal, sys
import gpudesk.render.app as app_module
import gpudesk.report.pdf as pdf
import gpudesk.render.export as export
from gpudesk.cli import main

point = sys.argv[1]
module, name = {
    "application": (app_module, "create_application"),
    "charts": (pdf, "render_radar"),
    "painting": (pdf, "_page_frame"),
    "writing": (pdf, "_write_atomically"),
    "svg": (export, "svg_bytes"),
    "png": (export, "png_bytes"),
}[point]
original = getattr(module, name)

def interrupted(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGINT)
    return original(*args, **kwargs)

setattr(module, name, interrupted)
sys.exit(main(sys.argv[2:]))
"""

GPUS = ["rtx-4090", "a100-80gb-pcie", "h100-sxm5"]
OLD = b"%PDF-1.4 the old report, which must survive\n"


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.getcwd(), "QT_QPA_PLATFORM": "offscreen"}


def _check_interrupted(
    result: subprocess.CompletedProcess[str], out: Path, *, writing: bool = False
) -> None:
    assert result.returncode == 130, (result.returncode, result.stderr)
    assert result.stderr == "gpudesk: interrupted\n", result.stderr
    if writing:  # the atomic write had begun: the old file or the whole new one
        assert out.read_bytes() == OLD or out.read_bytes().startswith(b"%PDF-1.")
    else:
        assert out.read_bytes() == OLD
    assert sorted(path.name for path in out.parent.iterdir()) == [out.name]


@pytest.mark.parametrize(
    ("point", "flag"),
    [
        ("application", "--pdf"),
        ("charts", "--pdf"),
        ("painting", "--pdf"),
        ("writing", "--pdf"),
        ("svg", "--svg"),
        ("png", "--png"),
    ],
)
def test_sigint_at_each_point_exits_130_and_keeps_the_old_file(
    tmp_path: Path, point: str, flag: str
) -> None:
    out = tmp_path / f"report.{flag.lstrip('-')}"
    out.write_bytes(OLD)
    result = subprocess.run(
        [sys.executable, "-c", _INTERRUPT_AT, point, "compare", *GPUS, flag, str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(),
        check=False,
        preexec_fn=default_sigint_in_child,
    )
    _check_interrupted(result, out, writing=point == "writing")


def _wait_until_loaded(pid: int, library: str, timeout_s: float = 90.0) -> bool:
    """Wait until the process has mapped ``library`` (so it is that far along)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if library in Path(f"/proc/{pid}/maps").read_text(errors="replace"):
                return True
        except OSError:
            return False  # it has exited
        time.sleep(0.01)
    return False


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize(
    "library",
    [
        "_pydantic_core",  # the catalog is being loaded
        "QtCore",  # Qt is being imported, or the application made
        "QtSvg",  # the PDF is being drawn (the report's imports are done)
    ],
)
def test_a_real_ctrl_c_exits_130_or_finishes(tmp_path: Path, library: str) -> None:
    """From outside, as a user does, once the process is that far along."""
    out = tmp_path / "report.pdf"
    out.write_bytes(OLD)
    process = subprocess.Popen(
        [sys.executable, "-m", "gpudesk", "compare", *GPUS, "--pdf", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
        preexec_fn=default_sigint_in_child,
    )
    if _wait_until_loaded(process.pid, library):
        process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    result = subprocess.CompletedProcess(process.args, process.returncode, "", err)
    if result.returncode == 0:  # it finished first: then the new report is whole
        assert out.read_bytes().startswith(b"%PDF") and out.read_bytes() != OLD
        return
    _check_interrupted(result, out, writing=True)


def test_the_entry_and_the_cli_agree_on_the_interrupted_exit_code() -> None:
    from gpudesk import _entry
    from gpudesk.cli.common import EXIT_INTERRUPTED

    assert _entry.EXIT_INTERRUPTED == EXIT_INTERRUPTED == 130
