"""The processor's cycle counter inside numba-compiled code, for the by-step benches (escape_steps.py,
campus_steps.py): ``cycles()`` reads LLVM's ``readcyclecounter`` in a few cycles and keeps the compiler from
moving work across it."""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def cycles(typingctx):
    """The processor's cycle counter (LLVM ``readcyclecounter``)."""
    def codegen(context, builder, signature, args):
        fnty = ir.FunctionType(ir.IntType(64), [])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.readcyclecounter")
        return builder.call(fn, [])
    return types.uint64(), codegen
