"""Filtering, sorting and finding catalog entries by name."""

from __future__ import annotations

import difflib
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Collection, Hashable, Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum, StrEnum
from functools import lru_cache
from itertools import repeat
from operator import contains, itemgetter

from gpudesk.catalog.errors import CatalogError
from gpudesk.catalog.metrics import METRICS
from gpudesk.catalog.schema import CatalogEntry, Kind, Segment, Status


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
    kinds: frozenset[Kind] | None = None
    #: None: every status; the app's default leaves out announced parts
    #: (:data:`SHOWN_BY_DEFAULT`)
    statuses: frozenset[Status] | None = None
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


#: The statuses the app lists unless asked: every one but "announced" (not on sale yet;
#: the list and the catalog say how many they hide).
SHOWN_BY_DEFAULT: frozenset[Status] = frozenset(Status) - {Status.ANNOUNCED}


def searchable_text(entry: CatalogEntry) -> str:
    return " ".join(
        part for part in (entry.id, entry.name, entry.architecture, entry.notes or "") if part
    ).lower()


def matched_elsewhere(entry: CatalogEntry, text: str) -> tuple[str, ...]:
    """Where the search ``text`` matched ``entry`` other than its name or id.

    ``()`` when every word is in the name or id (or the text is empty); else the
    fields, in :func:`searchable_text`'s order, that hold the words the name does
    not: ``("notes",)``, ``("architecture",)`` or both. The words are matched as the
    search filter matches them (lower-case substrings).
    """
    name = f"{entry.id} {entry.name}".lower()
    fields = (
        ("architecture", (entry.architecture or "").lower()),
        ("notes", (entry.notes or "").lower()),
    )
    places: list[str] = []
    for word in text.lower().split():
        if word in name:
            continue
        for field, value in fields:
            if word in value and field not in places:
                places.append(field)
                break
    return tuple(field for field, _ in fields if field in places)


# Row sets as "bytesets": one int holding one byte per row (1 kept, 0 not),
# little-endian, so row r is byte r. AND and OR of two sets run in C over the
# whole catalog at once, and ``to_bytes`` turns a set back into a 0/1 mask.
# (A bitset, one bit per row, would need a Python loop to become a mask.)


def _byteset(flags: Iterable[bool]) -> int:
    return int.from_bytes(bytes(flags), "little")


@lru_cache(maxsize=1024)
def _byte_table(kind: str, threshold: int) -> bytes:
    """A ``bytes.translate`` table: byte value b -> 1 where ``b <kind> threshold``, else 0."""
    test: Callable[[int], bool] = {
        "eq": lambda b: b == threshold,
        "gt": lambda b: b > threshold,
        "lt": lambda b: b < threshold,
        "ge": lambda b: b >= threshold,
        "le": lambda b: b <= threshold,
    }[kind]
    return bytes(test(value) for value in range(256))


class _Categories:
    """One column of category values (segment, vendor) as one code byte per row."""

    def __init__(self, values: Sequence[Hashable]) -> None:
        self._code: dict[Hashable, int] = {}
        codes = [self._code.setdefault(value, len(self._code)) for value in values]
        self._codes = codes
        # More than 256 distinct values: no code byte; the slow path tests each row.
        self._code_bytes = bytes(codes) if len(self._code) <= 256 else None

    def rows_in(self, wanted: Collection[Hashable]) -> int:
        """The byteset of rows whose value is one of ``wanted``."""
        chosen = {self._code[value] for value in wanted if value in self._code}
        if self._code_bytes is not None:
            table = bytes(code in chosen for code in range(256))
            return int.from_bytes(self._code_bytes.translate(table), "little")
        return _byteset(code in chosen for code in self._codes)


class _Ranks:
    """One numeric column (None where missing) as each row's rank among its distinct values.

    ``value >= low`` is ``rank >= bisect_left(distinct, low)`` for every real
    number, so a bound becomes two table lookups per row over rank bytes, in
    C: the rank's high byte (greater, or equal and then the low byte decides).
    """

    def __init__(self, values: Sequence[float | None]) -> None:
        self._values = list(values)
        present = [value for value in self._values if value is not None]
        self._present = _byteset(value is not None for value in self._values)
        self._distinct = sorted(set(present))
        self._fast = len(self._distinct) <= 1 << 16 and all(
            value == value  # no NaN: the ranks would not order it
            for value in self._distinct
        )
        if self._fast:
            rank = {value: position for position, value in enumerate(self._distinct)}
            ranks = [0 if value is None else rank[value] for value in self._values]
            self._high = bytes(position >> 8 for position in ranks)
            self._low = bytes(position & 0xFF for position in ranks)

    def _ranks_where(self, high_kind: str, low_kind: str, threshold: int) -> int:
        """Rows whose rank is ``high_kind`` ``threshold``: by high byte, then low byte on a tie."""
        high, low = divmod(threshold, 256)
        strictly = int.from_bytes(self._high.translate(_byte_table(high_kind, high)), "little")
        tied = int.from_bytes(self._high.translate(_byte_table("eq", high)), "little")
        by_low = int.from_bytes(self._low.translate(_byte_table(low_kind, low)), "little")
        return (strictly | (tied & by_low)) & self._present

    def at_least(self, low: float) -> int:
        """The byteset of rows with a value ``>= low`` (never a missing one)."""
        if not self._fast:
            return _byteset(value is not None and value >= low for value in self._values)
        if low != low:  # NaN: no value is >= it
            return 0
        first = bisect_left(self._distinct, low)
        if first == 0:
            return self._present
        if first >= len(self._distinct):
            return 0
        return self._ranks_where("gt", "ge", first)

    def at_most(self, high: float) -> int:
        """The byteset of rows with a value ``<= high`` (never a missing one)."""
        if not self._fast:
            return _byteset(value is not None and value <= high for value in self._values)
        if high != high:
            return 0
        last = bisect_right(self._distinct, high) - 1
        if last < 0:
            return 0
        if last >= len(self._distinct) - 1:
            return self._present
        return self._ranks_where("lt", "le", last)


#: How many search words' row sets each index keeps (each is one byte per row).
_CACHED_WORDS = 64


class _WordRows:
    """Which rows' texts hold a word as a substring, remembered for recent words.

    A search re-runs on every change of any filter control, with the same
    words; typing and deleting repeats words too. One new word costs one pass
    of ``in`` over the texts, in C.
    """

    def __init__(self, texts: Sequence[str]) -> None:
        self._texts = list(texts)
        self._recent: dict[str, int] = {}

    def rows_with(self, word: str) -> int:
        found = self._recent.pop(word, None)
        if found is None:
            found = _byteset(map(contains, self._texts, repeat(word)))
            if len(self._recent) >= _CACHED_WORDS:
                self._recent.pop(next(iter(self._recent)), None)
        self._recent[word] = found  # most recent last
        return found


class FilterColumns:
    """The fields a :class:`CatalogFilter` reads, prepared once per catalog.

    The one implementation of the filter rules: a catalog of 10,000 entries is
    filtered on every keystroke, so each criterion is a set of rows computed in
    bulk (C-level byte operations over a column) and the sets are intersected,
    instead of testing entry by entry.
    """

    def __init__(self, entries: Sequence[CatalogEntry]) -> None:
        self.ids = [entry.id for entry in entries]
        self._count = len(self.ids)
        self._all = int.from_bytes(b"\x01" * self._count, "little")
        self._segments = _Categories([entry.segment for entry in entries])
        self._vendors = _Categories([entry.vendor.lower() for entry in entries])
        self._memory_gb = _Ranks([entry.memory_gb for entry in entries])
        self._price_usd = _Ranks([entry.price_usd for entry in entries])
        self._years = [entry.release_year for entry in entries]
        self._year = _Ranks(self._years)
        self._kinds = _Categories([entry.kind for entry in entries])
        self._statuses = _Categories([entry.status for entry in entries])
        self._words = _WordRows([searchable_text(entry) for entry in entries])
        self._features = {
            feature: _byteset(has_feature(entry, feature) for entry in entries)
            for feature in Feature
        }

    def __len__(self) -> int:
        return self._count

    def year_range(self) -> tuple[int, int] | None:
        """The first and last release year; None when no entry gives one."""
        years = [year for year in self._years if year is not None]
        return (min(years), max(years)) if years else None

    def mask(self, criteria: CatalogFilter, only_ids: Collection[str] | None = None) -> bytearray:
        """A 0/1 mask over the rows: 1 where ``criteria`` (and ``only_ids``) keep the row.

        Every word of ``criteria.text`` must occur in the entry's id, name,
        architecture or notes. A price bound drops entries without a price:
        "under $2,000" is a promise the app cannot make for an unknown price.
        """
        kept = self._all
        if criteria.segments is not None:
            kept &= self._segments.rows_in(criteria.segments)
        if criteria.vendors is not None:
            kept &= self._vendors.rows_in({vendor.lower() for vendor in criteria.vendors})
        if criteria.kinds is not None:
            kept &= self._kinds.rows_in(criteria.kinds)
        if criteria.statuses is not None:
            kept &= self._statuses.rows_in(criteria.statuses)
        if criteria.min_memory_gb is not None:
            kept &= self._memory_gb.at_least(criteria.min_memory_gb)
        if criteria.max_memory_gb is not None:
            kept &= self._memory_gb.at_most(criteria.max_memory_gb)
        if criteria.min_price_usd is not None:
            kept &= self._price_usd.at_least(criteria.min_price_usd)
        if criteria.max_price_usd is not None:
            kept &= self._price_usd.at_most(criteria.max_price_usd)
        if criteria.min_year is not None:
            kept &= self._year.at_least(criteria.min_year)
        if criteria.max_year is not None:
            kept &= self._year.at_most(criteria.max_year)
        for feature in criteria.features:
            kept &= self._features[feature]
        for word in criteria.text.lower().split():
            if not kept:
                break
            kept &= self._words.rows_with(word)
        if only_ids is not None and kept:
            kept &= _byteset(map(contains, repeat(only_ids), self.ids))
        return bytearray(kept.to_bytes(self._count, "little"))


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


def entries_without(entries: Iterable[CatalogEntry], key: str) -> list[CatalogEntry]:
    """The entries with no value for ``key`` (a figure an announced part's vendor has not
    published, a price nobody has seen): :func:`sort_entries` ranks them on nothing and
    puts them last, and a listing says so."""
    return [entry for entry in entries if sort_key_value(entry, key) is None]


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


class NameLookupError(CatalogError, LookupError):
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


#: A byteset's bytes (1 = the row names every word) as match classes.
_NAMED_CLASS = bytes([NameMatch.ELSEWHERE, NameMatch.FRAGMENT]) + bytes(254)


class NameRanking:
    """The names and ids of many entries, prepared once, ordered by :class:`NameMatch`.

    The catalog search ranks every visible row on each keystroke; this reads
    each entry's name words once per catalog, and finds each class in bulk:
    which rows name every word (one C-level pass per new word, remembered),
    whole words through a word -> rows map, prefixes by bisecting the sorted
    names, exact names and ids by lookup. Rows then sort stably by class.
    """

    def __init__(self, name_keys: Sequence[str], ids: Sequence[str]) -> None:
        self._name_keys = list(name_keys)
        self._ids = [entry_id.lower() for entry_id in ids]
        self._count = len(self._name_keys)
        spaced_ids = [" ".join(entry_id.split("-")) for entry_id in self._ids]
        self._rows_named: dict[str, list[int]] = {}
        for row, (key, spaced) in enumerate(zip(self._name_keys, spaced_ids, strict=True)):
            self._rows_named.setdefault(key, []).append(row)
            if spaced != key:
                self._rows_named.setdefault(spaced, []).append(row)
        rows_with_word: dict[str, list[int]] = {}
        for row, (key, entry_id) in enumerate(zip(self._name_keys, self._ids, strict=True)):
            for word in frozenset(key.split()).union(entry_id.split("-")):
                rows_with_word.setdefault(word, []).append(row)
        self._rows_with_word = {word: frozenset(rows) for word, rows in rows_with_word.items()}
        by_name = sorted(range(self._count), key=self._name_keys.__getitem__)
        self._sorted_keys = [self._name_keys[row] for row in by_name]
        self._sorted_rows = by_name
        self._recent_classes: dict[str, bytes] = {}
        # "word in key or word in id" as one test: a query word is [a-z0-9]+
        # (see _normalise), so it never spans the line break.
        self._named_words = _WordRows(
            [f"{key}\n{entry_id}" for key, entry_id in zip(self._name_keys, self._ids, strict=True)]
        )

    def ranked(self, rows: Sequence[int], text: str) -> list[int]:
        """``rows`` with the best matches for ``text`` first; stable within a class."""
        query = _NameQuery(text)
        if not query.words:
            return list(rows)
        classes = self._classes(query)
        if len(rows) > 1 and len(set(itemgetter(*rows)(classes))) == 1:
            return list(rows)  # one class (often: every row names the word): as given
        return sorted(rows, key=classes.__getitem__)

    def _classes(self, query: _NameQuery) -> bytes:
        """Every row's :class:`NameMatch` for ``query``, one byte per row (recent ones kept)."""
        found = self._recent_classes.pop(query.wanted, None)
        if found is None:
            found = bytes(self._compute_classes(query))
            if len(self._recent_classes) >= _CACHED_WORDS:
                self._recent_classes.pop(next(iter(self._recent_classes)), None)
        self._recent_classes[query.wanted] = found  # most recent last
        return found

    def _compute_classes(self, query: _NameQuery) -> bytearray:
        """The classes of every row, the better classes written over the worse."""
        named = -1  # every bit set: the first AND leaves that word's byteset
        for word in query.words:
            named &= self._named_words.rows_with(word)
        classes = bytearray(named.to_bytes(self._count, "little").translate(_NAMED_CLASS))
        # Each better class lies inside "names every word"; later ones win ties.
        whole_words = sorted(
            (self._rows_with_word.get(word, frozenset()) for word in query.word_set), key=len
        )
        for row in whole_words[0].intersection(*whole_words[1:]):
            classes[row] = NameMatch.WORDS
        wanted = query.wanted
        keys = self._sorted_keys
        first = bisect_left(keys, wanted)
        # Names that start with ``wanted`` sort in one run from ``first``; the
        # bisect finds its end unless a name holds U+10FFFF (then the loop does).
        last = bisect_left(keys, wanted + "\U0010ffff", first)
        while last < self._count and keys[last].startswith(wanted):
            last += 1
        for row in self._sorted_rows[first:last]:
            classes[row] = NameMatch.PREFIX
        for row in self._rows_named.get(wanted, ()):
            classes[row] = NameMatch.EXACT
        return classes


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


def _compact(text: str) -> str:
    return "".join(char for char in text.casefold() if char.isalnum())


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
    # "rtx4090" and "gaudi3" (the id without its hyphens, as people type it) name
    # rtx-4090 and gaudi-3: compared letters and digits only, an exact match wins.
    compact = _compact(name)
    exact = [
        entry
        for entry in entries
        if compact and compact in (_compact(entry.id), _compact(entry.name))
    ]
    if len(exact) == 1:
        return exact[0]
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
