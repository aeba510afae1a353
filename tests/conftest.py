"""Suite-wide test settings.

Hypothesis runs derandomized by default (profile ``ci``): the examples it tries are a function of
the test alone, so the suite passes or fails the same way on every machine and in CI, and a
slow machine cannot fail a test on Hypothesis's per-example deadline. Set
``HYPOTHESIS_PROFILE=explore`` to search with fresh random examples (and a larger budget) locally;
a failure found that way is replayed from the printed ``@reproduce_failure`` blob and then kept as
an explicit ``@example``.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("explore", deadline=None, max_examples=500, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
