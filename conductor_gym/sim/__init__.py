"""The simulated pool: a seeded, calibrated model of the paper's workers, offline.

:mod:`.worker` holds the simulated backend (``backend = "simulated"``, every version:
:mod:`.versions`, a lazy registry with capability flags; :mod:`.replies` the typed reply
modes) and the paper pool's specs; :mod:`.profiles`
the per-model accuracies, costs and lineages it is calibrated to; :mod:`.perception` how
a worker finds and solves the problems its messages pose (one parser per procedural
family); :mod:`.context`, :mod:`.instructions`, :mod:`.behaviour` and :mod:`.difficulty`
how it reads its messages, what its subtask asks, how it acts and how hard the problem
is. The hand-written reference plans the calibration tests play are agents
(``reference:<plan>``, :mod:`conductor_gym.agents.reference`).

Nothing here is imported by ``import conductor_gym``: the backend is reached by name
through :data:`conductor_gym.workers.spec.BACKENDS`.
"""
