"""The precondition audit: arithmetic a reader can redo by hand."""

import math

from moecl_verify.checks import runner


def test_precondition_audit_entries():
    run = runner.run(["audit.*"], budget="smoke", seed=0)
    by_part = {r.key.label: r for r in run.results}
    # 7 ln 7 = 13.62: M = 10 only with a hidden constant <= 0.73; M = 20 with constant 1.
    m10 = by_part["Figure 2 (Section 6): M=10, N=7 vs Theorem 1"]
    assert m10.verdict == "inconclusive" and f"{10 / (7 * math.log(7)):.2f}" in m10.evidence
    assert by_part["Figure 2 (Section 6): M=20, N=7 vs Theorem 1"].verdict == "confirmed"
    assert any(r.verdict == "not_checkable" for r in run.results)
    assert {"notation.binary_routing", "experiments.figure2_outside_theorem1"} <= {s.id for s in run.slips}
