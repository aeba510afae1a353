"""Escape policies by name: the built-in `greedy`, `arms_first` (:mod:`sim.escape.greedy`) and `team`
(:mod:`sim.escape.team`), and custom policies loaded from ``"package.module:callable"`` with legality
checks (R-ESC-6). Custom policies run on the scalar reference engine only.

A policy is called once a round with a :class:`PolicyView` and returns one action per character
(``None`` for a dazed character, whose action is ignored)."""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Sequence

from sim.errors import OPT_IN_HINT, ScenarioError
from sim.escape.actions import action_problem, check_action, is_legal, legal_actions  # noqa: F401  (re-exported)
from sim.escape.greedy import (  # noqa: F401  (re-exported: the policy interface)
    PolicyView,
    arms_first,
    best_struggle,
    declared_numerator,
    greedy,
    plan_help,
    plan_own,
)
from sim.escape.model import BUILTIN_POLICIES
from sim.escape.params import SEVERE
from sim.escape.state import Action
from sim.escape.team import team

# ---------------------------------------------------------------------------------------------
# custom policies (R-ESC-6)


def names_code(name: str) -> bool:
    """Whether a policy name is a ``"package.module:callable"`` (importing it runs Python code)."""
    return name not in BUILTIN_POLICIES and ":" in name


def require_code_opt_in(name: str, allow_code: bool) -> None:
    """Refuse a ``module:callable`` policy named in a scenario file unless the user opted in.

    A scenario file is data that designers share; importing the module it names runs code. The
    opt-in is ``--allow-code`` (or the policy given on the command line as ``--policy``); in Python,
    ``allow_code=True``. Built-in policies need nothing. A module that does not exist at all is
    reported as such (found without importing anything)."""
    if not names_code(name) or allow_code:
        return
    module_name = name.partition(":")[0]
    top = module_name.split(".")[0]
    try:
        missing = importlib.util.find_spec(top) is None  # searches sys.path; runs no module code
    except (ImportError, ValueError):
        missing = True
    if missing:
        raise ScenarioError(f"cannot import policy module {module_name!r}: no module named {top!r}",
                            key="policy.name")
    hint = OPT_IN_HINT.get() or f"pass --allow-code (or --policy {name}) to run it (Python: allow_code=True)"
    raise ScenarioError(f"{name!r} names Python code; {hint}", key="policy.name")


def load_policy(name: str) -> Callable[[PolicyView], Sequence[Action | None]]:
    """A built-in policy by name, or a callable from ``"package.module:callable"``."""
    if name == "greedy":
        return greedy
    if name == "arms_first":
        return arms_first
    if name == "team":
        return team
    if ":" not in name:
        raise ScenarioError(
            f"expected a built-in policy ({', '.join(BUILTIN_POLICIES)}) or 'package.module:callable'; given {name!r}",
            key="policy.name",
        )
    module_name, _, attr = name.partition(":")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # any import failure of user code is invalid input
        raise ScenarioError(f"cannot import policy module {module_name!r}: {exc}", key="policy.name") from None
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise ScenarioError(f"{module_name!r} has no callable {attr!r}", key="policy.name")
    return fn


def untie_result(tier: int) -> int:
    """R-ESC-10b: tier <= severe is removed; complete or above becomes severe."""
    return 0 if tier <= SEVERE else SEVERE
