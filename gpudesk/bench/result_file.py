"""A benchmark result read from a file: its types (:mod:`gpudesk.bench.results`) and
its physics (:mod:`gpudesk.bench.plausible`) checked, in that order.

Its own module because the physics reads the catalog's peaks, which build on the
result types: results stays at the bottom and imports neither.
"""

from __future__ import annotations

from gpudesk.bench.plausible import Implausible, check_result
from gpudesk.bench.results import BenchResult, ResultFileError, parse_result_types


def parse_result(data: bytes | str, source: str) -> BenchResult:
    """Validate JSON text from anywhere (history, another machine) into a result whose
    figures, whole numbers and text are possible.

    Raises:
        ResultFileError: as :func:`~gpudesk.bench.results.parse_result_types`, or a
            figure that cannot be (the field and the reason named).
    """
    result = parse_result_types(data, source)
    try:
        check_result(result)
    except Implausible as exc:
        raise ResultFileError(source, exc.field, exc.message) from None
    return result
