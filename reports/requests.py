"""Requests to the authors, numbered: a section of report.md and a file of their own (requests.md) a referee can
paste into a review.  The pack assembles them (``Pack.requests``, :mod:`moecl_verify.checks.requests`); this module
numbers them, writes the corrected statements as display math, and links each to its evidence in the slip audit."""

from __future__ import annotations

from pathlib import Path

from moecl_verify.reports.document import pack_of
from moecl_verify.checks.requests import Request
from moecl_verify.reports.anchors import slip_anchor

FILE = "requests.md"
ANCHOR = "requests-to-the-authors"
TITLE = "Requests to the authors"
VERBS = {"restate": "Restate", "prove": "Prove", "report": "Report"}


def of(run) -> list[Request]:
    """The run's requests (none where the pack has no ``requests`` hook), only those whose evidence the run holds."""
    hook = pack_of(run).requests
    if hook is None:
        return []
    held = {s.id for s in run.slips}
    return [r for r in hook(run) if all(e in held for e in r.evidence)]


def items(run, details: str = "") -> list[str]:
    """The numbered list, each request's evidence linked into the slip audit (``details``: the file holding it,
    "" for the same document)."""
    out: list[str] = []
    for number, r in enumerate(of(run), 1):
        links = ", ".join(f"[`{e}`]({details}#{slip_anchor(e)})" for e in r.evidence)
        out.append(f"{number}. **{VERBS[r.action]}.** {r.text}")
        if r.latex:
            out += ["", f"   $$ {r.latex} $$", ""]
            out.append(f"   Evidence: {links}." + (f" Changes: {r.changes}." if r.changes else ""))
        else:
            out[-1] += f" Evidence: {links}." + (f" Changes: {r.changes}." if r.changes else "")
        out.append("")
    return out


def section(run) -> list[str]:
    """report.md's section (empty where there are no requests)."""
    listed = items(run)
    if not listed:
        return []
    return [f'<a id="{ANCHOR}"></a>', "", f"## {TITLE}", "",
            f"What a referee can ask the authors, each from a finding of this run, with its evidence (also in "
            f"[{FILE}]({FILE}), to paste into a review). A corrected statement is the form the tool derived and "
            "checked, written out by sympy.", "", *listed]


def write(run, path: Path, details: str) -> Path | None:
    """requests.md at ``path``, its evidence linked into ``details`` (report-details.md); None where there are no
    requests."""
    listed = items(run, details)
    if not listed:
        return None
    pack = pack_of(run)
    text = "\n".join([f"# {TITLE}: *{pack.title}*", "",
                      f"From a moecl-verify run (budget `{run.meta.get('budget')}`, seed {run.meta.get('seed')}); "
                      f"the evidence links open the slip audit in {details}.", "", *listed])
    path.write_text(text.rstrip("\n") + "\n", encoding="utf-8")
    return path


__all__ = ["ANCHOR", "FILE", "items", "of", "section", "write"]
