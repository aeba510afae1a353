"""Escape policies by name: the built-in `greedy`, `arms_first` (:mod:`sim.escape.greedy`) and `team`
(:mod:`sim.escape.team`), and custom policies loaded from ``"package.module:callable"`` with legality
checks (R-ESC-6). Custom policies run on the scalar reference engine only.

A policy is called once a round with a :class:`PolicyView` and returns one action per character
(``None`` for a dazed character, whose action is ignored)."""

from __future__ import annotations

import contextvars
import importlib
import importlib.util
from collections.abc import Callable, Sequence

from sim.errors import PolicyError, ScenarioError
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
from sim.escape.params import N_SLOTS, SEVERE, STR, EscapeParams
from sim.escape.state import (
    Action,
    PartyState,
    allowed_abilities,
    can_assist,
    can_be_guided,
    can_bless,
    can_guide,
    can_help_physically,
    can_inspire,
    can_search,
    can_untie_other,
    can_untie_self,
    has_rage,
    may_struggle,
)
from sim.escape.team import team

# ---------------------------------------------------------------------------------------------
# custom policies (R-ESC-6)


def names_code(name: str) -> bool:
    """Whether a policy name is a ``"package.module:callable"`` (importing it runs Python code)."""
    return name not in BUILTIN_POLICIES and ":" in name


#: how a refused ``module:callable`` policy tells the user to opt in; a command without ``--allow-code`` sets what it
#: takes instead (sim/cli.py), so that no refusal names a flag its command rejects
OPT_IN_HINT: contextvars.ContextVar[str | None] = contextvars.ContextVar("sim_opt_in_hint", default=None)


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


def check_action(p: EscapeParams, st: PartyState, i: int, a: object, rnd: int) -> Action:
    """R-ESC-6: validate a custom policy's action; a PolicyError names character, round and rule."""
    kinds = ("struggle", "assist", "guide", "search", "rest", "untie", "use_item", "bless")
    if p.volume1:
        kinds += ("channel", "inspire", "meditate")  # R-ESC-14b
    if not isinstance(a, Action) or a.kind not in kinds:
        problem = ("R-ESC-5", f"expected an Action, got {a!r}")
    else:
        problem = _ACTION_CHECKS[a.kind](p, st, i, a)
    if problem is not None:
        rule, why = problem
        raise PolicyError(f"policy: illegal action for {p.names[i]!r} in round {rnd}: {why} ({rule})")
    return a


#: what makes an action illegal: (rule, why), or None for a legal one
_Problem = tuple[str, str] | None


def _struggle_problem(p: EscapeParams, st: PartyState, i: int, a: Action) -> _Problem:
    """R-ESC-2/R-ESC-11: a slot that can be struggled, with an allowed ability; R-ESC-14/14a: the resource
    spent (breath, rage, favoured terrain) is there."""
    c = st.chars[i]
    if not 0 <= a.slot < N_SLOTS or not may_struggle(c, a.slot):
        return "R-ESC-2/R-ESC-11", f"slot {a.slot} cannot be struggled"
    if a.ability not in allowed_abilities(c, a.slot):
        return "R-ESC-11", f"ability {a.ability} is not allowed on slot {a.slot}"
    if a.breath and not (p.is_monk[i] and c.breath > 0):
        return "R-ESC-14", "no breath point to spend"
    if a.rage and not (has_rage(c) and a.ability == STR):
        return "R-ESC-14a", "rage needs a rage use left and a str check"
    if a.terrain and not c.terrain > 0:
        return "R-ESC-14a", "no favoured-terrain use to spend"
    return None


def _help_problem(p: EscapeParams, st: PartyState, i: int, a: Action) -> _Problem:
    """assist (R-ESC-7, R-ESC-8) and guide (R-ESC-8, R-ESC-9)."""
    c = st.chars[i]
    if not 0 <= a.target < p.n_chars or a.target == i:
        return "R-ESC-8", "the target must be another party member"
    if a.kind == "assist" and not can_assist(p, i, c):
        return "R-ESC-7", "cannot help physically"
    if a.kind == "guide" and not (can_guide(c) and can_be_guided(st.chars[a.target])):
        return "R-ESC-9", "guide needs gag and blindfold 0 and the target's earplugs 0"
    return None


def _search_problem(p: EscapeParams, st: PartyState, i: int, a: Action) -> _Problem:
    if not can_search(p, st.chars[i]):
        return "R-ESC-10", "cannot search (no search configured, or blindfold/legs/body)"
    return None


def _untie_problem(p: EscapeParams, st: PartyState, i: int, a: Action) -> _Problem:
    """R-ESC-10b: free arms and no body wrap (R-ESC-7 to untie another), on a slot that is bound."""
    c = st.chars[i]
    if not 0 <= a.target < p.n_chars or not 0 <= a.slot < N_SLOTS:
        return "R-ESC-10b", "no such target or slot"
    if not can_untie_self(p, c) or (a.target != i and not can_untie_other(p, c)):
        return "R-ESC-10b", "needs free arms and no body wrap (and R-ESC-7 to untie another)"
    if st.chars[a.target].tiers[a.slot] == 0:
        return "R-ESC-10b", "that slot is already free"
    return None


def _item_problem(p: EscapeParams, st: PartyState, i: int, a: Action) -> _Problem:
    """R-ESC-10: a held release item that covers the restraint (R-ESC-7 to use it on another)."""
    c = st.chars[i]
    if not 0 <= a.item < len(c.held):
        return "R-ESC-10", "no such held release item"
    if not 0 <= a.target < p.n_chars or not 0 <= a.slot < N_SLOTS:
        return "R-ESC-10", "no such target or slot"
    tier = st.chars[a.target].tiers[a.slot]
    if not 1 <= tier <= int(p.item_max_tier[c.held[a.item]]):
        return "R-ESC-10", "the item does not cover that restraint"
    if a.target != i and not can_help_physically(c):
        return "R-ESC-7", "cannot help physically"
    return None


def _class_action_problem(p: EscapeParams, st: PartyState, i: int, a: Action) -> _Problem:
    """bless (R-ESC-14); channel, meditate and inspire (R-ESC-14b)."""
    c = st.chars[i]
    if a.kind == "bless" and not can_bless(p, i, c):
        return "R-ESC-14", "only a cleric with gag 0 and mask 0 can bless"
    if a.kind == "channel" and not c.channel > 0:
        return "R-ESC-14b", "no channel divinity use left"
    if a.kind == "meditate" and not c.ki > 0:
        return "R-ESC-14b", "no ki point left"
    if a.kind == "inspire":
        if not 0 <= a.target < p.n_chars or a.target == i:
            return "R-ESC-14b", "the target must be another party member"
        if not (can_inspire(p, i, c) and can_be_guided(st.chars[a.target])):
            return "R-ESC-14b", "inspire needs a use left, gag 0 and the target's earplugs 0"
    return None


_ACTION_CHECKS = {
    "struggle": _struggle_problem,
    "assist": _help_problem,
    "guide": _help_problem,
    "search": _search_problem,
    "rest": lambda p, st, i, a: None,  # no condition
    "untie": _untie_problem,
    "use_item": _item_problem,
    "bless": _class_action_problem,
    "channel": _class_action_problem,
    "meditate": _class_action_problem,
    "inspire": _class_action_problem,
}


def untie_result(tier: int) -> int:
    """R-ESC-10b: tier <= severe is removed; complete or above becomes severe."""
    return 0 if tier <= SEVERE else SEVERE
