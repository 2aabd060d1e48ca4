"""gpudesk.units: the one place byte units are defined and sizes become GiB text."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from gpudesk.units import GB, GB_PER_GIB_TEXT, GIB, MIB, gib, gib_text


def test_a_vendors_24_gb_card_reads_24_gib() -> None:
    # nvidia-smi totals an A100 80GB at 81,920 MiB: the vendor's "80 GB" is 80 GiB
    assert 81_920 * MIB == 80 * GIB
    assert gib(80 * GIB / GB) == 80
    assert gib_text(24 * GIB / GB) == "24.0 GiB"
    # 7B parameters in bf16, 14.0e9 bytes, are 13.04 GiB
    assert gib_text(14.0, 2) == "13.04 GiB"


def test_text_groups_thousands_and_signs_on_request() -> None:
    assert gib_text(2048 * GIB / GB, 0) == "2,048 GiB"
    assert gib_text(0.8 * GIB / GB, sign=True) == "+0.8 GiB"
    assert gib_text(-0.8 * GIB / GB, sign=True) == "-0.8 GiB"
    assert GB_PER_GIB_TEXT == "1.074"


@given(st.floats(min_value=0, max_value=1e6, allow_nan=False))
def test_gib_is_the_same_bytes(value_gb: float) -> None:
    assert gib(value_gb) * GIB == pytest.approx(value_gb * GB, rel=1e-12, abs=1e-6)
    assert gib_text(value_gb, 2).endswith(" GiB")
