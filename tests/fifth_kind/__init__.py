"""A fifth kind that lives only in the tests (issue 39): a two-line dice race, the proof that a kind joins through
its one object (``kind.py``) and :func:`sim.kinds.register`, with no edit to any shared module."""
