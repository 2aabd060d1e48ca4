"""How the fleet survey scales with the number of nodes, on this machine's local Ray cluster.

Usage: python tests/benchmarks/fleet_scale.py [--nodes 2,4,8] [--repeat 3]

For each node count, starts a local cluster on loopback (head + workers, one
CPU each), runs ``gpudesk fleet survey --json`` (detection only) as a user
would, three times, and reports the survey's wall time (median, min..max),
the time per node and the document's bytes per node. The cluster start-up is
reported separately: it is not the survey's cost.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # bind to 127.0.0.1 only
os.environ["RAY_USAGE_STATS_ENABLED"] = "0"


def measure(node_count: int, repeat: int) -> dict[str, object]:
    from ray.cluster_utils import Cluster

    started = time.monotonic()
    cluster = Cluster(
        initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False}
    )
    for _ in range(node_count - 1):
        cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    start_s = time.monotonic() - started
    times: list[float] = []
    sizes: list[int] = []
    try:
        for _ in range(repeat):
            t0 = time.monotonic()
            result = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "gpudesk",
                    "fleet",
                    "survey",
                    "--address",
                    cluster.address,
                    "--json",
                ],
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
            times.append(time.monotonic() - t0)
            if result.returncode != 0 or not result.stdout.strip():
                raise SystemExit(f"survey failed ({result.returncode}): {result.stderr[-3000:]}")
            document = json.loads(result.stdout)
            assert len(document["nodes"]) == node_count
            sizes.append(len(result.stdout.encode()))
    finally:
        cluster.shutdown()
    return {
        "nodes": node_count,
        "cluster_start_s": round(start_s, 1),
        "survey_s_median": round(statistics.median(times), 2),
        "survey_s_min": round(min(times), 2),
        "survey_s_max": round(max(times), 2),
        "per_node_s": round(statistics.median(times) / node_count, 3),
        "bytes_per_node": round(statistics.median(sizes) / node_count),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", default="2,4,8", help="comma-separated node counts")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rows = [measure(int(count), args.repeat) for count in args.nodes.split(",")]
    print(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
