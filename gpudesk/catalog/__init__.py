"""The GPU catalog: schema, loading, queries and derived metrics (no Qt)."""

from gpudesk.catalog.loader import Catalog, CatalogProblem, load_catalog
from gpudesk.catalog.query import CatalogFilter, Feature, NameLookupError, find_entry
from gpudesk.catalog.schema import CatalogEntry, PriceKind, Segment

__all__ = [
    "Catalog",
    "CatalogEntry",
    "CatalogFilter",
    "CatalogProblem",
    "Feature",
    "NameLookupError",
    "PriceKind",
    "Segment",
    "find_entry",
    "load_catalog",
]
