"""report.ipynb: the report as a notebook whose code cells rerun each claim.

Built from a RunResult (and the figure files already drawn from it): an
introduction; per claim, its statement and recorded verdicts, a code cell that
reruns the claim through :func:`moecl_verify.checks.api.check` with the recorded seed,
budget and per-entry false-fail thresholds (which reproduces the recorded
verdicts exactly), and the figure as a cell attachment; then the slip audit
and the interpretations.  Building never simulates; *executing* the notebook
(done by :func:`write` unless ``execute=False``) runs the code cells in a
fresh ``python3`` kernel through nbclient, with the output directory as the
working directory.

Determinism: cell ids are fixed, floats are written with ``repr`` (so the
thresholds round-trip exactly), and execution records no timing, so the same
results give identical source cells, and outputs as stable as the kernel's.
"""

from __future__ import annotations

import base64
import os
import tempfile
from collections import Counter
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from moecl_verify.checks.kinds.base import number, p_text
from moecl_verify.checks.model import VERDICTS, ClaimResult, RunResult
from moecl_verify.reports import consequence, markdown, math_text
from moecl_verify.reports.document import pack_of

KERNEL_NAME = "python3"
TIMEOUT = 600


class NotebookExecutionError(RuntimeError):
    """The notebook was written, but running its code cells failed."""


def entry_key(res: ClaimResult) -> str:
    from moecl_verify.checks.api import entry_key as key

    return key(res)


def _cell_id(*parts: str) -> str:
    text = "-".join(parts)
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in text)[:64]


def _md(cell_id: str, text: str, **kw):
    cell = new_markdown_cell(text, **kw)
    cell["id"] = _cell_id(cell_id)
    return cell


def _intro(run: RunResult) -> str:
    meta = run.meta
    noun = pack_of(run).noun
    counts = run.counts()
    versions = ", ".join(f"{k} {v}" for k, v in meta.get("versions", {}).items())
    lines = [
        "## The run",
        "",
        f"`moecl-verify` checks the claims of the {noun} symbolically (sympy: what the {noun} **states**, "
        "and what actually **follows** from its own model) and numerically (a batched Monte Carlo "
        f"simulation of the {noun}'s model), and decides a verdict for every claim in every form "
        "(`stated`, `corrected`, `derived`) and feature model, with an explicit false-fail rate.",
        "",
        f"This notebook was generated from the run's results: {len(meta.get('claims', []))} claims; "
        f"budget `{meta.get('budget')}` (each entry states its replicates); "
        f"seed {meta.get('seed')}; family-wise false-fail rate {meta.get('family_false_fail_rate')} "
        f"(Holm across all entries, Bonferroni across horizons within an entry); {versions}.",
        "",
        "| verdict | entries |",
        "|---|---|",
        *(f"| {v} | {counts[v]} |" for v in VERDICTS),
        "",
        f"The claims follow in the {noun}'s order, after the headline results and the slips ranked by consequence. "
        "Each claim's code cell reruns that claim through the public API (`moecl_verify.checks.api.check`) with the "
        "recorded seed, budget and per-entry false-fail thresholds, which reproduces the recorded verdicts "
        "exactly (an entry is refuted iff its p-value is at or below its threshold). Running it needs "
        "`moecl-verify` installed in the kernel's environment.",
    ]
    return "\n".join(lines)


def _claim_markdown(claim: dict, results: list[ClaimResult]) -> str:
    lines = [
        f"## `{claim['id']}`: {claim.get('summary', '')}",
        "",
        f"Source: {claim.get('source', '—')}. Kind: {claim.get('kind', '—')}.",
        "",
        "As stated:",
        "",
        math_text.display(claim.get("statement", "")),
        "",
    ]
    if claim.get("preconditions"):
        lines += ["Preconditions: " + "; ".join(claim["preconditions"]).rstrip(".") + ".", ""]
    lines += [
        "Recorded verdicts:",
        "",
        "| entry (form/features) | verdict | formula | Monte Carlo ± s.e. | p | false-fail rate |",
        "|---|---|---|---|---|---|",
    ]
    for res in results:
        lines.append(
            f"| {entry_key(res)} | **{res.verdict}** | {number(res.expected)} | "
            f"{number(res.observed)} ± {number(res.stderr, 2)} | {p_text(res.p_value)} | {number(res.false_fail_rate, 2)} |"
        )
    return "\n".join(lines)


def _claim_code(run: RunResult, claim_id: str, results: list[ClaimResult]) -> str:
    meta = run.meta
    lines = [
        "from moecl_verify.checks.api import check",
        "",
        "result = check(",
        f"    {claim_id!r},",
        f"    budget={meta.get('budget')!r},",
        f"    seed={meta.get('seed')!r},",
    ]
    if meta.get("pack"):
        lines.append(f"    pack={meta['pack']!r},")
    if meta.get("options"):
        lines.append(f"    options={dict(meta['options'])!r},")
    if results and all(r.false_fail_rate is not None for r in results):
        lines.append("    false_fail_rates={")
        lines += [f"        {entry_key(r)!r}: {r.false_fail_rate!r}," for r in results]
        lines.append("    },")
    elif meta.get("family_false_fail_rate") is not None:
        lines.append(f"    family_rate={meta['family_false_fail_rate']!r},")
    lines += [")", "print(result)", "recorded = {"]
    lines += [f"    {entry_key(r)!r}: {r.verdict!r}," for r in results]
    lines += ["}", 'print("verdicts as recorded in results.json:", result.verdicts() == recorded)']
    return "\n".join(lines)


def _figure_cell(claim_id: str, figure: Path, caption: str, index: int = 0):
    name = figure.name
    data = base64.b64encode(Path(figure).read_bytes()).decode("ascii")
    text = f"![{claim_id}: {caption}](attachment:{name})\n\n*Figure: {caption}.*"
    suffix = "" if index == 0 else f"-{index + 1}"
    return _md(f"{claim_id}-figure{suffix}", text, attachments={name: {"image/png": data}})


def _figure_items(value) -> list[tuple[Path, str]]:
    """A claim's figures as (file, caption): a list of pairs, or one bare path (older callers)."""
    if isinstance(value, (str, Path)):
        return [(Path(value), "the claim's figure, drawn from the recorded results")]
    return [(Path(path), caption) for path, caption in value]


def _slips_markdown(run: RunResult) -> str:
    lines = ["## Slip audit", ""]
    if not run.slips:
        return "\n".join(lines + ["No slip was established by this run."])
    by_class = Counter(s.slip_class for s in run.slips)
    lines += [
        f"Each item is a discrepancy between what the {pack_of(run).noun} states and what holds, with the evidence. "
        "By class: " + "; ".join(f"{k}: {n}" for k, n in sorted(by_class.items())) + ".",
        "",
    ]
    for s in (r.slip for r in consequence.ranked_slips(run)):
        lines += [
            f"### {s.id} ({s.slip_class})",
            "",
            f"- **Where**: {s.location}",
            f"- **Stated**: {s.stated}",
            f"- **Holds**: {s.holds}",
            f"- **Evidence**: {s.evidence}",
            "",
        ]
    return "\n".join(lines).rstrip("\n")


def _interpretations_markdown(run: RunResult) -> str:
    lines = ["## Interpretations", "", f"Readings chosen where the {pack_of(run).noun} is garbled, ambiguous or "
             "silent.", ""]
    for it in run.interpretations:
        lines += [
            f"### {it.id}",
            "",
            f"- **Where**: {it.location}",
            f"- **The question**: {it.issue}",
            f"- **Reading chosen**: {it.choice}",
        ]
        if it.option:
            lines.append(f"- **Option**: {it.option}")
        lines.append("")
    return "\n".join(lines).rstrip("\n")


def build(run: RunResult, figures: dict | None = None) -> nbformat.NotebookNode:
    """The unexecuted notebook.  ``figures`` maps claim ids to lists of (PNG file, caption) to attach."""
    figures = figures or {}
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": KERNEL_NAME, "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    counts = run.counts()
    pack = pack_of(run)
    title = (f"# moecl-verify report: *{pack.title}*\n\n"
             f"{len(run.results)} entries ("
             + ", ".join(f"{n} {v.replace('_', ' ')}" for v, n in counts.items() if n)
             + f"); {len(run.slips)} slips. Budget `{run.meta.get('budget')}`, seed {run.meta.get('seed')}.")
    cells = [_md("title", title), _md("headline", markdown.headline_markdown(run)), _md("intro", _intro(run))]
    claims = list(run.claims) or [{"id": cid} for cid in dict.fromkeys(r.id for r in run.results)]
    for claim in sorted(claims, key=lambda c: pack.key(c["id"])):
        cid = claim["id"]
        results = [r for r in run.results if r.id == cid]
        cells.append(_md(f"{cid}-statement", _claim_markdown(claim, results)))
        if results:
            code = new_code_cell(_claim_code(run, cid, results))
            code["id"] = _cell_id(f"{cid}-rerun")
            cells.append(code)
        for i, (path, caption) in enumerate(_figure_items(figures.get(cid, []))):
            cells.append(_figure_cell(cid, path, caption, i))
    cells.append(_md("slip-audit", _slips_markdown(run)))
    cells.append(_md("interpretations", _interpretations_markdown(run)))
    nb.cells = cells
    nbformat.validate(nb)
    return nb


KERNEL_CACHE_ENV = "MOECL_KERNEL_CACHE_DIR"


def _kernel_env(cache_dir: str | None = None) -> dict[str, str]:
    """The environment for the kernel: this process's, with the run's cache directory.

    The kernel imports the installed ``moecl_verify`` (an editable install maps it onto the
    source checkout), so it reruns the very code that wrote the report."""
    env = dict(os.environ)
    # The run's results cache, so the kernel reuses the chunks the run computed
    # (same bytes, so the same verdicts) instead of simulating them again.
    env.pop(KERNEL_CACHE_ENV, None)
    if cache_dir:
        env[KERNEL_CACHE_ENV] = str(Path(cache_dir).resolve())
    return env


def execute(nb: nbformat.NotebookNode, cwd: Path, timeout: int = TIMEOUT,
            cache_dir: str | None = None, on_cell=None) -> nbformat.NotebookNode:
    """Run every code cell in a fresh ``python3`` kernel (working directory ``cwd``).

    ``on_cell(done, total)``, if given, hears ``(0, total)`` before the kernel starts and
    ``(k, total)`` after the k-th code cell ran, so a long execution can show its progress."""
    from nbclient import NotebookClient

    hooks = {}
    if on_cell is not None:
        # nbclient runs (and so reports) only code cells with some source.
        total = sum(1 for cell in nb.cells if cell.cell_type == "code" and cell.source.strip())
        ran = iter(range(1, total + 1))
        hooks["on_cell_executed"] = lambda **_: on_cell(next(ran, total), total)
        on_cell(0, total)
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name=KERNEL_NAME,
        record_timing=False,
        resources={"metadata": {"path": str(cwd)}},
        **hooks,
    )
    # The kernel's own stderr (e.g. its transport warning) goes to a log, not
    # to the user's terminal; its tail is quoted if running the cells fails.
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as log:
        try:
            client.execute(env=_kernel_env(cache_dir), stderr=log)
        except Exception as exc:  # noqa: BLE001 - a kernel can fail in many ways
            log.seek(0)
            tail = [line.strip() for line in log.read().splitlines() if line.strip()][-3:]
            lines = [line for line in str(exc).strip().splitlines() if line.strip()]
            message = f"{type(exc).__name__}: {lines[-1] if lines else ''}"
            if tail:
                message += " (kernel stderr: " + " | ".join(tail) + ")"
            raise NotebookExecutionError(message) from exc
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = coalesce_streams(cell.outputs)
    return nb


def coalesce_streams(outputs: list) -> list:
    """Adjacent outputs of one stream (stdout, stderr) merged into one.

    A kernel flushes a cell's printing in as many messages as its timing happens to give, so without this
    the same notebook executed twice could differ in how its text is cut, under load.
    """
    merged: list = []
    for out in outputs:
        if (out.get("output_type") == "stream" and merged and merged[-1].get("output_type") == "stream"
                and merged[-1].get("name") == out.get("name")):
            merged[-1]["text"] += out["text"]
        else:
            merged.append(out)
    return merged


def write(
    run: RunResult,
    path: Path,
    figures: dict | None = None,
    execute_cells: bool = True,
    timeout: int = TIMEOUT,
    cache_dir: str | None = None,
    on_cell=None,
) -> Path:
    """Write ``path`` (executed unless ``execute_cells`` is false).

    If execution fails, the unexecuted notebook is written and
    :class:`NotebookExecutionError` is raised.  ``on_cell(done, total)`` follows the execution
    (see :func:`execute`).
    """
    path = Path(path)
    nb = build(run, figures)
    if execute_cells:
        try:
            execute(nb, path.parent.resolve(), timeout, cache_dir, on_cell)
        except NotebookExecutionError as exc:
            nbformat.write(build(run, figures), str(path))
            raise NotebookExecutionError(f"{path} written unexecuted; running its cells failed: {exc}") from exc
    nbformat.write(nb, str(path))
    return path


def source_cells(path: Path) -> list[tuple[str, str, str]]:
    """(id, type, source) of every cell: what must be identical for the same results."""
    nb = nbformat.read(str(path), as_version=4)
    return [(c.get("id", ""), c.cell_type, c.source) for c in nb.cells]
