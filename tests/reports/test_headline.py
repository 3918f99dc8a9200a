"""The headline ("what stands and what falls"), the slips ranked by consequence, and the headline's CSV and LaTeX.

Built on hand-made entries, so every expected verdict follows from the rules in
reports/headline.py's docstring, not from a run's output.
"""

import csv
import io

import pytest

from moecl_verify.checks.kinds.mean import least_margin
from moecl_verify.packs.moe_cl import PACK
from moecl_verify.checks.model import ClaimResult, RunResult, Slip
from moecl_verify.reports import consequence, headline, markdown

pytestmark = pytest.mark.app


def entry(claim_id, verdict, form="stated", part=None, reading=None, evidence_type="criterion", p=0.5, observed=0.1,
          role=None):
    config = {"features": "gaussian"}
    if part:
        config["part"] = part
    if role:
        config["role"] = role
    if reading:
        config["reading"] = reading
    exact = evidence_type == "exact"
    return ClaimResult(id=claim_id, source="-", kind="bound", form=form, verdict=verdict, expected=0.0,
                       observed=None if exact else observed, stderr=None if exact else 0.01,
                       p_value=None if exact else p, false_fail_rate=None if exact else 1e-3, min_detectable=None,
                       config=config, evidence="counterexample: 3/4 > 0. More text." if exact else "z-test",
                       evidence_type=evidence_type)


def run_of(*results, slips=()):
    ids = dict.fromkeys(r.id for r in results)
    claims = tuple({"id": i, "summary": i, "source": "-", "kind": "bound", "statement": "x", "preconditions": [],
                    "notes": ""} for i in ids)
    return RunResult(tuple(results), tuple(slips), (), {"budget": "smoke", "seed": 0, "claims": list(ids)}, claims, {})


@pytest.mark.parametrize("verdicts, expected", [
    (["confirmed", "confirmed"], headline.STANDS),
    (["confirmed", "inconclusive"], headline.PARTLY),
    (["inconclusive", "inconclusive"], headline.OPEN),
    (["confirmed", "refuted"], headline.FALLS),
    (["not_checkable"], headline.NOT_CHECKABLE),
])
def test_statement_verdicts_summarize_by_the_stated_rules(verdicts, expected):
    assert headline.summarize([entry("prop1", v) for v in verdicts]) == expected


def test_nothing_measured_is_said_so():
    assert headline.summarize([]) == headline.ABSENT


def test_proof_steps_corrections_and_derivations_do_not_decide_the_statement():
    entries = [entry("lemma4", "confirmed"),
               entry("lemma4", "refuted", part="proof.step 2", evidence_type="exact", role="proof step"),
               entry("lemma4", "refuted", part="proof step (G, 1)", role="proof step"),
               entry("lemma4", "refuted", form="corrected"),
               entry("lemma4", "refuted", form="derived")]
    assert [headline.is_statement(e) for e in entries] == [True, False, False, False, False]
    assert headline.summarize(entries) == headline.STANDS
    # the entries of a claim whose ids are proof steps (lemma11.step3) are proof steps too
    assert headline.summarize([entry("lemma11", "confirmed"),
                               entry("lemma11.step3", "refuted", role="proof step")]) == headline.STANDS
    # the role decides, not the label: a proof step with a plain label still does not decide the statement
    assert headline.summarize([entry("lemma4", "confirmed"),
                               entry("lemma4", "refuted", part="gap", role="proof step")]) == headline.STANDS


def test_a_refutation_under_one_reading_only_depends_on_the_reading():
    entries = [entry("lemma7", "refuted", reading="every round", p=0.0),
               entry("lemma7", "confirmed", reading="1 - o(1)")]
    assert headline.summarize(entries) == headline.DEPENDS
    text = headline.decisive(entries, headline.DEPENDS)
    assert '"every round"' in text and '"1 - o(1)": confirmed' in text
    # a refutation that no reading escapes (no reading recorded) makes the result fall
    assert headline.summarize(entries + [entry("lemma7", "refuted")]) == headline.FALLS
    # refuted under every reading the paper leaves open
    assert headline.summarize([entry("lemma7", "refuted", reading="a"), entry("lemma7", "refuted", reading="b")]) \
        == headline.FALLS


def test_decisive_evidence_prefers_a_reading_free_refutation_then_exact_then_the_smallest_p():
    entries = [entry("thm1.forgetting_early", "refuted", reading="given the routing", evidence_type="exact"),
               entry("thm1.forgetting_early", "refuted", p=1e-5, observed=-0.5),
               entry("thm1.forgetting_early", "refuted", p=1e-9, observed=-0.9)]
    text = headline.decisive(entries, headline.FALLS)
    assert text.startswith("3 of 3 checks refuted") and "is -0.9 ± 0.01" in text


def test_rows_cover_every_headline_result_and_reviewer_claim():
    run = run_of(entry("prop1", "refuted"), entry("prop2.t1", "confirmed"), entry("c4", "confirmed"),
                 entry("fig2.moe_beats_single", "inconclusive"), entry("lemma3", "refuted"),
                 entry("lemma7", "confirmed"), entry("lemma11.step1", "refuted", role="proof step"))
    paper, reviewer = headline.rows(run)
    by_title = {r.item.title: r for r in paper + reviewer}
    assert [r.item.title for r in paper] == [i.title for i in PACK.headline] + ["Lemmas 1-16, Corollary 1"]
    assert [r.item.title for r in reviewer] == ["C1", "C2", "C3", "C4", "C5", "C6"]
    assert by_title["Proposition 1"].verdict == headline.FALLS
    assert by_title["Proposition 2"].verdict == headline.STANDS
    assert by_title["Theorem 1"].verdict == headline.ABSENT
    assert by_title["C4"].verdict == headline.PARTLY  # c4 confirmed, Figure 2's criterion inconclusive
    assert by_title["C1"].verdict == headline.FALLS
    # C1's evidence names the claim that measures it most directly when it has a refutation
    c1 = headline._row(run_of(entry("prop1", "refuted"), entry("prop3", "refuted")), PACK.reading_headline[0], PACK)
    assert "`prop3`" in c1.evidence
    chain = by_title["Lemmas 1-16, Corollary 1"]
    assert chain.verdict == headline.FALLS
    assert "of 2 lemmas: 1 falls (lemma3); 1 stands (lemma7)" in chain.evidence
    assert "lemma11.step1" not in chain.claim_ids


def test_headline_opens_the_report_and_links_to_entries():
    run = run_of(entry("prop1", "refuted"), entry("thm1.generalization", "confirmed"))
    text = markdown.render(run)
    lines = text.splitlines()
    # the bottom line first, then the headline table
    assert lines.index("## Bottom line") < 10 and lines.index("## Bottom line") < lines.index("## What stands and what falls") < 25
    row = next(line for line in lines if line.startswith("| **Proposition 1**"))
    assert "**falls**" in row and "[`prop1`](#claim-prop1)" in row
    assert '<a id="claim-prop1"></a>' in text  # the link's target exists


def test_slips_rank_by_consequence_not_alphabet():
    slips = (Slip("aaa.notation", "-", "notation", "-", "-", "-"),
             Slip("lemma3.expert_moves", "Lemma 3", "false statement", "-", "-", "-"),
             Slip("lemma2.statement", "Lemma 2", "wrong constant or exponent", "-", "-", "-"),
             Slip("thm1.eq19.bound_fails", "Theorem 1", "false statement", "-", "-", "-"))
    ranked = consequence.ranked_slips(run_of(entry("thm1.forgetting_early", "refuted"), slips=slips))
    assert [r.slip.id for r in ranked] == ["thm1.eq19.bound_fails", "lemma3.expert_moves", "lemma2.statement",
                                           "aaa.notation"]
    assert [i.title for i in ranked[0].breaks] == ["Theorem 1"]
    # Lemma 3 undercuts the results whose proofs use it
    assert {i.title for i in ranked[1].undercuts} == {"Proposition 1", "Theorem 1"} and not ranked[1].breaks


def test_headline_as_csv_and_latex():
    run = run_of(entry("prop1", "refuted", part="50% of rounds & more_x"), entry("c4", "confirmed"))
    table = list(csv.reader(io.StringIO(headline.to_csv(run))))
    assert table[0] == list(headline.HEADER)
    assert len(table) == 1 + len(PACK.headline) + 1 + len(PACK.reading_headline)
    prop1 = next(r for r in table if r[1] == "Proposition 1")
    assert prop1[3] == "falls" and "50% of rounds & more_x" in prop1[4] and prop1[5] == "prop1"
    tex = headline.to_latex(run)
    assert r"\begin{tabular}" in tex and r"\end{tabular}" in tex
    assert r"50\% of rounds \& more\_x" in tex
    body = [line for line in tex.splitlines() if line.endswith(r"\\") and "toprule" not in line]
    assert all(line.count(" & ") == 3 for line in body)  # four columns; the escaped "\\&" is not a separator


def test_questions_beyond_the_paper_get_their_own_rows_and_section_after_the_paper():
    run = run_of(entry("open.rare_task", "confirmed"), entry("open.rare_task", "inconclusive"),
                 entry("open.top2", "refuted"), entry("prop1", "refuted"), entry("lemma16", "confirmed"))
    rows = {r.claim_id: r for r in headline.open_rows(run)}
    assert rows["open.rare_task"].verdict == headline.PARTLY and rows["open.top2"].verdict == headline.FALLS
    from moecl_verify.reports import results_json

    answers = {a["claim"]: a for a in results_json.as_document(run)["findings"]["answers"]}
    assert answers["open.top2"]["answer"] == rows["open.top2"].answer and answers["open.top2"]["verdict"] == "falls"
    text = markdown.render(run)
    head = text.split("## Root causes")[0]
    assert "| question | answer (hypothesis in the details) | evidence | details |" in head
    # the section comes after every claim of the paper, the appendix's last lemma included
    assert text.index("## `lemma16`") < text.index("## Beyond the paper") < text.index("## `open.rare_task`")
    assert any(r[0] == "beyond the paper" for r in csv.reader(io.StringIO(headline.to_csv(run))))


def test_a_wrong_rate_in_proposition_2_does_not_refute_c2():
    """C2 says continued training destroys the specialization; a gap that shrinks more slowly than
    sigma0^1.75 still shrinks, so Proposition 2 falling on its exponent leaves C2 to the error criteria."""
    run = run_of(entry("prop2.t2", "refuted"), entry("fig2.no_termination_higher", "confirmed"))
    paper, reviewer = headline.rows(run)
    assert next(r for r in paper if r.item.key == "prop2").verdict == headline.FALLS
    assert next(r for r in reviewer if r.item.key == "C2").verdict == headline.STANDS


def test_c2_does_not_stand_when_continued_training_keeps_the_routing_as_pure():
    """C2's two parts: errors rise without termination (Figure 2), and the specialization is destroyed (c2,
    routing purity). Errors confirmed but purity refuted must not read as 'stands'."""
    run = run_of(entry("fig2.no_termination_higher", "confirmed"),
                 entry("c2", "refuted", part="specialization destroyed, specializing regime, pool 0"),
                 entry("c2", "inconclusive", part="specialization destroyed, paper regime, pool 0"))
    _, reviewer = headline.rows(run)
    c2 = next(r for r in reviewer if r.item.key == "C2")
    assert c2.verdict == headline.FALLS and "c2" in c2.claim_ids


def test_a_criterion_names_its_decisive_case_and_the_least_margin_where_they_differ():
    """The entry reports the case with the smallest z; a case with a smaller margin but a larger s.e. is
    shown beside it, not passed off as the least margin."""
    from dataclasses import replace

    row = {"expected": 0.0, "p_value": 1e-4, "min_detectable": 0.01}
    cases = [{"case": "M=5", "observed": 0.26, "stderr": 0.01, "z": 26.0, **row},
             {"case": "M=20", "observed": 0.1965, "stderr": 0.05, "z": 3.93, **row}]
    res = replace(entry("c2", "confirmed", observed=0.1965), horizons=cases)
    res = replace(res, config={**res.config, "decisive_horizon": "M=20", "margin": "E[G_T | M=1] - E[G_T | M]"})
    assert least_margin(res) is None  # the decisive case is the least margin: nothing to add
    text = headline.entry_evidence(res)
    # the margin named in the document's quantities, at its decisive case; no "Δ"
    assert "the margin E[G_T | M=1] - E[G_T | M] is 0.197 ± 0.01 at M=20 (the claim needs it > 0)" in text
    assert "smallest" not in text and "Δ" not in text
    decisive_is_not_least = replace(res, observed=0.26, horizons=[dict(cases[0], z=2.0), dict(cases[1], z=3.93)],
                                    config={**res.config, "decisive_horizon": "M=5"})
    assert least_margin(decisive_is_not_least)["case"] == "M=20"
    text = headline.entry_evidence(decisive_is_not_least)
    assert "is 0.26 ± 0.01 at M=5" in text and "smallest 0.197 at M=20" in text
    row = markdown.render(run_of(decisive_is_not_least))
    assert "(least: 0.1965, M=20)" in row


def test_a_proportion_reads_as_its_count_with_the_wilson_interval():
    from dataclasses import replace

    from moecl_verify.checks import stats

    lo, hi = stats.wilson(0, 200)
    row = {"sigma0": 0.05, "successes": 0, "trials": 200, "probability": 0.0, "low": lo, "high": hi}
    res = replace(entry("lemma8", "confirmed", evidence_type="proportion", observed=0.0),
                  config={"features": "gaussian", "probabilities": [row], "null": "P >= 0.9"})
    text = headline.entry_evidence(res)
    assert "the event held in 0 of 200 runs (99% Wilson interval [0, " in text and "± 0.01" not in text
    assert hi == pytest.approx(0.0322, abs=2e-3)  # 99% Wilson upper bound for 0 of 200: z^2/(n + z^2)
    assert "0/200 = 0, 99% Wilson interval" in markdown.render(run_of(res))


def test_the_report_says_the_source_is_damaged_and_flags_notation_slips():
    from moecl_verify.checks.model import Slip

    slips = (Slip(id="lemma16.eq42.model_for_truth", location="eq. (42)", slip_class="notation", stated="a",
                  holds="b", evidence="c"),
             Slip(id="prop4.eq17.coefficient", location="eq. (17)", slip_class="false statement", stated="a",
                  holds="b", evidence="c"))
    text = markdown.render(run_of(entry("lemma16", "refuted"), entry("prop4.forgetting", "refuted"), slips=slips))
    first_page = text.split("## Root causes")[0]  # said before the root causes, with the headline tables
    assert "damaged" in first_page and "check it against the original" in first_page
    audit = text.split('<a id="slip-lemma16-eq42-model_for_truth">')[1]
    assert PACK.slip_caveat in audit.split("<a id=")[0]
    assert text.count(PACK.slip_caveat) == 2  # the notation slip's row and its audit entry, not the other's



def test_a_root_cause_leads_with_the_slips_that_follow_from_it():
    """A root cause with two derived slips: one row, the derived slips listed in it, and the headline results
    the whole family breaks or undercuts; the derived slips get no row of their own, and the audit links both
    ways."""
    lemma3 = entry("lemma3", "refuted")
    slips = (Slip("lemma3.expert_moves", "Lemma 3", "false statement", "-", "the expert moves", "-",
                  entries=(lemma3.key,)),
             Slip("prop1.models_keep_moving", "Prop 1", "false statement", "-", "-", "-",
                  causes=("lemma3.expert_moves",)),
             Slip("thm1.late_forgetting_identity", "Thm 1", "false statement", "-", "-", "-",
                  causes=("lemma3.expert_moves",)),
             Slip("aaa.notation", "-", "notation", "-", "-", "-"))
    run = run_of(lemma3, entry("prop1", "refuted"), entry("thm1.forgetting_late", "refuted"), slips=slips)
    roots = consequence.root_causes(run)
    assert [r.slip.id for r in roots] == ["lemma3.expert_moves", "aaa.notation"]
    first = roots[0]
    assert {r.slip.id for r in first.derived} == {"prop1.models_keep_moving", "thm1.late_forgetting_identity"}
    # Lemma 3 itself breaks no headline result; the slips that follow from it break Proposition 1 and Theorem 1.
    assert {i.title for i in first.breaks} == {"Proposition 1", "Theorem 1"}
    text = markdown.render(run)
    table = text[text.index("## Root causes"):text.index("## The run")]
    rows = [line for line in table.splitlines() if line.startswith("| 1 ") or line.startswith("| 2 ")]
    # the main table holds the error that breaks results; the notation slip goes to the details' second list
    assert len(rows) == 1 and "`lemma3.expert_moves`" in rows[0] and "2 slips follow from it" in rows[0]
    assert "`lemma3` (Gaussian features)" in rows[0] and rows[0].endswith("| Proposition 1, Theorem 1 |")
    assert "The other 1 are in the details" in table and "| 2 " not in table
    other = text[text.index("## Other slips"):text.index("## Slip audit")]
    assert "### Notation and transcription" in other and "[`aaa.notation`](#slip-aaa-notation)" in other
    assert "### Proof hygiene" not in other
    audit = text[text.index("## Slip audit"):]
    assert "- **Follows from**: [`lemma3.expert_moves`]" in audit and "- **Explains**: " in audit


def test_the_bottom_line_follows_the_verdicts_and_drops_a_cause_whose_entries_stop_deciding():
    from dataclasses import replace

    from moecl_verify.reports import bottom_line

    lemma3 = entry("lemma3", "refuted")
    slips = (Slip("lemma3.expert_moves", "Appendix D, Lemma 3", "false statement", "-",
                  "the expert moves; more text", "-", entries=(lemma3.key,)),
             Slip("prop1.models_keep_moving", "Prop 1", "false statement", "-", "-", "-",
                  causes=("lemma3.expert_moves",)),
             Slip("aaa.notation", "-", "notation", "-", "-", "-"))
    results = (lemma3, entry("prop1", "refuted"), entry("prop4.forgetting", "confirmed"))
    found = bottom_line.sentences(run_of(*results, slips=slips))
    assert [s.kind for s in found] == ["verdicts", "cause"]
    # every entry a criterion: each result named says Monte Carlo
    assert "Proposition 4 (Monte Carlo) stands" in found[0].text
    assert "Proposition 1 (Monte Carlo) falls" in found[0].text
    # the lemma chain is no headline result: it has a clause of its own
    assert "Of the 1 lemmas behind them (Lemmas 1-16, Corollary 1), 1 falls" in found[0].text
    cause = found[1]
    assert cause.slips == ("lemma3.expert_moves", "prop1.models_keep_moving") and cause.entries == (lemma3.key,)
    assert "the expert moves (" in cause.text and "more text" not in cause.text
    # the slips that follow from it are named by the sentence's record, counted in the root-cause table
    assert "breaks Proposition 1" in cause.text and "follows from it" not in cause.text
    # the same slips, but Lemma 3's entry no longer decides: its sentence goes
    undecided = (replace(lemma3, verdict="inconclusive"),) + results[1:]
    without = bottom_line.sentences(run_of(*undecided, slips=slips))
    assert "cause" not in [s.kind for s in without] and not any("lemma3.expert_moves" in s.text for s in without)
    # a result the run could not settle is said to be open
    opened = bottom_line.sentences(run_of(entry("prop1", "inconclusive")))
    assert [s.kind for s in opened] == ["open"] and "Proposition 1" in opened[0].text


def test_the_bottom_line_has_at_most_ten_sentences():
    from moecl_verify.reports import bottom_line

    results, slips = [], []
    for claim in ("lemma3", "prop1", "prop2.t1", "prop3", "prop4.forgetting", "thm1.forgetting_early", "thm2.generalization",
                  "fig2.termination_converges", "fig4.balance", "fig5.generalization", "lemma2", "lemma10"):
        res = entry(claim, "refuted")
        results.append(res)
        slips.append(Slip(f"{claim}.slip", claim, "false statement", "-", "h", "-", entries=(res.key,)))
    found = bottom_line.sentences(run_of(*results, slips=slips))
    assert len(found) <= bottom_line.MAX_SENTENCES and found[0].kind == "verdicts"
    # the paper's pack asks for three (its first screen also holds the C1-C6 table); the machinery's default is four
    from moecl_verify.checks import pack as packs

    assert packs.get("moe-cl").bottom_line_causes == 3 < bottom_line.MAX_CAUSES
    assert sum(s.kind == "cause" for s in found) == 3


def test_an_answer_says_part_by_part_what_held_with_the_measured_differences():
    """The answer follows the entries: each part of the hypothesis (pools pooled) says held, failed, or not
    settled, with the range of the measured differences, whose sign shows the direction."""
    def case_entry(part, pool, verdict, deltas):
        res = entry("open.top2", verdict, part=part)
        from dataclasses import replace
        return replace(res, config={**res.config, "pool": pool},
                       horizons=[{"case": f"c{i}", "observed": d} for i, d in enumerate(deltas)],
                       key=replace(res.key, pool=pool))

    answer = headline.answer_of([
        case_entry("purity, paper regime", 0, "confirmed", [0.05, 0.12]),
        case_entry("purity, paper regime", 1, "confirmed", [0.03]),
        case_entry("forgetting, paper regime", 0, "refuted", [-0.48, -0.45]),
        case_entry("forgetting, paper regime", 1, "inconclusive", [0.01]),
        case_entry("generalization, paper regime", 0, "inconclusive", [0.02, -0.01]),
    ])
    assert answer == ("purity, paper regime: held (margins from 0.03 to 0.12 over 2 pools); "
                      "forgetting, paper regime: failed (margins from -0.48 to 0.01 over 2 pools); "
                      "generalization, paper regime: not settled (margins from -0.01 to 0.02)")


def test_a_result_that_falls_says_why_from_its_root_cause():
    lemma3 = entry("lemma3", "refuted")
    slips = (Slip("lemma3.expert_moves", "Lemma 3", "false statement", "-", "the expert moves; details", "-",
                  entries=(lemma3.key,)),
             Slip("prop1.models_keep_moving", "Prop 1", "false statement", "-", "-", "-",
                  causes=("lemma3.expert_moves",)))
    text = markdown.render(run_of(lemma3, entry("prop1", "refuted"), entry("prop4.forgetting", "confirmed"),
                                  slips=slips))
    rows = {}
    for line in text.splitlines():  # a result's headline row first (its status-table row follows)
        if line.startswith("| **"):
            rows.setdefault(line.split(" | ")[0].strip("| *"), line)
    # its root cause, with how sure it is (Lemma 3's slip rests on a refuted criterion: sampled)
    assert ("[`lemma3.expert_moves`](#slip-lemma3-expert_moves): the expert moves "
            "*[Monte Carlo]* |") in rows["Proposition 1"]
    assert "details" not in rows["Proposition 1"]
    assert " | – | " in rows["Proposition 4"]  # it stands: nothing to explain


def test_a_reading_with_contradicting_parts_gives_a_verdict_per_part_and_never_stands():
    """C2 says two things: the specialization is destroyed (c2) and the errors rise (Figure 2's criterion).
    Entries that confirm one part and refute the other make the line fall, and it names each part's verdict."""
    run = run_of(entry("c2", "refuted"), entry("fig2.no_termination_higher", "confirmed"))
    _, reviewer = headline.rows(run)
    c2 = next(r for r in reviewer if r.item.title == "C2")
    assert c2.verdict == headline.FALLS
    assert c2.evidence.startswith("By part: the specialization is destroyed (routing purity): falls (Monte Carlo); "
                                  "the errors rise without termination: stands (Monte Carlo).")
    # one part confirmed, the other undecided: partly, never stands
    run = run_of(entry("c2", "inconclusive"), entry("fig2.no_termination_higher", "confirmed"))
    c2 = next(r for r in headline.rows(run)[1] if r.item.title == "C2")
    assert c2.verdict == headline.PARTLY and "routing purity): open" in c2.evidence


def test_an_open_line_says_what_the_run_could_have_detected():
    from dataclasses import replace

    undecided = replace(entry("fig4.balance", "inconclusive"), min_detectable=0.0123,
                        config={"features": "gaussian", "replicates": 200})
    row = next(r for r in headline.rows(run_of(undecided))[0] if r.item.title == "Figure 4")
    assert row.verdict == headline.OPEN
    assert row.evidence.endswith("; the run could have detected a discrepancy of 0.012 or more with 200 replicates")


def test_a_line_that_falls_says_which_of_its_claims_stand():
    run = run_of(entry("fig2.termination_converges", "refuted"), entry("fig2.no_termination_higher", "confirmed"),
                 entry("fig2.moe_beats_single", "inconclusive"))
    fig2 = next(r for r in headline.rows(run)[0] if r.item.title == "Figure 2")
    assert fig2.verdict == headline.FALLS
    assert fig2.evidence.endswith("; what stands: fig2.no_termination_higher (stands)")
    # nothing stands: nothing said
    run = run_of(entry("fig2.termination_converges", "refuted"), entry("fig2.moe_beats_single", "inconclusive"))
    fig2 = next(r for r in headline.rows(run)[0] if r.item.title == "Figure 2")
    assert "what stands" not in fig2.evidence
