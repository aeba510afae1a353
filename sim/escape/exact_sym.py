"""Deferred dice for the exact engine: a die roll answered with *every* face at once.

The branching source of :mod:`sim.escape.exact` normally answers a random event with one outcome per
replay of the round, so a round with three composure-damage rolls of 1d2 is played eight times even when
the faces only change three composure values. A :class:`Deferred` value stands for all the faces of one or
more rolls together: arithmetic on it is done face by face, and the round runs on, once. Only where the
round *decides* something on it (a comparison, ``bool``, an index) must the faces agree; when they do, the
decision is the same on every face and the run goes on with one replay; when they do not,
:class:`Fork` stops the replay and the engine plays the roll face by face instead (as without deferral).
At the end of the round the deferred values left in the state are expanded into one state per combination
of faces, each with its probability.

Nothing of the rules is restated: the round function is run as written, and a deferred value can only
take part in the decisions on which all its faces agree, so each face's run is exactly the run the
face-by-face source would have played.
"""

from __future__ import annotations

import itertools
import operator


class Fork(Exception):
    """A decision the faces of deferred roll ``pos`` (the position of the event in the replay's path) do
    not agree on: the replay stops, and the roll is played face by face."""

    def __init__(self, pos: int):
        super().__init__(pos)
        self.pos = pos


class Deferred:
    """Every face of the rolls at path positions ``vars`` (sorted, each with ``sizes`` faces): ``vals`` maps
    each combination of face indices (aligned with ``vars``) to the value."""

    __slots__ = ("vars", "sizes", "vals")

    def __init__(self, vars_: tuple[int, ...], sizes: tuple[int, ...], vals: dict):
        self.vars = vars_
        self.sizes = sizes
        self.vals = vals

    @classmethod
    def roll(cls, pos: int, faces) -> Deferred:
        return cls((pos,), (len(faces),), {(k,): v for k, v in enumerate(faces)})

    # -- arithmetic, face by face

    def _map(self, other, f) -> Deferred:
        if type(other) is not Deferred:
            return Deferred(self.vars, self.sizes, {a: f(v, other) for a, v in self.vals.items()})
        if other.vars == self.vars:
            ov = other.vals
            return Deferred(self.vars, self.sizes, {a: f(v, ov[a]) for a, v in self.vals.items()})
        sizes = dict(zip(self.vars, self.sizes, strict=True))
        sizes.update(zip(other.vars, other.sizes, strict=True))
        vars_ = tuple(sorted(sizes))
        ia = [vars_.index(x) for x in self.vars]
        ib = [vars_.index(x) for x in other.vars]
        vals = {}
        for a in itertools.product(*(range(sizes[x]) for x in vars_)):
            vals[a] = f(self.vals[tuple(a[x] for x in ia)], other.vals[tuple(a[x] for x in ib)])
        return Deferred(vars_, tuple(sizes[x] for x in vars_), vals)

    def __add__(self, o):
        return self._map(o, operator.add)

    def __radd__(self, o):
        return self._map(o, lambda a, b: b + a)

    def __sub__(self, o):
        return self._map(o, operator.sub)

    def __rsub__(self, o):
        return self._map(o, lambda a, b: b - a)

    def __mul__(self, o):
        return self._map(o, operator.mul)

    def __rmul__(self, o):
        return self._map(o, lambda a, b: b * a)

    def __floordiv__(self, o):
        return self._map(o, operator.floordiv)

    def __rfloordiv__(self, o):
        return self._map(o, lambda a, b: b // a)

    def __neg__(self):
        return Deferred(self.vars, self.sizes, {a: -v for a, v in self.vals.items()})

    def __pos__(self):
        return self

    def __abs__(self):
        return Deferred(self.vars, self.sizes, {a: abs(v) for a, v in self.vals.items()})

    # -- decisions: only where every face agrees

    def _decide(self, other, f) -> bool:
        d = self._map(other, f) if type(other) is Deferred else None
        values = set(d.vals.values()) if d is not None else {f(v, other) for v in self.vals.values()}
        if len(values) == 1:
            return bool(values.pop())
        raise Fork((d or self).vars[0])

    def __lt__(self, o):
        return self._decide(o, operator.lt)

    def __le__(self, o):
        return self._decide(o, operator.le)

    def __gt__(self, o):
        return self._decide(o, operator.gt)

    def __ge__(self, o):
        return self._decide(o, operator.ge)

    def __eq__(self, o):
        return self._decide(o, operator.eq)

    def __ne__(self, o):
        return self._decide(o, operator.ne)

    def _one(self):
        values = set(self.vals.values())
        if len(values) == 1:
            return values.pop()
        raise Fork(self.vars[0])

    def __bool__(self):
        return bool(self._one())

    def __int__(self):
        return int(self._one())

    def __index__(self):
        return operator.index(self._one())

    def __float__(self):
        return float(self._one())

    def __hash__(self):
        raise Fork(self.vars[0])

    def __repr__(self):
        return f"Deferred({self.vars}, {self.vals})"


def deferred_in(obj, names=None) -> list[tuple[object, str, int, Deferred]]:
    """Every deferred value held by ``obj``'s attributes (``names``, by default all of them), directly or in
    a list attribute: (holder, attribute name, index in the list or -1, value)."""
    out = []
    d = obj.__dict__
    for name in d if names is None else names:
        v = d[name]
        t = type(v)
        if t is Deferred:
            out.append((obj, name, -1, v))
        elif t is list:
            for k, x in enumerate(v):
                if type(x) is Deferred:
                    out.append((obj, name, k, x))
    return out
