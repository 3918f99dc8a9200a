"""Root causes of the paper that are one error seen from different sides (:class:`Cluster`).

The gate's failure to separate the expert sets shows three times, each established on its own: the update rule
(eq. (9), with the gradient derived from eqs. (6)-(8)) bounds the between-set gate-output gap by
O(σ0 log(1/σ0)) = o(σ0^0.75), where the proofs of Propositions 2 and 3 need Θ(σ0^0.75)
(``prop2.between_set_gap_update_bound``, a derivation under the reading c(t) = 1/t of the auxiliary gradient);
during router learning the experts of M_n do not all beat the experts outside it on v_n (Lemma 15,
``lemma15.ordering_fails``, measured); and after the gate freezes tasks keep being routed outside their expert
sets (Proposition 3 (b), ``prop3.routing_outside_sets``, measured).  None is declared to follow from another
(no run removes the small gap alone), so they are not cause edges; the cluster only tables them as one error.
"""

from __future__ import annotations

from moecl_verify.checks.causes import Cluster

GATE_SEPARATION = Cluster(
    lead="prop3.routing_outside_sets",
    members=("lemma15.ordering_fails", "prop2.between_set_gap_update_bound"),
    error="The gate does not separate the expert sets before it freezes: tasks stay routed outside their sets, "
          "Lemma 15's ordering fails, and the between-set gap is O(σ0 log(1/σ0)), not Θ(σ0^0.75)",
)

CLUSTERS = (GATE_SEPARATION,)
