"""The command line: ``moecl-verify`` (= ``python -m checks``).

Exit codes: 0 when the requested output was produced; 1 with ``--strict`` when
any claim is refuted; 2 for bad usage or invalid parameters, with a one-line
message naming the parameter and its allowed range (never a traceback).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

EXIT_OK, EXIT_REFUTED, EXIT_USAGE = 0, 1, 2
FORMATS = ("json", "md", "ipynb", "junit")
DEFAULT_FORMATS = ",".join(FORMATS)


class UsageError(Exception):
    """A user's mistake: reported as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse's own errors also exit 2, in one line
        raise UsageError(message)


def _nonneg_int(name: str):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise UsageError(f"{name} must be an integer >= 0, got {text!r}") from None
        if value < 0:
            raise UsageError(f"{name} must be an integer >= 0, got {value}")
        return value

    return parse


def _finite_float(name: str):
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise UsageError(f"{name} must be a number, got {text!r}") from None
        if not math.isfinite(value):
            raise UsageError(f"{name} must be finite, got {text!r}")
        return value

    return parse


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="moecl-verify", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    run = sub.add_parser("run", help="check claims and write the report")
    run.add_argument("--claims", default=None, help="comma-separated id patterns, e.g. 'prop4.*' (default: all)")
    run.add_argument("--budget", default="standard", choices=["smoke", "standard", "full"])
    run.add_argument("--seed", type=_nonneg_int("--seed"), default=0)
    run.add_argument("--out", default="report", help="output directory (created if missing)")
    run.add_argument(
        "--format",
        default=DEFAULT_FORMATS,
        help=f"comma-separated outputs among: {', '.join(FORMATS)} (default: all; figures come with md and ipynb)",
    )
    run.add_argument("--strict", action="store_true", help="exit 1 if any claim is refuted")
    run.add_argument("--quiet", action="store_true", help="no progress on stderr")

    report = sub.add_parser("report", help="re-render reports from a results.json without recomputing")
    report.add_argument("--from", dest="source", required=True, help="path of a results.json")
    report.add_argument("--out", default="report")
    report.add_argument(
        "--format",
        default=DEFAULT_FORMATS,
        help=f"comma-separated outputs among: {', '.join(FORMATS)} (default: all; figures come with md and ipynb)",
    )

    sub.add_parser("list", help="list the registered claims")

    show = sub.add_parser("show", help="print a claim's stated and derived forms")
    show.add_argument("claim_id")

    sim = sub.add_parser("simulate", help="run the simulator and print mean ± s.e. of F_t and G_t per round")
    sim.add_argument("--model", default="single", choices=["single"])
    sim.add_argument("--features", default="definition1", choices=["definition1", "gaussian"])
    sim.add_argument("--d", type=_nonneg_int("--d"), default=10)
    sim.add_argument("--s", type=_nonneg_int("--s"), default=6)
    sim.add_argument("--N", type=_nonneg_int("--N"), default=6)
    sim.add_argument("--T", type=_nonneg_int("--T"), default=20)
    sim.add_argument("--sigma0", type=_finite_float("--sigma0"), default=0.4)
    sim.add_argument("--sigma0-is", default="std", choices=["std", "variance"])
    sim.add_argument("--sigma-t", type=_finite_float("--sigma-t"), default=0.1)
    sim.add_argument("--replicates", type=_nonneg_int("--replicates"), default=1000)
    sim.add_argument("--seed", type=_nonneg_int("--seed"), default=0)
    sim.add_argument("--every", type=_nonneg_int("--every"), default=1, help="print every k-th round")
    sim.add_argument("--json", action="store_true", help="machine-readable output")
    return p


def _formats(text: str) -> list[str]:
    chosen = [f.strip() for f in text.split(",") if f.strip()]
    bad = [f for f in chosen if f not in FORMATS]
    if bad or not chosen:
        raise UsageError(f"--format must be a comma-separated subset of {', '.join(FORMATS)}, got {text!r}")
    return chosen


def _writable_dir(text: str) -> Path:
    out = Path(text)
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".moecl-write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise UsageError(f"--out must be a writable directory; {text!r}: {exc.strerror or exc}") from None
    return out


def _write_reports(run, out: Path, formats: list[str]) -> list[Path]:
    """Render the chosen outputs from ``run`` (results only; nothing is recomputed,
    except that an executed notebook reruns its claims in a kernel)."""
    from reports import junit, markdown, results_json

    written = []
    if "json" in formats:
        written.append(results_json.write(run, out / "results.json"))
    figure_files: dict = {}
    if "md" in formats or "ipynb" in formats:
        from reports import figures

        written.extend(figures.write(run, out))
        figure_files = figures.relative_paths(run)
    if "md" in formats:
        written.append(markdown.write(run, out / "report.md", figure_files))
    if "junit" in formats:
        written.append(junit.write(run, out / "results.junit.xml"))
    if "ipynb" in formats:
        from reports import notebook

        try:
            written.append(notebook.write(run, out / "report.ipynb", {k: out / v for k, v in figure_files.items()}))
        except notebook.NotebookExecutionError as exc:
            print(f"moecl-verify: warning: {exc}", file=sys.stderr)
            written.append(out / "report.ipynb")
    return written


def cmd_run(args) -> int:
    from checks import runner
    from checks.progress import Progress
    from checks.registry import UnknownClaimPattern

    formats = _formats(args.format)
    out = _writable_dir(args.out)
    patterns = [p.strip() for p in args.claims.split(",") if p.strip()] if args.claims else None
    progress = Progress(enabled=not args.quiet)
    started = time.monotonic()
    try:
        result = runner.run(patterns, budget=args.budget, seed=args.seed, progress=progress)
    except UnknownClaimPattern as exc:
        raise UsageError(str(exc)) from None
    finally:
        progress.close()
    elapsed = time.monotonic() - started
    written = _write_reports(result, out, formats)
    run_info = {
        "command": ["moecl-verify", *sys.argv[1:]],
        "finished_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "wall_seconds": round(elapsed, 3),
    }
    (out / "run-info.json").write_text(json.dumps(run_info, indent=2) + "\n", encoding="utf-8")
    counts = result.counts()
    summary = ", ".join(f"{n} {v}" for v, n in counts.items() if n)
    print(f"{len(result.results)} entries: {summary}; {len(result.slips)} slips. Wrote " + ", ".join(map(str, written)))
    if args.strict and counts["refuted"]:
        return EXIT_REFUTED
    return EXIT_OK


def cmd_report(args) -> int:
    from reports import results_json

    formats = _formats(args.format)
    source = Path(args.source)
    if not source.is_file():
        raise UsageError(f"--from must name an existing results.json, got {args.source!r}")
    try:
        result = results_json.load(source)
    except (ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"--from: {args.source!r} is not a readable results file ({exc})") from None
    out = _writable_dir(args.out)
    written = _write_reports(result, out, formats)
    print("Wrote " + ", ".join(map(str, written)))
    return EXIT_OK


def cmd_list(_args) -> int:
    from checks.registry import all_claims

    for claim in all_claims():
        print(f"{claim.id:<24} {claim.kind:<26} {claim.source}")
    return EXIT_OK


def cmd_show(args) -> int:
    from checks.registry import UnknownClaimPattern, get

    try:
        claim = get(args.claim_id)
    except UnknownClaimPattern as exc:
        raise UsageError(str(exc)) from None
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


def cmd_simulate(args) -> int:
    import numpy as np

    from numeric.pool import make_pool
    from numeric.seeding import generator_for
    from numeric.single_expert import simulate_single_expert

    if args.d < 2:
        raise UsageError(f"--d must be an integer >= 2, got {args.d}")
    if not 1 <= args.s < args.d:
        raise UsageError(f"--s must satisfy 1 <= s < d = {args.d} (overparameterized), got {args.s}")
    if args.N < 1:
        raise UsageError(f"--N must be an integer >= 1, got {args.N}")
    if args.T < 2:
        raise UsageError(f"--T must be an integer >= 2 (F_t needs t >= 2), got {args.T}")
    if args.sigma0 <= 0:
        raise UsageError(f"--sigma0 must be > 0, got {args.sigma0}")
    if args.sigma_t <= 0 and args.features == "definition1" and args.s > 1:
        raise UsageError(f"--sigma-t must be > 0 for definition1 features with s >= 2, got {args.sigma_t}")
    if args.replicates < 2:
        raise UsageError(f"--replicates must be an integer >= 2, got {args.replicates}")
    if args.every < 1:
        raise UsageError(f"--every must be an integer >= 1, got {args.every}")
    pool = make_pool(
        generator_for(args.seed, "simulate", "pool"), N=args.N, d=args.d, sigma0=args.sigma0, sigma0_is=args.sigma0_is
    )
    from checks.progress import Progress

    progress = Progress()
    run = simulate_single_expert(
        pool,
        R=args.replicates,
        T=args.T,
        s=args.s,
        features=args.features,
        sigma_t=args.sigma_t,
        seed=args.seed,
        key=("simulate", args.features),
        progress=lambda done, total: progress("simulate", done, total),
    )
    progress.close()
    rows = []
    sqrt_r = math.sqrt(run.R)
    for t in range(1, run.T + 1, args.every):
        at = run.at(t)
        row = {"t": t}
        for name in ("forgetting", "generalization"):
            x = at[name]
            if np.all(np.isnan(x)):
                row[name] = None
                row[name + "_stderr"] = None
            else:
                row[name] = float(x.mean())
                row[name + "_stderr"] = float(x.std(ddof=1) / sqrt_r)
        rows.append(row)
    header = {
        "model": args.model,
        "features": args.features,
        "d": args.d,
        "s": args.s,
        "N": args.N,
        "T": args.T,
        "r": 1 - args.s / args.d,
        "S": pool.S,
        "D": pool.D,
        "sigma0": args.sigma0,
        "sigma0_is": args.sigma0_is,
        "sigma_t": args.sigma_t,
        "replicates": args.replicates,
        "seed": args.seed,
    }
    if args.json:
        print(json.dumps({"config": header, "rounds": rows}, indent=2))
        return EXIT_OK
    print("# " + ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in header.items()))
    print(f"{'t':>6}  {'E[F_t] ± s.e.':>22}  {'E[G_t] ± s.e.':>22}")
    for row in rows:
        f = "—" if row["forgetting"] is None else f"{row['forgetting']:.5f} ± {row['forgetting_stderr']:.5f}"
        g = f"{row['generalization']:.5f} ± {row['generalization_stderr']:.5f}"
        print(f"{row['t']:>6}  {f:>22}  {g:>22}")
    return EXIT_OK


COMMANDS = {"run": cmd_run, "report": cmd_report, "list": cmd_list, "show": cmd_show, "simulate": cmd_simulate}


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return COMMANDS[args.command](args)
    except UsageError as exc:
        print(f"moecl-verify: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("moecl-verify: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # e.g. `moecl-verify simulate | head`; not an error of the tool.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
