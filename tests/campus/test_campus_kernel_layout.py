"""The campus engine's flat tables (issue 27): a field is NC cells, indexed by location, PC, adversary slot, skill,
buy-list item or team, so every count a valid scenario may have must stay below NC, and the fields must not
overlap (a cell written through one field would change another)."""

from __future__ import annotations

from sim.campus import kernel as K
from sim.campus.model import MAX_LOCATIONS, MAX_PARTY, MAX_PURCHASABLE, MAX_SPAWN_SLOTS


def test_a_field_holds_every_count_the_scenario_limits_allow():
    # locations: at most MAX_LOCATIONS; adversary slots: the spawn slots (at most MAX_SPAWN_SLOTS in all) plus a
    # miso bomb slot per PC (R-CAM-57); skills to buy: MAX_PURCHASABLE; buy-list items: MAX_PURCHASABLE + 1 (the
    # skills and a team); teams: one per PC at most from the party, plus the buy list's. The scratch also keeps
    # a list one longer than the most of these (the groups' first members, R-CAM-6).
    most = max(MAX_LOCATIONS, MAX_SPAWN_SLOTS + MAX_PARTY, MAX_PURCHASABLE + 1, MAX_PARTY + MAX_PURCHASABLE + 1)
    assert K.NC >= most + 1


def test_fields_are_whole_rows_in_order():
    # _fields(first, 1, 3): a field of one row at `first`, one of three rows after it, then the offset after both
    assert K._fields(5, 1, 3) == (5, 5 + K.NC, 5 + 4 * K.NC)
    terms = [K.LOC_IS_ROOM, K.LOC_IS_EXIT, K.LOC_OPENS_ON, K.LOC_ROOM_OFFSET, K.LOC_ROOMS, K.LOC_PLAIN, K.PC_BASE,
             K.PC_BONUS, K.PC_NUM, K.PC_DEN, K.PC_VIT, K.PC_TEAM, K.PC_EARS, K.PC_NURSE, K.PC_GPT, K.ADV_TEMPLATE,
             K.ADV_BOSS, K.ADV_REWARD, K.ADV_ROOM, K.ADV_BASE, K.ADV_BONUS, K.ADV_NUM, K.ADV_DEN, K.ADV_WNUM,
             K.ADV_FIRST, K.ADV_LAST, K.ADV_N_CANDS, K.ADV_FIXED_STANCE, K.SK_COST, K.SK_BONUS, K.SK_NUM, K.SK_DEN,
             K.SK_EARS, K.SK_NURSE, K.SK_GPT, K.BUY_SKILL, K.BUY_TEAM, K.PC_EXCL]
    work = [K.W_DEST, K.W_FREE0, K.W_BONUS, K.W_NUM, K.W_DEN, K.W_ADV_PRESENT, K.W_A_BASE, K.W_A_NUM, K.W_A_DEN,
            K.W_OPT, K.W_SCORE, K.G_STATUS, K.G_BASE, K.G_RESCUES_TRIED, K.G_WINS_STANCE, K.W_FOUGHT]
    for offsets in (terms, work):
        assert all(x % K.NC == 0 for x in offsets)  # each field starts a row
        assert offsets == sorted(set(offsets))  # in order, none shared
    # the multi-row fields: 3 stances, 3 x 2 multiplier terms (R-CAM-30)
    assert (K.PC_BONUS - K.PC_BASE, K.PC_DEN - K.PC_NUM, K.W_DEN - K.W_NUM, K.W_A_DEN - K.W_A_NUM) == (
        3 * K.NC, 6 * K.NC, 6 * K.NC, 6 * K.NC)
    # the counts by turn follow a row of bosses fought per possible group (one per PC)
    assert K.G_CAPTURES_T == K.W_FOUGHT + MAX_PARTY * K.NC
