"""The toy pack's claims: ``var.true`` (the identity) and ``var.false`` (its sign slip)."""
