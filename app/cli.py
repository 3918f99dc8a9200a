"""The command line: ``moecl-verify`` (= ``python -m moecl_verify``).

Exit codes: 0 when the requested output was produced; 1 with ``--strict`` when
any claim is refuted, and from ``diff`` when a verdict or number moved; 2 for bad usage or invalid parameters, with a one-line
message naming the parameter and its allowed range (never a traceback); 130 when interrupted (Ctrl-C), 143 when
terminated (SIGTERM), either way resumable from the results cache.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from moecl_verify import execution
from moecl_verify.errors import UsageError
from moecl_verify.parsing import nonneg_float, nonneg_int

EXIT_OK, EXIT_REFUTED, EXIT_USAGE, EXIT_INTERRUPTED, EXIT_TERMINATED = 0, 1, 2, 130, 143


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the program is, so that it unwinds as after Ctrl-C: locks released, lanes
    stopped, staged outputs removed, finished cache entries kept for the rerun that resumes."""


def _on_sigterm(signum, frame):
    raise Terminated
FORMATS = ("json", "md", "html", "ipynb", "junit", "headline")
DEFAULT_RESULTS = "report/results.json"  # where `run` writes with its default --out
DEFAULT_FORMATS = ",".join(FORMATS)
FORCE_HELP = ("write into a non-empty --out folder that the tool did not write (or that holds files it did not "
              "write): files of the names the tool writes are replaced, nothing else is touched")


class _DefaultsFormatter(argparse.HelpFormatter):
    """Help that states each option's default, unless the help already says it or there is none."""

    def _get_help_string(self, action):
        text = action.help or ""
        if "default" in text or action.default in (None, False, argparse.SUPPRESS) or not action.option_strings:
            return text
        return f"{text} (default: %(default)s)"


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _DefaultsFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # argparse's own errors also exit 2, in one line
        raise UsageError(message)


def version() -> str:
    from importlib.metadata import PackageNotFoundError, version as installed

    try:
        return installed("moecl-verify")
    except PackageNotFoundError:  # pragma: no cover - only when imported without being installed
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="moecl-verify", description=__doc__.splitlines()[0])
    p.add_argument("--version", action="version", version=f"moecl-verify {version()}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    run = sub.add_parser("run", help="check claims and write the report")
    run.add_argument("--claims", default=None, help="comma-separated shell-style id patterns, e.g. 'name.*' (default: all; moecl-verify list)")
    run.add_argument("--budget", default="standard", choices=["smoke", "standard", "full"],
                     help="Monte Carlo budget (smoke is quick and may end inconclusive)")
    run.add_argument("--seed", type=nonneg_int("--seed"), default=0,
                     help="seed of the replicate draws (task pools of pooled claims have their own)")
    run.add_argument("--out", default="report",
                     help="output folder: created if missing; one the tool wrote before is updated, any other "
                          "non-empty folder refused (see --force)")
    run.add_argument("--force", action="store_true", help=FORCE_HELP)
    run.add_argument(
        "--format",
        default=DEFAULT_FORMATS,
        help=f"comma-separated outputs among: {', '.join(FORMATS)} (default: all; figures come with md, html and ipynb; headline = headline.csv and headline.tex)",
    )
    run.add_argument("--strict", action="store_true", help="exit 1 if any claim is refuted")
    run.add_argument("--quiet", action="store_true",
                     help="no progress on stderr (warnings and the one-time 'created results cache' notice remain)")
    _add_pack_argument(run)
    execution.add_arguments(run)

    report = sub.add_parser("report", help="re-render reports from a results.json without recomputing")
    report.add_argument("--from", dest="source", required=True, help="path of a results.json")
    report.add_argument("--out", default="report",
                        help="output folder (created if missing; as for run)")
    report.add_argument("--force", action="store_true", help=FORCE_HELP)
    report.add_argument(
        "--format",
        default=DEFAULT_FORMATS,
        help=f"comma-separated outputs among: {', '.join(FORMATS)} (default: all; figures come with md, html and ipynb; headline = headline.csv and headline.tex)",
    )
    report.add_argument("--quiet", action="store_true", help="no progress on stderr")
    _add_pack_argument(report, "the pack the results file names; with it, a file of another pack is refused")

    listing = sub.add_parser("list", help="list the registered claims (with their last verdicts, if a run is at hand)")
    listing.add_argument("--from", dest="source", default=None,
                         help=f"a results.json, or the folder holding it, whose verdicts to show "
                              f"(default: {DEFAULT_RESULTS} if it exists)")
    _add_pack_argument(listing)

    show = sub.add_parser("show", help="print a claim's stated and derived forms")
    show.add_argument("claim_id")
    _add_pack_argument(show)

    sub.add_parser("packs", help="list the installed packs (the documents moecl-verify can check)")

    diff = sub.add_parser("diff", help="compare two runs' results.json (exit 1 if an entry moved between confirmed "
                                               "and refuted)")
    diff.add_argument("old", help="results.json (or report folder) of the earlier run")
    diff.add_argument("new", help="results.json (or report folder) of the later run")
    diff.add_argument("--only", choices=["refuted", "confirmed", "inconclusive", "not_checkable"], default=None,
                      help="list only entries whose old or new verdict is this one (default: all)")
    diff.add_argument("--strict", action="store_true",
                      help="exit 1 if any verdict or number moved or an entry appeared or vanished (default: exit 1 "
                           "only if an entry moved between confirmed and refuted)")
    diff.add_argument("--rel", type=nonneg_float("--rel"), default=0.0,
                      help="relative tolerance for numbers (default 0: exactly equal, as a rerun must be)")
    diff.add_argument("--text", action="store_true", help="also print changed wording (evidence, slips)")
    _add_pack_argument(diff, "the pack both results files must name")

    cache = sub.add_parser("cache", help="inspect or empty the results cache")
    cache.add_argument("action", choices=["info", "clear"])
    cache.add_argument("--cache-dir", default=None, help="cache directory (default $MOECL_CACHE_DIR or .moecl-cache)")
    _add_pack_parts(run, sub)
    return p


def _packs_in_order() -> list:
    """The installed packs, the default first (its commands and options keep their own names)."""
    from moecl_verify.checks import pack as packs

    installed = _installed_packs()
    try:
        first = packs.default().name
    except packs.PackError:
        first = None
    return sorted(installed.values(), key=lambda pack: (pack.name != first, pack.name))


def _option_dest(pack, option) -> str:
    return "pack_option_" + "".join(c if c.isalnum() else "_" for c in f"{pack.name}_{option.name}")


def _add_pack_parts(run, sub) -> None:
    """Each installed pack's run options and commands, after the tool's own, so no pack can take a name the
    tool uses; a name already taken (by the tool or an earlier pack) is prefixed with the pack's name."""
    ordered = _packs_in_order()
    several = len(ordered) > 1
    for pack in ordered:
        for option in pack.options:
            flag = option.flag
            if flag in run._option_string_actions:
                flag = f"--{pack.name}-{option.flag.lstrip('-')}"
            action = run.add_argument(flag, dest=_option_dest(pack, option), default=None, metavar=option.metavar,
                                      help=option.help + (f" (pack {pack.name})" if several else ""))
            _PACK_FLAGS[action.dest] = flag
        for command in pack.commands:
            name = command.name if command.name not in sub.choices else f"{pack.name}-{command.name}"
            parser = sub.add_parser(name, help=command.help + (f" (pack {pack.name})" if several else ""))
            command.add_arguments(parser)
            parser.set_defaults(pack_command=command)


# The flag each pack option was given on this command line (its own, or prefixed when taken).
_PACK_FLAGS: dict[str, str] = {}


def _installed_packs() -> dict:
    from moecl_verify.checks import pack as packs

    try:
        return packs.installed()
    except packs.PackError as exc:
        raise UsageError(str(exc)) from None


def _add_pack_argument(parser, help_text: str = "the document whose claims to use (moecl-verify packs)") -> None:
    parser.add_argument("--pack", default=None, metavar="NAME", help=f"{help_text} (default: the default pack)")


def _pack(name: str | None):
    """The pack ``--pack`` names (None: the default), or a one-line error."""
    from moecl_verify.checks import pack as packs

    try:
        return packs.get(name)
    except packs.PackError as exc:
        raise UsageError(f"--pack: {exc}") from None


def _pack_options(args, pack) -> dict:
    """The values of ``pack``'s run options given on the command line, each checked before any claim runs;
    an option of another pack is refused."""
    values = {}
    for other in _installed_packs().values():
        for option in other.options:
            dest = _option_dest(other, option)
            given = getattr(args, dest, None)
            if given is None:
                continue
            flag = _PACK_FLAGS.get(dest, option.flag)
            if other.name != pack.name:
                raise UsageError(f"{flag} belongs to pack {other.name}, not {pack.name}")
            try:
                values[option.name] = option.check(given) if option.check is not None else given
            except ValueError as exc:  # a pack's check says what is wrong in its own words
                raise UsageError(f"{flag}: {exc}") from None
    return values


def _formats(text: str) -> list[str]:
    chosen = [f.strip() for f in text.split(",") if f.strip()]
    bad = [f for f in chosen if f not in FORMATS]
    if bad or not chosen:
        raise UsageError(f"--format must be a comma-separated subset of {', '.join(FORMATS)}, got {text!r}")
    return chosen


def _write_reports(run, out: Path, formats: list[str], cache_dir: str | None = None,
                   shown_as: Path | None = None) -> list[Path]:
    """Render the chosen outputs from ``run`` (results only; nothing is recomputed,
    except that an executed notebook reruns its claims in a kernel)."""
    from moecl_verify.reports import junit, markdown, results_json

    written = []
    if "json" in formats:
        try:
            written.append(results_json.write(run, out / "results.json"))
        except results_json.ResultsNotWritten as exc:  # first, so that no other output of the run is written
            # Named where it would have gone, not by the staging folder it was written in.
            raise UsageError(str(exc).replace(str(out), str(shown_as or out))) from None
    figure_files: dict = {}
    if {"md", "html", "ipynb"} & set(formats):
        from moecl_verify.reports import figures

        written.extend(figures.write(run, out))
        figure_files = figures.figure_index(run)
    if "md" in formats:
        written.extend(markdown.write(run, out / "report.md", figure_files))
    if "html" in formats:
        from moecl_verify.reports import html

        written.append(html.write_page(markdown.render_parts(run, figure_files), out, out / "report.html"))
    if "headline" in formats:
        from moecl_verify.reports import headline

        for name, text in (("headline.csv", headline.to_csv(run)), ("headline.tex", headline.to_latex(run))):
            (out / name).write_text(text, encoding="utf-8")
            written.append(out / name)
    if "junit" in formats:
        written.append(junit.write(run, out / "results.junit.xml"))
    if "ipynb" in formats:
        from moecl_verify.progress import notebook_progress
        from moecl_verify.reports import notebook

        try:
            attached = {cid: [(out / name, caption) for name, caption in items] for cid, items in figure_files.items()}
            written.append(notebook.write(run, out / "report.ipynb", attached,
                                          cache_dir=cache_dir, on_cell=notebook_progress))
        except notebook.NotebookExecutionError as exc:
            print(f"moecl-verify: warning: {exc}", file=sys.stderr)
            written.append(out / "report.ipynb")
    return written


def _closing_lines(run, out: Path, present: set[str] | None = None) -> list[str]:
    """What ``run`` and ``report`` print last: the counts, then where to start reading (only files of this
    run's set: ``present``, the names the folder's manifest now lists) and the folder holding everything else."""
    summary = ", ".join(f"{n} {v}" for v, n in run.counts().items() if n)
    lines = [f"{len(run.results)} entries: {summary}; {len(run.slips)} slips"]
    for label, name in (("report", "report.md"), ("html", "report.html")):
        if (out / name).is_file() and (present is None or name in present):
            lines.append(f"{label}: {out / name}")
    lines.append(f"all outputs in {out}{os.sep}")
    return lines


def _commit(folder, run, command: str):
    """Swap the staged outputs into ``--out`` and say on stderr what of an earlier run was removed."""
    from moecl_verify import outputs
    from moecl_verify.reports import results_json

    done = folder.commit(outputs.results_digest(results_json.dumps(run)), command)
    if done.removed:
        print(f"moecl-verify: removed {len(done.removed)} file{'s' if len(done.removed) != 1 else ''} of an earlier "
              f"run from {folder.path} (rendered from other results): {outputs.shown(list(done.removed))}",
              file=sys.stderr)
    return done


def _claim_patterns(text: str | None) -> list[str] | None:
    """``--claims``: None for every claim; an empty list or one of only commas is a mistake, not 'all'."""
    if text is None:
        return None
    patterns = [p.strip() for p in text.split(",") if p.strip()]
    if not patterns:
        raise UsageError(f"--claims must name at least one claim id or pattern (moecl-verify list), got {text!r}")
    return patterns


def cmd_run(args) -> int:
    from moecl_verify.checks import runner
    from moecl_verify.checks.registry import UnknownClaimPattern, all_claims, select
    from moecl_verify.progress import RunDisplay

    formats = _formats(args.format)
    # The pack, the claim patterns and the pack's options are refused before any folder is created.
    pack = _pack(args.pack)
    patterns = _claim_patterns(args.claims)
    try:
        selected = select(patterns, pack)
    except UnknownClaimPattern as exc:
        raise UsageError(f"--claims: {exc}") from None
    options = _pack_options(args, pack)
    from moecl_verify import memory, outputs

    folder = outputs.OutputFolder(args.out, force=args.force)
    every = patterns is None or len(selected) == len(all_claims(pack))
    short = memory.warning(args.budget, execution.lanes(args), memory.available_gb(), pack.peak_memory_gb,
                           claims=None if every else len(selected))
    if short:
        print(f"moecl-verify: warning: {short}", file=sys.stderr)
    started = time.monotonic()
    with RunDisplay(quiet=args.quiet) as display, contextlib.ExitStack() as held:
        # The cache lock and worker pool are released before the reports are
        # written, so the notebook's kernel can read the same cache; the output folder is held from before the
        # first claim to the commit, so a second run on it stops at once.
        timings: dict = {}
        records: dict = {}
        group_memory: list = []
        with execution.chunk_runner(args) as chunks:
            held.enter_context(folder)
            result = runner.run(patterns, budget=args.budget, seed=args.seed, progress=display.work,
                                chunk_runner=chunks, timings=timings, reuse_claims=not args.recompute_claims,
                                claim_records=records, on_claim=display.claim, options=options,
                                lanes=execution.lanes(args), group_memory=group_memory, pack=pack)
        elapsed = time.monotonic() - started
        cache_dir = None if args.no_cache else (args.cache_dir or execution.default_cache_dir())
        display.step("writing reports")
        _write_reports(result, folder.staging, formats, cache_dir, shown_as=folder.path)
        out = folder.path
        _write_run_info(folder.staging, args, elapsed, chunks, records, timings, group_memory, result)
        done = _commit(folder, result, "run")
    print("\n".join(_closing_lines(result, out, done.names())))
    if args.strict and result.counts()["refuted"]:
        return EXIT_REFUTED
    return EXIT_OK


def _devices(result) -> list[str]:
    """The devices the run's entries say they were computed on (an entry's config ``device``; entries computed
    by numpy and sympy name none)."""
    return sorted({str(r.config["device"]) for r in result.results
                   if isinstance(r.config, dict) and r.config.get("device")})


def _write_run_info(staging: Path, args, elapsed, chunks, records, timings, group_memory, result) -> None:
    run_info = {
        "command": ["moecl-verify", *sys.argv[1:]],
        "finished_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "wall_seconds": round(elapsed, 3),
        "executor": chunks.executor.name,
        "workers": chunks.executor.workers,
        "claim_lanes": execution.lanes(args),
        "cache": execution.cache_summary(chunks),
        "claim_records": records or {"enabled": False},
        "claim_seconds": timings,
        # Where an accelerator computed some entries (deep networks on JAX's default device), which one.
        "devices": _devices(result),
        # Each lane's group of claims and its peak resident memory, largest first (empty with one lane).
        "lane_memory": sorted(({"claims": g["claims"], "peak_rss_mb": round(g["peak_rss_bytes"] / 1e6)}
                               for g in group_memory), key=lambda g: (-g["peak_rss_mb"], g["claims"])),
    }
    (staging / "run-info.json").write_text(json.dumps(run_info, indent=2) + "\n", encoding="utf-8")


def cmd_report(args) -> int:
    from moecl_verify.progress import RunDisplay
    from moecl_verify.reports import results_json

    from moecl_verify import outputs

    formats = _formats(args.format)
    source = Path(args.source)
    source = source / "results.json" if source.is_dir() else source
    folder = outputs.OutputFolder(args.out, force=args.force, keep=source)
    try:
        result = results_json.load(args.source)
    except results_json.ResultsFileError as exc:
        raise UsageError(f"--from: {exc}") from None
    _check_pack_of(result, args.pack, "--from")
    with RunDisplay(quiet=args.quiet, claims=False) as display, folder:
        display.step("writing reports")
        _write_reports(result, folder.staging, formats, shown_as=folder.path)
        done = _commit(folder, result, "report")
    print("\n".join(_closing_lines(result, folder.path, done.names())))
    return EXIT_OK


def _check_pack_of(result, name: str | None, where: str) -> None:
    """Refuse a results file of another pack than ``--pack`` names (a file without one is the default
    pack's)."""
    if name is None:
        return
    wanted = _pack(name).name
    meta = result.meta if hasattr(result, "meta") else result.get("meta", {})  # a RunResult or diff's document
    found = meta.get("pack") or _pack(None).name
    if found != wanted:
        raise UsageError(f"{where}: the results file is of pack {found}, not {wanted}")


def cmd_packs(args) -> int:
    from moecl_verify.checks import pack as packs_module

    packs, broken = _installed_packs(), packs_module.broken()
    width = max((len(name) for name in [*packs, *broken]), default=0)
    for name, pack in packs.items():
        mark = " (default)" if pack.default else ""
        print(f"{name:<{width}}  {pack.title}{mark}")
    for name, problem in broken.items():
        print(f"{name:<{width}}  does not load: {problem}")
    return EXIT_OK


def _last_verdicts(source: str | None, pack) -> tuple[Path, dict[str, str]] | None:
    """(file, claim id -> "3 refuted, 1 confirmed") from ``list --from`` (a results.json or its
    folder), else from the default report's results.json if there is one; None when there is none, or
    when the default file is of another pack than the one listed."""
    from collections import Counter

    from moecl_verify.checks.model import VERDICTS
    from moecl_verify.reports import results_json

    path = Path(source if source is not None else DEFAULT_RESULTS)
    try:
        if path.is_dir():
            path = path / "results.json"
        present = path.exists()
    except OSError:
        present = True  # there, but not to be looked at: the loader says why, in one line
    if not present:
        if source is None:
            return None
        raise UsageError(f"--from must name a results.json or a folder holding one, got {source!r}")
    try:
        run = results_json.load(path)
    except results_json.ResultsFileError as exc:
        if source is None:  # a stale or foreign default file does not stop the listing
            print(f"moecl-verify: warning: {exc}; verdicts left out", file=sys.stderr)
            return None
        raise UsageError(f"--from: {exc}") from None
    found = run.meta.get("pack") or _pack(None).name
    if found != pack.name:
        if source is None:  # the last run was of another document: nothing to show beside these claims
            return None
        raise UsageError(f"--from: the results file is of pack {found}, not {pack.name}")
    per_claim: dict[str, Counter] = {}
    for res in run.results:
        per_claim.setdefault(res.id, Counter())[res.verdict] += 1
    order = {v: i for i, v in enumerate(VERDICTS)}
    return path, {claim_id: ", ".join(f"{n} {v}" for v, n in sorted(c.items(), key=lambda vn: (-vn[1], order[vn[0]])))
                  for claim_id, c in per_claim.items()}


def cmd_list(args) -> int:
    from moecl_verify.checks.registry import all_claims

    from moecl_verify.checks.pack import natural_key

    claims = sorted(all_claims(_pack(args.pack)), key=lambda c: natural_key(c.id))
    if not claims:
        print(f"pack {_pack(args.pack).name} registers no claim", file=sys.stderr)
        return EXIT_OK
    last = _last_verdicts(getattr(args, "source", None), _pack(args.pack))
    id_width, kind_width = max(len(c.id) for c in claims), max(len(c.kind) for c in claims)
    if last is None:
        for claim in claims:
            print(f"{claim.id:<{id_width}}  {claim.kind:<{kind_width}}  {claim.source}")
        return EXIT_OK
    path, verdicts = last
    print(f"last verdicts from {path}", file=sys.stderr)
    shown = {c.id: verdicts.get(c.id, "—") for c in claims}  # — : the claim was not in that run
    verdict_width = max(len(v) for v in shown.values())
    for claim in claims:
        print(f"{claim.id:<{id_width}}  {claim.kind:<{kind_width}}  {shown[claim.id]:<{verdict_width}}  {claim.source}")
    return EXIT_OK


def cmd_show(args) -> int:
    from moecl_verify.checks.registry import UnknownClaimPattern, get

    try:
        claim = get(args.claim_id, _pack(args.pack))
    except UnknownClaimPattern as exc:
        raise UsageError(f"show: {exc}") from None
    print(f"{claim.id}: {claim.summary}")
    print(f"source: {claim.source}")
    print(f"kind: {claim.kind}")
    print("preconditions: " + "; ".join(claim.preconditions))
    print(f"statement (LaTeX): {claim.statement}")
    for form in claim.forms() if claim.forms else []:
        print()
        print(f"[{form.form}] {form.name}  ({form.source})")
        if form.reading:
            print(f"reading: {form.reading}")
        print(f"LaTeX: {form.latex}")
        print(form.pretty)
    return EXIT_OK


def cmd_cache(args) -> int:
    from moecl_verify.numeric import cache

    directory = args.cache_dir or execution.default_cache_dir()
    if args.action == "info":
        print(execution.describe_cache(directory))
        return EXIT_OK
    try:
        removed = cache.clear(directory)
    except (cache.CacheLocked, cache.CacheUnavailable, cache.NotACache) as exc:
        raise UsageError(f"--cache-dir: {exc}") from None
    print(f"removed {removed} files from {directory}")
    return EXIT_OK


def cmd_diff(args) -> int:
    from moecl_verify.reports import diff, results_json

    try:
        old, new = diff.load(args.old), diff.load(args.new)
    except results_json.ResultsFileError as exc:
        raise UsageError(f"diff: {exc}") from None
    _check_pack_of(old, args.pack, "diff")
    _check_pack_of(new, args.pack, "diff")
    named = [doc.get("meta", {}).get("pack") for doc in (old, new)]
    if named[0] != named[1]:
        # A file without a pack is the default pack's (written before packs existed).
        old_pack, new_pack = (name or _pack(None).name for name in named)
        if old_pack != new_pack:
            raise UsageError(f"diff: the files are of different packs ({old_pack}, {new_pack})")
    result = diff.compare(old, new, rel=args.rel)
    sys.stdout.write(diff.render(result, show_text=args.text, only=args.only))
    moved = not result.same_findings if args.strict else bool(result.flips)
    return EXIT_REFUTED if moved else EXIT_OK


COMMANDS = {
    "run": cmd_run,
    "report": cmd_report,
    "list": cmd_list,
    "show": cmd_show,
    "packs": cmd_packs,
    "cache": cmd_cache,
    "diff": cmd_diff,
}


def main(argv: list[str] | None = None) -> int:
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _on_sigterm)
    from moecl_verify import console

    console.configure_streams()
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if args.command != "packs":
            from moecl_verify.checks import pack as packs

            for problem in packs.broken().values():  # the others still work; this one is said, once
                print(f"moecl-verify: warning: {problem}; its claims and commands are unavailable", file=sys.stderr)
        command = getattr(args, "pack_command", None)
        if command is not None:
            from moecl_verify.checks.pack import Invocation

            words = list(sys.argv[1:] if argv is None else argv)
            own = parser._subparsers._group_actions[0].choices[args.command]
            return command.run(args, Invocation(own, tuple(words[words.index(args.command) + 1:])))
        return COMMANDS[args.command](args)
    except UsageError as exc:
        print(f"moecl-verify: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Terminated:
        print("moecl-verify: terminated", file=sys.stderr)
        return EXIT_TERMINATED
    except KeyboardInterrupt:
        print("moecl-verify: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # e.g. `moecl-verify simulate | head`; not an error of the tool.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
