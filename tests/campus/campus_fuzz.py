"""Random campus scenarios for agreement tests (helper module, imported by the tests)."""

from __future__ import annotations

import numpy as np

from sim.scenario import parse_scenario

STANCES = ["fight", "flee", "hide"]


def random_scenario_dict(seed: int) -> dict:
    """A random but valid campus scenario exercising every optional rule."""
    g = np.random.default_rng(seed)
    n_loc = int(g.integers(2, 7))
    n_rooms = int(g.integers(1, 3))
    locs = []
    for k in range(n_loc):
        locs.append({"id": f"L{k}"})
    for k in range(n_rooms):
        room = {"id": f"R{k}", "capture_room": True}
        if g.random() < 0.4:
            room["escape_offset"] = int(g.integers(-6, 3))
        locs.append(room)
    if g.random() < 0.6:
        locs[0]["exit"] = True
        locs[0]["opens_on"] = int(g.integers(1, 8))
    room_ids = [f"R{k}" for k in range(n_rooms)]
    loc_ids = [x["id"] for x in locs]
    advs = []
    for k in range(int(g.integers(1, 4))):
        a = {
            "name": f"A{k}",
            "abilities": {s: int(g.integers(0, 25)) for s in STANCES},
            "reward": int(g.integers(0, 4)),
            "boss": bool(g.random() < 0.3),
        }
        r = g.random()
        if r < 0.3:
            a["stance"] = STANCES[int(g.integers(0, 3))]
        elif r < 0.7:
            a["stance"] = {s: int(g.integers(0, 4)) for s in STANCES}
            if sum(a["stance"].values()) == 0:
                a["stance"]["hide"] = 1
        if g.random() < 0.5:
            a["bonus"] = {STANCES[int(g.integers(0, 3))]: int(g.integers(-2, 4))}
        if g.random() < 0.5:
            a["multiplier"] = {STANCES[int(g.integers(0, 3))]: float(g.choice([0.5, 1.5, 2, 3]))}
        if g.random() < 0.5:
            a["capture_room"] = room_ids[int(g.integers(0, n_rooms))]
        advs.append(a)
    spawns = []
    for _ in range(int(g.integers(1, 5))):
        first = int(g.integers(1, 8))
        sp = {
            "adversary": advs[int(g.integers(0, len(advs)))]["name"],
            "turns": [first, first + int(g.integers(0, 8))],
            "count": int(g.integers(1, 4)),
            "chance": float(g.choice([1, 0.3, 0.7])),
        }
        if g.random() < 0.4:
            sp["locations"] = list(g.choice(loc_ids, size=int(g.integers(1, 3)), replace=False))
        spawns.append(sp)
    missions = []
    for _ in range(int(g.integers(0, 3))):
        m = {
            "location": loc_ids[int(g.integers(0, n_loc))],
            "stance": STANCES[int(g.integers(0, 3))],
            "mode": str(g.choice(["sum", "each"])),
            "target": int(g.integers(5, 40)),
            "reward": int(g.integers(0, 4)),
            "chance": float(g.choice([1, 0.5])),
        }
        if g.random() < 0.5:
            m["penalty"] = {"vitality": int(g.integers(1, 3))}
        else:
            m["penalty"] = {"ability": STANCES[int(g.integers(0, 3))], "amount": int(g.integers(1, 20))}
        missions.append(m)
    n_pc = int(g.integers(1, 7))
    party = []
    for k in range(n_pc):
        pc = {"name": f"P{k}", "abilities": {s: int(g.integers(0, 20)) for s in STANCES}}
        skills = []
        if g.random() < 0.5:
            skills.append({"kind": "bonus", "stances": [STANCES[int(g.integers(0, 3))]],
                           "value": int(g.integers(1, 4))})
        if g.random() < 0.4:
            skills.append({"kind": "multiplier", "stances": [STANCES[int(g.integers(0, 3))]], "value": 2,
                           "when": str(g.choice(["always", "advantage"]))})
        if g.random() < 0.3:
            skills.append({"kind": "early_ears"})
        if g.random() < 0.3:
            skills.append({"kind": "nursing"})
        if g.random() < 0.3:
            skills.append({"kind": "gp_per_turn", "value": int(g.integers(-1, 2))})
        if g.random() < 0.6:
            pc["team"] = str(g.choice(["X", "Y"]))
        if g.random() < 0.3:
            pc["vitality"] = int(g.integers(1, 5))
        if k > 0 and g.random() < 0.2:
            pc["exclude"] = [f"P{int(g.integers(0, k))}"]
        pc["skills"] = skills
        party.append(pc)
    rules = {
        "turns": int(g.integers(1, 14)),
        "team_max": int(g.integers(2, 4)),
        "vitality": int(g.integers(1, 4)),
        "escape_offset": int(g.integers(-4, 2)),
        "miso_bomb": bool(g.random() < 0.5),
    }
    if g.random() < 0.5:
        rules["options"] = int(g.integers(1, len(locs) + 1))
    policy = {
        "move": str(g.choice(["random", "avoid"])),
        "stance": str(g.choice(["fixed", "random", "best", "counter"])),
        "stance_value": STANCES[int(g.integers(0, 3))],
        "growth": str(g.choice(["none", "lowest", "best"])),
        "rescue": bool(g.random() < 0.6),
    }
    if g.random() < 0.3:  # R-CAM-6: the reading before the revision, now a switch
        rules["fights"] = "once"
    return {
        "kind": "campus", "name": f"fuzz {seed}", "rules": rules, "locations": locs, "adversaries": advs,
        "spawns": spawns, "missions": missions, "party": party, "policy": policy,
    }


def random_scenario(seed: int):
    return parse_scenario(random_scenario_dict(seed), f"<fuzz {seed}>")


def random_purchase_scenario_dict(seed: int) -> dict:
    """A random scenario with R-CAM-9a purchases ([growth.costs], policy.buy, save_for_buy) and R-CAM-25a missions
    (found_by, miso bombs in missions); its own draws come after the base scenario's."""
    d = random_scenario_dict(seed)
    g = np.random.default_rng([seed, 9])
    skills = []
    for k in range(int(g.integers(1, 4))):
        kind = str(g.choice(["bonus", "multiplier", "early_ears", "nursing", "gp_per_turn"]))
        sk = {"name": f"S{k}", "cost": int(g.integers(0, 6)), "kind": kind}
        if kind == "bonus":
            sk.update(stances=[STANCES[int(g.integers(0, 3))]], value=int(g.integers(-1, 5)))
        elif kind == "multiplier":
            sk.update(stances=[STANCES[int(g.integers(0, 3))]], value=float(g.choice([0.5, 1.5, 2, 3])),
                      when=str(g.choice(["always", "advantage"])))
        elif kind == "gp_per_turn":
            sk["value"] = int(g.integers(-1, 3))
        skills.append(sk)
    costs = {"skills": skills}
    buy = [sk["name"] for sk in skills if g.random() < 0.8]
    if g.random() < 0.7:
        costs["team"] = int(g.integers(0, 5))
        buy.insert(int(g.integers(0, len(buy) + 1)), f"team:{g.choice(['X', 'Y', 'Z'])}")
    d["growth"] = {"costs": costs}
    d["policy"]["buy"] = buy
    d["policy"]["save_for_buy"] = bool(g.random() < 0.5)
    for m in d["missions"]:
        if g.random() < 0.5:
            m["found_by"] = "early_ears"
    if g.random() < 0.2:
        d["rules"]["miso_in_missions"] = False
    return d


def random_purchase_scenario(seed: int):
    return parse_scenario(random_purchase_scenario_dict(seed), f"<fuzz purchases {seed}>")
