"""Scenario loading: the one boundary that validates input (STYLE.md practice 5).

``load_scenario(path)`` reads a TOML file, picks the model of its ``kind`` and validates it into
an immutable pydantic model. Every problem becomes one :class:`~sim.errors.ScenarioError` line
naming the file, the dotted key, what was expected and what was given (and, for an unknown key,
the nearest valid one).
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
import stat
import tomllib
import types
import typing
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from sim import kinds
from sim.errors import ScenarioError
from sim.limits import (
    MAX_FILE_BYTES,
    MAX_NAME_CHARS,
    MAX_PROBLEMS,
    bounded_folder_name,
    check_data,
    check_toml_text,
    key_part,
    long_integer_error,
)


def __getattr__(name: str):  # KIND_NAMES: the registered kinds, read now (sim/kinds.py)
    if name == "KIND_NAMES":
        return kinds.names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Strict(BaseModel):
    """Base of every scenario table: unknown keys are errors, values are immutable and typed."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class RunSettings(Strict):
    """Run defaults; the command line's --runs and --seed override them."""

    runs: int = Field(20_000, ge=1, le=100_000_000, description="Number of simulated runs (games, duels, ...).")
    seed: int = Field(0, ge=0, le=2**63 - 1, description=(
        "Seed of the random numbers: the same scenario, seed and runs give the same results (R-GEN-7)."))


class PolicySettings(Strict):
    """The policy that decides what the characters do."""

    name: str = Field("greedy", description="A built-in policy name, or \"package.module:callable\" for your own.")


class ScenarioBase(Strict):
    """Fields every kind shares (docs/scenario-format/)."""

    kind: str = Field(..., description="The rule system the scenario is written for.")
    name: str = Field("", max_length=MAX_NAME_CHARS, description=(
        "A short title, shown in reports; the default report folder is named after it (else the file name)."))
    description: str = Field("", max_length=10_000, description=(
        "Free text: the design question the scenario asks; shown at the top of the report."))

    _source: str = PrivateAttr(default="<memory>")
    _hash: str = PrivateAttr(default="")

    @property
    def source(self) -> str:
        """The file the scenario was read from."""
        return self._source

    @property
    def scenario_hash(self) -> str:
        """sha256 of the validated scenario's canonical JSON (STYLE.md practice 12)."""
        if not self._hash:
            canonical = json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
            self._hash = hashlib.sha256(canonical.encode()).hexdigest()
        return self._hash

    @property
    def slug(self) -> str:
        """A folder name for the scenario's reports."""
        base = self.name or Path(self._source).stem or "scenario"
        safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in base.strip().lower())
        return bounded_folder_name(safe.strip("_") or "scenario")  # bytes, not characters, bound a file name


DiceStacking = Literal["cancel", "pool"]

Score = Annotated[int, Field(ge=1, le=30)]


class Scores(Strict):
    """The six ability scores of the d20 kinds (R-GEN-2)."""

    str: Score = Field(..., description="Strength score; modifier = floor((score - 10) / 2) (R-GEN-2).")
    dex: Score = Field(..., description="Dexterity score.")
    con: Score = Field(..., description="Constitution score.")
    int: Score = Field(..., description="Intelligence score.")
    wis: Score = Field(..., description="Wisdom score.")
    cha: Score = Field(..., description="Charisma score.")

    def as_dict(self) -> dict:
        return self.model_dump()


def run_settings(scenario, runs: int | None, seed: int | None) -> tuple[int, int]:
    """Runs and seed for a simulation: the given ones, else the scenario's ``[run]`` defaults; checked."""
    runs = scenario.run.runs if runs is None else int(runs)
    seed = scenario.run.seed if seed is None else int(seed)
    if runs < 1:
        raise ScenarioError(f"expected runs >= 1; given {runs}", key="run.runs")
    if seed < 0:
        raise ScenarioError(f"expected seed >= 0; given {seed}", key="run.seed")
    return runs, seed


# --------------------------------------------------------------------------------------------
# error formatting


def _unwrap(annotation: Any) -> list[Any]:
    """The concrete types an annotation may hold (Optional/Union/Annotated unwrapped)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        out = []
        for arg in typing.get_args(annotation):
            out.extend(_unwrap(arg))
        return out
    return [annotation]


def _model_at(model: type[BaseModel], loc: tuple) -> type[BaseModel] | None:
    """Follow ``loc`` through the model's annotations; the model class found there, if any."""
    current: list[Any] = [model]
    for part in loc:
        nxt: list[Any] = []
        for ann in current:
            for t in _unwrap(ann):
                origin = typing.get_origin(t)
                if isinstance(t, type) and issubclass(t, BaseModel):
                    if isinstance(part, str) and part in t.model_fields:
                        nxt.append(t.model_fields[part].annotation)
                elif origin in (list, tuple) and isinstance(part, int):
                    nxt.extend(typing.get_args(t)[:1])
                elif origin is dict:
                    args = typing.get_args(t)
                    if len(args) == 2:
                        nxt.append(args[1])
        current = nxt
    for ann in current:
        for t in _unwrap(ann):
            if isinstance(t, type) and issubclass(t, BaseModel):
                return t
    return None


_TAG = re.compile(r"[a-z][a-z_-]*\[.*\]")  # pydantic's union and validator tags in an error location


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _expected(msg: str) -> str:
    """pydantic's message in the project's words: "Input should be X" says what was expected ("expected X"); a
    validator's own reason ("Value error, ...") is kept as it is worded (it says "expected" itself where it means
    it, so never "expected expected ...")."""
    if msg.startswith("Input should be "):
        return "expected " + msg[len("Input should be "):]
    return msg.removeprefix("Value error, ")


def _with_given(msg: str, given: str) -> str:
    """``msg; given X`` unless ``msg`` says already what was given (once is enough)."""
    if given in msg or ", got " in msg or "; given " in msg:
        return msg
    return f"{msg}; given {given}"


_QUOTED = re.compile(r"'((?:[^'\\]|\\.)*)'")


def _choice_hint(error: dict) -> str:
    """"; did you mean 'rogue'?" for a value outside a set of names: same name in another case first, else the
    nearest name by difflib; empty when nothing is near."""
    given = error.get("input")
    if error["type"] not in ("literal_error", "enum") or not isinstance(given, str):
        return ""
    choices = _QUOTED.findall(str((error.get("ctx") or {}).get("expected", "")))
    same_case = [c for c in choices if c.lower() == given.strip().lower()]
    near = same_case or difflib.get_close_matches(given.strip().lower(), choices, n=1, cutoff=0.6)
    return f"; did you mean {near[0]!r}?" if near else ""


def _clean_loc(error: dict) -> tuple:
    return tuple(p for p in error["loc"] if not (isinstance(p, str) and (_TAG.fullmatch(p) or p == "[key]")))


def _valid_keys(model: type[BaseModel], loc: tuple) -> list[str]:
    parent = _model_at(model, loc[:-1])
    return sorted(info.alias or name for name, info in parent.model_fields.items()) if parent else []


def format_validation_error(model: type[BaseModel], error: dict, file: str, renamed: str | None = None
                            ) -> ScenarioError:
    """One ScenarioError line from one pydantic error (``renamed``: the required key an unknown key stands for)."""
    loc = _clean_loc(error)
    key = ".".join(key_part(p) for p in loc) or "(top level)"
    etype = error["type"]
    if etype == "extra_forbidden" and loc:
        valid = _valid_keys(model, loc)
        near = [renamed] if renamed else difflib.get_close_matches(str(loc[-1]), valid, n=1, cutoff=0.5)
        hint = f"; did you mean {near[0]!r}?" if near else ""
        if renamed:
            hint += f" ({renamed!r} is required and missing)"
        listing = f" (valid keys: {', '.join(valid)})" if valid and not renamed else ""
        return ScenarioError(f"unknown key{hint}{listing}", file=file, key=key)
    if etype == "missing":
        return ScenarioError("required key is missing", file=file, key=key)
    msg = _expected(error.get("msg", "invalid value"))
    return ScenarioError(_with_given(msg, _short(error.get("input"))) + _choice_hint(error), file=file, key=key)


def _file_position(data: Any, loc: tuple, index: dict[int, dict] | None = None) -> tuple:
    """Where ``loc`` sits in the parsed file: the index of each key among its table's keys (TOML tables keep the
    file's order), list indices as they are; a missing key sorts after its table's keys. ``index`` caches each
    table's key positions (one pass over a table however many of its keys are wrong)."""
    index = {} if index is None else index
    pos: list[int] = []
    node = data
    for part in loc:
        if isinstance(node, dict) and part in node:
            where = index.get(id(node))
            if where is None:
                where = index[id(node)] = {k: i for i, k in enumerate(node)}
            pos.append(where[part])
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            pos.append(part)
            node = node[part]
        else:
            pos.append(len(node) if isinstance(node, dict | list) else 0)
            break
    return tuple(pos)


def format_validation_errors(model: type[BaseModel], errors: list[dict], file: str, data: Any = None
                             ) -> ScenarioError:
    """Every pydantic error of a file, one line each, in file order, at most :data:`sim.limits.MAX_PROBLEMS` of them
    and then one line saying how many more. A required key that is missing beside an unknown key close to its name
    (``dexterity`` for ``dex``) is one line: the unknown key, with the rename."""
    missing = {_clean_loc(e): e for e in errors if e["type"] == "missing"}
    renames: dict[tuple, str] = {}
    for e in errors if missing else ():
        loc = _clean_loc(e)
        if e["type"] != "extra_forbidden" or not loc:
            continue
        siblings = [m[-1] for m in missing if m[:-1] == loc[:-1] and isinstance(m[-1], str)
                    and m not in renames.values()]
        near = difflib.get_close_matches(str(loc[-1]), siblings, n=1, cutoff=0.3) if siblings else []
        if not near:  # a long name for a short key (dexterity -> dex): the key is the name's start
            near = [s for s in siblings if str(loc[-1]).lower().startswith(s.lower())][:1]
        if near:
            renames[loc] = near[0]
    absorbed = {(*loc[:-1], name) for loc, name in renames.items()}
    index: dict[int, dict] = {}
    found = []
    for e in errors:
        loc = _clean_loc(e)
        if e["type"] == "missing" and loc in absorbed:
            continue
        found.append((_file_position(data, loc, index), len(found), e, loc))
    found.sort(key=lambda item: (item[0], item[1]))
    lines = [format_validation_error(model, e, file, renamed=renames.get(loc)) for *_, e, loc in found[:MAX_PROBLEMS]]
    if len(found) > MAX_PROBLEMS:
        lines.append(ScenarioError(f"... and {len(found) - MAX_PROBLEMS:,} more problems (the first {MAX_PROBLEMS} "
                                   "are shown, in file order)", file=file))
    first, *others = lines
    return ScenarioError(first.detail, file=first.file, key=first.key, others=others)


# --------------------------------------------------------------------------------------------
# loading


def kind_module(kind: str):
    """The package implementing a kind (imported lazily, checked against the kind contract: sim/kinds.py)."""
    return kinds.get(kind).module


def parse_scenario(data: dict, file: str = "<memory>") -> ScenarioBase:
    """Validate an already-parsed TOML mapping into the scenario model of its kind."""
    if not isinstance(data, dict):
        raise ScenarioError("expected a TOML table at the top level", file=file)
    kind = data.get("kind")
    names = kinds.names()
    if kind is None:
        raise ScenarioError(f"required key is missing (one of {', '.join(names)})", file=file, key="kind")
    if not isinstance(kind, str) or kind not in names:
        near = difflib.get_close_matches(str(kind), names, n=1)
        hint = f"; did you mean {near[0]!r}?" if near else ""
        raise ScenarioError(
            f"expected one of {', '.join(names)}; given {_short(kind)}{hint}", file=file, key="kind"
        )
    try:
        contract = kinds.get(kind)
    except ScenarioError as exc:
        raise ScenarioError(exc.detail, file=file, key="kind") from None
    model: type[ScenarioBase] = contract.scenario_model
    check_data(data, file)  # array lengths, control characters (sim/limits.py)
    try:
        scenario = model.model_validate(data)
    except ValidationError as exc:
        raise format_validation_errors(model, exc.errors(), file, data) from None
    except ScenarioError as exc:
        raise ScenarioError(exc.detail, file=file, key=exc.key) from None
    except RecursionError:
        raise ScenarioError("nesting too deep", file=file) from None
    try:
        contract.check(scenario)
    except ScenarioError as exc:
        raise ScenarioError(exc.detail, file=file, key=exc.key) from None
    scenario._source = file
    return scenario


def load_scenario(path: str | Path) -> ScenarioBase:
    """Read and validate a scenario file (docs/scenario-format/). Raises :class:`ScenarioError`."""
    file = str(path)
    return parse_scenario(read_toml_file(path, "scenario file"), file)


def read_toml_file(path: str | Path, what: str = "scenario file", file: str | None = None) -> dict:
    """The one guarded TOML reader (scenario and fit files): size before reading, UTF-8, key depth and nesting
    before the parser, a parse error or a nesting too deep for the parser as one :class:`ScenarioError` line."""
    file = str(path) if file is None else file
    p = Path(path)
    try:
        mode = p.stat().st_mode
    except (OSError, ValueError):  # missing, a dangling link, a path the system cannot take
        raise ScenarioError(f"no such {what}", file=file) from None
    if stat.S_ISDIR(mode):
        raise ScenarioError(f"is a folder, not a {what}", file=file)
    if not stat.S_ISREG(mode):  # a FIFO or a device would block or never end: never opened
        raise ScenarioError(f"not a regular file (a pipe, device or socket); give a {what}", file=file)
    try:
        if p.stat().st_size > MAX_FILE_BYTES:  # checked before reading: a huge file is never read
            raise ScenarioError(f"file larger than {MAX_FILE_BYTES:,} bytes", file=file)
        with p.open("rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ScenarioError(f"cannot read the file ({exc.strerror or exc})", file=file) from None
    if len(raw) > MAX_FILE_BYTES:
        raise ScenarioError(f"file larger than {MAX_FILE_BYTES:,} bytes", file=file)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ScenarioError(f"not valid UTF-8 (byte {exc.start})", file=file) from None
    check_toml_text(text, file)  # key depth and nesting, before the parser sees them
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"malformed TOML: {exc}", file=file) from None
    except RecursionError:
        raise ScenarioError("malformed TOML: nesting too deep", file=file) from None
    except ValueError:  # Python refuses to convert an integer of more than 4,300 digits (sys.int_info)
        raise long_integer_error(text, file) from None
    return data
