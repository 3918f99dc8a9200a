"""The figure of the reviewer's claim C2 (continued gate training under the balancing loss destroys the
specialization), drawn from the curves ``open.balance_outside_gradient`` stores.

C2's entries are measured on the runs of ``open.balance_outside_gradient`` (the same simulations,
:mod:`packs.moe_cl.claims.router.c2`), and that claim's artifact (``open_balance_outside_gradient``,
:func:`packs.moe_cl.experiments.open_questions.curves_panels`) already holds, on task pool 0, the routing purity and
the errors of every balancing rule with and without termination against the round in both regimes.  This module
selects from it the paper's gate (auxiliary balancing loss in the gate's gradient) with and without termination:
one panel per regime and quantity (routing purity, G_t, F_t: six panels), the two variants' means with their 99%
bands, the chance level of the routing dashed on the purity panels, the end of exploration dotted, and, where the
run holds C2's entries, the window whose mean purity they compare (the last quarter of the run) shaded.  Nothing
new is stored; the figure is drawn by :func:`packs.moe_cl.figures.open_figures.build_open` and is listed under
``c2`` only when the run holds that claim.  Never simulates.
"""

from __future__ import annotations

from moecl_verify.packs.moe_cl.figures import open_figures
from moecl_verify.reports import panel_figures as kit

CLAIM_ID = "c2"
ARTIFACT = "open_balance_outside_gradient"
FILE = "fig_c2_curves.png"
# The series of the paper's gate, as packs.moe_cl.experiments.balance_rules.label("aux", True / False) names them
# (a test holds the two together; importing the experiments here would load the simulation stack to draw).
WITH = "aux, with termination"
WITHOUT = "aux, no termination"
NAMES = {"routing purity (eq. 11 sets)": "routing purity", "G_t": "generalization error G_t", "F_t": "forgetting F_t"}
PURITY = "routing purity (eq. 11 sets)"
SPAN_LABEL = "late window (c2's purity)"


def late_windows(results) -> dict[str, tuple[float, float]]:
    """{regime name: (first, last round) of the late window} as C2's entries record the regime's run length T
    (the last quarter of the run: rounds T - T // 4 + 1 to T, :attr:`Regime.late`)."""
    out = {}
    for res in results:
        if res.id == CLAIM_ID and res.config.get("regime") and res.config.get("T"):
            T = int(res.config["T"])
            out.setdefault(str(res.config["regime"]), (float(T - T // 4 + 1), float(T)))
    return out


def _same(a: list, b: list) -> bool:
    return len(a) == len(b) and all(
        (x is None and y is None) or (x is not None and y is not None and abs(x - y) <= 1e-9) for x, y in zip(a, b))


def select(data: dict, windows: dict[str, tuple[float, float]] | None = None) -> dict | None:
    """C2's panels from the artifact ``data`` of ``open.balance_outside_gradient``: per regime (panel titles
    "<regime> regime: ...") and quantity (the panel's y label), the series ``WITH`` and ``WITHOUT`` from the
    panels that hold them, in the artifact's order; the chance level once when both variants' agree (as with
    uniform tasks, where it is 1/N), else each with its own label; ``windows`` (:func:`late_windows`) shades the
    late window on the purity panels.  None when the artifact holds neither series."""
    windows = windows or {}
    panels: dict[tuple[str, str], dict] = {}
    for panel in data.get("panels", []):
        regime = panel["title"].split(":")[0].strip()
        for series in panel["series"]:
            if series["label"] not in (WITH, WITHOUT):
                continue
            key = (regime, panel["ylabel"])
            target = panels.setdefault(key, {
                "title": f"{regime}: {NAMES.get(panel['ylabel'], panel['ylabel'])}", "ylabel": panel["ylabel"],
                "x": panel["x"], "series": [], "references": [], "vlines": panel.get("vlines", [])})
            if target["x"] != panel["x"]:
                raise ValueError(f"{ARTIFACT}: {regime} panels of {panel['ylabel']!r} have different rounds")
            target["series"].append(series)
            if panel.get("reference"):
                target["references"].append((series["label"], panel["reference"]))
    if not panels:
        return None
    order = {WITH: 0, WITHOUT: 1}
    out = []
    for (regime, ylabel), panel in panels.items():
        panel["series"].sort(key=lambda s: order[s["label"]])
        refs = [ref for _, ref in sorted(panel["references"], key=lambda r: order[r[0]])]
        if refs and all(_same(ref["y"], refs[0]["y"]) for ref in refs):
            refs = [{"label": "chance level", "y": refs[0]["y"]}]
        panel["references"] = refs
        window = windows.get(regime.removesuffix(" regime"))
        if ylabel == PURITY and window:
            panel["spans"] = [{"x0": window[0], "x1": window[1], "label": SPAN_LABEL}]
        out.append(panel)
    quantities = list(dict.fromkeys(p["ylabel"] for p in out))
    return {"claim": CLAIM_ID, "pool": data.get("pool", 0), "pool_seed": data.get("pool_seed", "-"),
            "xlabel": data.get("xlabel", "round t"), "panels": out, "ncols": len(quantities)}


def caption(data: dict) -> str:
    regimes = list(dict.fromkeys(p["title"].split(":")[0] for p in data["panels"]))
    quantities = list(dict.fromkeys(NAMES.get(p["ylabel"], p["ylabel"]) for p in data["panels"]))
    text = (f"c2, drawn from the runs its entries measure (those of open.balance_outside_gradient; the curves of task "
            f"pool {data.get('pool', 0)}): {', '.join(quantities)} against the round for the paper's gate (auxiliary "
            "balancing loss in the gate's gradient) with termination of gate training and without, one row per "
            f"regime ({', '.join(regimes)}); mean over replicates with its 99% band (± 2.576 s.e.); "
            + ("dashed and dash-dotted: each variant's chance level of the routing"
               if any(len(p.get("references", [])) > 1 for p in data["panels"]) else
               "dashed: the chance level of the routing")
            + "; dotted: the end of exploration T1")
    if any(p.get("spans") for p in data["panels"]):
        text += "; shaded: the last quarter of the run, the window whose mean purity c2's entries compare"
    return text


def specs(run) -> list[kit.FigureSpec]:
    """C2's figure (``fig_c2_curves.png``; ``..._1.png``, ``..._2.png`` beyond six panels), under ``c2``, when
    the run holds both that claim and the curves of ``open.balance_outside_gradient``."""
    if ARTIFACT not in run.artifacts or not any(c.get("id") == CLAIM_ID for c in run.claims):
        return []
    data = select(run.artifacts[ARTIFACT], late_windows(run.results))
    if data is None:
        return []
    pieces = open_figures.parts(data)
    out = []
    for k, piece in enumerate(pieces, 1):
        file = FILE if len(pieces) == 1 else FILE.replace(".png", f"_{k}.png")
        text = caption(piece) + (f" (part {k} of {len(pieces)})" if len(pieces) > 1 else "")
        out.append(kit.FigureSpec((CLAIM_ID,), file, text,
                                  lambda piece=piece: open_figures.build_open(CLAIM_ID, piece)))
    return out
