"""The simulator's research tools, apart from evaluation: fit a simulated pool to recorded
episodes and score its fidelity on held-out ones (:mod:`.fit`, :mod:`.fit_fidelity` and
their parts), attack a simulator version with a search over plans (:mod:`.audit`,
:mod:`.audit_plans`), and check its single-worker calibration against the paper
(:mod:`.calibration`).

It builds on the evaluation harness (:mod:`conductor_gym.bench`: results, replay,
evaluate) and the simulator (:mod:`conductor_gym.sim`); the CLI reaches it through
``conductor-gym sim``.
"""
