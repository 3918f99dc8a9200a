"""The cause graph of slips (checks/causes.py): roots, derived slips, absent causes, cycles."""

import pytest

from moecl_verify.checks import causes
from moecl_verify.checks.model import Slip


def slip(slip_id, *follows_from):
    return Slip(id=slip_id, location="here", slip_class="false statement", stated="s", holds="h", evidence="e",
                causes=follows_from)


def test_roots_and_what_follows_from_them_transitively():
    run = [slip("a"), slip("b", "a"), slip("c", "b"), slip("d"), slip("e", "a", "d")]
    g = causes.graph(run)
    assert [s.id for s in g.roots] == ["a", "d"]
    assert [s.id for s in g.derived("a")] == ["b", "c", "e"]  # c through b
    assert [s.id for s in g.derived("d")] == ["e"]
    assert g.roots_of("c") == ("a",) and g.roots_of("e") == ("a", "d") and g.roots_of("d") == ("d",)


def test_a_cause_the_run_did_not_establish_leaves_its_slip_a_root():
    g = causes.graph([slip("b", "a"), slip("c", "b")])
    assert [s.id for s in g.roots] == ["b"] and [s.id for s in g.derived("b")] == ["c"]


def test_a_cycle_is_refused_and_named():
    with pytest.raises(causes.CauseCycle, match="^slips that explain each other in a circle: a follows from c follows from b follows from a$"):
        causes.graph([slip("a", "c"), slip("b", "a"), slip("c", "b"), slip("d", "a")])


def test_a_slip_cannot_follow_from_itself_or_from_nothing():
    with pytest.raises(ValueError, match="causes"):
        slip("a", "a")
    with pytest.raises(ValueError, match="causes"):
        slip("a", "")
