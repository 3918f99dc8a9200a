"""Experiments beyond the paper (``open.*``): questions an independent reviewer's reading raises and the paper
leaves open, each answered by a hypothesis stated before it is tested and decided under the run's error
control. Shared simulations: :mod:`packs.moe_cl.experiments.open_questions`."""
