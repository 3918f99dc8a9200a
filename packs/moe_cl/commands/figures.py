"""``moecl-verify figures``: the paper's synthetic experiments (Figures 2, 4 and 5) as PNGs, with the
results.json of the claims that drew them."""

from __future__ import annotations

import contextlib
import os

from moecl_verify import execution
from moecl_verify.errors import UsageError
from moecl_verify.packs.moe_cl import texts
from moecl_verify.parsing import nonneg_int

CLAIMS = ["fig2.*", "fig4.*", "fig5.*"]


def add_arguments(figs) -> None:
    figs.add_argument("--out", default="figures", help="output directory (created if missing)")
    figs.add_argument("--budget", default="standard", choices=["smoke", "standard", "full"],
                      help="Monte Carlo budget")
    figs.add_argument("--seed", type=nonneg_int("--seed"), default=0, help="seed of the replicate draws")
    figs.add_argument("--quiet", action="store_true", help="no progress on stderr")
    figs.add_argument("--force", action="store_true",
                      help="write into a non-empty --out folder the tool did not write (as for run)")
    execution.add_arguments(figs)


def run(args) -> int:
    from moecl_verify.checks import runner
    from moecl_verify.packs.moe_cl.figures import artifact_figures
    from moecl_verify.progress import RunDisplay
    from moecl_verify.reports import results_json

    from moecl_verify import outputs

    folder = outputs.OutputFolder(args.out, force=args.force)
    with RunDisplay(quiet=args.quiet) as display, contextlib.ExitStack() as held:
        with execution.chunk_runner(args) as chunks:
            held.enter_context(folder)  # the output folder is the tool's, held to the commit (app/outputs.py)
            result = runner.run(CLAIMS, budget=args.budget, seed=args.seed, progress=display.work,
                                on_claim=display.claim, chunk_runner=chunks, reuse_claims=not args.recompute_claims,
                                lanes=execution.lanes(args), pack=texts.NAME)
        display.step("drawing figures")
        written = artifact_figures.write(result, folder.staging)
        try:
            written.append(results_json.write(result, folder.staging / "results.json"))
        except results_json.ResultsNotWritten as exc:
            raise UsageError(str(exc)) from None
        folder.commit(outputs.results_digest(results_json.dumps(result)), "figures")
    out = folder.path
    print(f"{len(written) - 1} figures ({', '.join(p.name for p in written[:-1])}) and results.json in {out}{os.sep}")
    return 0
