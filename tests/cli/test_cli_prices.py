"""``gpudesk prices`` and ``prices update`` against a real HTTP server on loopback.

The served files are verbatim excerpts of skypilot-org/skypilot-catalog (see
tests/catalog/test_skypilot_import.py for their commits and dates).
"""

from __future__ import annotations

import datetime as dt
import http.server
import json
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from skypilot_excerpts import LAMBDA_V9, NEBIUS_V9

from gpudesk.catalog.price_snapshots import (
    PriceDataError,
    PriceHistory,
    bundle_json,
    bundled_json_path,
    bundled_snapshot_dir,
    default_history_path,
    read_folder,
)
from gpudesk.catalog.rate_book import RateBook
from gpudesk.cli import main


class _Server:
    def __init__(self, root: Path, *, proxy: bool = False) -> None:
        self.requests: list[str] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.requests.append(self.path)
                path = self.path.split("://", 1)[-1]
                path = path[path.index("/") :] if proxy else path
                target = root / path.lstrip("/")
                if not target.is_file():
                    self.send_error(404, "Not Found")
                    return
                body = target.read_bytes()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        if not self.thread.is_alive():
            return
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[_Server]:
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    root = tmp_path / "www"
    (root / "catalogs/v9/lambda").mkdir(parents=True)
    (root / "catalogs/v9/nebius").mkdir(parents=True)
    (root / "catalogs/v9/lambda/vms.csv").write_text(LAMBDA_V9, encoding="utf-8")
    (root / "catalogs/v9/nebius/vms.csv").write_text(NEBIUS_V9, encoding="utf-8")
    server = _Server(root)
    yield server
    server.close()


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    capsys.readouterr()
    assert main(list(argv)) == 0
    data: dict[str, object] = json.loads(capsys.readouterr().out)
    return data


def test_update_over_http_stores_a_snapshot_that_prices_then_shows(
    served: _Server, capsys: pytest.CaptureFixture[str]
) -> None:
    base = f"http://127.0.0.1:{served.port}/catalogs/v9"
    assert main(["prices", "update", "--from", base, "--clouds", "lambda,nebius"]) == 0
    out = capsys.readouterr()
    assert "Imported 1 snapshot(s)" in out.out and "from lambda, nebius" in out.out
    assert "A100 on lambda (1): a 40 GB PCIe A100" in out.out  # unmapped names are listed
    assert sorted(served.requests) == ["/catalogs/v9/lambda/vms.csv", "/catalogs/v9/nebius/vms.csv"]
    stored = PriceHistory(default_history_path()).snapshots()
    assert [s.taken for s in stored] == [dt.date.today()] and stored[0].basis == "retrieved"
    record = _json(capsys, "prices", "h100-sxm5", "--json")
    providers = {(p["provider"], p["kind"]): p for p in record["providers"]}  # type: ignore[union-attr]
    assert providers[("Nebius", "on_demand")]["usd_per_gpu_hour"] == 2.95  # type: ignore[index]
    assert providers[("Nebius", "spot")]["region"] == "eu-north1"  # type: ignore[index]
    assert providers[("Lambda", "on_demand")]["usd_per_gpu_hour"] == 3.99  # type: ignore[index]
    assert providers[("Lambda", "on_demand")]["date"] == dt.date.today().isoformat()  # type: ignore[index]
    # importing the same thing twice keeps one copy
    assert main(["prices", "update", "--from", base, "--clouds", "lambda,nebius"]) == 0
    assert len(PriceHistory(default_history_path()).snapshots()) == 1


def test_proxy_settings_are_honoured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "www"
    (root / "v9/lambda").mkdir(parents=True)
    (root / "v9/lambda/vms.csv").write_text(LAMBDA_V9, encoding="utf-8")
    proxy = _Server(root, proxy=True)
    try:
        monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{proxy.port}")
        monkeypatch.delenv("no_proxy", raising=False)
        monkeypatch.delenv("NO_PROXY", raising=False)
        # port 9 (discard) has no server: only the proxy can answer
        argv = ["prices", "update", "--from", "http://127.0.0.1:9/v9", "--clouds", "lambda"]
        assert main(argv) == 0
    finally:
        proxy.close()
    assert proxy.requests == ["http://127.0.0.1:9/v9/lambda/vms.csv"]


def test_offline_says_so_in_one_line_and_changes_nothing(
    served: _Server, capsys: pytest.CaptureFixture[str]
) -> None:
    base = f"http://127.0.0.1:{served.port}/catalogs/v9"
    assert main(["prices", "update", "--from", base, "--clouds", "lambda"]) == 0
    before = PriceHistory(default_history_path()).snapshots()
    served.close()  # the port now refuses connections
    capsys.readouterr()
    assert main(["prices", "update", "--from", base, "--clouds", "lambda"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("gpudesk: cannot reach 127.0.0.1") and "unchanged" in err
    assert len(err.splitlines()) == 1
    assert len(PriceHistory(default_history_path()).snapshots()) == len(before)


def test_a_bad_file_keeps_the_last_good_snapshot(
    served: _Server, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "good/lambda"
    good.mkdir(parents=True)
    (good / "vms.csv").write_text(LAMBDA_V9, encoding="utf-8")
    assert main(["prices", "update", "--from", str(good.parent)]) == 0
    bad = tmp_path / "bad/lambda"
    bad.mkdir(parents=True)
    (bad / "vms.csv").write_bytes(b"Name,Cost\n\xff\xfe,nan\n")
    capsys.readouterr()
    assert main(["prices", "update", "--from", str(bad.parent)]) == 1
    err = capsys.readouterr().err
    assert "missing column(s)" in err and "Kept the last good data for: lambda" in err
    record = _json(capsys, "prices", "h100-pcie", "--json")
    lows = record["lowest_on_demand"]
    assert isinstance(lows, dict) and lows["provider"] in {"Lambda", "Hyperstack"}
    lambda_rates = [p for p in record["providers"] if p["provider"] == "Lambda"]  # type: ignore[union-attr]
    assert lambda_rates and lambda_rates[0]["usd_per_gpu_hour"] == 3.29


def test_bad_sources_are_usage_errors(served: _Server, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prices", "update", "--from", "http://example.com/catalogs/v9"]) == 2
    assert "use an https:// address" in capsys.readouterr().err
    assert main(["prices", "update", "--from", "/no/such/folder"]) == 2
    assert main(["prices", "update", "--clouds", "../etc"]) == 2
    assert main(["prices", "h100-sxm5", "--from", "x"]) == 2
    assert main(["prices", "no-such-gpu-at-all"]) == 2


def test_a_damaged_or_foreign_history_database_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "prices.sqlite3"
    path.write_bytes(b"not a database at all" * 100)
    with pytest.raises(PriceDataError, match="not a GPUDesk price history"):
        PriceHistory(path).snapshots()
    other = tmp_path / "other.sqlite3"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        connection.execute("INSERT INTO meta VALUES ('schema_version', '99')")
    with pytest.raises(PriceDataError, match="schema 99"):
        PriceHistory(other).snapshots()


def test_the_bundled_snapshot_is_reproduced_by_its_script() -> None:
    report = read_folder(bundled_snapshot_dir(), today=dt.date(1970, 1, 1))
    assert bundle_json(report) == bundled_json_path().read_text(encoding="utf-8")


def test_first_run_rates_for_h100_several_providers_and_a_history(
    capsys: pytest.CaptureFixture[str],
) -> None:
    record = _json(capsys, "prices", "h100-sxm5", "--json")
    providers = {p["provider"] for p in record["providers"]}  # type: ignore[union-attr]
    assert {"Lambda", "Nebius", "Hyperstack", "Verda (DataCrunch)"} <= providers
    lowest = record["lowest_on_demand"]
    assert isinstance(lowest, dict) and lowest["region"] and lowest["date"]
    assert isinstance(record["median_on_demand_usd_per_gpu_hour"], float)
    history = _json(capsys, "prices", "h100-sxm5", "--history", "--json")["history"]
    assert isinstance(history, list) and len({point["date"] for point in history}) >= 3


def test_update_from_the_bundled_folder_then_most_gpus_have_a_recent_rate(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["prices", "update", "--from", str(bundled_snapshot_dir())]) == 0
    assert len(PriceHistory(default_history_path()).snapshots()) == 6
    catalog_record = _json(capsys, "prices", "--json")
    gpus = catalog_record["gpus"]
    assert isinstance(gpus, list) and len(gpus) > 40
    book = RateBook.load()
    assert book.catalog_date() == dt.date(2026, 12, 2)


def test_cost_states_the_lowest_and_the_median_rate_with_providers(
    capsys: pytest.CaptureFixture[str],
) -> None:
    summary = RateBook.load().summary("h100-sxm5")
    assert summary.lowest is not None and summary.median_usd is not None
    data = _json(capsys, "cost", "h100-sxm5", "--json")
    inputs, provenance = data["inputs"], data["provenance"]
    assert isinstance(inputs, dict) and isinstance(provenance, dict)
    # the catalog entry adds hand-entered providers SkyPilot lacks, so its median is its own
    assert inputs["cloud_hourly_usd"] == pytest.approx(summary.lowest.usd_per_gpu_hour)
    cloud = provenance["cloud_hourly"]
    assert cloud.startswith(f"lowest on-demand catalog rate: {summary.lowest.provider} ")
    assert "median $" in cloud and "providers" in cloud
    at_median = data["at_median_cloud_rate"]
    assert isinstance(at_median, dict)
    assert at_median["usd_per_gpu_hour"] > inputs["cloud_hourly_usd"]
    capsys.readouterr()
    assert main(["cost", "h100-sxm5"]) == 0
    assert "At the median on-demand rate" in capsys.readouterr().out


def test_speed_states_the_cost_at_the_lowest_and_the_median_rate(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["speed", "--model", "llama-3.1-8b", "--mode", "decode", "--gpu", "h100-sxm5"]
    data = _json(capsys, *argv, "--json")
    rates = data["cloud_rates"]
    assert isinstance(rates, dict)
    record = rates["h100-sxm5"]
    low = record["lowest_on_demand"]["usd_per_gpu_hour"]
    median = record["median_on_demand_usd_per_gpu_hour"]
    ratio = record["usd_per_million_tokens_at_median"] / record["usd_per_million_tokens_at_lowest"]
    assert ratio == pytest.approx(median / low) and median > low
    assert record["lowest_on_demand"]["region"] and record["lowest_on_demand"]["date"]
    capsys.readouterr()
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "at the lowest on-demand rate" in out and "at the median" in out
    # a given rate is the only rate: no distribution lines
    assert _json(capsys, *argv, "--cloud-hourly", "2", "--json")["cloud_rates"] == {}


def test_region_provider_and_spot_narrow_the_rates(capsys: pytest.CaptureFixture[str]) -> None:
    record = _json(capsys, "prices", "h100-sxm5", "--provider", "nebius", "--json")
    providers = record["providers"]
    assert isinstance(providers, list) and providers
    assert {p["provider"] for p in providers} == {"Nebius"}
    assert {p["kind"] for p in providers} == {"on_demand", "spot"}
    record = _json(capsys, "prices", "h100-sxm5", "--region", "us-east", "--json")
    regions = {p["region"] for p in record["providers"]}  # type: ignore[union-attr]
    assert regions and all("us-east" in region for region in regions)
    capsys.readouterr()
    assert main(["prices", "h100-sxm5", "--spot"]) == 0
    lines = capsys.readouterr().out.splitlines()
    table = lines[lines.index(next(line for line in lines if line.startswith("Provider"))) + 2 :]
    rows = table[: table.index("")]
    assert rows and all(" spot " in row for row in rows)
    assert main(["prices", "--history"]) == 2  # a history is per GPU
