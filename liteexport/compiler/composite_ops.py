"""Ops compiled as other ATen ops: each lowering here calls the lowerings of the ops it is made of,
by their ATen names and schema arguments, so it needs no instruction, kernel or shape rule of its
own and runs on every engine the ops it is made of run on. Values match torch's, NaN included.

    isnan(x)                        x != x
    amax / amin(x, dims, keepdim)   max.dim / min.dim's values over each dim in turn
    any / all(x[, dim, keepdim])    amax / amin of (x != 0), as bool
    var / std(x, dims, ...)         sum((x - mean)^2) / (N - correction), and its sqrt
    flip(x, dims)                   index_select of each dim with its indices reversed
    log10 / log2(x)                 log(x) / ln(10), / ln(2)
    logical_xor(a, b)               (a != 0) != (b != 0)
    conv_transpose1d / 2d           conv2d over the input with stride - 1 zeros between its
                                    elements, the weight flipped, its in/out channels swapped
    prod(x[, dim, keepdim])         halves multiplied pairwise, log2(size) times per dim
    upsample_nearest1d(x, ...)      upsample_nearest2d of x viewed with a unit height
    sort(x, dim, descending)        topk of every element (TOPK: ties in index order, NaN largest)
    scatter / scatter_add           which index of dim writes each position (a one-hot of the
    index_put (not into a state)    index against every position: index size x dim size values),
                                    the last one's source gathered there; or the sum of them
    floor/ceil/trunc/round(int x)   x (torch keeps integers as they are), in its dtype
    relu / sign(int x)              where(x > 0, x, 0) / (x > 0) - (x < 0), in x's dtype

``lowerings.py`` builds the table over the merged one (``composite_lowerings(LOWERINGS)``), so a
part's constant folding and quantized-grid handling apply as they do when the user writes it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import torch

from bundle_format.program import DType
from liteexport.compiler.dtypes import dtype_of, scalar_type, torch_dtype_of
from liteexport.compiler.ops import SHAPES_HINT, Emitter, Lowering, is_number, optional_tensor, pair, tensor
from liteexport.compiler.shape_ops import axis_index, cat, reshape_to, slice_of, static_shape, static_size
from liteexport.compiler.values import Sym, TensorConst, TensorValue, Unsupported

__all__ = ["composite_lowerings"]


def composite_lowerings(table: Mapping[str, Lowering]) -> dict[str, Lowering]:
    """The composite lowerings, calling ``table``'s lowerings (looked up at each call, so the
    wrappers ``lowerings.py`` puts on the table apply)."""

    def call(kind: str, b: Emitter, *args: Any) -> Any:
        return table[kind](b, list(args))

    def axes_of(x: TensorValue, dims: Any) -> list[int]:
        rank = max(len(static_shape(x)), 1)
        if dims is None or dims == []:
            return list(range(len(static_shape(x))))
        listed = dims if isinstance(dims, (list, tuple)) else [dims]
        axes = [axis_index(d, rank) for d in listed]
        if len(set(axes)) != len(axes):
            raise Unsupported(f"dims {list(listed)} name a dim twice")
        return axes

    def kept_out(b: Emitter, x: TensorValue, reduced: TensorValue, axes: list[int], keepdim: bool) -> TensorValue:
        """``reduced`` (its ``axes`` of size 1) with them dropped unless ``keepdim``."""
        if keepdim or not axes:
            return reduced
        return reshape_to(b, reduced, [size for i, size in enumerate(static_shape(x)) if i not in axes])

    def truthy(b: Emitter, value: Any) -> TensorValue:
        """``value != 0`` as bool (a bool tensor as it is)."""
        x = tensor(value)
        return x if dtype_of(x) == DType.BOOL else call("aten::ne", b, x, 0)

    def extreme(largest: bool) -> Lowering:
        """amax/amin(x, dim=[], keepdim=False): a NaN is the extreme, as torch's."""
        def lower(b: Emitter, args: list[Any]) -> Any:
            x = tensor(args[0])
            axes = axes_of(x, args[1] if len(args) > 1 else None)
            keepdim = bool(args[2]) if len(args) > 2 else False
            if not static_shape(x):  # a 0-d tensor is its own extreme
                return x
            reduced = x
            for axis in axes:
                reduced = call("aten::max" if largest else "aten::min", b, reduced, axis, True)[0]
            return kept_out(b, x, reduced, axes, keepdim)
        return lower

    def truth(every: bool) -> Lowering:
        """any/all(x) and (x, dim, keepdim): whether any (every) element is nonzero; NaN is nonzero."""
        def lower(b: Emitter, args: list[Any]) -> Any:
            x = tensor(args[0])
            as_float = b.cast(truthy(b, x), DType.FLOAT32)
            dims = args[1] if len(args) > 1 else None
            reduced = extreme(not every)(b, [as_float, dims, bool(args[2]) if len(args) > 2 else False])
            return call("aten::ne", b, reduced, 0)
        return lower

    def spread(root: bool) -> Lowering:
        """var/std(x, unbiased) | (x, dims, unbiased, keepdim) | (x, dims, correction, keepdim)."""
        def lower(b: Emitter, args: list[Any]) -> Any:
            x = tensor(args[0])
            if len(args) == 2:
                dims, correction, keepdim = None, 1.0 if args[1] else 0.0, False
            else:
                dims, keepdim = args[1], bool(args[3]) if len(args) > 3 else False
                setting = args[2]
                correction = (1.0 if setting else 0.0) if isinstance(setting, bool) else \
                    1.0 if setting is None else float(setting)
            axes = axes_of(x, dims)
            count = math.prod(static_size(x, axis) for axis in axes)
            mean = call("aten::mean", b, x, axes, True, None)
            deviation = call("aten::sub", b, x, mean, 1)
            squares = call("aten::sum", b, call("aten::mul", b, deviation, deviation), axes, keepdim, None)
            # N - correction <= 0 divides by zero or less, as torch does (inf or nan)
            variance = call("aten::div", b, squares, float(count) - correction)
            return call("aten::sqrt", b, variance) if root else variance
        return lower

    def flip(b: Emitter, args: list[Any]) -> Any:
        """flip(x, dims): each dim read back to front."""
        x = tensor(args[0])
        for axis in axes_of(x, args[1]):
            size = static_size(x, axis)
            x = call("aten::index_select", b, x, axis, TensorConst(torch.arange(size - 1, -1, -1)))
        return x


    def conv_transpose(rank: int) -> Lowering:
        """conv_transpose{1,2}d(x, weight, bias, stride, padding, output_padding, groups, dilation):
        a constant weight without dilation, as stride x stride convolutions (``phases``); else the
        same sums as a convolution of x with ``stride - 1`` zeros between its elements (a WHERE
        with a constant mask: exact, inf and NaN included), padded by ``dilation * (k - 1) -
        padding``, with the weight flipped and its in/out channels swapped, which does stride**2
        times the multiply-adds of a direct transposed convolution (most are by the zeros)."""
        def phases(b: Emitter, x: TensorValue, w: torch.Tensor, bias: TensorValue | None, stride: tuple[int, int],
                   padding: tuple[int, int], extra: tuple[int, int], groups: int, rank: int) -> Any:
            """A constant weight without dilation: output row o = q * stride + r takes the kernel
            taps r, r + stride, ... only, so each of the stride x stride phases (r_h, r_w) is a
            plain convolution of x (padded by taps - 1) with those taps of the weight, read back
            to front; the phases interleaved (CAT, TRANSPOSE, RESHAPE) and cropped by the padding
            are the result. As many multiply-adds as a direct transposed convolution (taps beyond
            the kernel are zeros), on the engines' fast CONV2D."""
            n, c_in, h, w_in = static_shape(x)
            c_out, kernel = w.shape[1] * groups, w.shape[2:]
            sizes = [(h - 1) * stride[0] - 2 * padding[0] + kernel[0] + extra[0],
                     (w_in - 1) * stride[1] - 2 * padding[1] + kernel[1] + extra[1]]
            # taps per phase: enough that the phases cover the output's last row
            taps = [max(-(-k // st), -(-(k + e - p) // st)) for k, st, e, p in
                    zip(kernel, stride, extra, padding, strict=True)]
            # conv2d's [out, in/g, kh, kw], zero taps appended so every phase has taps[0] x taps[1]
            dense = w.reshape(groups, c_in // groups, c_out // groups, *kernel).transpose(1, 2) \
                .reshape(c_out, c_in // groups, *kernel)
            dense = torch.nn.functional.pad(dense, (0, taps[1] * stride[1] - kernel[1], 0,
                                                    taps[0] * stride[0] - kernel[0]))
            rows = []
            for r_h in range(stride[0]):
                row = []
                for r_w in range(stride[1]):
                    # taps r, r + stride, ..., back to front (a convolution correlates)
                    sub = dense[:, :, r_h::stride[0], r_w::stride[1]].flip(-2, -1).contiguous()
                    out = call("aten::conv2d", b, x, TensorConst(sub), bias, [1, 1], [taps[0] - 1, taps[1] - 1],
                               [1, 1], groups)
                    row.append(reshape_to(b, out, [n, c_out, 1, 1, *static_shape(out)[2:]]))
                rows.append(cat(b, row, 3))
            grid = cat(b, rows, 2)  # [N, C, r_h, r_w, q_h, q_w]
            q_h, q_w = static_shape(grid)[4:]
            woven = reshape_to(b, call("aten::permute", b, grid, [0, 1, 4, 2, 5, 3]),
                               [n, c_out, q_h * stride[0], q_w * stride[1]])
            for axis in range(2):
                woven = slice_of(b, woven, 2 + axis, padding[axis], padding[axis] + sizes[axis])
            return woven if rank == 2 else reshape_to(b, woven, [n, c_out, sizes[1]])

        def lower(b: Emitter, args: list[Any]) -> Any:
            x, weight, bias = tensor(args[0]), tensor(args[1]), optional_tensor(args[2])
            w_shape = static_shape(weight)
            if len(w_shape) != rank + 2 or -1 in w_shape:
                raise Unsupported(f"conv_transpose{rank}d needs a {rank + 2}-D weight of static sizes")
            if len(static_shape(x)) == rank + 1:  # unbatched: a batch of one
                batched = lower(b, [reshape_to(b, x, [1, *static_shape(x)]), *args[1:]])
                return reshape_to(b, batched, static_shape(batched)[1:])
            if rank == 1:
                x = reshape_to(b, x, [*static_shape(x)[:-1], 1, static_shape(x)[-1]])
            shape = static_shape(x)
            if len(shape) != 4 or any(d < 0 for d in shape[1:]):
                raise Unsupported(f"conv_transpose{rank}d needs an N x C x{' H x' if rank == 2 else ''} W input "
                                  "with static channel and spatial sizes (give --input-shape)")

            def spatial(value: Any, fill: int) -> tuple[int, int]:
                return (fill, pair(value)[1]) if rank == 1 else pair(value)

            stride, padding = spatial(args[3], 1), spatial(args[4], 0)
            extra, dilation = spatial(args[5], 0), spatial(args[7], 1)
            groups = int(args[6])
            c_in, c_out = w_shape[0], w_shape[1] * groups
            kernel = (1, w_shape[2]) if rank == 1 else (w_shape[2], w_shape[3])
            if shape[1] != c_in or c_in % groups:
                raise Unsupported(f"conv_transpose{rank}d: {shape[1]} input channels for a weight of {c_in}")
            # [in, out/g, kh, kw] -> conv2d's [out, in/g, kh, kw], each kernel read back to front: at
            # export for a constant weight, else by instructions
            flipped: TensorValue
            if isinstance(weight, TensorConst):
                flipped = TensorConst(weight.tensor.reshape(groups, c_in // groups, c_out // groups, *kernel)
                                      .transpose(1, 2).reshape(c_out, c_in // groups, *kernel).flip(-2, -1)
                                      .contiguous())
            else:
                split = reshape_to(b, weight, [groups, c_in // groups, c_out // groups, *kernel])
                swapped = call("aten::permute", b, split, [0, 2, 1, 3, 4])
                flipped = call("aten::flip", b, reshape_to(b, swapped, [c_out, c_in // groups, *kernel]), [-2, -1])
            before = [d * (k - 1) - p for d, k, p in zip(dilation, kernel, padding, strict=True)]
            for axis in range(2):
                if before[axis] + extra[axis] > max(before[axis], 0) + stride[axis] - 1:
                    raise Unsupported(f"conv_transpose{rank}d: output_padding {list(extra)} not smaller than "
                                      f"the stride {list(stride)} is not compiled")
            n, _, h, w_in = shape
            if isinstance(weight, TensorConst) and stride != (1, 1) and dilation == (1, 1):
                return phases(b, x, weight.tensor.reshape(c_in, c_out // groups, *kernel), bias, stride, padding,
                              extra, groups, rank)
            if stride != (1, 1):
                # x as [N, C, H, 1, W, 1], each element kept at the first of stride x stride places
                mask = torch.zeros(stride[0], 1, stride[1], dtype=torch.bool)
                mask[0, 0, 0] = True
                spaced = call("aten::where", b, TensorConst(mask), reshape_to(b, x, [n, c_in, h, 1, w_in, 1]), 0.0)
                x = reshape_to(b, spaced, [n, c_in, h * stride[0], w_in * stride[1]])
            pads = [max(p, 0) for p in before]
            out = call("aten::conv2d", b, x, flipped, bias, [1, 1], pads, list(dilation), groups)
            for axis in range(2):
                size = (shape[2 + axis] - 1) * stride[axis] + 1 + 2 * before[axis] + extra[axis] \
                    - dilation[axis] * (kernel[axis] - 1)
                start = pads[axis] - before[axis]
                out = slice_of(b, out, 2 + axis, start, start + size)
            return out if rank == 2 else reshape_to(b, out, [n, c_out, static_shape(out)[-1]])
        return lower

    def prod(b: Emitter, args: list[Any]) -> Any:
        """prod(x, dtype=None) | prod.dim_int(x, dim, keepdim=False, dtype=None): the halves of each
        dim multiplied pairwise until one is left; int64 in int64 (bool and int32 too, as torch)."""
        x = tensor(args[0])
        whole = len(args) <= 2
        dtype = args[1] if whole and len(args) > 1 else args[3] if len(args) > 3 else None
        if dtype is not None:
            x = b.cast(x, scalar_type(dtype)) if isinstance(dtype, torch.dtype) else call("aten::to", b, x, dtype)
        elif dtype_of(x) in (DType.BOOL, DType.INT32):
            x = b.cast(x, DType.INT64)
        shape = static_shape(x)
        if not shape:
            return x
        axes = list(range(len(shape))) if whole else [axis_index(args[1], len(shape))]
        product = x
        for axis in axes:
            size = static_size(product, axis)
            if size == 0:
                ones = [1 if a == axis else d for a, d in enumerate(static_shape(product))]
                if any(d < 0 for d in ones):
                    raise Unsupported(f"prod over an empty dim of a tensor with dynamic dims; {SHAPES_HINT}")
                product = TensorConst(torch.ones(ones, dtype=torch_dtype_of(product)))
            while size > 1:
                half = size // 2
                pairs = call("aten::mul", b, slice_of(b, product, axis, 0, half), slice_of(b, product, axis, half,
                                                                                           2 * half))
                product = cat(b, [pairs, slice_of(b, product, axis, 2 * half, size)], axis) if size % 2 else pairs
                size = half + size % 2
        keepdim = not whole and len(args) > 2 and bool(args[2])
        return kept_out(b, x, product, axes, keepdim) if not whole else reshape_to(b, product, [])

    def upsample_nearest1d(b: Emitter, args: list[Any]) -> Any:
        """(self, output_size, scales=None) | .vec (input, output_size?, scale_factors?): the
        2-D resize of x as [N, C, 1, L] (the height's scale is 1: row 0 maps to row 0)."""
        x = tensor(args[0])
        shape = static_shape(x)
        if len(shape) != 3:
            raise Unsupported(f"1-D upsampling of a {len(shape)}-D tensor: only N x C x L inputs are compiled")
        size, scales = args[1], args[2] if len(args) > 2 else None
        tall = reshape_to(b, x, [shape[0], shape[1], 1, shape[2]])
        if isinstance(scales, list | tuple):  # .vec
            out = call("aten::upsample_nearest2d", b, tall, None if size is None else [1, *size], [1.0, *scales])
        else:
            out = call("aten::upsample_nearest2d", b, tall, [1, *size], None, scales)
        return reshape_to(b, out, [shape[0], shape[1], static_shape(out)[-1]])

    def sort(b: Emitter, args: list[Any]) -> Any:
        """sort(x, dim=-1, descending=False) | sort.stable(x, stable, dim, descending): topk of the
        whole dim. TOPK orders equal values by index (a stable sort, both ways) and a NaN as the
        largest (first descending, last ascending), as torch's sort."""
        x = tensor(args[0])
        if len(args) == 4 or (len(args) > 1 and (args[1] is None or isinstance(args[1], bool))):
            dim, descending = (args[2] if len(args) > 2 else -1), (bool(args[3]) if len(args) > 3 else False)
        else:
            dim, descending = (args[1] if len(args) > 1 else -1), (bool(args[2]) if len(args) > 2 else False)
        shape = static_shape(x)
        if not shape:  # torch sorts a 0-d tensor as one element
            return x, TensorConst(torch.zeros((), dtype=torch.int64))
        axis = axis_index(dim, len(shape))
        size = static_size(x, axis)
        if dtype_of(x) == DType.BOOL:  # TOPK compares numbers: the order of bools as 0 and 1
            _, indices = call("aten::topk", b, b.cast(x, DType.INT64), size, axis, descending, True)
            return call("aten::gather", b, x, axis, indices, False), indices
        return call("aten::topk", b, x, size, axis, descending, True)

    state_put = table["aten::index_put"]  # the KV cache write (state_ops), before this table's

    def scattered(b: Emitter, x: TensorValue, axis: int, index: TensorValue, source: TensorValue,
                  add: bool) -> TensorValue:
        """x with ``source``'s entries written (added) along ``axis`` at ``index``'s positions, as
        torch.scatter (scatter_add): index and source of x's sizes except along axis. A one-hot
        [.., K, J, ..] of the K indices against the J positions says which index writes where;
        of several, the last (torch's CPU kernel writes them in order), or all of them added."""
        shape, index_shape = static_shape(x), static_shape(index)
        if -1 in shape or -1 in index_shape:
            raise Unsupported(f"scatter into or with a tensor of dynamic dims; {SHAPES_HINT}")
        if len(index_shape) != len(shape) or any(i > s for a, (i, s) in enumerate(zip(index_shape, shape, strict=False))
                                                 if a != axis):
            raise Unsupported(f"scatter with an index of shape {list(index_shape)} into {list(shape)}")
        for a, (i, s) in enumerate(zip(index_shape, shape, strict=True)):
            if a != axis and i < s:  # the index covers the first i entries of dim a: the rest stay
                head = scattered(b, slice_of(b, x, a, 0, i), axis, index, source, add)
                return cat(b, [head, slice_of(b, x, a, i, s)], a)
        count, size = index_shape[axis], shape[axis]
        if count == 0 or any(d == 0 for d in shape):
            return x
        source = b.cast(source, dtype_of(x))
        for a, wanted in enumerate(index_shape):
            source = slice_of(b, source, a, 0, wanted)

        def along(length: int, at: int) -> TensorConst:  # 0..length-1 along dim ``at`` of rank + 1
            return TensorConst(torch.arange(length).reshape([length if a == at else 1 for a in range(len(shape) + 1)]))

        wide = [*index_shape[:axis + 1], 1, *index_shape[axis + 1:]]
        hits = call("aten::eq", b, reshape_to(b, b.cast(index, DType.INT64), wide), along(size, axis + 1))
        if add:
            zero = TensorConst(torch.zeros((), dtype=torch_dtype_of(x)))
            terms = call("aten::where", b, hits, reshape_to(b, source, wide), zero)
            if dtype_of(x) == DType.FLOAT32:
                total = call("aten::sum", b, terms, [axis], False, None)
            else:  # SUM takes float32: integers add up exactly in a running sum, its last entry
                running = call("aten::cumsum", b, terms, axis, None)
                total = call("aten::squeeze", b, slice_of(b, running, axis, count - 1, count), axis)
            return tensor(call("aten::add", b, x, b.cast(total, dtype_of(x)), 1))
        writers = call("aten::where", b, hits, along(count, axis), TensorConst(torch.tensor(-1)))
        last = call("aten::amax", b, writers, [axis], False)
        written = call("aten::ge", b, last, 0)
        picked = call("aten::gather", b, source, axis, call("aten::where", b, written, last,
                                                             TensorConst(torch.tensor(0))), False)
        return tensor(call("aten::where", b, written, picked, x))

    def scatter(add: bool) -> Lowering:
        """scatter(x, dim, index, src | value) and scatter_add(x, dim, index, src)."""
        def lower(b: Emitter, args: list[Any]) -> Any:
            x, index, source = tensor(args[0]), tensor(args[2]), args[3]
            if len(args) > 4 and args[4] is not None:
                if args[4] != "add":
                    raise Unsupported(f"scatter with reduce={args[4]!r} is not compiled (only 'add')")
                return scatter(True)(b, list(args[:4]))
            if not static_shape(x):  # a 0-d x, index and source: as one element
                one = scatter(add)(b, [reshape_to(b, x, [1]), 0, reshape_to(b, index, [1]),
                                       source if is_number(source) else reshape_to(b, tensor(source), [1])])
                return reshape_to(b, one, [])
            if is_number(source):
                source = TensorConst(torch.full(static_shape(index), source, dtype=torch_dtype_of(x)))
            return scattered(b, x, axis_index(args[1], len(static_shape(x))), index, tensor(source), add)
        return lower

    def index_put(b: Emitter, args: list[Any]) -> Any:
        """index_put(x, indices, values, accumulate): into a state, its in-place row write; into
        another tensor, one integer index tensor after full slices (``x[:, idx] = v``, negative
        positions counted from the end) as a scatter (a scatter_add when accumulating)."""
        x = args[0]
        if isinstance(x, Sym) and x.state is not None:
            return state_put(b, args)
        x, indices = tensor(x), list(args[1])
        given = [i for i, index in enumerate(indices) if index is not None]
        if len(given) != 1 or given[0] != len(indices) - 1:
            raise Unsupported("only index_put with one index tensor after full slices (x[:, :, idx] = v) is compiled")
        axis, index = given[0], tensor(indices[-1])
        shape = static_shape(x)
        if dtype_of(index) == DType.BOOL or len(static_shape(index)) != 1:
            raise Unsupported("index_put with a boolean mask or a multi-dimensional index is not compiled")
        size, count = static_size(x, axis), static_size(index, 0)
        index = call("aten::remainder", b, b.cast(index, DType.INT64), size)  # -1 is the last
        rows = [*shape[:axis], count, *shape[axis + 1:]]
        values = args[2] if not is_number(args[2]) else TensorConst(torch.tensor(args[2]))
        values = call("aten::expand", b, b.cast(tensor(values), dtype_of(x)), rows, False)
        spread = call("aten::expand", b, reshape_to(b, index, [count if a == axis else 1 for a in range(len(shape))]),
                      rows, False)
        return scattered(b, x, axis, spread, values, bool(args[3]) if len(args) > 3 else False)

    def in_integers(kind: str, compute: Callable[[Emitter, TensorValue], Any]) -> Lowering:
        """``kind`` of an integer or bool tensor computed in its own dtype, as torch does (the
        float kernel's lowering refuses them); floats go to that lowering."""
        floats = table[kind]

        def lower(b: Emitter, args: list[Any]) -> Any:
            x = tensor(args[0])
            if dtype_of(x) == DType.FLOAT32 or any(a not in (None, 0) for a in args[1:]):  # round's decimals
                return floats(b, args)
            return compute(b, x)
        return lower

    def zero_of(x: TensorValue) -> TensorConst:
        return TensorConst(torch.zeros((), dtype=torch_dtype_of(x)))

    def integer_relu(b: Emitter, x: TensorValue) -> Any:
        if dtype_of(x) == DType.BOOL:
            raise Unsupported("relu of a bool tensor (torch refuses it too)")
        return call("aten::where", b, call("aten::gt", b, x, 0), x, zero_of(x))

    def integer_sign(b: Emitter, x: TensorValue) -> Any:
        if dtype_of(x) == DType.BOOL:  # torch: a bool's sign is itself
            return x
        return call("aten::sub", b, b.cast(call("aten::gt", b, x, 0), dtype_of(x)),
                    b.cast(call("aten::lt", b, x, 0), dtype_of(x)), 1)

    def unchanged(b: Emitter, x: TensorValue) -> Any:
        if dtype_of(x) == DType.BOOL:
            raise Unsupported("rounding a bool tensor (torch refuses it too)")
        return x

    found: dict[str, Callable[[Emitter, list[Any]], Any]] = {
        "aten::isnan": lambda b, args: call("aten::ne", b, tensor(args[0]), tensor(args[0])),
        "aten::amax": extreme(True),
        "aten::amin": extreme(False),
        "aten::any": truth(False),
        "aten::all": truth(True),
        "aten::var": spread(False),
        "aten::std": spread(True),
        "aten::flip": flip,
        # log in another base: ln(x) times a constant, within an ulp of torch's own
        "aten::log10": lambda b, args: call("aten::mul", b, call("aten::log", b, tensor(args[0])), 1 / math.log(10)),
        "aten::log2": lambda b, args: call("aten::mul", b, call("aten::log", b, tensor(args[0])), 1 / math.log(2)),
        "aten::logical_xor": lambda b, args: call("aten::ne", b, truthy(b, args[0]), truthy(b, args[1])),
        "aten::conv_transpose1d": conv_transpose(1),
        "aten::conv_transpose2d": conv_transpose(2),
        "aten::prod": prod,
        "aten::upsample_nearest1d": upsample_nearest1d,
        "aten::sort": sort,
        "aten::scatter": scatter(False),
        "aten::scatter_add": scatter(True),
        "aten::index_put": index_put,
        **{kind: in_integers(kind, unchanged) for kind in ("aten::floor", "aten::ceil", "aten::trunc", "aten::round")},
        "aten::relu": in_integers("aten::relu", integer_relu),
        "aten::sign": in_integers("aten::sign", integer_sign),
    }
    return found
