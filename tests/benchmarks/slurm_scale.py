"""How long a Slurm survey takes on this machine's three-node test cluster, and how a
1,000-node survey reads back.

Usage: python tests/benchmarks/slurm_scale.py [--repeat 3] [--no-quick]

Needs Debian's slurm-wlm and munge and root (tests/slurm_cluster.py). It
starts the cluster (timed: the start-up is not the survey's cost), runs
``gpudesk fleet survey --slurm --json`` as a user would on 1, 2 and 3 nodes
(``--nodelist``), detection only (median of --repeat) and with ``--bench quick``
(once each), every node's tasks loading the fake NVML (two GPUs).

Then the 1,000-node check: a survey of 1,000 nodes of 8 GPUs each, built from
a real node row of the run above (its detection's H100 entry copied 8 times,
one GEMM + copy run per GPU from tests/survey_factory.py at 770 TFLOPS (the
reference figures' H100 median, about), Slurm's declaration
``gpu:h100:8``; every 50th node one GPU short, every 97th a slow GEMM), written
to a file; it times ``summarise()`` in-process and ``gpudesk fleet show FILE``
as a process, and fails when either takes 5 s of CPU time or more. Wall time is
reported beside it with the load average: on a shared machine wall time measures
the other users as much as GPUDesk.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPOSITORY = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY))

from tests import fake_nvml_lib  # noqa: E402
from tests.slurm_cluster import NODES, SlurmCluster, start_cluster  # noqa: E402
from tests.survey_factory import gemm_run  # noqa: E402

LIMIT_S = 5.0


def _survey(cluster: SlurmCluster, nodelist: str, bench: str) -> tuple[float, dict[str, Any]]:
    began = time.monotonic()
    done = subprocess.run(
        [
            *(sys.executable, "-m", "gpudesk", "fleet", "survey", "--slurm", "--json"),
            *("--nodelist", nodelist, "--bench", bench),
        ],
        env=cluster.env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    took = time.monotonic() - began
    if done.returncode != 0:
        raise SystemExit(f"survey failed ({done.returncode}): {done.stderr[-3000:]}")
    return took, json.loads(done.stdout)


def measure(repeat: int, quick: bool) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    starts = []
    cluster = None
    for _ in range(repeat):
        cluster = start_cluster(fake_nvml_lib.environment())
        starts.append(cluster.startup_s)
        if len(starts) < repeat:
            cluster.close()
    assert cluster is not None
    rows: list[dict[str, Any]] = [
        {"cluster_start_s_median": round(statistics.median(starts), 2), "runs": repeat}
    ]
    sample: dict[str, Any] = {}
    try:
        for count in (1, 2, 3):
            nodelist = ",".join(NODES[:count])
            times = []
            for _ in range(repeat):
                took, document = _survey(cluster, nodelist, "none")
                times.append(took)
                sample = document["nodes"][0]
            row: dict[str, Any] = {
                "nodes": count,
                "bench_none_s_median": round(statistics.median(times), 2),
                "bench_none_s_range": [round(min(times), 2), round(max(times), 2)],
                "bytes_per_node": round(len(json.dumps(document)) / count),
            }
            if quick:
                took, document = _survey(cluster, nodelist, "quick")
                row["bench_quick_s"] = round(took, 1)
                row["bytes_per_node_quick"] = round(len(json.dumps(document)) / count)
            rows.append(row)
    finally:
        cluster.close()
    return rows, sample


def thousand_nodes(sample: dict[str, Any]) -> dict[str, Any]:
    from gpudesk.fleet.checks import summarise
    from gpudesk.fleet.document import read_survey

    h100 = next(gpu for gpu in sample["detection"]["gpus"] if gpu["catalog_id"] == "h100-sxm5")
    nodes = []
    for number in range(1000):
        name = f"gpu{number:04d}"
        gpus = []
        for index in range(8 if number % 50 else 7):
            item = copy.deepcopy(h100)
            item.update(index=index, uuid=f"GPU-{number:04d}-{index}")
            item["pci_bus_id"] = f"00000000:{0x1B + index * 0x10:02X}:00.0"
            gpus.append(item)
        detection = copy.deepcopy(sample["detection"])
        detection["gpus"] = gpus
        runs = [gemm_run(index, 400.0 if number % 97 == 0 else 770.0) for index in range(8)]
        nodes.append(
            {
                "node_id": name,
                "hostname": name,
                "ip": f"10.0.{number // 250}.{number % 250}",
                "detection": detection,
                "bench": runs[0],
                "benches": runs,
                "error": None,
                "duration_s": 40.0,
                "slurm": {
                    "name": name,
                    "state": "IDLE",
                    "gres": [{"name": "gpu", "type": "h100", "count": 8}],
                    "features": ["h100"],
                    "real_memory_mb": 1000,
                    "partitions": ["gpu"],
                    "reason": None,
                },
            }
        )
    document = {
        "survey_schema_version": 1,
        "scheduler": "slurm",
        "cluster": {
            "address": "synthetic",
            "scheduler": "slurm",
            "slurm_version": "22.05.8",
            "nodes_alive": 1000,
            "surveyed_at": "2026-12-02T07:00:00+00:00",
        },
        "nodes": nodes,
        "summary": {},
    }
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "survey-1000.json"
        path.write_text(json.dumps(document))
        size = path.stat().st_size
        began, cpu = time.monotonic(), time.process_time()
        view, _ = read_survey(path)
        summary = summarise(view.nodes)
        summary_s, summary_cpu_s = time.monotonic() - began, time.process_time() - cpu
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        began = time.monotonic()
        shown = subprocess.run(
            [sys.executable, "-m", "gpudesk", "fleet", "show", str(path)],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        show_s = time.monotonic() - began
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        show_cpu_s = (after.ru_utime + after.ru_stime) - (children.ru_utime + children.ru_stime)
    findings = [item for item in summary["outliers"] if item["check"] == "slurm_gres"]
    result = {
        "nodes": 1000,
        "gpus": summary["gpus"],
        "file_mb": round(size / 1e6, 1),
        "read_and_summarise_cpu_s": round(summary_cpu_s, 2),
        "read_and_summarise_wall_s": round(summary_s, 2),
        "fleet_show_cpu_s": round(show_cpu_s, 2),
        "fleet_show_wall_s": round(show_s, 2),
        "load_average_1min": round(os.getloadavg()[0], 1),
        "outliers": len(summary["outliers"]),
        "slurm_gres_findings": len(findings),
        "fleet_show_lines": len(shown.stdout.splitlines()),
    }
    assert len(findings) == 20, findings[:3]
    if summary_cpu_s >= LIMIT_S or show_cpu_s >= LIMIT_S:
        raise SystemExit(f"1,000 nodes took {LIMIT_S:g} s of CPU or more: {result}")
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-quick", action="store_true", help="skip the --bench quick runs")
    parser.add_argument(
        "--thousand-only",
        action="store_true",
        help="only the 1,000-node check, from `gpudesk detect --json` on the fake NVML",
    )
    args = parser.parse_args()
    if args.thousand_only:
        _, detection, _ = fake_nvml_lib.detect_json()
        print(json.dumps({"thousand_nodes": thousand_nodes({"detection": detection})}, indent=2))
        return 0
    rows, sample = measure(args.repeat, not args.no_quick)
    print(json.dumps({"surveys": rows}, indent=2), flush=True)
    print(json.dumps({"thousand_nodes": thousand_nodes(sample)}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
