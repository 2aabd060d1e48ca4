"""Every exception class defined in gpudesk derives from the one root, GpuDeskError.

Each module of the package is imported (those that need Qt only where PySide6
imports) and every class it defines is checked; a new ``class XError(Exception)``
anywhere fails here until it is put under its area's root.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import inspect
import pkgutil
from types import ModuleType

import pytest

import gpudesk
from gpudesk.errors import GpuDeskError

#: ``python -m gpudesk`` runs the app when imported.
_NOT_IMPORTED = {"gpudesk.__main__"}
_QT_PACKAGES = ("gpudesk.ui", "gpudesk.render", "gpudesk.report")
#: Errors of one package rooted in another area's root, on purpose: a measurement
#: file that cannot be imported is input the planner cannot use.
_OTHER_AREAS_ROOT = {"gpudesk.measurements.file_import.ImportFileError"}


def _has_qt() -> bool:
    try:
        return importlib.util.find_spec("PySide6.QtWidgets") is not None
    except ImportError:
        return False


def _modules() -> list[ModuleType]:
    modules: list[ModuleType] = [gpudesk]
    qt = _has_qt()
    for info in pkgutil.walk_packages(gpudesk.__path__, "gpudesk."):
        if info.name in _NOT_IMPORTED:
            continue
        if not qt and info.name.startswith(_QT_PACKAGES):
            continue
        modules.append(importlib.import_module(info.name))
    return modules


@functools.cache
def _exception_classes() -> tuple[type[BaseException], ...]:
    found: list[type[BaseException]] = []
    for module in _modules():
        for _name, value in inspect.getmembers(module, inspect.isclass):
            if value.__module__ == module.__name__ and issubclass(value, BaseException):
                found.append(value)
    return tuple(found)


def test_every_exception_class_derives_from_gpudesk_error() -> None:
    classes = _exception_classes()
    assert len(classes) > 40, "the walk found too few classes: is gpudesk importable?"
    strays = sorted(
        f"{cls.__module__}.{cls.__qualname__}({', '.join(b.__name__ for b in cls.__bases__)})"
        for cls in classes
        if not issubclass(cls, GpuDeskError)
    )
    assert strays == [], "put these under their area's root error (gpudesk/errors.py)"


def test_the_root_keeps_the_built_in_bases_callers_catch() -> None:
    from gpudesk.catalog.query import NameLookupError
    from gpudesk.storage import FileTooLargeError, NotRegularFileError, UnsafeTargetError
    from gpudesk.workload.errors import PlanningInputError

    assert issubclass(PlanningInputError, ValueError)
    assert issubclass(NameLookupError, LookupError)
    for cls in (UnsafeTargetError, NotRegularFileError, FileTooLargeError):
        assert issubclass(cls, OSError)
    error = UnsafeTargetError(21, "is a directory", "/tmp")
    assert (error.errno, error.strerror, error.filename) == (21, "is a directory", "/tmp")
    assert str(error) == "[Errno 21] is a directory: '/tmp'"


@pytest.mark.parametrize(
    ("module", "root"),
    [
        ("gpudesk.catalog.errors", "CatalogError"),
        ("gpudesk.hardware.errors", "HardwareError"),
        ("gpudesk.bench.errors", "BenchError"),
        ("gpudesk.health.errors", "HealthError"),
        ("gpudesk.fleet.errors", "FleetError"),
        ("gpudesk.measurements.errors", "MeasurementError"),
        ("gpudesk.workload.errors", "PlanningInputError"),
        ("gpudesk.storage", "StorageError"),
        ("gpudesk.external", "ExternalError"),
    ],
)
def test_each_area_has_one_root_under_gpudesk_error(module: str, root: str) -> None:
    cls = getattr(importlib.import_module(module), root)
    assert GpuDeskError in cls.__bases__
    area = module.removesuffix(".errors")
    for other in _exception_classes():
        name = f"{other.__module__}.{other.__qualname__}"
        in_area = other.__module__ == area or other.__module__.startswith(area + ".")
        if in_area and name not in _OTHER_AREAS_ROOT:
            assert issubclass(other, cls), f"{name} is not a {root}"
