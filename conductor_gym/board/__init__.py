"""The leaderboard: submissions and their validation (:mod:`.submissions`), where each
accepted entry goes and at which trust level (:mod:`.sections`), whether its agent is
re-run or self-reported (:mod:`.identity`), the plausibility checks of a submitted
response cache (:mod:`.plausibility`) and its spot check against live endpoints
(:mod:`.spotcheck`), the rendered board (:mod:`.render`, its page template, style sheet
and script in ``assets/``) and the bounds on what strangers send (:mod:`.untrusted`).

It builds on the evaluation harness (:mod:`conductor_gym.bench`): entries are results
files, verified by the one replay engine (:mod:`conductor_gym.bench.replay`).
"""
