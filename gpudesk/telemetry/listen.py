"""Where the exporter listens: ``HOST:PORT``, loopback unless remote access is asked for.

The exporter has no authentication, so it answers only this machine unless
told otherwise: an IPv4 loopback address (127.0.0.0/8) or ``[::1]`` is
accepted; an empty host, ``0.0.0.0``, ``::``, any other address and any host
name (it could resolve anywhere) are refused unless ``allow_remote``.

The default port: the Prometheus wiki's "Default port allocations" page
(https://github.com/prometheus/prometheus/wiki/Default-port-allocations)
hands out 9100-9999 to exporters, and that range was full by June 2023 (as
Chris Siebenmann recorded: https://utcc.utoronto.ca/~cks/space/blog/sysadmin/PrometheusExportersFixedPorts);
9090-9093 are Prometheus, the Pushgateway and the Alertmanager, 9835 is
nvidia_gpu_exporter's. :data:`DEFAULT_PORT` lies outside all of them.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from gpudesk.telemetry.errors import ListenAddressError

DEFAULT_HOST = "127.0.0.1"
#: Outside the wiki's 9090-9999 exporter range (see the module docstring).
DEFAULT_PORT = 10478
#: Longest ``--listen`` value looked at (a host name is at most 253 characters).
MAX_LISTEN_CHARS = 300
_PORT = re.compile(r"^[0-9]{1,5}$")
_HOST_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$")


@dataclass(frozen=True, slots=True)
class ListenAddress:
    host: str
    port: int
    loopback: bool

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/metrics"


def parse_listen(value: str, *, allow_remote: bool = False) -> ListenAddress:
    """``HOST:PORT`` (``[V6]:PORT`` for IPv6) checked; port 0 lets the kernel choose.

    Raises:
        ListenAddressError: malformed, or not loopback without ``allow_remote``.
    """
    if len(value) > MAX_LISTEN_CHARS or not value.isprintable():
        raise ListenAddressError(value[:40], "not a HOST:PORT address")
    if value.startswith("["):
        host, bracket, rest = value[1:].partition("]")
        if not bracket or not rest.startswith(":"):
            raise ListenAddressError(value, "an IPv6 address is written [ADDRESS]:PORT")
        port_text = rest[1:]
        try:
            ipaddress.IPv6Address(host)
        except ValueError as exc:
            raise ListenAddressError(value, f"{host!r} is not an IPv6 address") from exc
    else:
        host, colon, port_text = value.rpartition(":")
        if not colon:
            raise ListenAddressError(value, "give HOST:PORT, like 127.0.0.1:10478")
        if ":" in host:
            raise ListenAddressError(value, "write an IPv6 address in brackets: [::1]:PORT")
    if not _PORT.match(port_text) or int(port_text) > 65535:
        raise ListenAddressError(
            value, f"the port must be a number from 0 to 65535, not {port_text!r}"
        )
    loopback = _is_loopback(host)
    if host and not loopback and not _is_address(host) and not _HOST_NAME.match(host):
        raise ListenAddressError(value, f"{host!r} is neither an address nor a host name")
    if not loopback and not allow_remote:
        shown = host or "every address (empty host)"
        raise ListenAddressError(
            value,
            f"{shown} is not a loopback address; the exporter has no authentication, so "
            "it listens beyond this machine only with --allow-remote (or use 127.0.0.1 or [::1])",
        )
    return ListenAddress(host=host or "0.0.0.0", port=int(port_text), loopback=loopback)


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _is_loopback(host: str) -> bool:
    """A loopback IP literal only: a host name is not trusted to resolve to one."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
