"""``conductor-gym view``: a stored run, or a list of traces, as one self-contained page
(:mod:`.page`). Step details come from the one replay engine
(:mod:`conductor_gym.bench.replay`); the page is drawn by
:mod:`conductor_gym.core.render_html`.
"""
