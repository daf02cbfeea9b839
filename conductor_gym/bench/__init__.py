"""The evaluation harness: suites (:mod:`.suites`), concurrent resumable evaluation
(:mod:`.evaluate`), the results schema (:mod:`.results`) and the leaderboard
(:mod:`.leaderboard`, rendered by :mod:`.leaderboard_render`).

It builds on the env core and the public agent contract
(:class:`conductor_gym.core.agent.Agent`); agents given by spec are loaded through the
agent registry, never imported here by module.
"""
