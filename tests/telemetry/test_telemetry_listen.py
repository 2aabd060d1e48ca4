"""--listen: loopback by default, everything else refused unless remote access is asked for."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st
from reach import reached

from gpudesk.telemetry.errors import ListenAddressError
from gpudesk.telemetry.listen import DEFAULT_PORT, parse_listen


@pytest.mark.parametrize(
    ("value", "host", "port"),
    [
        ("127.0.0.1:10478", "127.0.0.1", 10478),
        ("127.1.2.3:0", "127.1.2.3", 0),
        ("[::1]:9000", "::1", 9000),
    ],
)
def test_loopback_addresses_are_accepted(value: str, host: str, port: int) -> None:
    address = parse_listen(value)
    assert (address.host, address.port, address.loopback) == (host, port, True)


@pytest.mark.parametrize(
    "value",
    [":10478", "0.0.0.0:10478", "[::]:10478", "gpu-node-1:10478", "localhost:1", "10.0.0.5:80"],
)
def test_non_loopback_addresses_are_refused_without_allow_remote(value: str) -> None:
    with pytest.raises(ListenAddressError) as refused:
        parse_listen(value)
    assert "--allow-remote" in str(refused.value)
    address = parse_listen(value, allow_remote=True)
    assert not address.loopback


@pytest.mark.parametrize(
    "value",
    [
        "",
        "10478",
        "127.0.0.1",
        "127.0.0.1:65536",
        "127.0.0.1:-1",
        "::1:80",
        "[::1]80",
        "[zz]:80",
        "127.0.0.1:8a",
        "bad_host!:80",
        "a\x1b[2J:80",
    ],
)
def test_malformed_addresses_are_refused_with_a_reason(value: str) -> None:
    with pytest.raises(ListenAddressError) as refused:
        parse_listen(value, allow_remote=True)
    assert refused.value.reason


def test_the_default_port_is_outside_the_wiki_exporter_range_and_nvidia_gpu_exporter() -> None:
    assert not 9090 <= DEFAULT_PORT <= 9999
    assert DEFAULT_PORT != 9835


_HOSTS = st.sampled_from(
    ["127.0.0.1", "[::1]", "0.0.0.0", "", "[::]", "host", "10.1.2.3", "[fe80::1]"]
)
_PORTS = st.one_of(st.integers(-5, 70000).map(str), st.text(max_size=6))
_LISTEN = st.one_of(
    st.text(max_size=80), st.builds(lambda host, port: f"{host}:{port}", _HOSTS, _PORTS)
)


@given(_LISTEN, st.booleans())
@pytest.mark.reaches(refused=40, parsed=6)
def test_any_listen_value_is_parsed_or_refused_cleanly(value: str, allow_remote: bool) -> None:
    try:
        address = parse_listen(value, allow_remote=allow_remote)
    except ListenAddressError as exc:
        reached("refused")
        assert exc.reason and "\x1b" not in str(exc.reason)
        return
    reached("parsed")
    assert 0 <= address.port <= 65535
    assert address.loopback or allow_remote
