"""Escape policies for the scalar reference: `greedy` (R-ESC-20, R-ESC-31), `arms_first`, and
custom policies loaded from ``"package.module:callable"`` with legality checks (R-ESC-6).

A policy is called once a round with a :class:`PolicyView` and returns one action per character
(``None`` for a dazed character, whose action is ignored)."""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sim.dice import CHECK_DENOMINATOR
from sim.errors import PolicyError, ScenarioError
from sim.escape.model import BUILTIN_POLICIES
from sim.escape.params import ARMS, FINGERS, N_SLOTS, SEVERE, EscapeParams
from sim.escape.state import (
    BLESS,
    REST,
    SEARCH,
    Action,
    CharState,
    PartyState,
    allowed_abilities,
    can_assist,
    can_be_guided,
    can_bless,
    can_guide,
    can_help_physically,
    can_search,
    can_untie_other,
    can_untie_self,
    check_spec,
    may_struggle,
    spec_numerator,
)


@dataclass(frozen=True)
class PolicyView:
    """What a policy sees: the state at the start of the round (read-only by convention)."""

    params: EscapeParams
    state: PartyState
    round: int
    dazed: tuple[bool, ...]


# ---------------------------------------------------------------------------------------------
# greedy (R-ESC-20, R-ESC-31)


def _highest(cands: list[tuple[int, int]], tiers_of) -> tuple[int, int] | None:
    """The (char, slot) of highest tier; ties by the given order of ``cands``."""
    best = None
    best_tier = 0
    for ci, s in cands:
        t = tiers_of(ci)[s]
        if t > best_tier:
            best, best_tier = (ci, s), t
    return best


def _item_for(p: EscapeParams, c: CharState, tier: int) -> int:
    """Position in ``c.held`` of the release item covering ``tier`` with the smallest max_tier
    (ties: the lowest item index), or -1 (R-ESC-31)."""
    best, best_key = -1, None
    for k, item in enumerate(c.held):
        m = int(p.item_max_tier[item])
        if tier <= m and (best_key is None or (m, item) < best_key):
            best, best_key = k, (m, item)
    return best


def best_struggle(p: EscapeParams, i: int, c: CharState, slots: Sequence[int]) -> tuple[int, int, int] | None:
    """R-ESC-20 step 2: (numerator, slot, ability) of the best (slot, ability) pair among ``slots``.

    Ties: the slot struggled last round, then slot order, then str, dex, int (R-ESC-31)."""
    best = None
    best_key = None
    for s in slots:
        if not may_struggle(c, s):
            continue
        for a in allowed_abilities(c, s):
            num = spec_numerator(check_spec(p, i, c, s, a))
            key = (num, s == c.last_slot, -s, -a)
            if best_key is None or key > best_key:
                best, best_key = (num, s, a), key
    return best


def _struggle_action(p: EscapeParams, i: int, c: CharState, num: int, slot: int, ability: int) -> Action:
    # R-ESC-14 / R-ESC-31: a monk spends a breath point when the probability is below 1/2
    breath = bool(p.is_monk[i]) and c.breath > 0 and 2 * num < CHECK_DENOMINATOR
    return Action("struggle", slot=slot, ability=ability, breath=breath)


def declared_numerator(p: EscapeParams, i: int, c: CharState, a: Action) -> int:
    """The success numerator of a declared struggle without this round's assists and guides
    (blessing and breath included)."""
    return spec_numerator(check_spec(p, i, c, a.slot, a.ability, breath=a.breath))


def plan_own(p: EscapeParams, st: PartyState, i: int) -> Action | None:
    """Greedy steps 1-3 (with the item steps) for character ``i``; None means 'help or rest'."""
    c = st.chars[i]
    own_goal = [s for s in range(N_SLOTS) if p.goal[s] and c.tiers[s] > 0]
    # step 1: untie its own highest-tier goal restraint
    if can_untie_self(c) and own_goal:
        _, s = _highest([(i, s) for s in own_goal], lambda ci: st.chars[ci].tiers)
        return Action("untie", slot=s, target=i)
    # after step 1: a release item on its own highest-tier covered goal restraint
    if c.held:
        covered = [(i, s) for s in own_goal if _item_for(p, c, c.tiers[s]) >= 0]
        pick = _highest(covered, lambda ci: st.chars[ci].tiers)
        if pick is not None:
            return Action("use_item", slot=pick[1], target=i, item=_item_for(p, c, c.tiers[pick[1]]))
    # step 2: struggle the best pair
    best = best_struggle(p, i, c, own_goal)
    if best is not None:
        return _struggle_action(p, i, c, *best)
    # step 3: untie a teammate's highest-tier restraint (any slot)
    mates = [(j, s) for j in range(p.n_chars) if j != i for s in range(N_SLOTS)]
    if can_untie_other(c):
        pick = _highest(mates, lambda ci: st.chars[ci].tiers)
        if pick is not None:
            return Action("untie", slot=pick[1], target=pick[0])
    # after step 3: a release item on the highest-tier teammate restraint one covers
    if c.held and can_help_physically(c):
        covered = [(j, s) for j, s in mates if st.chars[j].tiers[s] > 0 and _item_for(p, c, st.chars[j].tiers[s]) >= 0]
        pick = _highest(covered, lambda ci: st.chars[ci].tiers)
        if pick is not None:
            j, s = pick
            return Action("use_item", slot=s, target=j, item=_item_for(p, c, st.chars[j].tiers[s]))
    return None


def plan_help(p: EscapeParams, st: PartyState, i: int, plan: list[Action | None]) -> Action:
    """Greedy steps 4-6, once every struggle is declared."""
    c = st.chars[i]
    strugglers = [j for j in range(p.n_chars) if j != i and plan[j] is not None and plan[j].kind == "struggle"]
    nums = {j: declared_numerator(p, j, st.chars[j], plan[j]) for j in strugglers}

    def lowest(cands):
        return min(cands, key=lambda j: (nums[j], j))

    if strugglers and can_assist(p, i, c):  # step 4: assist
        return Action("assist", target=lowest(strugglers))
    if can_guide(c):  # else guide
        guidable = [j for j in strugglers if can_be_guided(st.chars[j])]
        if guidable:
            return Action("guide", target=lowest(guidable))
    if can_bless(p, i, c):  # else bless, while another member still has a goal slot above 0
        others_bound = any(
            st.chars[j].tiers[s] > 0 for j in range(p.n_chars) if j != i for s in range(N_SLOTS) if p.goal[s]
        )
        if others_bound:
            return BLESS
    if can_search(p, c):  # step 5
        return SEARCH
    return REST  # step 6


def greedy(view: PolicyView) -> list[Action | None]:
    """R-ESC-20: the reference policy."""
    p, st = view.params, view.state
    plan: list[Action | None] = [None if view.dazed[i] else plan_own(p, st, i) for i in range(p.n_chars)]
    out: list[Action | None] = []
    for i in range(p.n_chars):
        if view.dazed[i]:
            out.append(None)
        elif plan[i] is not None:
            out.append(plan[i])
        else:
            out.append(plan_help(p, st, i, plan))
    return out


def arms_first(view: PolicyView) -> list[Action | None]:
    """`arms_first`: free the arms, then the fingers (to get free hands), then untie.

    Each character not dazed: if it can untie itself, as greedy step 1; else it struggles its arms
    while they are bound and it may, then its fingers; otherwise it plays greedy."""
    p, st = view.params, view.state
    plan: list[Action | None] = []
    for i in range(p.n_chars):
        c = st.chars[i]
        action = None
        if not view.dazed[i] and not can_untie_self(c):
            for slot in (ARMS, FINGERS):
                best = best_struggle(p, i, c, [slot]) if c.tiers[slot] > 0 else None
                if best is not None:
                    action = _struggle_action(p, i, c, *best)
                    break
        if action is None and not view.dazed[i]:
            action = plan_own(p, st, i)
        plan.append(action)
    return [
        None if view.dazed[i] else (plan[i] if plan[i] is not None else plan_help(p, st, i, plan))
        for i in range(p.n_chars)
    ]


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
        from sim.escape.team import team

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

    if not isinstance(a, Action) or a.kind not in (
        "struggle", "assist", "guide", "search", "rest", "untie", "use_item", "bless"
    ):
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
        if not can_untie_self(c) or (a.target != i and not can_untie_other(c)):
            raise fail("R-ESC-10b", "needs free hands (and R-ESC-7 to untie another)")
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
            raise fail("R-ESC-14", "only a cleric with gag 0 can bless")
    return a


def untie_result(tier: int) -> int:
    """R-ESC-10b: tier <= severe is removed; complete or above becomes severe."""
    return 0 if tier <= SEVERE else SEVERE
