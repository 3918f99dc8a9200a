"""results.json: the contract between checks and reports, and with automation.

Written byte-for-byte deterministic for the same command and seed: no timestamps or
timings (those go to run-info.json), fixed key order, ``repr`` floats.

Read back by one function, :func:`read` (``report --from``, ``list --from`` and ``diff`` all go
through it; :func:`load` builds the :class:`RunResult` the renderers and the notebook take). It
validates the file against ``results.schema.json``, a JSON Schema (draft 2020-12) shipped in this
package and checked with the ``jsonschema`` library: the schema is data, so automation in any
language can validate a results.json against the same contract the tool reads with, and
jsonschema reports the failing field's path, which the one-line error names
(``results[3].verdict: 'maybe' is not one of ...``). Every way a file can fail to be a results
file (unreadable, not UTF-8, not JSON, NaN or Infinity, numbers beyond a double, nesting too deep,
a key twice in one object, a field missing or of the wrong type, a verdict, form or evidence type outside
its closed set, a newer schema) raises :class:`ResultsFileError`, one line naming the file and the first
problem; a document that passes builds its RunResult without raising.

:func:`write` puts the run's document through the same checks before it writes it: a file the reader would
refuse is not written (:class:`ResultsNotWritten`).
"""

from __future__ import annotations

import functools
import json
import math
import os
import stat
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any

from moecl_verify.checks import kinds, strength
from moecl_verify.checks import pack as packs
from moecl_verify.checks.causes import CauseCycle, check_acyclic
from moecl_verify.checks.entry_key import EntryKey, legacy_key
from moecl_verify.checks.model import ClaimResult, Interpretation, RunResult, Slip, to_jsonable
from moecl_verify.reports import bottom_line, headline
from moecl_verify.reports.document import derived_uses, is_installed, pack_of

# 3: every entry carries its key (checks/entry_key.py) and every slip the keys of the entries it rests on and
# the ids of the slips it follows from (checks/causes.py);
# 2: every entry names the kind of evidence that decided it (evidence_type); 1 lacks it.
SCHEMA_VERSION = 3
READABLE_SCHEMAS = (1, 2, 3)
SCHEMA_FILE = "results.schema.json"
# The tool writes 8 levels (figure data inside an entry's configuration); far deeper is not a results file,
# and would overflow the renderers' recursion.
MAX_DEPTH = 64
# Digits of the largest integer read: more than a double holds is not a number the tool writes.
MAX_INT_DIGITS = 308


def as_document(run: RunResult) -> dict:
    return {
        "tool": "moecl-verify",
        "schema_version": SCHEMA_VERSION,
        "paper": run.title or pack_of(run).title,
        "meta": to_jsonable(run.meta),
        "summary": run.counts(),
        "claims": to_jsonable(list(run.claims)),
        "results": to_jsonable(list(run.results)),
        "slips": to_jsonable(list(strength.settle(run.slips, run.results))),
        "interpretations": to_jsonable(list(run.interpretations)),
        "artifacts": to_jsonable(run.artifacts),
        # What the reports say, derived from the above (read back, it is recomputed, not trusted).
        "findings": findings(run),
    }


def findings(run: RunResult) -> dict:
    """The report's findings: recomputed from the run, or as the file recorded them where its pack is not
    installed (the stand-in declares no headline results to derive them from)."""
    if run.findings and not is_installed(run):
        return run.findings
    return {"bottom_line": [s.to_json() for s in bottom_line.sentences(run)],
            "answers": [{"claim": row.claim_id, "question": row.question, "verdict": row.verdict,
                         "answer": row.answer} for row in headline.open_rows(run)],
            "derived_bounds": [{"id": b.id, "statement": b.statement, "reading": b.reading, "checked": b.checked,
                                "uses": [{"claim": u.claim_id, "part": u.part, "relation": u.relation,
                                          "checked": u.checked, "verdict": verdict} for u, verdict in rows]}
                               for b, rows in derived_uses(run)]}


def dumps(run: RunResult) -> str:
    return json.dumps(as_document(run), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write(run: RunResult, path: Path) -> Path:
    """results.json of ``run``, checked first as :func:`read` checks a file: a document the reader would refuse
    (an entry without its evidence type, two entries with one key...) raises :class:`ResultsNotWritten` and
    writes nothing, so that ``report --from``, ``diff`` and ``list --from`` never meet a file the tool wrote and
    cannot read."""
    text = dumps(run)
    try:
        _check(path, _parse(path, text))
    except ResultsFileError as exc:
        raise ResultsNotWritten(path, exc.problem) from None
    path.write_text(text, encoding="utf-8")
    return path


# ----------------------------------------------------------------------------- reading


class ResultsFileError(ValueError):
    """A file that is not a readable results.json: one line naming the file and its first problem."""

    def __init__(self, path: str | Path, problem: str):
        self.path = Path(path)
        self.problem = problem
        super().__init__(f"{str(path)!r}: {problem}")


class ResultsNotWritten(ResultsFileError):
    """A run's document that the reader would refuse, so not written: one line naming the file and the first
    problem the reader would find."""

    def __init__(self, path: str | Path, problem: str):
        super().__init__(path, f"not written: the reader would refuse it ({problem})")


@functools.cache
def _shipped() -> str:
    return resources.files("moecl_verify.reports").joinpath(SCHEMA_FILE).read_text(encoding="utf-8")


def schema() -> dict:
    """The JSON Schema of results.json: the shipped file, with the evidence types an entry may carry generated
    from the registered kinds of evidence (checks/kinds: the machinery's and the installed packs' own)."""
    doc = json.loads(_shipped())
    doc["$defs"]["entry"]["properties"]["evidence_type"]["enum"] = list(kinds.tags())
    return doc


@functools.lru_cache(maxsize=None)
def _validator_for(tags: tuple[str, ...]):
    from jsonschema import Draft202012Validator

    return Draft202012Validator(schema())


# An evidence type of a kind this installation may not have: a file of a pack that is not installed.
OTHER_KIND = {"type": "string", "pattern": "^[a-z][a-z0-9_]*$",
              "description": "the tag of a kind of evidence its pack added (the pack is not installed here)"}


@functools.lru_cache(maxsize=None)
def _lenient_validator_for(tags: tuple[str, ...]):
    from jsonschema import Draft202012Validator

    doc = schema()
    doc["$defs"]["entry"]["properties"]["evidence_type"] = OTHER_KIND
    return Draft202012Validator(doc)


def _validator(doc: Any = None):
    """The validator for ``doc``: every installed pack is loaded first, so that the kinds of evidence each
    registers are known; a file of a pack that is not installed may carry that pack's own kinds, which no
    installed code can check (they are read by the fields every entry has)."""
    installed = packs.installed()
    pack = doc.get("meta", {}).get("pack") if isinstance(doc, dict) and isinstance(doc.get("meta"), dict) else None
    if isinstance(pack, str) and pack not in installed:
        return _lenient_validator_for(kinds.tags())
    return _validator_for(kinds.tags())


def read(path: str | Path) -> dict:
    """A results.json (or the folder holding one) as a validated document; :class:`ResultsFileError` if it
    is not one."""
    path = Path(path)
    try:
        if path.is_dir():
            path = path / "results.json"
    except OSError as exc:
        raise ResultsFileError(path, f"cannot read ({exc.strerror or exc})") from None
    doc = _parse(path, _text(path))
    _check(path, doc)
    return doc


def load(path: str | Path) -> RunResult:
    """Read a results.json back, so reports can be re-rendered without recomputing."""
    doc = read(path)
    results = tuple(entry_of(entry) for entry in doc["results"])
    # A file written before slips recorded their strength gets the one their entries give (checks/strength.py).
    slips = strength.settle((
        Slip(
            id=s["id"],
            location=s["location"],
            slip_class=s["class"],
            stated=s["stated"],
            holds=s["holds"],
            evidence=s["evidence"],
            entries=tuple(s.get("entries", ())),
            causes=tuple(s.get("causes", ())),
            effect=s.get("effect", ""),
            summary=s.get("summary", ""),
            strength=s.get("strength", ""),
            strength_note=s.get("strength_note", ""),
            ablation=tuple(s.get("ablation", ())),
        )
        for s in doc["slips"]
    ), results)
    interpretations = tuple(Interpretation(**i) for i in doc["interpretations"])
    return RunResult(results, slips, interpretations, doc["meta"], tuple(doc["claims"]), doc.get("artifacts", {}),
                     str(doc.get("paper") or ""), doc.get("findings", {}))


def key_of(entry: dict) -> EntryKey:
    """A results entry's key: stored (schema 3), or by the documented mapping from schemas 1 and 2."""
    return EntryKey.from_json(entry["key"]) if "key" in entry else legacy_key(entry)


def entry_of(entry: dict) -> ClaimResult:
    """A results entry as the record it was written from; an entry of schema 1 or 2 gets its key by
    :func:`~moecl_verify.checks.entry_key.legacy_key` and loses the label from its configuration."""
    if "key" in entry:
        return ClaimResult(**entry)
    config = {k: v for k, v in entry["config"].items() if k not in ("part", "role")}
    return ClaimResult(**{**entry, "config": config}, key=legacy_key(entry))


def _text(path: Path) -> str:
    try:
        regular = stat.S_ISREG(os.stat(path).st_mode)
        # Only a regular file is read: a FIFO or a device (/dev/zero) would block or never end.
        data = path.read_bytes() if regular else b""
    except (OSError, ValueError) as exc:  # ValueError: a path the system cannot name (a NUL byte in it)
        raise ResultsFileError(path, f"cannot read ({getattr(exc, 'strerror', None) or exc})") from None
    if not regular:
        raise ResultsFileError(path, "not a regular file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ResultsFileError(path, f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None


class _NotANumber:
    """A number the tool never writes (NaN, Infinity, beyond a double), kept as its literal so the check of
    the parsed document can name the field that holds it."""

    def __init__(self, literal: str):
        self.literal = literal


def _float(literal: str) -> float | _NotANumber:
    value = float(literal)
    return value if math.isfinite(value) else _NotANumber(literal)


def _int(literal: str) -> int | _NotANumber:
    return int(literal) if len(literal.lstrip("-")) <= MAX_INT_DIGITS else _NotANumber(literal)


class _DuplicateKeys(dict):
    """An object that names a key twice (JSON parsers keep one of the two, each its own), kept with the key so
    that the check of the parsed document can name the object that holds it."""

    def __init__(self, pairs: list, duplicate: str):
        super().__init__(pairs)
        self.duplicate = duplicate


def _object(pairs: list) -> dict:
    seen: set = set()
    for key, _ in pairs:
        if key in seen:
            return _DuplicateKeys(pairs, key)
        seen.add(key)
    return dict(pairs)


def _parse(path: Path, text: str) -> Any:
    try:
        return json.loads(text, parse_constant=_NotANumber, parse_float=_float, parse_int=_int,
                          object_pairs_hook=_object)
    except json.JSONDecodeError as exc:
        # A file cut short fails where the text ends (or in a string that never closes).
        cut = exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string")
        hint = "; the file ends early (truncated?)" if cut else ""
        raise ResultsFileError(path, f"not JSON ({exc.msg}: line {exc.lineno}, column {exc.colno}){hint}") from None
    except RecursionError:
        raise ResultsFileError(path, f"not a results file: nested deeper than {MAX_DEPTH} levels") from None


def _check(path: Path, doc: Any) -> None:
    """The document's own checks, then the schema's first error, then the summary against the results."""
    if not isinstance(doc, dict):
        raise ResultsFileError(path, f"not a moecl-verify results file: a JSON {_json_type(doc)}, not an object")
    _check_values(path, doc)
    if doc.get("tool") != "moecl-verify":
        found = f"'tool' is {_show(doc['tool'])}" if "tool" in doc else "no 'tool' field"
        raise ResultsFileError(path, f"not a moecl-verify results file ({found})")
    version = doc.get("schema_version")
    if type(version) is int and version > max(READABLE_SCHEMAS):
        raise ResultsFileError(path, f"written by a newer moecl-verify: schema {version}, this version reads "
                                     f"{', '.join(map(str, READABLE_SCHEMAS))}")
    from jsonschema.exceptions import best_match

    error = best_match(_validator(doc).iter_errors(doc))
    if error is not None:
        raise ResultsFileError(path, _describe(error))
    seen: dict[EntryKey, int] = {}
    for i, entry in enumerate(doc["results"]):
        stored = entry.get("key")
        if stored is not None and (stored["claim"], stored["form"]) != (entry["id"], entry["form"]):
            raise ResultsFileError(path, f"results[{i}]: its key names {stored['claim']} [{stored['form']}], but "
                                         f"the entry is {entry['id']} [{entry['form']}]")
        try:
            key = key_of(entry)
        except ValueError as exc:
            raise ResultsFileError(path, f"results[{i}]: {exc}") from None
        if key in seen:
            raise ResultsFileError(path, f"results[{i}] has the key of results[{seen[key]}] ({key.text}): two "
                                         "entries of one run cannot share one")
        seen[key] = i
    for i, slip in enumerate(doc["slips"]):
        for j, stored in enumerate(slip.get("entries", ())):
            try:
                EntryKey.from_json(stored)
            except (TypeError, ValueError) as exc:
                raise ResultsFileError(path, f"slips[{i}].entries[{j}]: {exc}") from None
    ids = [s["id"] for s in doc["slips"]]
    edges = {s["id"]: tuple(c for c in s.get("causes", ()) if c in ids) for s in doc["slips"]}
    try:
        check_acyclic(edges)
    except CauseCycle as exc:
        raise ResultsFileError(path, f"slips: {exc}") from None
    for verdict, count in doc["summary"].items():
        actual = sum(entry["verdict"] == verdict for entry in doc["results"])
        if count != actual:
            raise ResultsFileError(path, f"summary.{verdict}: {_show(count)}, but the results hold {actual} "
                                         f"{verdict} entries")


def _check_values(path: Path, doc: dict) -> None:
    """Depth, keys, numbers and text, in document order: nothing nested deeper than MAX_DEPTH, no object that
    names a key twice, no NaN, Infinity or number beyond a double, no string that is not text (a lone
    surrogate, which ``\\ud800`` escapes can produce but no UTF-8 file can hold, and no report could be
    written with)."""
    stack: list[tuple[Any, tuple, int]] = [(doc, (), 0)]
    while stack:
        value, where, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ResultsFileError(path, f"{_where(where)}: nested deeper than {MAX_DEPTH} levels")
        if isinstance(value, _NotANumber):
            raise ResultsFileError(path, f"{_where(where)}: {_short(value.literal)} is not a finite number "
                                         "(results.json holds no NaN, Infinity or number beyond a double)")
        if isinstance(value, str):
            _check_text(path, where, value)
        elif isinstance(value, dict):
            for key in value:
                _check_text(path, where + (key,), key)
            if isinstance(value, _DuplicateKeys):
                raise ResultsFileError(path, f"{_where(where)}: the key {_show(value.duplicate)} appears twice "
                                             "(one object holds each key once)")
            stack.extend((v, where + (k,), depth + 1) for k, v in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend((v, where + (i,), depth + 1) for i, v in reversed(list(enumerate(value))))


def _check_text(path: Path, where: tuple, text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ResultsFileError(path, f"{_where(where)}: not text (a lone surrogate "
                                     f"\\u{ord(text[exc.start]):04x})") from None


def _describe(error) -> str:
    """One line for a jsonschema error: the field's path and what was expected there."""
    where, value, expected = tuple(error.absolute_path), error.instance, error.validator_value
    kind = error.validator
    if kind == "required":
        missing = next(name for name in expected if name not in value)
        return f"{_where(where + (missing,))}: missing"
    if kind == "additionalProperties":
        known = error.schema.get("properties", {})
        extra = next(name for name in value if name not in known)
        return f"{_where(where + (extra,))}: unknown field"
    if kind == "enum":
        return f"{_where(where)}: {_show(value)} is not one of {', '.join(str(v) for v in expected)}"
    if kind == "const":
        return f"{_where(where)}: {_show(value)} is not {_show(expected)}"
    if kind == "type":
        wanted = " or ".join(expected) if isinstance(expected, list) else expected
        return f"{_where(where)}: expected {wanted}, got {_json_type(value)} {_show(value)}"
    if kind == "pattern":
        return f"{_where(where)}: {_show(value)} is not an id ({error.schema.get('description', expected)})"
    if kind == "minimum":
        return f"{_where(where)}: {_show(value)} is below {expected}"
    return f"{_where(where)}: {_short(' '.join(error.message.split()), 160)}"


def _where(path: Iterable) -> str:
    """``results[3].config['a b']``: the path of a field, as it would be written in Python or JavaScript."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        elif part.isidentifier():
            text += f".{part}" if text else part
        else:
            text += f"[{part!r}]"
    return _short(text, 100) or "the document"


def _json_type(value: Any) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer", float: "number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def _show(value: Any) -> str:
    """A value as it reads in the message: strings quoted, containers as JSON, cut to one short line."""
    text = repr(value) if isinstance(value, str) else json.dumps(value, ensure_ascii=True)
    return _short(text)


def _short(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
