"""The Grafana dashboard in resources/ asks only for families the exporter serves."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from gpudesk.telemetry.exposition import FAMILIES

DASHBOARD = Path(__file__).resolve().parents[2] / "resources" / "grafana" / "gpudesk-dashboard.json"
#: Families outside the device field set table.
OTHERS = {
    "gpudesk_gpu_up",
    "gpudesk_gpu_throttle_reason_active",
    "gpudesk_process_memory_used_bytes",
    "gpudesk_exporter_source_available",
    "gpudesk_exporter_collections_total",
    "gpudesk_exporter_collection_overruns_total",
    "gpudesk_exporter_collection_duration_seconds",
    "gpudesk_exporter_last_collection_timestamp_seconds",
}


def dashboard_expressions() -> list[str]:
    """Every target's PromQL, with the dashboard's variables as "match all"."""
    document: dict[str, Any] = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    expressions = [
        target["expr"] for panel in document["panels"] for target in panel.get("targets", [])
    ]
    return [
        expression.replace("$hostname", ".*").replace("$uuid", ".*") for expression in expressions
    ]


def test_the_dashboard_queries_only_served_families() -> None:
    served = {family.name + ("_total" if family.counter else "") for family in FAMILIES} | OTHERS
    expressions = dashboard_expressions()
    asked = {
        name for expression in expressions for name in re.findall(r"gpudesk_[a-z0-9_]+", expression)
    }
    assert len(expressions) >= 20
    assert asked <= served, asked - served
    # The import asks for one Prometheus data source, as Grafana's import dialog expects.
    document = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    assert [item["name"] for item in document["__inputs"]] == ["DS_PROMETHEUS"]
