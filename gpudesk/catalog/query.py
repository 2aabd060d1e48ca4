"""Filtering, sorting and finding catalog entries by name."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum, StrEnum

from gpudesk.catalog.metrics import METRICS
from gpudesk.catalog.schema import CatalogEntry, Segment


class Feature(StrEnum):
    ECC = "ecc"
    MIG = "mig"
    NVLINK = "nvlink"
    TENSOR_CORES = "tensor-cores"


def has_feature(entry: CatalogEntry, feature: Feature) -> bool:
    match feature:
        case Feature.ECC:
            return entry.ecc is True
        case Feature.MIG:
            return entry.mig_max_instances is not None and entry.mig_max_instances > 1
        case Feature.NVLINK:
            return entry.nvlink is True
        case Feature.TENSOR_CORES:
            return entry.has_tensor_cores


@dataclass(frozen=True, slots=True)
class CatalogFilter:
    """What the user asked to see; an unset criterion matches everything."""

    text: str = ""
    segments: frozenset[Segment] | None = None
    vendors: frozenset[str] | None = None  # compared case-insensitively
    min_memory_gb: float | None = None
    max_memory_gb: float | None = None
    min_price_usd: float | None = None
    max_price_usd: float | None = None
    min_year: int | None = None
    max_year: int | None = None
    features: frozenset[Feature] = frozenset()

    def matches(self, entry: CatalogEntry) -> bool:
        """Whether this filter keeps ``entry`` (the rule is :meth:`FilterColumns.mask`'s)."""
        return FilterColumns([entry]).mask(self)[0] == 1


def searchable_text(entry: CatalogEntry) -> str:
    return " ".join(
        part for part in (entry.id, entry.name, entry.architecture, entry.notes or "") if part
    ).lower()


class FilterColumns:
    """The fields a :class:`CatalogFilter` reads, one list per field, read once.

    The one implementation of the filter rules: a catalog of 10,000 entries is
    filtered on every keystroke, so each criterion narrows a list of row numbers
    over these columns instead of testing entry by entry.
    """

    def __init__(self, entries: Sequence[CatalogEntry]) -> None:
        self.ids = [entry.id for entry in entries]
        self._segments = [entry.segment for entry in entries]
        self._vendors = [entry.vendor.lower() for entry in entries]
        self._memory_gb = [entry.memory_gb for entry in entries]
        self._price_usd = [entry.price_usd for entry in entries]
        self._year = [entry.release_year for entry in entries]
        self._haystacks = [searchable_text(entry) for entry in entries]
        self._features = {
            feature: [has_feature(entry, feature) for entry in entries] for feature in Feature
        }

    def __len__(self) -> int:
        return len(self.ids)

    def year_range(self) -> tuple[int, int] | None:
        return (min(self._year), max(self._year)) if self._year else None

    def mask(self, criteria: CatalogFilter, only_ids: Collection[str] | None = None) -> bytearray:
        """A 0/1 mask over the rows: 1 where ``criteria`` (and ``only_ids``) keep the row.

        Every word of ``criteria.text`` must occur in the entry's id, name,
        architecture or notes. A price bound drops entries without a price:
        "under $2,000" is a promise the app cannot make for an unknown price.
        """
        rows: Sequence[int] = range(len(self.ids))
        if criteria.segments is not None:
            segments = criteria.segments
            rows = [row for row in rows if self._segments[row] in segments]
        if criteria.vendors is not None:
            vendors = {vendor.lower() for vendor in criteria.vendors}
            rows = [row for row in rows if self._vendors[row] in vendors]
        memory = self._memory_gb
        if criteria.min_memory_gb is not None:
            low = criteria.min_memory_gb
            rows = [row for row in rows if memory[row] >= low]
        if criteria.max_memory_gb is not None:
            high = criteria.max_memory_gb
            rows = [row for row in rows if memory[row] <= high]
        prices = self._price_usd
        if criteria.min_price_usd is not None:
            low = criteria.min_price_usd
            rows = [row for row in rows if (price := prices[row]) is not None and price >= low]
        if criteria.max_price_usd is not None:
            high = criteria.max_price_usd
            rows = [row for row in rows if (price := prices[row]) is not None and price <= high]
        years = self._year
        if criteria.min_year is not None:
            first = criteria.min_year
            rows = [row for row in rows if years[row] >= first]
        if criteria.max_year is not None:
            last = criteria.max_year
            rows = [row for row in rows if years[row] <= last]
        for feature in criteria.features:
            has = self._features[feature]
            rows = [row for row in rows if has[row]]
        haystacks = self._haystacks
        for word in criteria.text.lower().split():
            rows = [row for row in rows if word in haystacks[row]]
        if only_ids is not None:
            ids = self.ids
            rows = [row for row in rows if ids[row] in only_ids]
        mask = bytearray(len(self.ids))
        for row in rows:
            mask[row] = 1
        return mask


def filter_entries(entries: Iterable[CatalogEntry], criteria: CatalogFilter) -> list[CatalogEntry]:
    listed = list(entries)
    mask = FilterColumns(listed).mask(criteria)
    return [entry for entry, keep in zip(listed, mask, strict=True) if keep]


def sort_key_value(entry: CatalogEntry, key: str) -> float | str | None:
    if key in METRICS:
        return METRICS[key].value(entry)
    value = getattr(entry, key, None)
    if value is None:
        return None
    return value if isinstance(value, (int, float)) else str(value).lower()


def sort_entries(
    entries: Iterable[CatalogEntry], key: str, *, descending: bool = False
) -> list[CatalogEntry]:
    """Sort by a field or derived metric; missing values go last either way."""
    if key not in METRICS and key not in CatalogEntry.model_fields:
        raise KeyError(key)
    present: list[tuple[float | str, CatalogEntry]] = []
    missing: list[CatalogEntry] = []
    for entry in entries:
        value = sort_key_value(entry, key)
        if value is None:
            missing.append(entry)
        else:
            present.append((value, entry))
    present.sort(key=lambda pair: pair[0], reverse=descending)
    return [entry for _, entry in present] + missing


class NameLookupError(LookupError):
    """A name matched no entry, or more than one.

    Attributes:
        candidates: ids the user may have meant (all matches when ambiguous,
            the closest names when nothing matched).
    """

    def __init__(self, name: str, candidates: Sequence[str], *, ambiguous: bool) -> None:
        self.name = name
        self.candidates = list(candidates)
        self.ambiguous = ambiguous
        if ambiguous:
            message = f"{name!r} is ambiguous; it matches: {', '.join(self.candidates)}"
        elif self.candidates:
            message = f"no GPU named {name!r}; closest: {', '.join(self.candidates)}"
        else:
            message = f"no GPU named {name!r}"
        super().__init__(message)


class NameMatch(IntEnum):
    """How well a search text matches a GPU's name; lower is better.

    The one ranking rule for finding GPUs by name: the CLI's lookup
    (:func:`find_entry`) and the catalog search both order by it, so "RTX 5090"
    finds the RTX 5090 before a card whose notes mention it.
    """

    EXACT = 0  # the name or id, ignoring case, punctuation and vendor words
    PREFIX = 1  # the name starts with the text
    WORDS = 2  # every word is a whole word of the name or id
    FRAGMENT = 3  # every word occurs inside the name or id
    ELSEWHERE = 4  # some word only in the architecture or notes


def name_key(entry: CatalogEntry) -> str:
    """The entry's name as :func:`name_match` compares it (computed once per entry)."""
    return _normalise(entry.name)


class _NameQuery:
    """A search text normalised once, as the name rule compares it."""

    __slots__ = ("wanted", "word_set", "words")

    def __init__(self, text: str) -> None:
        self.wanted = _normalise(text)
        self.words = self.wanted.split()
        self.word_set = set(self.words)


def _names_all_words(query: _NameQuery, entry_name_key: str, lowered_id: str) -> bool:
    """Whether every word of the query occurs in the name or the id (else ELSEWHERE)."""
    words = query.words
    return bool(words) and all(word in entry_name_key or word in lowered_id for word in words)


def _candidate_class(
    query: _NameQuery, entry_name_key: str, spaced_id: str, name_and_id_words: Collection[str]
) -> NameMatch:
    """The class of an entry that names every word (:func:`_names_all_words`)."""
    wanted = query.wanted
    if wanted in (entry_name_key, spaced_id):
        return NameMatch.EXACT
    if entry_name_key.startswith(wanted):
        return NameMatch.PREFIX
    if query.word_set.issubset(name_and_id_words):
        return NameMatch.WORDS
    return NameMatch.FRAGMENT


def name_matcher(text: str) -> Callable[[str, str], tuple[NameMatch, int]]:
    """A function ranking one entry for ``text``: ``(name_key, id) -> (match, extra words)``.

    The match class is a :class:`NameMatch`; the second item counts the name's
    words the text did not give (fewer is closer: "4090" is nearer "RTX 4090"
    than "RTX 4090 D"). The text is normalised once, so ranking thousands of
    rows costs a few string operations each.
    """
    query = _NameQuery(text)

    def rank(entry_name_key: str, entry_id: str) -> tuple[NameMatch, int]:
        lowered_id = entry_id.lower()
        name_words = entry_name_key.split()
        id_words = lowered_id.split("-")
        # Most rows of a large catalog fail the first test: settled by substring tests only.
        match = (
            _candidate_class(query, entry_name_key, " ".join(id_words), [*name_words, *id_words])
            if _names_all_words(query, entry_name_key, lowered_id)
            else NameMatch.ELSEWHERE
        )
        extra = sum(1 for word in name_words if word not in query.word_set)
        return match, extra

    return rank


class NameRanking:
    """The names and ids of many entries, prepared once, ordered by :class:`NameMatch`.

    The catalog search ranks every visible row on each keystroke; this reads
    each entry's name words once per catalog instead of once per keystroke.
    """

    def __init__(self, name_keys: Sequence[str], ids: Sequence[str]) -> None:
        self._name_keys = list(name_keys)
        self._ids = [entry_id.lower() for entry_id in ids]
        self._spaced_ids = [" ".join(entry_id.split("-")) for entry_id in self._ids]
        self._words = [
            frozenset(key.split()).union(entry_id.split("-"))
            for key, entry_id in zip(self._name_keys, self._ids, strict=True)
        ]

    def ranked(self, rows: Sequence[int], text: str) -> list[int]:
        """``rows`` with the best matches for ``text`` first; stable within a class."""
        query = _NameQuery(text)
        if not query.words:
            return list(rows)
        keys, ids, spaced, words = self._name_keys, self._ids, self._spaced_ids, self._words
        classes: list[list[int]] = [[] for _ in NameMatch]
        elsewhere = classes[NameMatch.ELSEWHERE]
        single = query.words[0] if len(query.words) == 1 else None
        for row in rows:
            key = keys[row]
            if single is not None:
                named = single in key or single in ids[row]  # one word: no call
            else:
                named = _names_all_words(query, key, ids[row])
            if not named:
                elsewhere.append(row)
            else:
                classes[_candidate_class(query, key, spaced[row], words[row])].append(row)
        return [row for rows_of_class in classes for row in rows_of_class]


def name_match(text: str, entry_name_key: str, entry_id: str) -> tuple[NameMatch, int]:
    """How one entry matches ``text`` (see :func:`name_matcher`)."""
    return name_matcher(text)(entry_name_key, entry_id)


def _best_name_match(entries: Sequence[CatalogEntry], text: str) -> CatalogEntry | None:
    """The one entry that matches ``text`` strictly better than every other, if any."""
    rank = name_matcher(text)
    ranked = sorted(
        ((rank(name_key(entry), entry.id), index) for index, entry in enumerate(entries)),
    )
    if len(ranked) > 1 and ranked[0][0] == ranked[1][0]:
        return None
    return entries[ranked[0][1]] if ranked else None


def _normalise(text: str) -> str:
    text = text.lower().replace("geforce", " ").replace("nvidia", " ").replace("amd", " ")
    return " ".join(re.findall(r"[a-z0-9]+", text))


def find_entry(entries: Sequence[CatalogEntry], name: str) -> CatalogEntry:
    """Find one entry by id, full name, or an unambiguous fragment (case-insensitive).

    "4090" and "a100 pcie" work; every word of the fragment must occur in the
    entry's id or name.

    Raises:
        NameLookupError: nothing matched, or several entries did.
    """
    wanted = name.strip().lower()
    for entry in entries:
        if wanted in (entry.id, entry.name.lower()):
            return entry
    normalised = _normalise(name)
    for entry in entries:
        if normalised and normalised == _normalise(entry.name):
            return entry
    words = normalised.split()
    matches = [
        entry
        for entry in entries
        if words and all(word in f"{entry.id} {_normalise(entry.name)}" for word in words)
    ]
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        best = _best_name_match(matches, name)
        if best is not None:
            return best
        raise NameLookupError(name, [entry.id for entry in matches], ambiguous=True)
    names = {entry.id: entry for entry in entries}
    close = difflib.get_close_matches(wanted, list(names), n=5, cutoff=0.4)
    close += [
        entry.id
        for entry in entries
        if entry.id not in close
        and difflib.SequenceMatcher(None, normalised, _normalise(entry.name)).ratio() > 0.6
    ]
    raise NameLookupError(name, close[:5], ambiguous=False)
