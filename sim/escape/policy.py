"""Escape policies by name: the built-in `greedy`, `arms_first` (:mod:`sim.escape.greedy`) and `team`
(:mod:`sim.escape.team`), and custom policies loaded from ``"package.module:callable"`` with legality
checks (R-ESC-6). Custom policies run on the scalar reference engine only.

A policy is called once a round with a :class:`PolicyView` and returns one action per character
(``None`` for a dazed character, whose action is ignored)."""

from __future__ import annotations

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
    raise ScenarioError(
        f"{name!r} names Python code; pass --allow-code (or --policy {name}) to run it "
        "(Python: allow_code=True)", key="policy.name")


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
    name = p.names[i]

    def fail(rule: str, why: str) -> PolicyError:
        return PolicyError(f"policy: illegal action for {name!r} in round {rnd}: {why} ({rule})")

    kinds = ("struggle", "assist", "guide", "search", "rest", "untie", "use_item", "bless")
    if p.volume1:
        kinds += ("channel", "inspire", "meditate")  # R-ESC-14b
    if not isinstance(a, Action) or a.kind not in kinds:
        raise fail("R-ESC-5", f"expected an Action, got {a!r}")
    c = st.chars[i]
    n = p.n_chars
    if a.kind == "struggle":
        if not 0 <= a.slot < N_SLOTS or not may_struggle(c, a.slot):
            raise fail("R-ESC-2/R-ESC-11", f"slot {a.slot} cannot be struggled")
        if a.ability not in allowed_abilities(c, a.slot):
            raise fail("R-ESC-11", f"ability {a.ability} is not allowed on slot {a.slot}")
        if a.breath and not (p.is_monk[i] and c.breath > 0):
            raise fail("R-ESC-14", "no breath point to spend")
        if a.rage and not (has_rage(c) and a.ability == STR):
            raise fail("R-ESC-14a", "rage needs a rage use left and a str check")
        if a.terrain and not c.terrain > 0:
            raise fail("R-ESC-14a", "no favoured-terrain use to spend")
    elif a.kind in ("assist", "guide"):
        if not 0 <= a.target < n or a.target == i:
            raise fail("R-ESC-8", "the target must be another party member")
        if a.kind == "assist" and not can_assist(p, i, c):
            raise fail("R-ESC-7", "cannot help physically")
        if a.kind == "guide" and not (can_guide(c) and can_be_guided(st.chars[a.target])):
            raise fail("R-ESC-9", "guide needs gag and blindfold 0 and the target's earplugs 0")
    elif a.kind == "search":
        if not can_search(p, c):
            raise fail("R-ESC-10", "cannot search (no search configured, or blindfold/legs/body)")
    elif a.kind == "untie":
        if not 0 <= a.target < n or not 0 <= a.slot < N_SLOTS:
            raise fail("R-ESC-10b", "no such target or slot")
        if not can_untie_self(p, c) or (a.target != i and not can_untie_other(p, c)):
            raise fail("R-ESC-10b", "needs free arms and no body wrap (and R-ESC-7 to untie another)")
        if st.chars[a.target].tiers[a.slot] == 0:
            raise fail("R-ESC-10b", "that slot is already free")
    elif a.kind == "use_item":
        if not 0 <= a.item < len(c.held):
            raise fail("R-ESC-10", "no such held release item")
        if not 0 <= a.target < n or not 0 <= a.slot < N_SLOTS:
            raise fail("R-ESC-10", "no such target or slot")
        tier = st.chars[a.target].tiers[a.slot]
        if not 1 <= tier <= int(p.item_max_tier[c.held[a.item]]):
            raise fail("R-ESC-10", "the item does not cover that restraint")
        if a.target != i and not can_help_physically(c):
            raise fail("R-ESC-7", "cannot help physically")
    elif a.kind == "bless":
        if not can_bless(p, i, c):
            raise fail("R-ESC-14", "only a cleric with gag 0 and mask 0 can bless")
    elif a.kind == "channel":
        if not c.channel > 0:
            raise fail("R-ESC-14b", "no channel divinity use left")
    elif a.kind == "meditate":
        if not c.ki > 0:
            raise fail("R-ESC-14b", "no ki point left")
    elif a.kind == "inspire":
        if not 0 <= a.target < n or a.target == i:
            raise fail("R-ESC-14b", "the target must be another party member")
        if not (can_inspire(p, i, c) and can_be_guided(st.chars[a.target])):
            raise fail("R-ESC-14b", "inspire needs a use left, gag 0 and the target's earplugs 0")
    return a


def untie_result(tier: int) -> int:
    """R-ESC-10b: tier <= severe is removed; complete or above becomes severe."""
    return 0 if tier <= SEVERE else SEVERE
