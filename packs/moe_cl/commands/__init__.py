"""The paper's own subcommands: ``simulate`` (the single expert and Algorithm 1, directly) and ``figures``
(the paper's synthetic experiments, Figures 2, 4 and 5, as PNGs)."""

from __future__ import annotations

from moecl_verify.checks.pack import Command


def _simulate_arguments(parser) -> None:
    from moecl_verify.packs.moe_cl.commands import simulate

    simulate.add_arguments(parser)


def _simulate(args, invocation) -> int:
    from moecl_verify.packs.moe_cl.commands import simulate

    return simulate.run(args, invocation)


def _figures_arguments(parser) -> None:
    from moecl_verify.packs.moe_cl.commands import figures

    figures.add_arguments(parser)


def _figures(args, invocation) -> int:
    from moecl_verify.packs.moe_cl.commands import figures

    return figures.run(args)


COMMANDS = (
    Command("simulate", "run a simulator and print mean ± s.e. of F_t and G_t per round", _simulate_arguments,
            _simulate),
    Command("figures", "reproduce the paper's synthetic experiments (Figures 2, 4, 5) as PNGs", _figures_arguments,
            _figures),
)
