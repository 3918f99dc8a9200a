"""The findings layer on hand-made decided entries: root causes and their effect, a line's "why", a reading
with contradicting parts, answers in words, the bottom line (and results.json's copy of it), and the report's
two files with their links.

Every expected verdict, number and sentence below follows from the rules in reports/consequence.py,
reports/headline.py, reports/bottom_line.py and reports/markdown.py applied by hand to the entries built
here; none is copied from the tool's output.
"""

import json
import re
from dataclasses import replace

import pytest

from moecl_verify.checks.model import ClaimResult, Interpretation, RunResult, Slip
from moecl_verify.packs.moe_cl import PACK
from moecl_verify.reports import bottom_line, consequence, headline, markdown, results_json

pytestmark = pytest.mark.app


def entry(claim_id, verdict, part=None, evidence_type="criterion", observed=0.1, deltas=None, pool=None,
          reading=None, role=None):
    config = {"features": "gaussian"}
    if role:
        config["role"] = role
    if reading:
        config["reading"] = reading
    if part:
        config["part"] = part
    if pool is not None:
        config["pool"] = pool
    exact = evidence_type == "exact"
    res = ClaimResult(id=claim_id, source="-", kind="bound", form="stated", verdict=verdict, expected=0.0,
                      observed=None if exact else observed, stderr=None if exact else 0.01,
                      p_value=None if exact else 0.5, false_fail_rate=None if exact else 1e-3, min_detectable=None,
                      config=config, evidence="counterexample: 3/4 > 0. More text." if exact else "z-test",
                      evidence_type=evidence_type)
    if deltas is not None:
        res = replace(res, horizons=[{"case": f"c{i}", "expected": 0.0, "observed": d, "stderr": 0.01, "z": d / 0.01,
                                      "p_value": 0.5, "min_detectable": 0.03} for i, d in enumerate(deltas)])
    return res


def run_of(*results, slips=(), interpretations=()):
    ids = dict.fromkeys(r.id for r in results)
    claims = tuple({"id": i, "summary": i, "source": "-", "kind": "bound", "statement": "x", "preconditions": [],
                    "notes": ""} for i in ids)
    return RunResult(tuple(results), tuple(slips), tuple(interpretations),
                     {"budget": "smoke", "seed": 0, "claims": list(ids)}, claims, {})


def table_row(text: str, start: str) -> list[str]:
    """The cells of the first markdown table row starting with ``start`` (a result's row of the headline table
    comes before its row in the per-statement status table)."""
    line = next(line for line in text.splitlines() if line.startswith(start))
    return [cell.strip() for cell in line.strip().strip("|").split(" | ")]


# ----------------------------------------------------------------------------- root causes and their effect

ROOT, FIRST, SECOND = "lemma3.expert_moves", "prop1.models_keep_moving", "thm1.late_forgetting_identity"


def lemma3_family(root_effect="", first_effect="", second_effect=""):
    """Lemma 3's slip and the two slips that follow from it.  By hand: each derived slip is a false statement
    in one headline result (Proposition 1, Theorem 1) and undercuts none (no proof uses prop1 or thm1), so they
    tie on consequence and class and are ordered as the paper is: Proposition 1's first."""
    lemma3 = entry("lemma3", "refuted")
    slips = (Slip(ROOT, "Lemma 3", "false statement", "-", "the expert moves; details", "-", entries=(lemma3.key,),
                  effect=root_effect),
             Slip(SECOND, "Thm 1", "false statement", "-", "forgetting keeps accruing", "-", causes=(ROOT,),
                  effect=second_effect),
             Slip(FIRST, "Prop 1", "false statement", "-", "the models keep moving", "-", causes=(ROOT,),
                  effect=first_effect))
    return run_of(lemma3, entry("prop1", "refuted"), entry("thm1.forgetting_late", "refuted"), slips=slips)


def test_a_root_cause_is_listed_once_with_both_slips_that_follow_from_it():
    roots = consequence.root_causes(lemma3_family())
    assert [rc.slip.id for rc in roots] == [ROOT]
    (rc,) = roots
    assert [d.slip.id for d in rc.derived] == [FIRST, SECOND]
    assert [i.title for i in rc.breaks] == ["Proposition 1", "Theorem 1"] and rc.undercuts == ()
    # a derived slip of a derived slip is still listed under the one root, once
    run = lemma3_family()
    deeper = Slip("thm1.deeper", "Thm 1", "false statement", "-", "-", "-", causes=(SECOND, FIRST))
    roots = consequence.root_causes(replace(run, slips=run.slips + (deeper,)))
    assert [rc.slip.id for rc in roots] == [ROOT]
    assert sorted(d.slip.id for d in roots[0].derived) == sorted([FIRST, SECOND, "thm1.deeper"])


@pytest.mark.parametrize("effects, expected", [
    (("root's size", "first's size", "second's size"), (ROOT, "root's size")),
    (("", "first's size", "second's size"), (FIRST, "first's size")),
    (("", "", "second's size"), (SECOND, "second's size")),
    (("", "", ""), ("", "")),
])
def test_a_root_cause_states_its_own_effect_else_the_first_derived_one(effects, expected):
    run = lemma3_family(*effects)
    (rc,) = consequence.root_causes(run)
    assert rc.effect == expected
    # the report's root-cause table names the slip it took the effect from, when not the root itself
    cells = table_row(markdown.render(run), "| 1 | ")
    assert f"[`{ROOT}`](#slip-lemma3-expert_moves)" in cells[1]
    effect_cell = cells[3]
    slip_id, text = expected
    if not text:
        assert "through" not in effect_cell and effect_cell != "–"  # no size: the decisive case instead
    elif slip_id == ROOT:
        assert effect_cell == text and "through" not in effect_cell
    else:
        anchor = "slip-" + slip_id.replace(".", "-")
        assert effect_cell == f"{text} (through [`{slip_id}`](#{anchor}))"
        # in report.md the slip audit is in report-details.md: the link goes there
        main = markdown.render_parts(run).main_file("report-details.md")
        assert f"{text} (through [`{slip_id}`](report-details.md#{anchor}))" in main


# ----------------------------------------------------------------------------- a headline line's why


def two_causes_on_theorem_1(decisive: str, via_derived: bool):
    """Two root causes touching Theorem 1.  Lemma 3's (two derived slips, breaking Proposition 1 and Theorem 1)
    ranks first by hand; the other rests on Theorem 1's generalization entry, directly (Theorem 1's eq. (20)
    slip) or through a slip that follows from it (Appendix H's same-task step, whose eq. (19) slip rests on
    the early-forgetting entry).  ``decisive`` is the one refuted Theorem 1 entry."""
    lemma3 = entry("lemma3", "refuted")
    thm1 = {claim: entry(claim, "refuted" if claim == decisive else "confirmed")
            for claim in ("thm1.forgetting_early", "thm1.forgetting_late", "thm1.generalization")}
    slips = [Slip(ROOT, "Lemma 3", "false statement", "-", "the expert moves", "-", entries=(lemma3.key,),
                  summary="Lemma 3 is false: an expert given its old task moves"),
             Slip(FIRST, "Prop 1", "false statement", "-", "-", "-", causes=(ROOT,)),
             Slip(SECOND, "Thm 1", "false statement", "-", "-", "-", causes=(ROOT,),
                  entries=(thm1["thm1.forgetting_late"].key,))]
    if via_derived:
        other = "prop4.appH.same_task_gap"
        slips += [Slip(other, "App. H", "false intermediate step", "-", "the same-task term is 0; more", "-",
                       summary="Appendix H counts a task's gap to itself as D"),
                  Slip("thm1.eq19.bound_fails", "Thm 1 eq. (19)", "false statement", "-", "-", "-",
                       causes=(other,), entries=(thm1["thm1.forgetting_early"].key,))]
    else:
        other = "thm1.eq20.bound_fails"
        slips.append(Slip(other, "Thm 1 eq. (20)", "false statement", "-", "the bound fails; more", "-",
                          entries=(thm1["thm1.generalization"].key,), summary="Theorem 1's eq. (20) fails"))
    run = run_of(lemma3, entry("prop1", "refuted"), *thm1.values(), slips=slips)
    return run, other


@pytest.mark.parametrize("via_derived", [False, True])
def test_a_lines_why_names_the_cause_of_its_decisive_entry_even_below_a_higher_ranked_cause(via_derived):
    decisive = "thm1.forgetting_early" if via_derived else "thm1.generalization"
    run, other = two_causes_on_theorem_1(decisive, via_derived)
    roots = consequence.root_causes(run)
    assert [rc.slip.id for rc in roots] == [ROOT, other]  # Lemma 3's ranks first (two results, two derived)
    row = next(r for r in headline.rows(run)[0] if r.item.title == "Theorem 1")
    assert row.verdict == headline.FALLS and row.decisive_key == next(r.key for r in run.results if r.id == decisive)
    assert [s.id for s in markdown.why_causes(row, roots)] == [other, ROOT]
    summary = next(s.summary for s in run.slips if s.id == other)
    anchor = "slip-" + other.replace(".", "-")
    cells = table_row(markdown.render(run), "| **Theorem 1** |")
    assert f"`{decisive}`" in cells[3]  # the decisive evidence quotes that entry ...
    # ... and the why names its cause, with how sure it is: eq. (20)'s slip rests on a refuted criterion, sampled;
    # Appendix H's rests on no entry (a reason read off the text), and the eq. (19) slip that breaks Theorem 1
    # through it on a sampled entry: in a cell, the label of the least sure part alone (Monte Carlo either way)
    how = "Monte Carlo"
    assert cells[4] == f"[`{other}`](#{anchor}): {summary} (and 1 more) *[{how}]*"
    assert cells[2] == "**falls** (Monte Carlo)"  # the decisive refutation is a criterion


def test_the_why_follows_the_decisive_entry_when_it_changes():
    """The same two causes; now the refuted Theorem 1 entry is the late-forgetting one, on which Lemma 3's
    derived slip rests: the why names Lemma 3."""
    run, other = two_causes_on_theorem_1("thm1.forgetting_late", via_derived=False)
    roots = consequence.root_causes(run)
    row = next(r for r in headline.rows(run)[0] if r.item.title == "Theorem 1")
    assert [s.id for s in markdown.why_causes(row, roots)] == [ROOT, other]
    assert markdown._finding(row, roots, run).startswith(
        f"Why: Lemma 3 is false: an expert given its old task moves ([`{ROOT}`](#slip-lemma3-expert_moves), "
        "and 1 more) *[Monte Carlo]*.")


def test_a_line_that_stands_gives_no_why_even_with_causes_in_its_claims():
    run, _ = two_causes_on_theorem_1("thm1.generalization", via_derived=False)
    standing = replace(run, results=tuple(replace(r, verdict="confirmed") if r.id.startswith("thm1") else r
                                          for r in run.results))
    row = next(r for r in headline.rows(standing)[0] if r.item.title == "Theorem 1")
    assert row.verdict == headline.STANDS and row.decisive_key is None
    assert markdown._why(row, consequence.root_causes(standing)) == "–"


# ----------------------------------------------------------------------------- a reading with contradicting parts

C2_PARTS = ("the specialization is destroyed (routing purity)", "the errors rise without termination")


@pytest.mark.parametrize("purity, errors", [("refuted", "confirmed"), ("confirmed", "refuted")])
def test_a_two_part_reading_whose_parts_contradict_does_not_stand_and_names_each_parts_verdict(purity, errors):
    assert tuple(said for said, _ in next(i for i in PACK.reading_headline if i.key == "C2").parts) == C2_PARTS
    word = {"refuted": headline.FALLS, "confirmed": headline.STANDS}
    run = run_of(entry("c2", purity, part="specialization destroyed, paper regime", pool=0),
                 entry("fig2.no_termination_higher", errors))
    c2 = next(r for r in headline.rows(run)[1] if r.item.key == "C2")
    assert c2.verdict == headline.FALLS
    # both parts rest on criteria (sampled): each part's verdict says Monte Carlo
    assert c2.by_part == f"{C2_PARTS[0]}: {word[purity]} (Monte Carlo); {C2_PARTS[1]}: {word[errors]} (Monte Carlo)"
    assert c2.evidence.startswith(f"By part: {c2.by_part}. 1 of 2 checks refuted; ")
    # the report's line: verdict falls, each part's verdict in what the run found
    cells = table_row(markdown.render(run), "| **C2** |")
    assert cells[2] == "**falls** (Monte Carlo)"
    assert cells[3].startswith(f"By part: {C2_PARTS[0]}: {word[purity]} (Monte Carlo); {C2_PARTS[1]}: "
                               f"{word[errors]} (Monte Carlo).")
    # one part confirmed, the other undecided: partly confirmed, never "stands"
    partly = run_of(entry("c2", "inconclusive"), entry("fig2.no_termination_higher", "confirmed"))
    c2 = next(r for r in headline.rows(partly)[1] if r.item.key == "C2")
    assert c2.verdict == headline.PARTLY and c2.by_part == f"{C2_PARTS[0]}: open; {C2_PARTS[1]}: stands (Monte Carlo)"
    # both parts confirmed: only then does the line stand
    both = run_of(entry("c2", "confirmed"), entry("fig2.no_termination_higher", "confirmed"))
    c2 = next(r for r in headline.rows(both)[1] if r.item.key == "C2")
    assert c2.verdict == headline.STANDS and c2.by_part == (f"{C2_PARTS[0]}: stands (Monte Carlo); {C2_PARTS[1]}: "
                                                            "stands (Monte Carlo)")


def test_a_line_whose_part_falls_does_not_stand():
    step = entry("prop3", "refuted", part="proof step (b)")
    step = replace(step, key=replace(step.key, role="proof step"))  # Proposition 3 measured by a proof step only
    run = run_of(step, entry("prop1", "confirmed"))
    c1 = next(r for r in headline.rows(run)[1] if r.item.key == "C1")
    part_verdicts = [said.rsplit(": ", 1)[1].split(" (")[0] for said in c1.by_part.split("; ")]
    assert not (c1.verdict == headline.STANDS and headline.FALLS in part_verdicts), (c1.verdict, c1.by_part)


# ----------------------------------------------------------------------------- answers in words

PHRASES = {"purity": ("top-2 routes less purely (by {span})", "top-2 routes more purely (by {span})"),
           "forgetting": ("top-2 forgets more (F_T higher by {span})", "top-2 forgets less (F_T lower by {span})")}


def beyond(part, verdict, deltas, pool=0):
    return entry("open.top2", verdict, part=part, deltas=deltas, pool=pool)


def test_an_answer_takes_the_held_phrase_when_confirmed_and_the_failed_one_when_refuted():
    held = [beyond("purity, paper regime", "confirmed", [0.05, 0.12]),
            beyond("purity, paper regime", "confirmed", [0.03], pool=1)]
    # Δ over both pools: 0.03 to 0.12
    assert headline.answer_sentence(held, PHRASES) == "Top-2 routes less purely (by 0.03–0.12)."
    # the same entries refuted, the differences the other way: the failed phrase, with |Δ|
    failed = [replace(r, verdict="refuted", horizons=[{**h, "observed": -h["observed"]} for h in r.horizons])
              for r in held]
    assert headline.answer_sentence(failed, PHRASES) == "Top-2 routes more purely (by 0.03–0.12)."
    # one number: no range
    assert headline.answer_sentence([beyond("forgetting, paper regime", "refuted", [-0.4])], PHRASES) \
        == "Top-2 forgets less (F_T lower by 0.4)."


def test_an_answer_names_the_settings_that_disagree_and_says_what_is_not_settled():
    one_each = [beyond("purity, paper regime", "confirmed", [0.05]),
                beyond("purity, specializing regime", "refuted", [-0.2, -0.3])]
    assert headline.answer_sentence(one_each, PHRASES) == (
        "Top-2 routes less purely (by 0.05) in the paper regime; "
        "top-2 routes more purely (by 0.2–0.3) in the specializing regime.")
    undecided = [beyond("purity, paper regime", "confirmed", [0.05]),
                 beyond("purity, specializing regime", "inconclusive", [-0.01, 0.02])]
    assert headline.answer_sentence(undecided, PHRASES) == (
        "Top-2 routes less purely (by 0.05) in the paper regime; "
        "purity: not settled in the specializing regime (margins from -0.01 to 0.02).")
    nothing = [beyond("purity, paper regime", "inconclusive", [-0.01, 0.02])]
    assert headline.answer_sentence(nothing, PHRASES) == "Purity: not settled (margins from -0.01 to 0.02)."
    # a setting with one pool decided and one not holds "where decided"; aspects are joined in order
    partly = [beyond("purity, paper regime", "confirmed", [0.05]),
              beyond("purity, paper regime", "inconclusive", [0.01], pool=1),
              beyond("forgetting, paper regime", "refuted", [-0.4])]
    assert headline.answer_sentence(partly, PHRASES) == (
        "Top-2 routes less purely (by 0.05) where decided; top-2 forgets less (F_T lower by 0.4).")
    # pools of one setting that go opposite ways, each significantly
    opposite = [beyond("purity, paper regime", "confirmed", [0.05]),
                beyond("purity, paper regime", "refuted", [-0.1], pool=1)]
    assert headline.answer_sentence(opposite, PHRASES) == (
        "Purity: opposite directions across task pools (margins from -0.1 to 0.05).")


def test_flipping_one_verdict_flips_its_setting_only():
    entries = [beyond("purity, paper regime", "confirmed", [0.05]),
               beyond("purity, specializing regime", "confirmed", [0.2])]
    assert headline.answer_sentence(entries, PHRASES) == "Top-2 routes less purely (by 0.05–0.2)."
    flipped = [entries[0], replace(entries[1], verdict="refuted",
                                                horizons=[{**entries[1].horizons[0], "observed": -0.2}])]
    assert headline.answer_sentence(flipped, PHRASES) == (
        "Top-2 routes less purely (by 0.05) in the paper regime; "
        "top-2 routes more purely (by 0.2) in the specializing regime.")


def test_an_open_row_answers_in_the_packs_words():
    run = run_of(beyond("purity, paper regime", "refuted", [-0.25, -0.5]), entry("prop1", "refuted"))
    (row,) = headline.open_rows(run)
    held, failed = PACK.answers["open.top2"]["purity"]
    assert row.verdict == headline.FALLS
    assert row.answer == failed[:1].upper() + failed[1:].format(span="0.25–0.5") + "."
    assert held.format(span="0.25–0.5")[1:] not in row.answer


# ----------------------------------------------------------------------------- the bottom line

EQ20 = "thm1.eq20.bound_fails"


def eq20_run(verdict="refuted", summary="Theorem 1's eq. (20) fails", effect="", derived_effect=""):
    """Theorem 1's eq. (20) slip on its generalization entry, one slip following from it (in Theorem 2), and
    Proposition 4 standing."""
    gen = entry("thm1.generalization", verdict)
    slips = (Slip(EQ20, "Section 5.1, Theorem 1, eq. (20); proof Appendix I.2", "false statement", "-",
                  "the bound fails in expectation; at T = 3 given the routing", "-", entries=(gen.key,),
                  summary=summary, effect=effect),
             Slip("thm2.eq22.bound_fails", "Theorem 2", "false statement", "-", "-", "-", causes=(EQ20,),
                  effect=derived_effect))
    return run_of(gen, entry("thm2.generalization", "refuted"), entry("prop4.forgetting", "confirmed"),
                  slips=slips), gen


def test_a_cause_sentence_uses_the_slips_summary_and_effect():
    effect = "at Figure 2's configuration, E[G] = 1.5 against eq. (20)'s 0.9; details"
    run, gen = eq20_run(effect=effect)
    found = bottom_line.sentences(run)
    assert [s.kind for s in found] == ["verdicts", "cause"]
    # every entry is a criterion: each result named with "Monte Carlo"
    assert found[0].text == ("Of the paper's 3 headline results, Proposition 4 (Monte Carlo) stands (every check of "
                             "the statement confirmed); Theorem 1 (Monte Carlo) and Theorem 2 (Monte Carlo) fall.")
    assert (found[0].strength, found[0].strength_note) == ("monte_carlo", "")
    cause = found[1]
    # summary; the effect's first clause; what it breaks; the link and how sure it is
    assert cause.text == ("Theorem 1's eq. (20) fails; at Figure 2's configuration, E[G] = 1.5 against "
                          "eq. (20)'s 0.9. It breaks Theorem 1, Theorem 2 "
                          "([`thm1.eq20.bound_fails`](#slip-thm1-eq20-bound_fails)). "
                          "*[Monte Carlo at the stated configuration]*")
    assert cause.strength == "monte_carlo"
    assert cause.slips == (EQ20, "thm2.eq22.bound_fails") and cause.entries == (gen.key,)


def test_a_cause_breaks_a_result_that_depends_on_the_reading_under_that_reading_only():
    run, gen = eq20_run()
    given = entry("thm2.generalization", "refuted", reading="given the routing")
    averaged = entry("thm2.generalization", "confirmed", reading="in expectation")
    results = tuple(r for r in run.results if r.id != "thm2.generalization") + (given, averaged)
    run = replace(run, results=results)
    rows = {row.item.key: row.verdict for row in headline.rows(run)[0]}
    assert rows["thm2"] == headline.DEPENDS and rows["thm1"] == headline.FALLS
    cause = bottom_line.sentences(run)[1]
    assert "It breaks Theorem 1, Theorem 2 under that reading (" in cause.text
    # the same slips with Theorem 2 refuted under every reading: no qualifier
    both = replace(run, results=tuple(r for r in results if r.verdict == "refuted" or r.id != "thm2.generalization"))
    assert "It breaks Theorem 1, Theorem 2 ([" in bottom_line.sentences(both)[1].text


def test_a_slip_on_a_proof_step_alone_undercuts_the_result_it_is_in_and_breaks_it_with_a_statement_entry():
    step = entry("thm1.generalization", "refuted", part="proof.step2", role="proof step")
    statement = entry("thm1.generalization", "confirmed")
    slip = Slip("thm1.step2_fails", "Theorem 1, proof", "false intermediate step", "-", "-", "-", entries=(step.key,))
    run = run_of(step, statement, slips=(slip,))
    (ranked,) = consequence.ranked_slips(run)
    assert [i.key for i in ranked.breaks] == [] and [i.key for i in ranked.undercuts] == ["thm1"]
    refuted = replace(run, results=(step, replace(statement, verdict="refuted")),
                      slips=(replace(slip, entries=(step.key, statement.key)),))
    (ranked,) = consequence.ranked_slips(refuted)
    assert [i.key for i in ranked.breaks] == ["thm1"] and ranked.undercuts == ()


def test_a_cause_sentence_takes_the_effect_of_a_derived_slip_and_else_its_decisive_number():
    run, _ = eq20_run(derived_effect="E[G] at M = 5 is twice eq. (22)'s")
    cause = bottom_line.sentences(run)[1]
    assert cause.text.startswith("Theorem 1's eq. (20) fails; E[G] at M = 5 is twice eq. (22)'s. It breaks")
    # no effect anywhere, no summary: the place, the first clause of what holds and the decisive number
    run, _ = eq20_run(summary="")
    cause = bottom_line.sentences(run)[1]
    assert cause.text.startswith("Section 5.1, Theorem 1, eq. (20): the bound fails in expectation "
                                 "(the claim's margin is 0.1 ± 0.01 (the claim needs it > 0)). "
                                 "It breaks")


def test_a_cause_sentence_goes_when_its_entries_stop_deciding_and_results_json_says_the_same():
    effect = "at Figure 2's configuration, E[G] = 1.5 against eq. (20)'s 0.9"
    decided, gen = eq20_run(effect=effect)
    undecided, _ = eq20_run("inconclusive", effect=effect)
    for run in (decided, undecided):
        found = bottom_line.sentences(run)
        stored = json.loads(results_json.dumps(run))["findings"]["bottom_line"]
        assert stored == [{"kind": s.kind, "text": s.text, "slips": list(s.slips),
                           "entries": [k.to_json() for k in s.entries],
                           **({"strength": s.strength} if s.strength else {})} for s in found]
        # a sentence that states no finding carries no strength; every other one does
        assert all(("strength" in x) == (x["kind"] != "open") for x in stored)
    causes = [s for s in json.loads(results_json.dumps(decided))["findings"]["bottom_line"] if s["kind"] == "cause"]
    assert len(causes) == 1 and effect in causes[0]["text"] and causes[0]["entries"] == [gen.key.to_json()]
    without = json.loads(results_json.dumps(undecided))["findings"]["bottom_line"]
    assert [s["kind"] for s in without] == ["verdicts", "open"]  # Theorem 1 is now open
    assert not any(EQ20 in s["text"] or effect in s["text"] for s in without)
    # and the report's bottom line is the same sentences
    assert f"- {bottom_line.sentences(decided)[1].text}" in markdown.render(decided)
    assert effect not in markdown.render(undecided).split("## What stands and what falls")[0]


# ----------------------------------------------------------------------------- the report's two files

ANCHOR = re.compile(r'^<a id="([^"]+)"></a>$', re.M)
LINK = re.compile(r"\]\(([^)\s#]*)#([^)\s]+)\)")


def rich_run():
    """Slips with causes (one not established), a notation slip, a reading with parts, a question beyond the
    paper, an exact entry and an interpretation: every kind of link the report writes."""
    run, _ = two_causes_on_theorem_1("thm1.generalization", via_derived=False)
    extra = (entry("c2", "refuted", part="specialization destroyed, paper regime", pool=0),
             entry("fig2.no_termination_higher", "confirmed"),
             beyond("purity, paper regime", "confirmed", [0.05]),
             entry("lemma16", "inconclusive"), entry("prop2.t1", "confirmed", evidence_type="exact"))
    slips = run.slips + (Slip("lemma16.eq42.model_for_truth", "eq. (42)", "notation", "a", "b", "c"),
                         Slip("thm2.x", "Theorem 2", "false statement", "-", "-", "-", causes=("absent.slip", ROOT),
                              effect="twice"))
    return run_of(*run.results, *extra, slips=slips, interpretations=(Interpretation("i1", "loc", "issue", "choice"),))


def test_the_report_is_written_in_two_files_whose_links_all_land():
    run = rich_run()
    parts = markdown.render_parts(run)
    assert markdown.render(run) == parts.whole()
    main, details = parts.main_file("report-details.md"), parts.details_file("report.md", "T")
    here, there = set(ANCHOR.findall(main)), set(ANCHOR.findall(details))
    assert here and there and not here & there
    main_links, detail_links = LINK.findall(main), LINK.findall(details)
    assert main_links and detail_links
    for target, anchor in main_links:
        if anchor in here:
            assert target == "", anchor  # a link into the main body stays local ...
        else:
            assert (target, anchor in there) == ("report-details.md", True), anchor  # ... others go to the details
    for target, anchor in detail_links:
        if anchor in there:
            assert target == "", anchor
        else:
            assert (target, anchor in here) == ("report.md", True), anchor
    # every link the main body kept local has its anchor there, and the same for the details
    assert {a for t, a in main_links if not t} <= here and {a for t, a in detail_links if not t} <= there
    # links both ways exist in this run: the root-cause table into the slip audit, the audit back to the table
    assert ("report-details.md", "slip-lemma3-expert_moves") in main_links
    assert ("report.md", "slips-by-consequence") in detail_links


def test_markdown_write_writes_both_files(tmp_path):
    run = rich_run()
    path = tmp_path / "report.md"
    written = markdown.write(run, path)
    details = tmp_path / "report-details.md"
    # and the requests to the authors beside them, where the run's slips give any (this one's do)
    assert written == [path, details, tmp_path / "requests.md"] and path.exists() and details.exists()
    assert "(report-details.md#slip-lemma3-expert_moves)" in (tmp_path / "requests.md").read_text()
    parts = markdown.render_parts(run)
    assert path.read_text(encoding="utf-8") == parts.main_file("report-details.md")
    text = details.read_text(encoding="utf-8")
    assert text.startswith(f"# moecl-verify report, details: *{PACK.title}*\n")
    assert text == parts.details_file("report.md", f"moecl-verify report, details: *{PACK.title}*")
    # every section of the details is in the details file, none in the main one
    for section in parts.details:
        assert f'<a id="{section.anchor}"></a>' in text
        assert f'<a id="{section.anchor}"></a>' not in path.read_text(encoding="utf-8")


def test_cross_link_points_only_links_to_absent_anchors_at_the_other_file():
    text = '<a id="here"></a>\n\n[a](#here) [b](#gone) [c](#here) ![img](fig.png) [d](other.md#x)\n'
    assert markdown._cross_link(text, "else.md") == (
        '<a id="here"></a>\n\n[a](#here) [b](else.md#gone) [c](#here) ![img](fig.png) [d](other.md#x)\n')


def test_a_result_not_checkable_is_not_called_unsettled_at_this_budget():
    run = run_of(entry("thm1.generalization", "not_checkable", evidence_type="exact"),
                 entry("thm2.generalization", "inconclusive"), entry("prop4.forgetting", "confirmed"))
    opened = [s.text for s in bottom_line.sentences(run) if s.kind == "open"]
    assert opened == ["Not settled by this run: Theorem 2 (no check of the statement confirmed or refuted at this "
                      "budget).", "Not checkable: Theorem 1 (the reasons are in its checks)."]


def test_the_bottom_line_says_what_holds_of_the_independent_reading_and_drops_it_when_nothing_does():
    """C4 partly confirmed (one entry confirmed, one undecided), C2 falls in its purity part while its errors part
    stands: the sentence names both; with C4's entry refuted and C2's errors part refuted, it goes."""
    results = (entry("c4", "confirmed"), entry("fig2.moe_beats_single", "inconclusive"),
               entry("c2", "refuted"), entry("fig2.no_termination_higher", "confirmed"))
    found = [s for s in bottom_line.sentences(run_of(*results)) if s.kind == "reading"]
    assert [s.text for s in found] == [
        "Of the claims of an independent reviewer's reading, C4 (MoE lowers forgetting and generalization error "
        "relative to one expert; Monte Carlo) is partly confirmed (none refuted); in C2, \"the errors rise without "
        "termination\" stands (Monte Carlo)."]
    worse = (entry("c4", "refuted"), entry("fig2.moe_beats_single", "inconclusive"),
             entry("c2", "refuted"), entry("fig2.no_termination_higher", "refuted"))
    assert [s for s in bottom_line.sentences(run_of(*worse)) if s.kind == "reading"] == []
