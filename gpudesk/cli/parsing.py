"""What ``gpudesk``'s argument parsers add to argparse's: "did you mean" for mistyped
commands, choices and flags, errors worded by the subcommand that was typed, and help
and usage text that fits the terminal.

argparse reports a flag none of the parsers knows from the top-level parser, after every
subcommand has run: ``gpudesk fleet survey --adress x`` printed ``gpudesk``'s own usage.
Here the innermost subcommand reached says it, with its usage and the nearest flag it
has. Help text wraps at commas and spaces: a usage part like ``[--quant {fp32,...}]``
is one unbreakable piece to argparse (193 columns in ``measurements import --help``).
"""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Iterable, Sequence
from typing import Any, NoReturn

from gpudesk.cli.textwidth import display_width, output_width, wrap_paragraph

#: How alike a typo and a name must be (difflib's ratio) to suggest the name.
SUGGEST_CUTOFF = 0.6

#: The parsers whose parse_known_args has started during the current parse, outermost
#: first: the last is the innermost subcommand reached.
_reached: list[argparse.ArgumentParser] = []


def nearest(word: str, names: Iterable[str]) -> str | None:
    """The name in ``names`` closest to ``word`` (a typo of it), or None when none is close."""
    candidates = sorted({name for name in names if name != word})
    matches = difflib.get_close_matches(word, candidates, n=1, cutoff=SUGGEST_CUTOFF)
    return matches[0] if matches else None


def _break_at(line: str, width: int) -> tuple[str, str] | None:
    """``line`` cut at the rightmost space, or after the rightmost comma, that leaves the
    head within ``width`` and past the line's indent; None when there is no such place."""
    indent = len(line) - len(line.lstrip())
    for cut in range(min(len(line) - 1, width), indent, -1):
        if line[cut] == " " and line[:cut].strip():
            return line[:cut].rstrip(), line[cut + 1 :]
        if line[cut - 1] == ",":
            return line[:cut], line[cut:]
    return None


def _continuation(line: str) -> str:
    """Where a broken help line goes on: a usage line under its first option, a flag's
    line four past the flag (as argparse indents help), anything else at its indent."""
    indent = " " * (len(line) - len(line.lstrip()))
    if line.startswith("usage: "):
        bracket = line.find(" [")
        return " " * (bracket + 1 if 0 < bracket < 40 else len("usage: "))
    if line.lstrip().startswith("-"):
        return indent + "    "
    return indent


def fit_help_lines(text: str, width: int | None = None) -> str:
    """Help or usage text with each line wider than ``width`` broken at a space or after
    a comma (:func:`_continuation` says where it goes on)."""
    target = output_width() if width is None else width
    out: list[str] = []
    for line in text.split("\n"):
        follow = _continuation(line)
        while display_width(line) > target:
            pieces = _break_at(line, target)
            if pieces is None:
                break
            head, rest = pieces
            out.append(head)
            line = follow + rest.lstrip()
        out.append(line)
    return "\n".join(out)


class SuggestingParser(argparse.ArgumentParser):
    """argparse's parser with did-you-mean, innermost-subcommand errors and fitted help."""

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        _reached.append(self)
        return super().parse_known_args(args, namespace)

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        _reached.clear()
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            chain = list(_reached) or [self]
            _reached.clear()
            chain[-1].error(unrecognized_message(extras, chain))
        _reached.clear()
        return parsed

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        choices = action.choices
        if choices is None or value in choices:
            return
        names = [str(choice) for choice in choices]
        guess = nearest(str(value), names) if isinstance(value, str) else None
        hint = f"; did you mean {guess!r}?" if guess else ""
        listed = ", ".join(repr(name) for name in names)
        raise argparse.ArgumentError(
            action, f"invalid choice: {value!r}{hint} (choose from {listed})"
        )

    def format_usage(self) -> str:
        return fit_help_lines(super().format_usage())

    def format_help(self) -> str:
        return fit_help_lines(super().format_help())

    def error(self, message: str) -> NoReturn:
        """Usage, then ``prog: error: message`` wrapped to the terminal; exit 2."""
        self.print_usage(sys.stderr)
        text = wrap_paragraph(f"{self.prog}: error: {message}", subsequent_indent="  ")
        self.exit(2, text + "\n")


def unrecognized_message(extras: list[str], chain: Sequence[argparse.ArgumentParser]) -> str:
    """``unrecognized arguments: ...``, with the nearest flag for each mistyped one among
    the flags of the subcommands typed (``chain``, outermost first)."""
    flags = [
        option
        for parser in chain
        for action in parser._actions
        for option in action.option_strings
        if option.startswith("--")
    ]
    guesses: dict[str, str] = {}
    for extra in extras:
        typed = extra.split("=", 1)[0]
        guess = nearest(typed, flags) if typed.startswith("--") else None
        if guess is not None:
            guesses[typed] = guess
    message = "unrecognized arguments: " + " ".join(extras)
    if len(guesses) == 1:
        return f"{message}; did you mean {next(iter(guesses.values()))}?"
    if guesses:
        pairs = ", ".join(f"{guess} (for {typed})" for typed, guess in guesses.items())
        return f"{message}; did you mean {pairs}?"
    return message


__all__ = [
    "SUGGEST_CUTOFF",
    "SuggestingParser",
    "fit_help_lines",
    "nearest",
    "unrecognized_message",
]
