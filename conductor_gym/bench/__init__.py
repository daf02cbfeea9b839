"""The evaluation harness: suites (:mod:`.suites`), concurrent resumable evaluation
(:mod:`.evaluate`), the results schema (:mod:`.results`), the one replay engine
(:mod:`.replay`), re-scoring (:mod:`.rescore`) and the accuracy-cost frontier
(:mod:`.frontier`: the one Pareto rule and the one accuracy-vs-cost plot). The products
built on it are packages of their own: the leaderboard (:mod:`conductor_gym.board`) and
the viewer (:mod:`conductor_gym.view`).

It builds on the env core and the public agent contract
(:class:`conductor_gym.core.agent.Agent`); agents given by spec are loaded through the
agent registry, never imported here by module.
"""
