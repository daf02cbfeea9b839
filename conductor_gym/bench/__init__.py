"""The evaluation harness: suites (:mod:`.suites`), concurrent resumable evaluation
(:mod:`.evaluate`), the results schema (:mod:`.results`), re-playing a run
(:mod:`.replay`) and the leaderboard (:mod:`.leaderboard` validates, :mod:`.board_sections`
places, :mod:`.leaderboard_render` renders; :mod:`.untrusted` bounds what strangers send).

It builds on the env core and the public agent contract
(:class:`conductor_gym.core.agent.Agent`); agents given by spec are loaded through the
agent registry, never imported here by module.
"""
