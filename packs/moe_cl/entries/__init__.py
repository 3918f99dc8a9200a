"""The evidence builders several claims share: from an experiment's samples to the entries a claim returns.

An experiment (:mod:`packs.moe_cl.experiments`) returns samples (arrays, counts, fitted
:class:`checks.scaling.ScalingFit` summaries); a claim builds its evidence from them
(:class:`checks.kinds.mean.Measurement`, :class:`checks.kinds.proportion.ProportionEvidence`,
:class:`checks.kinds.scaling.ScalingEvidence`, and :func:`checks.model.exact_result` for an entry decided
without sampling).  Where several claims build their entries alike, the builder lives here, one module per
experiment whose samples it reads; a claim that alone builds an entry keeps its builder.  Nothing here
decides a sampled verdict: :mod:`checks.decide` does, under the run's error control.

Claims import these modules; experiments never do (``tests/unit/test_layout.py``).
"""
