"""A pickle reader for the zip lite format that resolves only the globals torch writes.

``pickle.load`` would import and call whatever a file names (``os.system``, ``eval``,
...). The pickles inside a ``.ptl`` legitimately name a handful of torch helpers, the
storage types and the model's own ``__torch__.*`` classes. This unpickler maps each of
those to a harmless stand-in built here (nothing is ever imported) and rejects every
other name with a FormatError before anything runs.

Nothing a pickle does may outlive it: the stand-ins are shared by every load, so they are
immutable (slotted frozen dataclasses), and BUILD (set an object's state) is refused on
anything but a model object this very pickle created; a BUILD on a stand-in would otherwise
rewrite it for every later load in the process.

The pickle is hostile in its structure too. The pure-Python unpickler is used (its memo is
a dict, so a huge memo index cannot make it allocate a huge array; it has no C recursion),
dict and set keys must be flat values (hashing a deeply nested tuple overflows the C stack),
and the result may nest at most ``MAX_DEPTH`` containers deep (checked without recursion).
"""

from __future__ import annotations

import io
import pickle
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from bundle_format.errors import FormatError
from bundle_format.ptmf import QScheme, ScalarType
from bundle_format.ptmf_verify import MAX_KEY_TUPLE

TORCH_CLASS_PREFIX = "__torch__"
# Model classes too: the types torch's to_backend gives a lowered module and its wrapper.
MODEL_CLASS_PREFIXES = (TORCH_CLASS_PREFIX, "torch.jit.LoweredWrapper", "torch.jit.LoweredModule")

# torch.<Name>Storage -> the element type of its tensors (torch/csrc/jit/serialization/pickler.cpp)
STORAGE_TYPES: dict[str, int] = {
    "ByteStorage": ScalarType.BYTE, "CharStorage": ScalarType.CHAR, "ShortStorage": ScalarType.SHORT,
    "IntStorage": ScalarType.INT, "LongStorage": ScalarType.LONG, "HalfStorage": ScalarType.HALF,
    "FloatStorage": ScalarType.FLOAT, "DoubleStorage": ScalarType.DOUBLE, "BoolStorage": ScalarType.BOOL,
    "BFloat16Storage": ScalarType.BFLOAT16, "ComplexFloatStorage": 9, "ComplexDoubleStorage": 10,
    "QInt8Storage": ScalarType.QINT8, "QUInt8Storage": ScalarType.QUINT8, "QInt32Storage": ScalarType.QINT32,
}
# torch.<qscheme> globals, as quantized tensors' pickles name their scheme (c10::toString(QScheme))
QSCHEMES: dict[str, int] = {
    "per_tensor_affine": QScheme.PER_TENSOR_AFFINE, "per_channel_affine": QScheme.PER_CHANNEL_AFFINE,
    "per_tensor_symmetric": QScheme.PER_TENSOR_SYMMETRIC, "per_channel_symmetric": QScheme.PER_CHANNEL_SYMMETRIC,
    "per_channel_affine_float_qparams": QScheme.PER_CHANNEL_AFFINE_FLOAT_QPARAMS,
}


@dataclass(frozen=True, slots=True)
class StorageType:
    """What ``torch.FloatStorage`` & co. resolve to: the storage's element type."""

    scalar_type: int


@dataclass(frozen=True, slots=True)
class QSchemeRef:
    """What ``torch.per_tensor_affine`` & co. resolve to: the c10::QScheme number."""

    qscheme: int


@dataclass(frozen=True)
class QuantizerRef:
    """A quantized tensor's parameters as its pickle gives them: per tensor ``scale`` and
    ``zero_point``, per channel the ``scales`` and ``zero_points`` tensors and their ``axis``."""

    qscheme: int
    scale: float = 0.0
    zero_point: int = 0
    scales: TensorRef | None = None
    zero_points: TensorRef | None = None
    axis: int = 0


@dataclass(frozen=True)
class TensorRef:
    """A tensor as the pickle describes it: where its bytes are and how to view them."""

    storage_index: int  # into the module's storage table (assigned by the storage loader)
    scalar_type: int
    storage_offset: int  # in elements
    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    requires_grad: bool
    quantizer: QuantizerRef | None = None  # quantized tensors only


@dataclass(frozen=True)
class StorageRef:
    index: int
    scalar_type: int


class PickledObject:
    """An instance of a model class (``__torch__.*``): its type name and pickled state.

    Subclassed once per class name (NEWOBJ needs a type); ``args`` is set when the pickle
    REDUCEs the class (torch does that for enum values), ``state`` by BUILD."""

    type_name: ClassVar[str] = ""
    _NO_STATE: ClassVar[object] = object()

    args: tuple[Any, ...]
    state: Any

    def __new__(cls, *args: Any) -> PickledObject:
        obj = super().__new__(cls)
        obj.args = args
        obj.state = PickledObject._NO_STATE
        return obj

    def __setstate__(self, state: Any) -> None:
        self.state = state

    @property
    def has_state(self) -> bool:
        return self.state is not PickledObject._NO_STATE


@dataclass(frozen=True, slots=True)
class _StandIn:
    """A torch helper's stand-in: calls ``fn``, and nothing can change it (``fn`` itself is
    out of a pickle's reach: pickle has no opcode that reads an attribute)."""

    name: str
    fn: Callable[..., Any]

    def __call__(self, *args: Any) -> Any:
        return self.fn(*args)


def _rebuild_tensor(storage: StorageRef, offset: int, sizes: Any, strides: Any, requires_grad: bool = False,
                    backward_hooks: Any = None, metadata: Any = None) -> TensorRef:
    if not isinstance(storage, StorageRef):
        raise FormatError(f"tensor refers to {type(storage).__name__}, not a storage")
    return TensorRef(storage.index, storage.scalar_type, int(offset), tuple(int(s) for s in sizes),
                     tuple(int(s) for s in strides), bool(requires_grad))


def _rebuild_legacy_tensor(storage: StorageRef, offset: int, sizes: Any, strides: Any) -> TensorRef:
    return _rebuild_tensor(storage, offset, sizes, strides)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _plain_tensor(value: Any) -> bool:
    """A tensor that is not quantized: per-channel parameters are (and a chain of quantized ones
    would make hashing the tensor recurse as deep as the pickle likes)."""
    return isinstance(value, TensorRef) and value.quantizer is None


def _quantizer(params: Any) -> QuantizerRef:
    """torch._utils._rebuild_qtensor's quantizer_params: ``(qscheme, scale, zero_point)`` or
    ``(qscheme, scales, zero_points, axis)`` (torch/csrc/jit/serialization/pickler.cpp)."""
    if not isinstance(params, tuple) or not params or not isinstance(params[0], QSchemeRef):
        raise FormatError(f"quantized tensor parameters {params!r:.80} do not start with a qscheme")
    if len(params) == 3 and isinstance(params[1], int | float) and _is_int(params[2]):
        return QuantizerRef(params[0].qscheme, float(params[1]), params[2])
    if (len(params) == 4 and _plain_tensor(params[1]) and _plain_tensor(params[2]) and _is_int(params[3])):
        return QuantizerRef(params[0].qscheme, scales=params[1], zero_points=params[2], axis=params[3])
    raise FormatError(f"malformed quantized tensor parameters {params!r:.80}")


def _rebuild_qtensor(storage: StorageRef, offset: int, sizes: Any, strides: Any, quantizer_params: Any,
                     requires_grad: bool = False, backward_hooks: Any = None) -> TensorRef:
    tensor = _rebuild_tensor(storage, offset, sizes, strides, requires_grad)
    return replace(tensor, quantizer=_quantizer(quantizer_params))


def _unsupported(what: str) -> Callable[..., Any]:
    def fail(*args: Any) -> Any:
        raise FormatError(f"{what} are not supported by runtime_py")
    return fail


def _restore_type_tag(value: Any, type_str: str) -> Any:
    return value  # the tag only restores a static type on torch's side


def _as_list(items: Any) -> list[Any]:
    return list(items)


def _device(name: str) -> str:
    return str(name)  # runtime_py's devices are plain strings ("cpu")


def _ordered_dict(*args: Any) -> OrderedDict[Any, Any]:
    if args:  # torch REDUCEs OrderedDict with no arguments and SETITEMS the items
        raise FormatError("OrderedDict with arguments is not supported")
    return OrderedDict()


# (module, name) -> the function a stand-in calls. Everything torch's pickler and mobile exporter write.
_HELPERS: dict[tuple[str, str], Callable[..., Any]] = {
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor,
    ("torch._utils", "_rebuild_tensor"): _rebuild_legacy_tensor,
    ("torch._utils", "_rebuild_qtensor"): _rebuild_qtensor,
    ("torch._utils", "_rebuild_sparse_tensor"): _unsupported("sparse tensors"),
    ("collections", "OrderedDict"): _ordered_dict,
    ("torch.jit._pickle", "restore_type_tag"): _restore_type_tag,
    ("torch.jit._pickle", "build_intlist"): _as_list,
    ("torch.jit._pickle", "build_doublelist"): _as_list,
    ("torch.jit._pickle", "build_boollist"): _as_list,
    ("torch.jit._pickle", "build_tensorlist"): _as_list,
    ("torch.jit._pickle", "build_genericlist"): _as_list,
    ("torch", "device"): _device,
    ("builtins", "complex"): complex,
}
_ALLOWED: dict[tuple[str, str], Any] = {(m, n): _StandIn(f"{m}.{n}", fn) for (m, n), fn in _HELPERS.items()}
_ALLOWED.update({("torch", name): StorageType(scalar) for name, scalar in STORAGE_TYPES.items()})
_ALLOWED.update({("torch", name): QSchemeRef(qscheme) for name, qscheme in QSCHEMES.items()})

MAX_DEPTH = 100  # containers nested in one pickle; torch's are a few levels per submodule
_FLAT_KEYS = (str, bytes, int, float, bool, complex, type(None), TensorRef, StorageRef)


def _check_key(key: Any, unpickler: RestrictedUnpickler) -> None:
    """Dict/set keys must hash in a few steps (a pickle can insert one key many times): a flat
    value or a short tuple of flat values."""
    if isinstance(key, _FLAT_KEYS) or isinstance(key, PickledObject):
        return
    if isinstance(key, tuple) and len(key) <= MAX_KEY_TUPLE and all(isinstance(k, _FLAT_KEYS) for k in key):
        return
    kind = f"tuple of {len(key)} items" if isinstance(key, tuple) else type(key).__name__
    raise FormatError(f"dict key of kind {kind}: keys must be numbers, strings, tensors or tuples of at most "
                      f"{MAX_KEY_TUPLE} of them",
                      where=unpickler.where())


def _check_depth(value: Any, record: str) -> None:
    """Containers nested at most MAX_DEPTH deep; iterative. A shared container is walked again
    only when reached deeper than before, so the work is at most MAX_DEPTH times the pickle's."""
    seen: dict[int, int] = {}
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise FormatError(f"{record} nests containers more than {MAX_DEPTH} deep", where=record)
        if isinstance(item, PickledObject):
            children: Any = (*item.args, item.state) if item.has_state else item.args
        elif isinstance(item, dict):
            children = (*item.keys(), *item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            children = item
        else:
            continue
        if seen.get(id(item), -1) >= depth:
            continue
        seen[id(item)] = depth
        stack.extend((child, depth + 1) for child in children)


# persistent id ('storage', type, key, location, numel) -> where the tensor's bytes are
StorageLoader = Callable[[str, int, int], int]  # (key, scalar type, numel) -> storage index


def _checking_keys(load: Callable[[Any], None], count: Callable[[Any], Any]) -> Callable[[Any], None]:
    """Wrap an unpickler opcode that hashes keys: check the keys first."""
    def wrapped(self: RestrictedUnpickler) -> None:
        for key in count(self):
            _check_key(key, self)
        load(self)
    return wrapped


def _build_own_objects_only(self: Any) -> None:  # the RestrictedUnpickler (pickle's stubs lack its stack)
    """BUILD: only a model object this pickle created may be given state."""
    target = self.stack[-2] if len(self.stack) >= 2 else None
    if not isinstance(target, PickledObject):
        raise FormatError(f"{self._record} sets the state of {type(target).__name__} (pickle BUILD): only "
                          "model objects (__torch__.*) the pickle itself creates may be given state",
                          where=self.where())
    state = self.stack.pop()
    target.__setstate__(state)


class RestrictedUnpickler(pickle._Unpickler):  # the pure-Python one: see the module docstring
    """Reads one pickle of a zip lite model; see the module docstring."""

    dispatch = dict(pickle._Unpickler.dispatch)
    # opcodes that insert keys into a dict or set: (keys on the stack / since the last mark);
    # the base loaders are looked up by opcode (load_setitem & co. are not in pickle's stubs)
    dispatch[pickle.SETITEM[0]] = _checking_keys(dispatch[pickle.SETITEM[0]], lambda u: u.stack[-2:-1])
    dispatch[pickle.SETITEMS[0]] = _checking_keys(dispatch[pickle.SETITEMS[0]], lambda u: u.stack[0::2])
    dispatch[pickle.DICT[0]] = _checking_keys(dispatch[pickle.DICT[0]], lambda u: u.stack[0::2])
    dispatch[pickle.ADDITEMS[0]] = _checking_keys(dispatch[pickle.ADDITEMS[0]], lambda u: u.stack)
    dispatch[pickle.FROZENSET[0]] = _checking_keys(dispatch[pickle.FROZENSET[0]], lambda u: u.stack)

    dispatch[pickle.BUILD[0]] = _build_own_objects_only  # see the module docstring

    def __init__(self, data: bytes, record: str, storage_loader: StorageLoader | None) -> None:
        self._data = io.BytesIO(data)
        super().__init__(self._data)
        self._record = record
        self._storage_loader = storage_loader
        self._classes: dict[str, type[PickledObject]] = {}

    def where(self) -> str:
        """The record and the byte just read (the opcode being run, give or take its argument)."""
        return f"{self._record}, byte {max(self._data.tell() - 1, 0)}"

    def find_class(self, module: str, name: str) -> Any:
        if any(module == prefix or module.startswith(prefix + ".") for prefix in MODEL_CLASS_PREFIXES):
            qualname = f"{module}.{name}"
            cls = self._classes.get(qualname)
            if cls is None:
                # A fresh subclass holding just the name: never the real class, never imported.
                cls = type(name, (PickledObject,), {"type_name": qualname, "__module__": __name__})
                self._classes[qualname] = cls
            return cls
        allowed = _ALLOWED.get((module, name))
        if allowed is None:
            raise FormatError(f"{self._record} refuses to load global {module}.{name}: only the names torch "
                              "writes into lite-interpreter models are allowed (the file may be malicious)",
                              where=self.where())
        return allowed

    def persistent_load(self, pid: Any) -> Any:
        if (not isinstance(pid, tuple) or len(pid) != 5 or pid[0] != "storage"
                or not isinstance(pid[1], StorageType) or not isinstance(pid[2], str)
                or not isinstance(pid[4], int)):
            raise FormatError(f"{self._record} has a persistent id that is not a storage: {pid!r:.80}",
                              where=self.where())
        if self._storage_loader is None:
            raise FormatError(f"{self._record} must not refer to tensor storage", where=self.where())
        index = self._storage_loader(pid[2], pid[1].scalar_type, pid[4])
        return StorageRef(index, pid[1].scalar_type)


def restricted_loads(data: bytes, record: str, storage_loader: StorageLoader | None = None) -> Any:
    """Unpickle ``data`` (the archive record ``record``) with only torch's names allowed."""
    unpickler = RestrictedUnpickler(data, record, storage_loader)
    try:
        value = unpickler.load()
    except FormatError as exc:  # a stand-in's own complaint does not know where it was called
        raise exc.at(unpickler.where()) from exc.__cause__
    except RecursionError as exc:
        raise FormatError(f"{record} is nested too deeply", where=unpickler.where()) from exc
    except Exception as exc:  # a truncated or corrupt pickle fails in many ways; all are format errors
        raise FormatError(f"{record} is not a valid pickle: {type(exc).__name__}: {exc}",
                          where=unpickler.where()) from exc
    _check_depth(value, record)
    return value
