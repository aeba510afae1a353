"""Where the escape engine spends its time, by rule step (issue 27): the engine's own round (R-ESC-5) with the
processor's cycle counter read between its compiled steps.

The profiled round calls the same compiled step functions as :func:`sim.escape.kernel.play_round`, in the same
order, with the cycle counter (LLVM's ``readcyclecounter``) read between them (and between the parts of the
planning step, for the policies greedy and team); the cycles of each step are
summed over every round of every run. Reading the counter costs a few cycles and keeps the compiler from moving
work across the steps, so the total is a little above the engine's own time: the shares are the result, and the
script prints the engine's unprofiled time beside them. Also counted: the uniforms drawn per character-round.

    python bench/escape_steps.py [--heavy] [--runs 100000] [--policy greedy] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
from cycle_counter import cycles  # bench/, beside this script
from numba import njit

import sim
from sim.escape import kernel as K
from sim.escape.params import compile_params

HERE = Path(__file__).parent
PARTS = ("own steps 0-1 and items", "best struggle (step 2)", "own step 3 and items", "help steps 4-6",
         "team pass")
STEPS = ("start_round", "declare_actions", "count_actions", "attach_help", "resolve_struggles",
         "resolve_unties_and_items", "resolve_rests", "resolve_searches", "add_attention", "apply_composure",
         "end_tests")
PART0 = len(STEPS) + 2  # acc: steps, rounds, uniforms, then the parts of declare_actions


@njit(_nrt=False)
def profiled_declare(R, st, j, sc, policy, acc):
    """:func:`sim.escape.kernel.declare_actions` (greedy and team) with its parts timed: the own steps before
    the best struggle (steps 0-1 and the items), the best struggle (step 2), the rest of the own plan, the
    helpers (steps 4-6), the team pass."""
    plan = sc.plan
    for i in range(R.game[K.N_CHARS]):
        K.set_action(plan, i, K.NONE, -1, -1, -1, -1, False)
    for i in range(R.game[K.N_CHARS]):
        if sc.dazed[i]:
            continue
        t0 = cycles()
        done = K.plan_recover(R, st, j, i, plan)
        if not done and K.can_untie_self(R, st, j, i):
            own = K.highest_own_goal(R, st, j, i, False)
            if own >= 0:
                K.set_action(plan, i, K.UNTIE, own, -1, i, -1, False)
                done = True
        if not done and K.holds_items(R, st, j, i):
            s = K.highest_own_goal(R, st, j, i, True)
            if s >= 0:
                K.set_action(plan, i, K.USE_ITEM, s, -1, i, K.item_for(R, st, j, i, st.tiers[j, i, s]), False)
                done = True
        t1 = cycles()
        acc[PART0] += t1 - t0
        if done:
            continue
        num, slot, ability = K.best_struggle(R, st, j, i, -1)
        t2 = cycles()
        acc[PART0 + 1] += t2 - t1
        if slot >= 0:
            K.plan_struggle(R, st, j, i, sc, num, slot, ability)
            continue
        if K.can_untie_other(R, st, j, i):
            c, s = K.highest_teammate(R, st, j, i, False)
            if c >= 0:
                K.set_action(plan, i, K.UNTIE, s, -1, c, -1, False)
                acc[PART0 + 2] += cycles() - t2
                continue
        if K.holds_items(R, st, j, i) and K.can_help_physically(st, j, i):
            c, s = K.highest_teammate(R, st, j, i, True)
            if c >= 0:
                K.set_action(plan, i, K.USE_ITEM, s, -1, c, K.item_for(R, st, j, i, st.tiers[j, c, s]), False)
        acc[PART0 + 2] += cycles() - t2
    t3 = cycles()
    for i in range(R.game[K.N_CHARS]):
        if not sc.dazed[i] and plan[i, K.P_KIND] == K.NONE:
            K.plan_help(R, st, j, i, sc)
    t4 = cycles()
    acc[PART0 + 3] += t4 - t3
    if policy == K.TEAM:
        K.team_pass(R, st, j, sc, st.runs[j, K.ROUNDS])
    acc[PART0 + 4] += cycles() - t4


@njit(_nrt=False)
def profiled_engine(R, st, sc, key, policy, acc):
    """:func:`sim.escape.kernel.run_engine` (PLAY_RUNS) with the cycles of each step summed into ``acc``;
    ``acc[len(STEPS)]`` counts rounds, ``acc[len(STEPS) + 1]`` uniforms."""
    keys = (key[0], key[1])
    n_steps = 11
    for j in range(st.runs.shape[0]):
        while st.runs[j, K.OUTCOME] == K.RUNNING:
            t0 = cycles()
            K.start_round(R, st, j, sc)
            t1 = cycles()
            profiled_declare(R, st, j, sc, policy, acc)
            t2 = cycles()
            for i in range(R.game[K.N_CHARS]):
                if sc.plan[i, K.P_KIND] != K.NONE:
                    st.action_counts[j, i, sc.plan[i, K.P_KIND]] += 1
            t3 = cycles()
            attention = K.attach_help(R, st, j, sc)
            round_keys = K.round_keys(keys, j, st.runs[j, K.ROUNDS])
            t4 = cycles()
            K.resolve_struggles(R, st, j, sc, round_keys)
            t5 = cycles()
            K.resolve_unties_and_items(R, st, j, sc)
            t6 = cycles()
            K.resolve_rests(R, st, j, sc, round_keys)
            t7 = cycles()
            K.resolve_searches(R, st, j, sc, round_keys)
            t8 = cycles()
            K.add_attention(st, j, attention)
            t9 = cycles()
            K.apply_composure(R, st, j, sc, round_keys)
            t10 = cycles()
            K.end_tests(R, st, j, sc)
            t11 = cycles()
            acc[0] += t1 - t0
            acc[1] += t2 - t1
            acc[2] += t3 - t2
            acc[3] += t4 - t3
            acc[4] += t5 - t4
            acc[5] += t6 - t5
            acc[6] += t7 - t6
            acc[7] += t8 - t7
            acc[8] += t9 - t8
            acc[9] += t10 - t9
            acc[10] += t11 - t10
            acc[n_steps] += 1
            for i in range(R.game[K.N_CHARS]):
                acc[n_steps + 1] += sc.counts[i]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--heavy", action="store_true", help="the heavy party (bench/escape_heavy.toml)")
    ap.add_argument("--runs", type=int, default=100_000)
    ap.add_argument("--policy", default="greedy")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    p = compile_params(sim.load_scenario(HERE / ("escape_heavy.toml" if args.heavy else "escape_party.toml")))
    rules = K.rules_of(p)
    key = np.array([12345, 67890], dtype=np.uint64)
    code = K.POLICY_CODES[args.policy]
    acc = np.zeros(PART0 + len(PARTS), dtype=np.uint64)
    profiled_engine(rules, K.initial_batch(p, 10), K.new_scratch(p), key, code, acc)  # compile
    K.run_engine(rules, K.initial_batch(p, 10), K.new_scratch(p), key, code, K.PLAY_RUNS, K.NO_PLAN)
    plain = prof = float("inf")
    for _ in range(max(1, args.repeat)):  # alternating; the fastest of each is rated (the machine is shared)
        st = K.initial_batch(p, args.runs)
        t = time.process_time()
        K.run_engine(rules, st, K.new_scratch(p), key, code, K.PLAY_RUNS, K.NO_PLAN)
        plain = min(plain, time.process_time() - t)
        st = K.initial_batch(p, args.runs)
        trial = np.zeros_like(acc)
        t = time.process_time()
        profiled_engine(rules, st, K.new_scratch(p), key, code, trial)
        spent = time.process_time() - t
        if spent < prof:
            prof, acc = spent, trial
    rounds = int(acc[len(STEPS)])
    char_rounds = rounds * p.n_chars
    total = float(acc[: len(STEPS)].sum())
    print(f"{args.runs:,} runs, {char_rounds:,} character-rounds; load average {os.getloadavg()[0]:.1f}")
    print(f"engine unprofiled: {plain:.3f} s CPU = {char_rounds / plain / 1e6:.2f} M character-rounds/s; "
          f"profiled {prof:.3f} s")
    print(f"uniforms per character-round: {acc[len(STEPS) + 1] / char_rounds:.2f}")
    print("| step | share | ns per round (scaled to the unprofiled time) |")
    print("|---|---|---|")
    for name, c in zip(STEPS, acc[: len(STEPS)], strict=True):
        share = float(c) / total
        print(f"| {name} | {share:.1%} | {share * plain / rounds * 1e9:.0f} |")
    for name, c in zip(PARTS, acc[PART0:], strict=True):
        share = float(c) / total
        print(f"| - declare_actions: {name} | {share:.1%} | {share * plain / rounds * 1e9:.0f} |")


if __name__ == "__main__":
    main()
