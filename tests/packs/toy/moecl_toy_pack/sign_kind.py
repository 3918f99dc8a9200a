"""An evidence kind of the toy pack's own, which the machinery does not ship: a sign test.

"The median of X is m" is checked by counting the draws above m: under the statement, each is above with
probability 1/2, so the count is Binomial(n, 1/2) and the exact two-sided binomial test
(``scipy.stats.binomtest``) gives the p-value.  The kind follows the protocol of
``moecl_verify.checks.kinds.base``: refuted when Holm rejects; confirmed only when the run could have
detected a shift of the probability above m by ``resolution`` (the normal approximation of the test's power
at the threshold it faced); inconclusive otherwise.  The pack registers this module when it loads
(``register_kind`` in its ``__init__``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from scipy import stats as sps

from moecl_verify.checks import stats
from moecl_verify.checks.kinds.base import Judgement, Table, number, result_of
from moecl_verify.checks.model import ClaimResult


@dataclass(frozen=True)
class SignEvidence:
    """``above`` of ``trials`` draws exceeded the stated median; the statement says half of them should."""

    TAG: ClassVar[str] = "sign"

    claim_id: str
    source: str
    kind: str
    form: str
    config: dict
    above: int
    trials: int
    resolution: float  # the shift of P(X > m) away from 1/2 the check must resolve to confirm
    formula: str = ""
    difference: str = ""

    @property
    def expected(self) -> float:
        return 0.5

    @property
    def observed(self) -> float:
        return self.above / self.trials

    @property
    def stderr(self) -> float:
        return math.sqrt(0.25 / self.trials)

    @property
    def p_value(self) -> float:
        return float(sps.binomtest(self.above, self.trials, 0.5).pvalue)

    def detectable(self, threshold: float) -> float:
        """The shift of P(X > m) from 1/2 that the test detects with the run's power at ``threshold``."""
        return (float(sps.norm.isf(threshold / 2)) + float(sps.norm.ppf(stats.POWER))) * self.stderr

    def report_config(self) -> dict:
        return {"above": self.above, "trials": self.trials, "resolution": self.resolution}

    def describe(self, judgement: Judgement) -> str:
        return (f"{self.above} of {self.trials} draws above the stated median (a share of {self.observed:.4f}, "
                f"1/2 expected); {judgement.reason}")

    def decide(self, threshold: float, rejected: bool) -> ClaimResult:
        resolves = self.detectable(threshold)
        if rejected:
            judgement = Judgement("refuted", "the sign test rejects the stated median", resolves)
        elif resolves <= self.resolution:
            judgement = Judgement("confirmed", f"a shift of {number(self.resolution)} would have been detected",
                                  resolves)
        else:
            judgement = Judgement("inconclusive", "too few draws to resolve the stated shift", resolves)
        return result_of(self, judgement, threshold)


TABLES = {"sign": Table(title="Sign tests (medians)", columns=("above / trials",), resolution="detectable shift",
                        cells=lambda r: (f"{r.config.get('above')} / {r.config.get('trials')}",))}
RECORDS = {"sign": SignEvidence}
