"""Ray reads its settings when it is first imported: bind to loopback, report no usage."""

from __future__ import annotations

import os

# Before any test module here imports Ray (ray_constants reads these at import).
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
# Ray's memory monitor kills tasks when the machine is nearly full: on a busy
# test machine that turns a survey test into a flake about something else.
os.environ["RAY_memory_monitor_refresh_ms"] = "0"  # noqa: SIM112 - Ray spells it so
