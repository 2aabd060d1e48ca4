"""Which catalog entries "this machine" has: physical, answering GPUs, once each."""

from __future__ import annotations

from gpudesk.hardware.match import CatalogMatch, MatchMethod, matched_catalog_ids
from gpudesk.hardware.models import DeviceKind, GpuSnapshot


def _gpu(index: int, **fields: object) -> GpuSnapshot:
    return GpuSnapshot.model_validate({"index": index, "name": f"GPU {index}", **fields})


def _match(catalog_id: str | None) -> CatalogMatch:
    method = MatchMethod.NONE if catalog_id is None else MatchMethod.NVML_NAME
    return CatalogMatch(catalog_id=catalog_id, method=method)


def test_physical_gpus_in_device_order_once_each() -> None:
    gpus = [_gpu(0), _gpu(1), _gpu(2), _gpu(3)]
    matches = [_match("rtx-4090"), _match(None), _match("a100"), _match("rtx-4090")]
    assert matched_catalog_ids(gpus, matches) == ["rtx-4090", "a100"]


def test_mig_slices_and_lost_gpus_count_for_nothing() -> None:
    gpus = [_gpu(0, kind=DeviceKind.MIG, parent_index=1), _gpu(1, lost=True), _gpu(2)]
    matches = [_match("a100"), _match("h100"), _match("l4")]
    assert matched_catalog_ids(gpus, matches) == ["l4"]
