"""The direct call: a one-sample kernel's compiled entry point called without numba's dispatcher.

Through the dispatcher, a kernel with five array arguments costs about 0.4 µs before it computes
anything: the dispatcher types every argument, then the compiled wrapper unboxes every array into a
reference-counted MemInfo and releases it afterwards. The public functions instead pack their arguments
into one tuple ``args = (numpy.ndarray, K, inputs..., out)`` and call the kernel's entry point
(``dispatcher.overloads[DIRECT].entry_point``, the wrapper the dispatcher itself would call) with two
integers, ``id(args)`` and the flags. The tuple keeps every object alive for the call, and the entry
points hold the GIL, so nothing moves under the kernel.

The kernel's first lines check each array at the C level, at the addresses the tuple holds: an exact
``numpy.ndarray`` (the type object passed as item 0), of the expected rank, native-endian float64,
C-contiguous and aligned, and writeable for K and the outputs. Nothing but the type pointer of the
object header is read before the type is known, so any Python object is safe to pass. An array that fails a check (a list, float32,
a strided view, a read-only output, big-endian, a stack (N, n), None, ...) makes the kernel return
NOT_DIRECT without touching it, and the public function takes the checked path (calls.py), which
converts it or raises InputError naming the argument. Lengths are checked by the algorithm itself, as
on every path. The algorithms are the same inlined functions that the many-sample kernels run.

The offsets below are CPython's (PyTupleObject) and NumPy's (PyArrayObject, PyArray_Descr) public
struct layouts; :data:`LAYOUT_OK` re-reads them with ctypes at import, and if they do not match (another
Python build, say) every call takes the checked path instead.
"""
import ctypes

import numba as nb
import numpy as np
from numba.core import cgutils, types
from numba.extending import intrinsic

from ..model.layout import KW
from .primitives import inline

NOT_DIRECT = -1  # kernel status: an argument is not of the canonical type; take the checked path
DIRECT = (types.int64, types.int64)  # the one-sample kernels' signature: id(args), flags

# Offsets in 8-byte words (64-bit CPython, default build): tuple items; the array's type, data,
# dimensions and descr pointers; in 4-byte words: its rank and flags. Descr bytes: kind, type, byteorder.
TUPLE_SIZE, TUPLE_ITEMS, OB_TYPE, DATA, DIMS, DESCR = 2, 3, 1, 2, 4, 7
ND, FLAGS = 6, 16
KIND, TYPE, BYTEORDER = 24, 25, 26
C_CONTIGUOUS, ALIGNED, WRITEABLE = 0x1, 0x100, 0x400


@intrinsic
def _pointer(typingctx, address):
    """The integer ``address`` as a void pointer."""
    def codegen(context, builder, sig, args):
        return builder.inttoptr(args[0], cgutils.voidptr_t)
    return types.voidptr(address), codegen


@inline
def words(address, n, dtype):
    return nb.carray(_pointer(address), n, dtype)


@inline
def item(args, i):
    """The address of item i of the tuple at ``args``."""
    return words(args, TUPLE_ITEMS + i + 1, np.int64)[TUPLE_ITEMS + i]


@inline
def is_array(args, i, ndim, writeable):
    """True if item i of ``args`` is an exact numpy.ndarray of rank ``ndim``, native float64, C-contiguous
    and aligned (and writeable if asked): the type item 0 of ``args`` is."""
    a = item(args, i)
    if words(a, OB_TYPE + 1, np.int64)[OB_TYPE] != item(args, 0):  # the header every object has
        return False
    w, h = words(a, DESCR + 1, np.int64), words(a, FLAGS + 1, np.int32)
    need = C_CONTIGUOUS | ALIGNED | (WRITEABLE if writeable else 0)
    if h[ND] != ndim or (h[FLAGS] & need) != need:
        return False
    d = words(w[DESCR], BYTEORDER + 1, np.uint8)
    return d[KIND] == 102 and d[TYPE] == 100 and d[BYTEORDER] == 61  # 'f', 'd' (C double), '=' (native)


@inline
def arrays_ok(args, n_in, out_ndim):
    """``args`` has n_in + 3 items: item 1 is a model's kernel array K (rank 2, KW columns and 3 nb + 4
    rows, writeable: it holds the workspace), items 2 .. n_in + 1 are input vectors and item n_in + 2 the
    output of rank ``out_ndim``."""
    if words(args, TUPLE_SIZE + 1, np.int64)[TUPLE_SIZE] != n_in + 3:
        return False
    if not (is_array(args, 1, 2, True) and is_array(args, n_in + 2, out_ndim, True)):
        return False
    dims = words(words(item(args, 1), DIMS + 1, np.int64)[DIMS], 2, np.int64)
    if dims[1] != KW or dims[0] < 4 or (dims[0] - 4) % 3 != 0:
        return False
    for i in range(2, n_in + 2):
        if not is_array(args, i, 1, False):
            return False
    return True


@inline
def vector(args, i):
    """Item i of ``args`` (checked by :func:`is_array`) as a 1-D float64 array over its memory."""
    w = words(item(args, i), DESCR + 1, np.int64)
    return nb.carray(_pointer(w[DATA]), words(w[DIMS], 1, np.int64)[0], np.float64)


@inline
def matrix(args, i):
    """Item i of ``args`` (checked by :func:`is_array`) as a 2-D float64 array over its memory."""
    w = words(item(args, i), DESCR + 1, np.int64)
    dims = words(w[DIMS], 2, np.int64)
    return nb.carray(_pointer(w[DATA]), (dims[0], dims[1]), np.float64)


@inline
def unmanaged(a):
    """The C-contiguous float64 array ``a`` as an array over the same memory without numba's reference
    count. An array that comes through numba's dispatcher (or from np.empty) is managed: each view a
    kernel takes of it (every ``ws[i, 0:12]``) then increments and decrements its count atomically, which
    for small kernels costs more than their arithmetic. The caller keeps ``a`` alive (an
    argument of the entry point, or a buffer passed to :func:`keep_alive` after the call)."""
    return nb.carray(_pointer(a.ctypes.data), a.shape, np.float64)


@inline
def keep_alive(a, result):
    """``result``, after a use of ``a``: placed after a call that worked on an :func:`unmanaged` view of
    ``a``, it keeps ``a`` (numba frees an array after its last use) alive through that call."""
    return result if a.size >= 0 else result


def _layout_ok():
    """Re-read the offsets above with ctypes on a known tuple and arrays."""
    try:
        a = np.arange(3.0)
        args = (np.ndarray, a)
        items = (ctypes.c_int64 * (TUPLE_ITEMS + 2)).from_address(id(args))
        if items[TUPLE_SIZE] != 2:
            return False
        w = (ctypes.c_int64 * (DESCR + 1)).from_address(id(a))
        h = (ctypes.c_int32 * (FLAGS + 1)).from_address(id(a))

        def descr(x):
            return bytes((ctypes.c_char * 32).from_address((ctypes.c_int64 * (DESCR + 1)).from_address(id(x))[DESCR]))

        flags = h[FLAGS]
        return (items[TUPLE_ITEMS] == id(np.ndarray) and items[TUPLE_ITEMS + 1] == id(a)
                and w[OB_TYPE] == id(np.ndarray) and w[DATA] == a.__array_interface__["data"][0]
                and (ctypes.c_int64 * 1).from_address(w[DIMS])[0] == 3 and h[ND] == 1
                and flags & (C_CONTIGUOUS | ALIGNED | WRITEABLE) == C_CONTIGUOUS | ALIGNED | WRITEABLE
                and not (ctypes.c_int32 * (FLAGS + 1)).from_address(id(a[::2]))[FLAGS] & C_CONTIGUOUS
                and descr(a)[KIND:BYTEORDER + 1] == b"fd="
                and descr(a.astype(">f8"))[KIND:BYTEORDER + 1] == b"fd>"
                and descr(a.astype(np.float32))[KIND:BYTEORDER + 1] == b"ff=")
    except Exception:  # noqa: BLE001 - any surprise means: do not use the direct call
        return False


LAYOUT_OK = _layout_ok()


def not_compiled(args, flags):
    """Stands in for an entry point until its kernel is compiled: every call takes the checked path."""
    return NOT_DIRECT


def entry_point(kernel):
    """The compiled entry point of a one-sample kernel for :data:`DIRECT`, or :func:`not_compiled` if the
    struct layouts did not check out."""
    return kernel.overloads[DIRECT].entry_point if LAYOUT_OK else not_compiled
