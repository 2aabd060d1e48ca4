"""Issue 30: a `fleet survey --address` no resolver takes is bad usage, never a traceback."""

from __future__ import annotations

import ipaddress

import pytest
import reach
from hypothesis import given, settings, strategies as st

from gpudesk.cli import main
from gpudesk.fleet.survey import FleetUsageError, parse_address

LONG_LABEL = "x" * 64


@pytest.mark.parametrize(
    "address",
    [
        "a..b:6379",
        f"{LONG_LABEL}.example.com:6379",
        f"ray://{LONG_LABEL}:10001",
        ".leading:6379",
        "host name:6379",
        ("a" * 60 + ".") * 5 + "b:6379",  # a name over 253 characters
        "bad\x1b[31mhost:6379",
    ],
)
def test_an_address_no_resolver_takes_is_exit_2_with_one_line(
    capsys: pytest.CaptureFixture[str], address: str
) -> None:
    try:
        code = main(["fleet", "survey", "--address", address])
    except SystemExit as exc:
        code = int(exc.code or 0)
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("gpudesk: --address: ")


@pytest.mark.parametrize(
    ("address", "expected"),
    [
        ("127.0.0.1:6379", ("127.0.0.1", 6379)),
        ("[::1]:6379", ("::1", 6379)),
        ("ray://head.cluster.local:10001", ("head.cluster.local", 10001)),
        ("gpu_node-7:6379", ("gpu_node-7", 6379)),
        ("head.:6379", ("head.", 6379)),
        ("bücher.example:6379", ("bücher.example", 6379)),
        (f"{'x' * 63}.example.com:6379", (f"{'x' * 63}.example.com", 6379)),
    ],
)
def test_good_addresses_still_parse(address: str, expected: tuple[str, int]) -> None:
    assert parse_address(address) == expected


def _resolvable_spelling(host: str) -> None:
    """What socket.getaddrinfo does first with a host: an IP literal, or IDNA-encode it."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        host.encode("idna")


#: Addresses a user types: host names, IP literals, ray:// and auto (random text and
#: odd labels alone almost never parse).
_PLAUSIBLE_ADDRESSES = st.one_of(
    st.builds(
        lambda scheme, labels, port: scheme + ".".join(labels) + f":{port}",
        st.sampled_from(["", "", "ray://"]),
        st.lists(
            st.from_regex(r"[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?", fullmatch=True),
            min_size=1,
            max_size=4,
        ),
        st.integers(min_value=1, max_value=65535),
    ),
    st.builds(lambda ip, port: f"{ip}:{port}", st.ip_addresses(v=4), st.integers(1, 65535)),
    st.builds(lambda ip, port: f"[{ip}]:{port}", st.ip_addresses(v=6), st.integers(1, 65535)),
    st.sampled_from(["auto", " auto "]),
)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        _PLAUSIBLE_ADDRESSES,
        st.text(max_size=80),
        st.builds(
            lambda labels, port: ".".join(labels) + f":{port}",
            st.lists(st.text(alphabet="ab-_1é.", max_size=70), min_size=1, max_size=5),
            st.integers(min_value=-1, max_value=70_000),
        ),
    )
)
@pytest.mark.reaches(parsed=100, usage_error=45, auto=1)
def test_any_address_parses_to_a_resolvable_host_or_is_a_usage_error(address: str) -> None:
    try:
        parsed = parse_address(address)
    except FleetUsageError as exc:
        reach.reached("usage_error")
        assert str(exc)
        return
    if parsed is None:
        reach.reached("auto")
        assert address.strip() == "auto"
        return
    reach.reached("parsed")
    host, port = parsed
    assert 0 < port < 65536 and str(port) in address
    assert host and host.strip("[]") in address
    _resolvable_spelling(host)  # raises UnicodeError on today's code for a..b
