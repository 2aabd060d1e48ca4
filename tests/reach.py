"""How many of a property test's examples reached its check (a non-vacuity floor).

A property test whose generator stops producing the inputs its check is about
passes silently: in 200 examples nothing was refused, so the ``if refused:``
branch with the assertion never ran. ``tests/conftest.py`` counts, for every
Hypothesis test, the examples that ran and those that *reached a check*, and
fails the test when too few did:

- By default an example reached the check when at least one ``assert`` in the
  test module passed during it (pytest's assertion-pass hook). The floor is
  :data:`DEFAULT_FLOOR` of the examples run.
- A test whose check is a branch, or a ``pytest.raises``, names it:
  ``reached("refused")`` where the branch's check runs, and
  ``@pytest.mark.reaches(refused=20)`` for at least 20 examples there (each
  label counts an example once however often it is called in it).

One cost of the hook (Python <= 3.12): a passing assert builds its explanation, and
that snapshots the frame's locals (``locals()``) in the frame itself, so a test that
checks an object is freed after ``del`` keeps it alive when an assert ran in the same
frame before the ``del``. Such a test makes the object in a helper function and gets
back only a weak reference (``tests/ui/test_worker.py`` does).

The seed hashes the test function's source (not its decorators or comments): editing
its body draws other examples, so its floors are checked again after such an edit.
``GPUDESK_REACH_REPORT=FILE pytest ...`` appends each property test's counts to FILE,
for setting floors with margin (about half of what it reaches).

Hypothesis runs derandomised (``tests/conftest.py``'s profile), so the counts
are the same on every run and a floor that holds once holds always.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: Without a ``reaches`` marker, at least this share of the examples run must pass an assert.
DEFAULT_FLOOR = 0.5


@dataclass
class Tally:
    """The examples one property test ran, and which of them reached each check."""

    examples: int = 0
    asserted: int = 0
    labels: dict[str, int] = field(default_factory=dict)
    # Labels and asserts seen in the example now running.
    current_labels: set[str] = field(default_factory=set)
    current_asserts: int = 0

    def start_example(self) -> None:
        self.current_labels = set()
        self.current_asserts = 0

    def end_example(self) -> None:
        self.examples += 1
        if self.current_asserts:
            self.asserted += 1
        for label in self.current_labels:
            self.labels[label] = self.labels.get(label, 0) + 1


#: The tally of the property test running now in this process (None between tests).
_current: list[Tally] = []


def begin(tally: Tally) -> None:
    _current.append(tally)


def end() -> None:
    _current.pop()


def current() -> Tally | None:
    return _current[-1] if _current else None


def reached(label: str) -> None:
    """Mark that this example reached the check called ``label``."""
    tally = current()
    if tally is not None:
        tally.current_labels.add(label)


def assert_passed() -> None:
    tally = current()
    if tally is not None:
        tally.current_asserts += 1


def shortfall(tally: Tally, floors: dict[str, int]) -> str | None:
    """What the tally misses of the floors (None when every floor holds)."""
    if tally.examples == 0:
        return None
    if floors:
        missing = [
            f"{label!r} reached in {tally.labels.get(label, 0)} of {tally.examples} examples, "
            f"at least {floor} wanted"
            for label, floor in floors.items()
            if tally.labels.get(label, 0) < floor
        ]
        return "; ".join(missing) or None
    wanted = max(1, int(tally.examples * DEFAULT_FLOOR))
    if tally.asserted < wanted:
        return (
            f"an assert passed in {tally.asserted} of {tally.examples} examples, "
            f"at least {wanted} wanted (name the check with reach.reached() and "
            "@pytest.mark.reaches if it is a branch or a pytest.raises)"
        )
    return None
