"""Packs: everything about one checked document, declared in one place and found by entry points.

The machinery (evidence, the decision module, the cache, lanes, executors, renderers, the command line)
knows no document.  A *pack* is a sub-package that declares one: its title and source, the package of its
claim modules, the order of its statements, its headline results, the claims of an independent reading,
the questions it leaves open, cost hints for scheduling, figures, run options and extra commands.

Packs are found like pytest plug-ins: a distribution names a :class:`Pack` object under the entry-point
group ``moecl_verify.packs`` (``[project.entry-points."moecl_verify.packs"]`` in its pyproject.toml), so a
pack can live in this distribution or in another one.  One installed pack says it is the default
(``default=True``); commands use it when no ``--pack`` is given.
"""

from __future__ import annotations

import difflib
import importlib
import re
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, Mapping

GROUP = "moecl_verify.packs"
NAME = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")


@dataclass(frozen=True)
class HeadlineItem:
    """A result the reader wants judged in one line, and the claims that measure it.

    ``claims`` are claim ids or prefixes (``a`` covers ``a.*``); ``group`` labels the row in the
    headline's CSV (e.g. "paper", "reviewer")."""

    key: str
    title: str
    statement: str
    claims: tuple[str, ...]
    group: str
    # What the claims of a chain are called in its summary ("of 16 lemmas: ...").
    unit: str = "claims"
    # A result that says several things: (what the part says, the claims that measure it) for each, so the
    # line gives a verdict per part; the line's own verdict still reads every entry of every part.
    parts: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # What the line is measured on, in words (data set, scale), where a reader needs it to weigh the verdict
    # (an experiment run far smaller than the document's); empty where the claims' sections say enough.
    scope: str = ""


@dataclass(frozen=True)
class RunOption:
    """A command-line option a pack's claims read (from ``Context.options[name]``).

    ``check`` turns the given text into the value (raising ``ValueError`` with a one-line message for bad
    input) before any claim runs; the value is part of the key of the finished claims' records."""

    name: str
    flag: str
    metavar: str
    help: str
    check: Callable[[str], Any] | None = None


@dataclass(frozen=True)
class Invocation:
    """How a pack's command was called: its argparse parser and the words after the command's name (for a
    command that reads a file of option values and parses the command line again)."""

    parser: Any
    argv: tuple[str, ...]


@dataclass(frozen=True)
class Command:
    """An extra subcommand of ``moecl-verify`` that only makes sense for one pack (e.g. a simulator).

    ``add_arguments(parser)`` declares its options on an argparse parser; ``run(args, invocation)`` returns
    the exit status (a user's mistake raises the command line's ``UsageError``: one line, exit 2)."""

    name: str
    help: str
    add_arguments: Callable[[Any], None]
    run: Callable[[Any, Invocation], int]


def _text(value) -> bool:
    return isinstance(value, str)


def _items_of(kind: type) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, tuple) and all(isinstance(v, kind) for v in value)


def _hook(arguments: int) -> Callable[[Any], bool]:
    """A function that can be called with ``arguments`` positional arguments (the run, for most hooks)."""
    def check(value) -> bool:
        if value is None:
            return True
        if not callable(value):
            return False
        import inspect

        try:
            inspect.signature(value).bind(*([None] * arguments))
        except TypeError:
            return False
        except ValueError:  # a builtin without a signature: trusted
            return True
        return True
    return check


def _mapping(value) -> bool:
    return isinstance(value, Mapping)


# What each field of a pack's declaration must hold, checked when the pack is built (so when it loads): a
# mistyped value fails at once, in one line naming the field, not when a report first reads it.  Every field
# has an entry (a test holds the two in step).
_FIELD_SPECS: dict[str, tuple[Callable[[Any], bool], str]] = {
    **{name: (_text, "a string") for name in (
        "name", "title", "source", "claims", "noun", "simulation", "reading", "beyond_title", "swept",
        "swept_symbol", "source_note", "slip_caveat", "configuration")},
    "order": (_items_of(str), "a tuple of claim-id groups (strings)"),
    **{name: (lambda v: _items_of(HeadlineItem)(v), "a tuple of HeadlineItem")
       for name in ("headline", "reading_headline", "statements")},
    "chain": (lambda v: v is None or isinstance(v, HeadlineItem), "a HeadlineItem or None"),
    "beyond": (lambda v: v is None or isinstance(v, str), "a claim-id group (string) or None"),
    **{name: (_mapping, "a mapping") for name in (
        "proof_uses", "cost_hints", "budgets", "peak_memory_gb", "symbols", "words", "answers")},
    "answer_facts": (lambda v: _mapping(v) and all(callable(f) for f in v.values()),
                     "a mapping of claim ids to functions of the claim's entries"),
    "figures": (_hook(1), "a function of the run (or None)"),
    "survives": (_hook(1), "a function of the run (or None)"),
    "requests": (_hook(1), "a function of the run (or None)"),
    "derived_bounds": (_hook(0), "a function of no arguments (or None)"),
    "options": (lambda v: _items_of(RunOption)(v), "a tuple of RunOption"),
    "commands": (lambda v: _items_of(Command)(v), "a tuple of Command"),
    "bottom_line_causes": (lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0, "an integer >= 0"),
    "clusters": (lambda v: isinstance(v, tuple), "a tuple of checks.causes.Cluster"),
    "default": (lambda v: isinstance(v, bool), "True or False"),
}


def _check_declaration(pack: "Pack") -> None:
    from dataclasses import fields

    for f in fields(pack):
        check, expected = _FIELD_SPECS[f.name]
        value = getattr(pack, f.name)
        if not check(value):
            raise ValueError(f"pack {pack.name!r}: {f.name} must be {expected}, got {value!r:.80}")


@dataclass(frozen=True)
class Pack:
    """One checked document.

    ``claims`` is the package whose modules register the claims (found on disk, nothing lists them);
    ``order`` lists claim-id groups (the part of an id before its first dot) in the document's order,
    and unknown groups sort after them; ``beyond`` is the group of questions the document leaves open,
    answered by experiments and reported apart from its own claims.

    ``headline`` items are the document's results, ``reading_headline`` an independent reading's claims
    about it (``reading`` names that reading); ``chain`` (optional)
    is summarized per member claim in one line (e.g. a proof's lemmas).  ``figures(run)`` returns the
    pack's own figure specs (reproduced figures of the document), drawn before the per-kind figures.
    ``cost_hints`` (claim id -> seconds measured once) only orders the work of parallel lanes;
    ``peak_memory_gb`` ((budget, lanes) -> GB) lets the command line warn before a run that would not fit;
    ``budgets`` (budget name -> what it buys, ``ctx.sizes``) must cover every budget when given."""

    name: str
    title: str
    source: str
    claims: str
    # What the document is, in the report's sentences ("the paper's order", "claims of the chapter").
    noun: str = "document"
    order: tuple[str, ...] = ()
    simulation: str = ""
    headline: tuple[HeadlineItem, ...] = ()
    reading_headline: tuple[HeadlineItem, ...] = ()
    chain: HeadlineItem | None = None
    # Every lemma, proposition, corollary and theorem of the document, each a line of the per-statement status
    # table (reports/statements.py); an item with an empty ``statement`` is described by its first claim's summary.
    statements: tuple[HeadlineItem, ...] = ()
    # Headline item key -> the claim groups its proof relies on (a slip there undercuts the result).
    proof_uses: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    reading: str = "an independent reading"
    beyond: str | None = None
    beyond_title: str = ""
    cost_hints: Mapping[str, float] = field(default_factory=dict)
    # Budget name -> what it buys in the pack's terms (any object; claims read it as ``ctx.sizes``).
    budgets: Mapping[str, Any] = field(default_factory=dict)
    figures: Callable[[Any], list] | None = None
    options: tuple[RunOption, ...] = ()
    commands: tuple[Command, ...] = ()
    # GB at the peak of a run of every claim, by (budget name, claim lanes) for one lane and two.
    peak_memory_gb: Mapping[tuple[str, int], float] = field(default_factory=dict)
    # The parameter the document's scaling laws and probabilities are swept over: its key in the results
    # (``<name>_range``, rows' ``<name>``) and its symbol on figures and in the report.
    swept: str = "x"
    swept_symbol: str = "x"
    # How the reports spell symbols the claims write in ASCII (word -> symbol), in prose only.
    symbols: Mapping[str, str] = field(default_factory=dict)
    # How the main body names an entry's feature model (its key's ``features``), e.g. "Definition 1's features".
    words: Mapping[str, str] = field(default_factory=dict)
    # Said on the report's first screen (e.g. how the source text was damaged) and beside the slip audit.
    source_note: str = ""
    slip_caveat: str = ""
    # The document's own configuration, where slips state their effect (``Slip.effect``), e.g. "the settings
    # of its main experiment: N = 7, ..."; the report says it once above the root causes.
    configuration: str = ""
    # Answers to the questions beyond the document, in words (reports/headline.py::answer_sentence): for each
    # beyond claim, for each aspect of its hypothesis (an entry's part up to its first ", ", the rest naming
    # the setting), what to say when it held and when the opposite held significantly, each with a "{span}"
    # for the size of the measured differences; and, where a question asks where or how, a function of the
    # claim's entries that says it from their measurements.
    answers: Mapping[str, Mapping[str, tuple[str, str]]] = field(default_factory=dict)
    answer_facts: Mapping[str, Callable] = field(default_factory=dict)
    # Bounds the pack derives once and uses to decide several statements (:mod:`moecl_verify.checks.derived`):
    # a callable returning the ``DerivedBound`` objects, called only when a report lists them.
    derived_bounds: Callable[[], tuple] | None = None
    # Where the document's conclusions survive although its stated setting does not bear them out (a regime the
    # run found where they hold): a callable of the run returning (sentence, entry keys) pairs, each assembled
    # from the run's entries; the bottom line says a sentence after the verdicts when some entry it names is
    # decided (reports/bottom_line.py).
    survives: Callable[[Any], list] | None = None
    # How many root causes the bottom line names (0: the machinery's default, reports/bottom_line.py): fewer where
    # the document's first screen must also hold an independent reading's table.
    bottom_line_causes: int = 0
    # Requests to the authors (:mod:`moecl_verify.checks.requests`): a callable of the run returning the
    # ``Request`` objects, in the order a referee would list them; reports/requests.py numbers and writes them.
    requests: Callable[[Any], list] | None = None
    # Root causes that are one error seen from different sides (:class:`moecl_verify.checks.causes.Cluster`):
    # the reports table each cluster once, as one root cause.
    clusters: tuple = ()
    default: bool = False

    def __post_init__(self) -> None:
        if not NAME.match(self.name if isinstance(self.name, str) else ""):
            raise ValueError(f"pack name {self.name!r}: lower-case words joined by '-'")
        _check_declaration(self)
        if not self.beyond_title:
            object.__setattr__(self, "beyond_title", f"Beyond the {self.noun}")
        from moecl_verify.checks.causes import Cluster

        seen: set[str] = set()
        for cluster in self.clusters:
            if not isinstance(cluster, Cluster):
                raise ValueError(f"pack {self.name!r}: clusters must be checks.causes.Cluster, got {cluster!r}")
            twice = seen & set(cluster.ids)
            if twice:
                raise ValueError(f"pack {self.name!r}: slip {sorted(twice)[0]!r} is in two clusters")
            seen |= set(cluster.ids)
        if self.budgets:
            from moecl_verify.checks.context import BUDGETS

            missing = [name for name in BUDGETS if name not in self.budgets]
            if missing:
                raise ValueError(f"pack {self.name!r}: budgets must say what every budget buys; missing "
                                 f"{', '.join(missing)}")

    @property
    def modules(self) -> tuple[str, ...]:
        """The packages whose code a claim's result can depend on: the pack's own package."""
        return (self.claims.rpartition(".")[0] or self.claims,)

    def root(self) -> Path:
        """The folder of the pack's package (for the code hash of the results cache)."""
        return Path(importlib.import_module(self.modules[0]).__file__).parent

    # -- the document's order
    def rank(self, claim_id: str) -> int:
        prefix = claim_id.split(".")[0]
        return self.order.index(prefix) if prefix in self.order else len(self.order)

    def key(self, claim_id: str) -> tuple:
        """Sort key: the group's place in the document, then natural order within the group
        (``step2`` before ``step10``, ``a`` before ``a.b``)."""
        return (self.rank(claim_id), natural_key(claim_id))

    def in_order(self, claim_ids) -> list[str]:
        return sorted(claim_ids, key=self.key)

    def is_beyond(self, claim_id: str) -> bool:
        return self.beyond is not None and claim_id.split(".")[0] == self.beyond


def stand_in(name: str | None, title: str) -> Pack:
    """A pack for rendering a results file whose pack is not installed: no claims, no declarations, the
    title the file gives."""
    return Pack(name=name if name and NAME.match(name) else "unknown", title=title, source="", claims="")


def natural_key(text: str) -> tuple:
    """``step2`` before ``step10``."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text))


class PackError(ValueError):
    """No such pack, or an installed pack that does not load; one line for the user."""


def _load(entry: metadata.EntryPoint) -> Pack:
    try:
        pack = entry.load()
    except Exception as exc:  # any failure of a plug-in's import is the plug-in's, said in one line
        raise PackError(f"pack {entry.name!r} ({entry.value}) does not load: {type(exc).__name__}: {exc}") from exc
    if not isinstance(pack, Pack):
        raise PackError(f"pack {entry.name!r} ({entry.value}) is a {type(pack).__name__}, not a Pack")
    if pack.name != entry.name:
        raise PackError(f"pack {entry.name!r} ({entry.value}) calls itself {pack.name!r}")
    return pack


def _scan() -> tuple[dict[str, Pack], dict[str, str]]:
    """(the packs that load, by name, sorted; the others' names with why they do not)."""
    entries: dict[str, metadata.EntryPoint] = {}
    broken: dict[str, str] = {}
    for entry in metadata.entry_points(group=GROUP):
        if entry.name in entries and entries[entry.name].value != entry.value:
            broken[entry.name] = (f"pack {entry.name!r} is declared twice: {entries[entry.name].value} and "
                                  f"{entry.value}")
        entries[entry.name] = entry
    packs = {}
    for name in sorted(entries):
        if name in broken:
            continue
        try:
            packs[name] = _load(entries[name])
        except PackError as exc:
            broken[name] = str(exc)
    return packs, dict(sorted(broken.items()))


def installed() -> dict[str, Pack]:
    """Every pack installed that loads, by name, sorted. A broken plug-in never hides the others: it is left
    out here and named by :func:`broken`."""
    return _scan()[0]


def broken() -> dict[str, str]:
    """Installed packs that do not load (or are declared twice), with why, in one line each."""
    return _scan()[1]


def default() -> Pack:
    """The pack that declares itself the default, else the only one installed."""
    packs = installed()
    chosen = [p for p in packs.values() if p.default]
    if len(chosen) == 1:
        return chosen[0]
    if not chosen and len(packs) == 1:
        return next(iter(packs.values()))
    if not packs:
        raise PackError("no pack is installed (entry-point group moecl_verify.packs)")
    raise PackError(f"choose a pack with --pack ({', '.join(packs)}): "
                    + ("none" if not chosen else "more than one") + " declares itself the default")


def get(name: str | Pack | None = None) -> Pack:
    """The pack called ``name`` (a Pack is returned as is; None: the default)."""
    if isinstance(name, Pack):
        return name
    if name is None:
        return default()
    packs = installed()
    if name not in packs:
        problem = broken().get(name)
        if problem:
            raise PackError(problem)
        close = difflib.get_close_matches(name, list(packs), n=2, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise PackError(f"no pack {name!r}{hint} (installed: {', '.join(packs) or 'none'}; moecl-verify packs)")
    return packs[name]
