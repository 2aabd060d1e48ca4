"""The GUI's monitor shows the common field set for every vendor, from the telemetry code."""

from __future__ import annotations

from pathlib import Path

from hardware import fake_pynvml as fakes, fake_sysfs
from hardware.fake_sysfs import FakeSysfs
from pytestqt.qtbot import QtBot

from gpudesk.hardware.detect import detect
from gpudesk.hardware.nvml import Nvml
from gpudesk.ui.device_monitor import READING_COLUMNS, MonitorPanel


def test_the_readings_table_has_a_row_per_device_of_every_vendor(
    qtbot: QtBot, tmp_path: Path
) -> None:
    tree = FakeSysfs(tmp_path / "sys")
    tree.add(fake_sysfs.mi300x())
    tree.add(fake_sysfs.arc_b580())
    nvml = Nvml(module=fakes.FakePynvml([fakes.rtx_4090()]))
    result = detect(nvml, sysfs_root=tree.root)
    panel = MonitorPanel(interval_ms=3_600_000)
    qtbot.addWidget(panel)
    panel.show()
    with qtbot.waitSignal(panel.sampled, timeout=10_000):
        panel.set_devices(nvml, result.gpus, sysfs_root=tree.root)
    panel.shutdown()
    table = panel.readings_table
    assert table.isVisible()
    assert table.columnCount() == len(READING_COLUMNS)
    rows = [
        [table.item(row, column).text() for column in range(table.columnCount())]
        for row in range(table.rowCount())
    ]
    assert [row[1] for row in rows] == ["NVIDIA", "Intel", "AMD"]
    headings = [name for name, _ in READING_COLUMNS]
    amd = dict(zip(headings, rows[2], strict=True))
    assert amd["Util."] == "37%"
    assert amd["Memory"] == "3.0/192.0 GiB"
    assert amd["Temp."] == "41°C"
    assert amd["Power"] == "152/750 W"
    assert amd["PCIe"] == "Gen5 x16"
    intel = dict(zip(headings, rows[1], strict=True))
    assert intel["Util."] == "n/a"  # Intel's sysfs has no utilisation
    assert intel["Memory"] == "?/12.0 GiB"
    # The charts still follow the GPUs with live figures only.
    assert len(panel.devices) == 2
