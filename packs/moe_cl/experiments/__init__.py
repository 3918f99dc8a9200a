"""Simulations that several claims share (the Figure 2 runs, the exploration sweeps, the router-phase
traces, Proposition 2's sweeps), and the readings of the model they run under.

An experiment computes samples, cached in chunks; it never decides a verdict. Claims import experiments;
experiments never import claims.
"""
