"""A pack's run options given on the command line are part of the run's record, so that the notebook's
reruns of its claims use them too (a claim rerun without them would read other data)."""

from __future__ import annotations

import pytest

from moecl_verify.checks import api, runner
from moecl_verify.reports import notebook, results_json


@pytest.mark.heavy
def test_given_options_are_recorded_and_the_notebook_reruns_with_them(tmp_path):
    run = runner.run(["lemma4"], budget="smoke", options={"mnist_dir": "/data/mnist"}, reuse_claims=False)
    assert run.meta["options"] == {"mnist_dir": "/data/mnist"}
    back = results_json.load(results_json.write(run, tmp_path / "results.json"))  # the schema admits them
    assert back.meta["options"] == {"mnist_dir": "/data/mnist"}
    code = notebook._claim_code(run, "lemma4", [r for r in run.results if r.id == "lemma4"])
    assert "    options={'mnist_dir': '/data/mnist'}," in code and "    pack='moe-cl'," in code
    rerun = api.check("lemma4", budget="smoke", options={"mnist_dir": "/data/mnist"})
    assert rerun.verdicts() == {api.entry_key(r): r.verdict for r in run.results}


def test_without_options_nothing_is_recorded():
    run = runner.run(["lemma4"], budget="smoke", reuse_claims=False)
    assert "options" not in run.meta
