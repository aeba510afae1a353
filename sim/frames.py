"""A runs frame from 2-D blocks, shared by the kinds' runs frames (issue 27).

A kind builds its per-run numbers as 2-D blocks of one number type (one row per frame column) and hands them
over with the frame positions of their rows. pandas >= 3 takes such blocks as they are
(``pandas.api.internals.create_dataframe_from_blocks``: no copy per column, nothing consolidated); older pandas
gets one column per row, left unconsolidated (``copy=False``). Both give the same frame.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd


def frame_from_blocks(parts: Sequence[tuple[object, np.ndarray]], names: Sequence[str], n: int) -> pd.DataFrame:
    """The frame of ``n`` rows whose columns are ``names``; ``parts`` are ``(block, positions)``: a 2-D array whose
    row ``r`` is the column at ``positions[r]``, or a 1-D (extension) array that is the column at ``positions[0]``."""
    if _create_from_blocks is not None:
        return _create_from_blocks(list(parts), index=pd.RangeIndex(n), columns=pd.Index(list(names)))
    data: list[object] = [None] * len(names)
    for block, positions in parts:
        for row, at in enumerate(positions):
            data[at] = block[row] if isinstance(block, np.ndarray) and block.ndim == 2 else block
    return pd.DataFrame(dict(zip(names, data, strict=True)), copy=False)


try:
    from pandas.api.internals import create_dataframe_from_blocks as _create_from_blocks
except ImportError:  # pandas < 3
    _create_from_blocks = None
