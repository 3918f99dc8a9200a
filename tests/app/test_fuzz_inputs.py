"""Fuzzed inputs (Hypothesis): results.json and MNIST's IDX files mutated at random are answered as documented.

results.json: a valid file of a small run (built here from checks/model.py records: every evidence type, a
slip, an interpretation), mutated by removing fields, putting values of the wrong type, huge numbers, NaN,
unicode ids or deep nesting in their place, or by cutting, byte-flipping or deepening its text.  ``diff`` and
``report --from`` then exit 0, 1 (diff: a finding moved) or 2, and exit 2 is exactly one line on stderr that
starts with ``moecl-verify: error:`` and names the file; nothing else escapes.

IDX: a valid file with its header bytes, dimensions or length mutated (plain or gzip-compressed) is read or
refused with IdxError by ``numeric/idx.py``, and ``--mnist`` refuses a folder holding one with UsageError;
neither allocates more than the file's contents (tracemalloc's peak stays within a fixed 1 MiB of I/O buffers
plus a few times the file's decompressed length, whatever shape the header claims).
"""

from __future__ import annotations

import contextlib
import copy
import gzip
import io
import json
import math
import re
import struct
import time
import tracemalloc
from html.parser import HTMLParser

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from moecl_verify.checks.model import VERDICTS
from moecl_verify.cli import main
from moecl_verify.packs.moe_cl.options import mnist_dir as _mnist_dir
from moecl_verify.errors import UsageError
from moecl_verify.numeric.idx import IdxError, check_idx, read_idx
from moecl_verify.reports import results_json

pytestmark = pytest.mark.app

FUZZ = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ----------------------------------------------------------------------------- results.json


@pytest.fixture(scope="module")
def files(tmp_path_factory, tiny_run):
    """(folder, the valid results.json, its document): one folder for every example of the module."""
    folder = tmp_path_factory.mktemp("fuzz")
    good = results_json.write(tiny_run, folder / "good.json")
    return folder, good, results_json.as_document(tiny_run)


def _nest(depth: int):
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


JUNK = st.one_of(
    st.none(), st.booleans(), st.integers(), st.just(10**400), st.just(-(10**30)),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
    st.sampled_from(["maybe", "confirmed", "refuted", "stated", "exact", "lemma2", "", "moecl-verify", 3, 2, 1]),
    st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
    st.integers(min_value=60, max_value=400).map(_nest),
)


@st.composite
def mutated_documents(draw, doc: dict) -> str:
    """The document with one to three changes: a field removed, replaced or renamed (anywhere in it), an id made
    of any text, or a plausible change (a verdict, a number); written as JSON (NaN and Infinity included, as
    json.dumps writes them by default)."""
    doc = copy.deepcopy(doc)
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["plausible", "id", "anywhere", "anywhere"]))
        if kind == "plausible" and isinstance(doc.get("results"), list) and doc["results"]:
            # Still a results file: another verdict (the summary follows) or other numbers, so diff and report
            # get past the loader and diff's exit 1 (a finding reversed) is reached too.
            entry = doc["results"][draw(st.integers(0, len(doc["results"]) - 1))]
            if isinstance(entry, dict) and draw(st.booleans()):
                entry["verdict"] = draw(st.sampled_from(VERDICTS))
                if isinstance(doc.get("summary"), dict):
                    doc["summary"] = {v: sum(isinstance(e, dict) and e.get("verdict") == v for e in doc["results"])
                                      for v in VERDICTS}
            elif isinstance(entry, dict):
                entry[draw(st.sampled_from(["expected", "observed", "p_value"]))] = draw(
                    st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False), st.integers(-9, 9)))
            continue
        if kind == "id":
            section = draw(st.sampled_from(["results", "slips", "interpretations", "claims"]))
            if doc.get(section) and isinstance(doc[section], list):
                item = doc[section][draw(st.integers(0, len(doc[section]) - 1))]
                if isinstance(item, dict):
                    item["id"] = draw(st.text(min_size=1, max_size=8))
            continue
        node = doc
        while True:  # walk down to a container, then change one of its children
            keys = list(node) if isinstance(node, dict) else list(range(len(node)))
            if not keys:
                break
            key = draw(st.sampled_from(keys))
            child = node[key]
            if isinstance(child, (dict, list)) and child and draw(st.booleans()):
                node = child
                continue
            action = draw(st.sampled_from(["remove", "replace", "rename"]))
            if action == "remove":
                del node[key]
            elif action == "replace":
                node[key] = draw(JUNK)
            elif isinstance(node, dict):
                node[draw(st.text(max_size=6))] = node.pop(key)
            break
    return json.dumps(doc, ensure_ascii=draw(st.booleans()))


@st.composite
def mangled_texts(draw, text: str) -> bytes:
    """The file's text cut short, with a byte changed, a number replaced by NaN, Infinity or one beyond a double,
    or a value nested far deeper than any results file."""
    data = text.encode("utf-8")
    how = draw(st.sampled_from(["cut", "byte", "number", "deep"]))
    if how == "cut":
        return data[: draw(st.integers(0, len(data) - 1))]
    if how == "byte":
        at = draw(st.integers(0, len(data) - 1))
        return data[:at] + bytes([draw(st.integers(0, 255))]) + data[at + 1:]
    if how == "number":
        literal = draw(st.sampled_from(["NaN", "Infinity", "-Infinity", "1e999", "-1e400", "9" * 400, "1" * 5000]))
        field = draw(st.sampled_from(['"p_value": ', '"seed": ', '"expected": ', '"observed": ', '"replicates": ']))
        start = text.index(field) + len(field)
        end = min(text.index(c, start) for c in ",\n}" if c in text[start:])
        return (text[:start] + literal + text[end:]).encode("utf-8")
    depth = draw(st.sampled_from([65, 500, 5_000, 100_000]))
    field = '"config": {'
    at = text.index(field) + len(field)
    return (text[:at] + '"deep": ' + "[" * depth + "]" * depth + ", " + text[at:]).encode("utf-8")


def _call(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def _answered_as_documented(folder, good, bad) -> None:
    """diff (both ways) and report --from: exit 0, 1 (diff only) or 2; exit 2 is one line naming the file."""
    calls = [("diff", str(good), str(bad)), ("diff", str(bad), str(good)),
             ("report", "--from", str(bad), "--out", str(folder / "out"), "--format", "json", "--quiet")]
    for args in calls:
        code, _, err = _call(*args)
        event(f"{args[0]}: exit {code}")  # shown by --hypothesis-show-statistics: both answers are exercised
        assert code in ((0, 1, 2) if args[0] == "diff" else (0, 2)), (args, code, err)
        if code == 2:
            assert err.count("\n") == 1 and err.startswith("moecl-verify: error:") and str(bad) in err, err
            assert not err.splitlines()[0].endswith("moecl-verify: error:")
    # What the loader accepts, it can build and write back: a valid document makes a RunResult without raising.
    try:
        run = results_json.load(bad)
    except results_json.ResultsFileError as exc:
        assert "\n" not in str(exc) and str(exc).startswith(repr(str(bad)))
    else:
        assert json.loads(results_json.dumps(run))["tool"] == "moecl-verify"


@pytest.mark.heavy
@FUZZ
@given(data=st.data())
def test_mutated_results_documents_are_answered_as_documented(files, data):
    folder, good, doc = files
    bad = folder / "mutated.json"
    bad.write_text(data.draw(mutated_documents(doc)), encoding="utf-8")
    _answered_as_documented(folder, good, bad)


@pytest.mark.heavy
@FUZZ
@given(data=st.data())
def test_mangled_results_files_are_answered_as_documented(files, data):
    folder, good, _ = files
    bad = folder / "mangled.json"
    bad.write_bytes(data.draw(mangled_texts(good.read_text(encoding="utf-8"))))
    _answered_as_documented(folder, good, bad)


# ----------------------------------------------------------------------------- IDX files


def _idx(code: int, ndim: int, shape: list[int], data: bytes) -> bytes:
    return bytes([0, 0, code, ndim]) + b"".join(struct.pack(">I", n) for n in shape) + data


@st.composite
def mutated_idx(draw) -> bytes:
    """A small valid IDX file (unsigned bytes, 3 x 4 x 4), then its type code, dimension count, dimensions
    (up to 2**32 - 1) or length changed, or random bytes written over its header."""
    shape, code, ndim = [3, 4, 4], 0x08, 3
    data = bytes(range(48))
    how = draw(st.sampled_from(["code", "ndim", "dims", "length", "bytes"]))
    if how == "code":
        code = draw(st.integers(0, 255))
    elif how == "ndim":
        ndim = draw(st.integers(0, 255))
    elif how == "dims":
        shape = draw(st.lists(st.one_of(st.integers(0, 8), st.integers(0, 2**32 - 1)), min_size=0, max_size=6))
        ndim = len(shape)
    elif how == "length":
        data = data[: draw(st.integers(0, 48))] + bytes(draw(st.integers(0, 5)))
    raw = _idx(code, ndim, shape, data)
    if how == "bytes":
        at = draw(st.integers(0, 15))
        patch = draw(st.binary(min_size=1, max_size=8))
        raw = raw[:at] + patch + raw[at + len(patch):]
    return raw


def _peak(call) -> int:
    """tracemalloc's peak (bytes) while ``call`` runs."""
    tracemalloc.start()
    try:
        call()
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return peak


BUFFERS = 1 << 20  # I/O and decompression buffers: allowed whatever the file


@FUZZ
@given(raw=mutated_idx(), compressed=st.booleans())
def test_mutated_idx_files_are_read_or_refused_within_their_size(tmp_path_factory, raw, compressed):
    path = tmp_path_factory.mktemp("idx") / ("x.gz" if compressed else "x")
    path.write_bytes(gzip.compress(raw) if compressed else raw)
    answers = []

    def read():
        try:
            answers.append(read_idx(path))
        except IdxError as exc:
            answers.append(exc)

    peak = _peak(read)
    assert peak < BUFFERS + 4 * len(raw), peak
    if isinstance(answers[0], np.ndarray):
        assert answers[0].nbytes <= len(raw) and check_idx(path).shape == answers[0].shape
    else:
        assert "\n" not in str(answers[0]) and str(path) in str(answers[0])


@FUZZ
@given(raw=mutated_idx(), which=st.sampled_from(["train-images-idx3-ubyte", "t10k-labels-idx1-ubyte"]),
       compressed=st.booleans())
def test_mnist_folder_with_a_mutated_file_is_accepted_or_refused_in_one_line(tmp_path_factory, raw, which, compressed):
    folder = tmp_path_factory.mktemp("mnist")
    for name, shape in (("train-images-idx3-ubyte", [3, 4, 4]), ("train-labels-idx1-ubyte", [3]),
                        ("t10k-images-idx3-ubyte", [2, 4, 4]), ("t10k-labels-idx1-ubyte", [2])):
        data = raw if name == which else _idx(0x08, len(shape), shape, bytes(math.prod(shape)))
        (folder / (name + (".gz" if compressed else ""))).write_bytes(gzip.compress(data) if compressed else data)
    answers = []

    def check():
        try:
            answers.append(_mnist_dir(str(folder)))
        except UsageError as exc:
            answers.append(exc)

    assert _peak(check) < BUFFERS + 4 * len(raw)
    if isinstance(answers[0], UsageError):
        assert "\n" not in str(answers[0]) and str(answers[0]).startswith("--mnist: ")
    else:
        assert answers[0] == str(folder.resolve())


@pytest.mark.parametrize("compressed", [False, True])
def test_a_100_byte_file_claiming_2_31_items_fails_at_once(tmp_path, compressed):
    raw = _idx(0x08, 1, [2**31], bytes(92))
    assert len(raw) == 100
    path = tmp_path / ("x.gz" if compressed else "x")
    path.write_bytes(gzip.compress(raw) if compressed else raw)
    started = time.monotonic()
    errors = []

    def read():
        with pytest.raises(IdxError, match="92 data bytes, the header's shape \\(2147483648,\\) needs 2147483648"):
            read_idx(path)
        errors.append(True)

    assert _peak(read) < BUFFERS and errors
    assert time.monotonic() - started < 2


# ----------------------------------------------------------------------------- markup planted in every field

# What a hostile results file could try, appended to each of its strings in turn: raw HTML, markup inside the
# ``\text{}`` of a formula (latex2mathml copies that text into the page's MathML), the same inside math in
# running text, javascript: links in markdown and in TeX's \href, and CSS through TeX's \style.
PLANTS = {
    "html": ' <script>window.planted="html"</script><img src=x onerror="window.planted=\'img\'">'
            '<svg onload="window.planted=\'svg\'"></svg>',
    "formula-text": r' \text{<script>window.planted="text"</script><img src=x onerror="window.planted=1">}',
    "math-in-text": r' $\text{<script>window.planted="math"</script>}$ and $$\text{<img src=x onerror="x=1">}$$',
    "links": " [a link](javascript:window.planted='link') [b](JaVaScRiPt:alert(1)) [c](&#106;avascript:alert(1)) "
             "<javascript:alert(1)> ![i](javascript:alert(1))\n\n[ref]: javascript:alert(1)\n\n[ref]",
    "tex-links": r" \href{javascript:window.planted='href'}{x} $\href{javascript:alert(1)}{y}$"
                 r" $\style{background:url(javascript:alert(1))}{z}$",
}
# Tags and attributes of a page that shows text as text: what the report writes (markdown's blocks, the
# details sections, MathML) and nothing a results file could add.
PAGE_TAGS = {"html", "head", "meta", "title", "style", "script", "body", "h1", "h2", "h3", "h4", "h5", "h6", "p",
             "ul", "ol", "li", "table", "thead", "tbody", "tr", "th", "td", "strong", "em", "code", "pre", "a", "img",
             "blockquote", "details", "summary", "hr", "br", "span", "div"}
# MathML Core's presentation elements (and menclose, which browsers draw as an mrow).
MATHML_TAGS = {"math", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace", "msub", "msup", "msubsup", "munder",
               "mover", "munderover", "mmultiscripts", "mprescripts", "none", "mfrac", "msqrt", "mroot", "mstyle",
               "merror", "mpadded", "mphantom", "mtable", "mtr", "mtd", "semantics", "annotation", "menclose"}
URL_ATTRIBUTES = {"href", "src", "xlink:href", "action", "formaction", "data", "poster", "background"}


class _Markup(HTMLParser):
    """The elements, attributes, scripts and text of a page, as an HTML parser reads them."""

    def __init__(self, page: str):
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, list]] = []
        self.scripts: list[str] = []
        self.text: list[str] = []
        self._script = False
        self.feed(page)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, attrs))
        if tag == "script":
            self._script = True
            self.scripts.append("")

    def handle_startendtag(self, tag, attrs):
        self.elements.append((tag, attrs))

    def handle_endtag(self, tag):
        if tag == "script":
            self._script = False

    def handle_data(self, data):
        if self._script:
            self.scripts[-1] += data
        else:
            self.text.append(data)


def _scheme(url: str) -> str:
    """A URL's scheme as a browser reads it: tabs and newlines dropped, leading controls and spaces ignored."""
    url = re.sub(r"[\t\n\r]", "", url).lstrip("".join(map(chr, range(33))))
    match = re.match(r"([A-Za-z][A-Za-z0-9+.-]*):", url)
    return match.group(1).lower() if match else ""


def assert_no_planted_markup(page: str) -> _Markup:
    """No script but the page's own, no event handler, no script URL, no element a results file added."""
    from moecl_verify.reports.html import OPEN_TARGET

    markup = _Markup(page)
    own = OPEN_TARGET.removeprefix("<script>").removesuffix("</script>")
    assert markup.scripts in ([], [own]), markup.scripts
    for tag, attrs in markup.elements:
        assert tag in PAGE_TAGS | MATHML_TAGS, (tag, attrs)
        for name, value in attrs:
            assert not name.startswith("on"), (tag, name, value)
            if name in URL_ATTRIBUTES:
                scheme = _scheme(value or "")
                assert scheme in ("", "http", "https", "mailto") or (
                    tag == "img" and re.match(r"data:image/(png|gif|jpeg|webp)[;,]", value)), (tag, name, value)
            if name == "style":  # markdown's table alignment, nothing else
                assert re.fullmatch(r"text-align:(left|right|center)", value or ""), (tag, value)
    return markup


def _strings(node, where=()):
    """(path, string) for every string value of a JSON document, in document order."""
    if isinstance(node, str):
        yield where, node
    elif isinstance(node, dict):
        for key, value in node.items():
            yield from _strings(value, where + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _strings(value, where + (i,))


def _dicts(node, where=()):
    if isinstance(node, dict):
        yield where, node
        for key, value in node.items():
            yield from _dicts(value, where + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _dicts(value, where + (i,))


def _at(doc, where):
    for part in where[:-1]:
        doc = doc[part]
    return doc, where[-1]


def _plant(doc: dict, plant: str, scratch) -> tuple[dict, set]:
    """The document with ``plant`` appended to every string the reader accepts it in (one at a time, each kept
    where ``results_json.load`` still reads the file), and a field of that name added to every object that takes
    one; the paths planted."""
    doc = copy.deepcopy(doc)
    planted: set = set()

    def accepted() -> bool:
        scratch.write_text(json.dumps(doc), encoding="utf-8")
        try:
            results_json.load(scratch)
        except results_json.ResultsFileError:
            return False
        return True

    for where, value in list(_strings(doc)):
        parent, key = _at(doc, where)
        parent[key] = value + plant
        if accepted():
            planted.add(where)
        else:  # a closed field (a verdict, an id, an enum): the reader refuses markup there
            parent[key] = value
    for where, node in list(_dicts(doc)):
        name = "x" + plant
        node[name] = plant
        if accepted():
            planted.add(where + (name,))
        else:
            del node[name]
    return doc, planted


@pytest.mark.parametrize("plant", list(PLANTS), ids=list(PLANTS))
def test_markup_planted_in_every_field_reaches_report_html_as_text(files, tmp_path, monkeypatch, plant):
    from moecl_verify.reports import figures

    # The figures are not drawn: the page is what is checked here, and matplotlib reads a planted "$...$" in a
    # figure's title as mathtext and fails on it (and on the tiny run's scaling entry with a missing mean); the
    # page still links each figure by name.
    monkeypatch.setattr(figures, "write", lambda run, out: [])
    _, _, doc = files
    doc = copy.deepcopy(doc)
    for entry in doc["results"]:  # the report's horizon table needs these (the tiny run's criterion rows lack them)
        for row in entry["horizons"]:
            row.update({k: row.get(k) for k in ("z", "p_value", "min_detectable")})
    hostile, planted = _plant(doc, PLANTS[plant], tmp_path / "scratch.json")
    shown = {tuple(p[:1] + p[2:]) if len(p) > 1 and isinstance(p[1], int) else p for p in planted}
    # the text fields took the plant: formulas, statements, evidence, slips' texts, readings, the run's meta
    for field in [("results", "formula"), ("results", "evidence"), ("claims", "statement"), ("slips", "stated"),
                  ("slips", "holds"), ("slips", "evidence"), ("interpretations", "choice"), ("meta", "simulation"),
                  ("paper",)]:
        assert field in shown, (field, sorted(shown))
    source = tmp_path / "results.json"
    source.write_text(json.dumps(hostile), encoding="utf-8")
    code, _, err = _call("report", "--from", str(source), "--out", str(tmp_path / "out"), "--format", "html",
                         "--quiet")
    assert code == 0, err
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    markup = assert_no_planted_markup(page)
    # the plants are on the page, as text
    assert sum("window.planted" in t or "javascript:" in t.lower() for t in markup.text) >= 5
