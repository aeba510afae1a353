"""The dice race's scenario format: two sides roll 1d6 each round and add it to their totals; the first whose
total reaches ``target`` wins (both at once: the higher total, equal totals a draw); a race still open at
``run.max_rounds`` is a draw. ``policy.name = "favoured"`` adds ``bonus`` to side A's roll every round."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from sim.errors import ScenarioError
from sim.scenario import RunSettings, ScenarioBase, Strict

NAME = "dice_race"


class RaceRun(RunSettings):
    max_rounds: int = Field(30, ge=1, le=1000, description="Rounds before an open race is a draw.")


class RacePolicy(Strict):
    name: Literal["even", "favoured"] = Field("even", description="favoured: side A adds `bonus` every round.")


class Scenario(ScenarioBase):
    kind: Literal["dice_race"] = Field(..., description="The dice race (tests only).")
    target: int = Field(12, ge=1, le=600, description="The total that wins the race.")
    bonus: int = Field(1, ge=0, le=6, description="What side A adds every round under the favoured policy.")
    run: RaceRun = RaceRun()
    policy: RacePolicy = RacePolicy()


def check_scenario(scenario: Scenario) -> None:
    if scenario.target > 6 * scenario.run.max_rounds + scenario.bonus * scenario.run.max_rounds:
        raise ScenarioError(f"no side can reach {scenario.target} within {scenario.run.max_rounds} rounds",
                            key="target")
