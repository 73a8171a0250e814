"""Shapes, views and indexing: size/view/reshape/permute/slice/select/expand..., cat/stack/
split/chunk, advanced indexing and the in-place writes (copy_, fill_, index_put_...).
Where torch returns a view, these return a numpy view of the same memory."""

from __future__ import annotations

from typing import Any

import numpy as np

from runtime_py.errors import ExecutionError
from runtime_py.operators.registry import op, register_schema
from runtime_py.operators.tensors import BOOL, INT64, as_dtype, dim, numpy_dtype, result_type, shape_dim


def _sizes(x: np.ndarray) -> list[int]:
    return list(x.shape)


def _infer_shape(shape: list[int], numel: int) -> tuple[int, ...]:
    if shape.count(-1) > 1:
        raise ExecutionError("only one dimension can be inferred")
    known = int(np.prod([s for s in shape if s != -1]))
    if -1 in shape:
        if known == 0 or numel % known:
            raise ExecutionError(f"shape '{shape}' is invalid for input of size {numel}")
        shape = [numel // known if s == -1 else s for s in shape]
    if int(np.prod(shape)) != numel:
        raise ExecutionError(f"shape '{shape}' is invalid for input of size {numel}")
    return tuple(shape)


# ---- sizes -------------------------------------------------------------------------------------
register_schema("aten::size(Tensor self) -> int[]", _sizes)
register_schema("aten::size.int(Tensor self, int dim) -> int", lambda x, d: x.shape[shape_dim(x, d)] if x.ndim
                else _no_dims("size", d))
register_schema("aten::sym_size.int(Tensor self, int dim) -> SymInt", lambda x, d: x.shape[shape_dim(x, d)])
register_schema("aten::dim(Tensor self) -> int", lambda x: x.ndim)
register_schema("aten::numel(Tensor self) -> int", lambda x: int(x.size))
register_schema("aten::len.Tensor(Tensor t) -> int", lambda x: x.shape[0] if x.ndim else _no_dims("len", 0))
register_schema("aten::stride(Tensor self) -> int[]",
                lambda x: [s // x.itemsize for s in x.strides])  # in elements, as torch counts
register_schema("aten::is_contiguous(Tensor self) -> bool", lambda x: bool(x.flags.c_contiguous))
register_schema("aten::element_size(Tensor self) -> int", lambda x: x.itemsize)
register_schema("aten::_shape_as_tensor(Tensor self) -> Tensor", lambda x: np.array(x.shape, INT64))


def _no_dims(what: str, d: int) -> int:
    raise ExecutionError(f"{what}(): dimension specified as {d} but tensor has no dimensions")


# ---- views -------------------------------------------------------------------------------------

@op("aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)")
def view(x: np.ndarray, size: list[int]) -> np.ndarray:
    shape = _infer_shape(list(size), x.size)
    out = x.view()
    try:
        out.shape = shape  # raises instead of copying when the strides do not allow a view
    except AttributeError as exc:
        raise ExecutionError("view size is not compatible with input tensor's size and stride (at least one "
                             "dimension spans across two contiguous subspaces). Use .reshape(...) instead.") from exc
    return out


@op("aten::reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)")  # a view when possible, else a copy
def reshape(x: np.ndarray, shape: list[int]) -> np.ndarray:
    return x.reshape(_infer_shape(list(shape), x.size))


register_schema("aten::view_as(Tensor(a) self, Tensor other) -> Tensor(a)", lambda x, o: view(x, list(o.shape)))
register_schema("aten::reshape_as(Tensor(a) self, Tensor other) -> Tensor(a)",
                lambda x, o: reshape(x, list(o.shape)))


@op("aten::unsqueeze(Tensor(a) self, int dim) -> Tensor(a)")
def unsqueeze(x: np.ndarray, d: int) -> np.ndarray:
    return np.expand_dims(x, dim(d, x.ndim + 1))


@op("aten::squeeze(Tensor(a) self) -> Tensor(a)")  # every size-1 dim
def squeeze(x: np.ndarray) -> np.ndarray:
    return x.reshape([s for s in x.shape if s != 1]) if x.ndim else x.view()


@op("aten::squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)")  # the listed dims that have size 1
def squeeze_dims(x: np.ndarray, ds: list[int]) -> np.ndarray:
    if x.ndim == 0:
        return x.view()
    axes = {dim(d, x.ndim) for d in ds}
    return x.reshape([s for i, s in enumerate(x.shape) if not (i in axes and s == 1)])


register_schema("aten::squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)", lambda x, d: squeeze_dims(x, [d]))


@op("aten::permute(Tensor(a) self, int[] dims) -> Tensor(a)")
def permute(x: np.ndarray, ds: list[int]) -> np.ndarray:
    if len(ds) != x.ndim:
        raise ExecutionError(f"number of dims don't match in permute: got {len(ds)} for a tensor of {x.ndim}")
    return np.transpose(x, [dim(d, x.ndim) for d in ds])


@op("aten::transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)")
def transpose(x: np.ndarray, d0: int, d1: int) -> np.ndarray:
    if x.ndim == 0:
        return x.view()
    return np.swapaxes(x, dim(d0, x.ndim), dim(d1, x.ndim))


register_schema("aten::swapaxes(Tensor(a) self, int axis0, int axis1) -> Tensor(a)", transpose)


@op("aten::t(Tensor(a) self) -> Tensor(a)")  # 2-D transpose; 0-D and 1-D unchanged
def t(x: np.ndarray) -> np.ndarray:
    if x.ndim > 2:
        raise ExecutionError(f"t() expects a tensor with <= 2 dimensions, but self is {x.ndim}D")
    return x.T


register_schema("aten::numpy_T(Tensor(a) self) -> Tensor(a)", lambda x: np.transpose(x))
register_schema("aten::mT(Tensor(a) self) -> Tensor(a)", lambda x: np.swapaxes(x, -1, -2))
register_schema("aten::movedim.int(Tensor(a) self, int source, int destination) -> Tensor(a)",
                lambda x, s, d: np.moveaxis(x, dim(s, x.ndim), dim(d, x.ndim)))
register_schema("aten::alias(Tensor(a) self) -> Tensor(a)", lambda x: x.view())
register_schema("aten::detach(Tensor(a) self) -> Tensor(a)", lambda x: x.view())


@op("aten::contiguous(Tensor(a) self, *, MemoryFormat memory_format=0) -> Tensor(a)")
def contiguous(x: np.ndarray, memory_format: int) -> np.ndarray:
    return x if x.flags.c_contiguous else np.ascontiguousarray(x)


@op("aten::expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)")
def expand(x: np.ndarray, size: list[int], implicit: bool = False) -> np.ndarray:
    lead = len(size) - x.ndim
    if lead < 0:
        raise ExecutionError(f"the number of sizes provided ({len(size)}) must be greater or equal to the "
                             f"number of dimensions in the tensor ({x.ndim})")
    shape = [x.shape[i - lead] if s == -1 and i >= lead else s for i, s in enumerate(size)]
    try:
        return np.broadcast_to(x, shape)
    except ValueError as exc:
        raise ExecutionError(f"the expanded size {list(size)} is not compatible with the tensor of shape "
                             f"{list(x.shape)}") from exc


register_schema("aten::expand_as(Tensor(a) self, Tensor other) -> Tensor(a)",
                lambda x, o: expand(x, list(o.shape)))


@op("aten::repeat(Tensor self, SymInt[] repeats) -> Tensor")
def repeat(x: np.ndarray, repeats: list[int]) -> np.ndarray:
    if len(repeats) < x.ndim:
        raise ExecutionError("number of dimensions of repeat dims can not be smaller than number of dimensions "
                             "of tensor")
    return np.tile(x.reshape((1,) * (len(repeats) - x.ndim) + x.shape), repeats)


register_schema("aten::tile(Tensor self, SymInt[] dims) -> Tensor",
                lambda x, r: repeat(x, [1] * (x.ndim - len(r)) + list(r)))


@op("aten::flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)")
def flatten(x: np.ndarray, start: int, end: int) -> np.ndarray:
    if x.ndim == 0:
        return x.reshape(1)
    s, e = dim(start, x.ndim), dim(end, x.ndim)
    if s > e:
        raise ExecutionError("flatten() has invalid args: start_dim cannot come after end_dim")
    return x.reshape(x.shape[:s] + (-1,) + x.shape[e + 1:]) if x.size else \
        x.reshape(x.shape[:s] + (int(np.prod(x.shape[s:e + 1])),) + x.shape[e + 1:])


@op("aten::unflatten.int(Tensor(a) self, int dim, SymInt[] sizes) -> Tensor(a)")
def unflatten(x: np.ndarray, d: int, sizes: list[int]) -> np.ndarray:
    axis = shape_dim(x, d)
    inner = _infer_shape(list(sizes), x.shape[axis])
    return x.reshape(x.shape[:axis] + inner + x.shape[axis + 1:])


@op("aten::slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> "
    "Tensor(a)")
def slice_tensor(x: np.ndarray, d: int, start: int | None, end: int | None, step: int) -> np.ndarray:
    if step <= 0:
        raise ExecutionError("slice step must be positive")
    index = [slice(None)] * x.ndim
    index[dim(d, x.ndim)] = slice(start, end, step)
    return x[tuple(index)]


@op("aten::select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)")
def select(x: np.ndarray, d: int, i: int) -> np.ndarray:
    axis = dim(d, x.ndim)
    size = x.shape[axis]
    if not -size <= i < size:
        raise ExecutionError(f"index {i} is out of bounds for dimension {axis} with size {size}")
    index: list[Any] = [slice(None)] * x.ndim
    index[axis] = i
    return x[(*index, Ellipsis)]  # the Ellipsis keeps a 0-d result a view, not a numpy scalar


@op("aten::narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a)")
def narrow(x: np.ndarray, d: int, start: int, length: int) -> np.ndarray:
    axis = dim(d, x.ndim)
    if start < 0:
        start += x.shape[axis]
    if start < 0 or length < 0 or start + length > x.shape[axis]:
        raise ExecutionError(f"start ({start}) + length ({length}) exceeds dimension size ({x.shape[axis]})")
    return slice_tensor(x, axis, start, start + length, 1)


# ---- joining and splitting ---------------------------------------------------------------------

def _joined(tensors: list[np.ndarray]) -> list[np.ndarray]:
    dtype = result_type(*tensors)
    return [as_dtype(t, dtype) for t in tensors]


@op("aten::cat(Tensor[] tensors, int dim=0) -> Tensor")
def cat(tensors: list[np.ndarray], d: int) -> np.ndarray:
    if not tensors:
        raise ExecutionError("expected a non-empty list of Tensors")
    kept = [t for t in tensors if not (t.ndim == 1 and t.size == 0)] or tensors[:1]  # legacy empty tensors
    ref = max(t.ndim for t in kept)
    return np.concatenate(_joined(kept), axis=dim(d, ref))


@op("aten::stack(Tensor[] tensors, int dim=0) -> Tensor")
def stack(tensors: list[np.ndarray], d: int) -> np.ndarray:
    if not tensors:
        raise ExecutionError("expected a non-empty list of Tensors")
    return np.stack(_joined(tensors), axis=dim(d, tensors[0].ndim + 1))


register_schema("aten::hstack(Tensor[] tensors) -> Tensor", lambda ts: np.hstack(_joined(ts)))
register_schema("aten::vstack(Tensor[] tensors) -> Tensor", lambda ts: np.vstack(_joined(ts)))


def _split_at(x: np.ndarray, sizes: list[int], d: int) -> list[np.ndarray]:
    axis = shape_dim(x, d)
    if sum(sizes) != x.shape[axis]:
        raise ExecutionError(f"split_with_sizes expects split_sizes to sum exactly to {x.shape[axis]} "
                             f"(input tensor's size at dimension {axis}), but got split_sizes={sizes}")
    out, start = [], 0
    for size in sizes:
        out.append(slice_tensor(x, axis, start, start + size, 1))
        start += size
    return out


@op("aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]")
def split(x: np.ndarray, size: int, d: int) -> list[np.ndarray]:
    length = x.shape[shape_dim(x, d)]
    if size <= 0 and length:
        raise ExecutionError(f"split expects split_size be non-negative, but got split_size={size}")
    sizes = [min(size, length - i) for i in range(0, length, size)] if length else [0]
    return _split_at(x, sizes, d)


# explicit sizes (torch.split with a list)
register_schema("aten::split.sizes(Tensor(a -> *) self, SymInt[] split_size, int dim=0) -> Tensor(a)[]", _split_at)
register_schema("aten::split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]",
                _split_at)
register_schema("aten::split(Tensor(a -> *) self, int[] split_sizes, int dim=0) -> Tensor(a)[]", _split_at)


@op("aten::chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]")
def chunk(x: np.ndarray, chunks: int, d: int) -> list[np.ndarray]:
    if chunks <= 0:
        raise ExecutionError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    length = x.shape[shape_dim(x, d)]
    return split(x, max(-(-length // chunks), 1), d)


register_schema("aten::unsafe_chunk(Tensor self, int chunks, int dim=0) -> Tensor[]", chunk)


@op("aten::tensor_split.sections(Tensor(a -> *) self, SymInt sections, int dim=0) -> Tensor(a)[]")
def tensor_split(x: np.ndarray, sections: int, d: int) -> list[np.ndarray]:
    length = x.shape[shape_dim(x, d)]
    base, extra = divmod(length, sections)
    return _split_at(x, [base + 1] * extra + [base] * (sections - extra), d)


@op("aten::unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]")
def unbind(x: np.ndarray, d: int) -> list[np.ndarray]:
    axis = shape_dim(x, d)
    return [select(x, axis, i) for i in range(x.shape[axis])]


register_schema("aten::broadcast_tensors(Tensor[] tensors) -> Tensor[]", lambda ts: list(np.broadcast_arrays(*ts)))
register_schema("aten::meshgrid(Tensor[] tensors) -> Tensor[]",
                lambda ts: list(np.meshgrid(*ts, indexing="ij")))


# ---- indexing ----------------------------------------------------------------------------------

def _index_tuple(indices: list[np.ndarray | None]) -> tuple[Any, ...]:
    out: list[Any] = []
    for i in indices:
        if i is None:
            out.append(slice(None))
        elif i.dtype == BOOL or i.dtype == np.uint8:
            out.append(i.astype(bool))
        elif i.dtype.kind in "iu":
            out.append(i)
        else:
            raise ExecutionError(f"tensors used as indices must be long, int, byte or bool tensors, got {i.dtype}")
    return tuple(out)


@op("aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor")  # x[idx] with tensors: a copy
def index(x: np.ndarray, indices: list[np.ndarray | None]) -> np.ndarray:
    return np.array(x[_index_tuple(indices)])


def index_put_(x: np.ndarray, indices: list[np.ndarray | None], values: np.ndarray,
               accumulate: bool) -> np.ndarray:
    key = _index_tuple(indices)
    v = as_dtype(values, x.dtype)
    if accumulate:
        np.add.at(x, key, v)
    else:
        x[key] = v
    return x


register_schema("aten::index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False) -> "
                "Tensor(a!)", index_put_)
register_schema("aten::index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor",
                lambda x, i, v, a: index_put_(x.copy(), i, v, a))
def _integer_index(index: np.ndarray, op_name: str) -> np.ndarray:
    """``index`` if it holds integers: torch takes an int64 (or int32) index tensor, nothing else."""
    if index.dtype.kind not in "iu":
        raise ExecutionError(f"{op_name}(): expected an index of an integer dtype, got {index.dtype}")
    return index


register_schema("aten::index_select(Tensor self, int dim, Tensor index) -> Tensor",
                lambda x, d, i: np.take(x, _integer_index(i, "index_select").reshape(-1), axis=dim(d, x.ndim)))
register_schema("aten::gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor",
                lambda x, d, i, s: np.take_along_axis(x, _integer_index(i, "gather"), axis=dim(d, x.ndim)))
register_schema("aten::masked_select(Tensor self, Tensor mask) -> Tensor",
                lambda x, m: np.broadcast_arrays(x, m)[0][np.broadcast_arrays(x, m)[1].astype(bool)])


def _scatter(x: np.ndarray, d: int, index: np.ndarray, src: Any, add: bool = False) -> np.ndarray:
    out = x.copy()
    axis = dim(d, x.ndim)
    index = _integer_index(index, "scatter")
    if x.ndim == 0:
        raise ExecutionError("scatter() of a 0-dim tensor is not supported by runtime_py")
    if index.ndim != x.ndim:
        raise ExecutionError(f"scatter(): index tensor must have the same number of dimensions as self tensor "
                             f"({index.ndim} and {x.ndim})")
    grids = list(np.indices(index.shape, sparse=True))
    grids[axis] = index
    values = np.asarray(src)[tuple(slice(0, s) for s in index.shape)] if np.ndim(src) else \
        np.full(index.shape, src, x.dtype)
    if add:
        np.add.at(out, tuple(grids), values)
    else:
        out[tuple(grids)] = values
    return out


register_schema("aten::scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor", _scatter)
register_schema("aten::scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor", _scatter)
register_schema("aten::scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor",
                lambda x, d, i, s: _scatter(x, d, i, s, add=True))


@op("aten::one_hot(Tensor self, int num_classes=-1) -> Tensor")
def one_hot(x: np.ndarray, num_classes: int) -> np.ndarray:
    n = int(x.max()) + 1 if num_classes == -1 else num_classes
    return (x[..., None] == np.arange(n)).astype(INT64)


# ---- reordering and padding --------------------------------------------------------------------
register_schema("aten::flip(Tensor self, int[] dims) -> Tensor",
                lambda x, ds: np.flip(x, [dim(d, x.ndim) for d in ds]).copy())
register_schema("aten::roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor",
                lambda x, s, ds: np.roll(x, s, [dim(d, x.ndim) for d in ds] if ds else None))
register_schema("aten::tril(Tensor self, SymInt diagonal=0) -> Tensor", lambda x, k: np.tril(x, k))
register_schema("aten::triu(Tensor self, SymInt diagonal=0) -> Tensor", lambda x, k: np.triu(x, k))
register_schema("aten::diag(Tensor self, int diagonal=0) -> Tensor", lambda x, k: np.diag(x, k).copy())


@op("aten::repeat_interleave.self_int(Tensor self, SymInt repeats, int? dim=None, *, SymInt? output_size=None) -> "
    "Tensor")
def repeat_interleave(x: np.ndarray, repeats: int, d: int | None, output_size: int | None) -> np.ndarray:
    return np.repeat(x, repeats, axis=None if d is None else dim(d, x.ndim))


@op("aten::pixel_shuffle(Tensor self, int upscale_factor) -> Tensor")
def pixel_shuffle(x: np.ndarray, r: int) -> np.ndarray:
    *lead, c, h, w = x.shape
    y = x.reshape(*lead, c // (r * r), r, r, h, w)
    n = len(lead)
    y = y.transpose(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return y.reshape(*lead, c // (r * r), h * r, w * r)


# ---- in-place writes and copies ----------------------------------------------------------------
register_schema("aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
                lambda x, src, nb: _copy_into(x, src))
register_schema("aten::fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)", lambda x, v: _fill(x, v))
register_schema("aten::fill_.Tensor(Tensor(a!) self, Tensor value) -> Tensor(a!)", lambda x, v: _fill(x, v))
register_schema("aten::zero_(Tensor(a!) self) -> Tensor(a!)", lambda x: _fill(x, 0))
register_schema("aten::clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor", lambda x, mf: x.copy())


def _copy_into(x: np.ndarray, src: np.ndarray) -> np.ndarray:
    np.copyto(x, np.broadcast_to(src, x.shape), casting="unsafe")  # copy_ converts any dtype
    return x


def _fill(x: np.ndarray, value: Any) -> np.ndarray:
    x[...] = np.asarray(value).astype(x.dtype)
    return x


@op("aten::view.dtype(Tensor(a) self, ScalarType dtype) -> Tensor(a)")  # reinterpret the bytes
def view_dtype(x: np.ndarray, dtype: int) -> np.ndarray:
    return x.view(numpy_dtype(dtype))

