"""Run-time values that are not plain Python/numpy: script objects and the uninitialized marker."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from runtime_py.errors import ExecutionError

# Attributes of one object (TorchScript classes have tens): SET_ATTR's slot index is read from
# the file, and growing an object's slots to it is one allocation no budget sees coming.
MAX_OBJECT_SLOTS = 1 << 16


class Uninitialized:
    """What UN_INITIALIZED pushes: a placeholder for a value on a path that raises."""

    def __repr__(self) -> str:
        return "<uninitialized>"


UNINITIALIZED = Uninitialized()


@dataclass(eq=False)
class ScriptObject:
    """An instance of a TorchScript class: a type name and attribute slots."""

    type_name: str
    slots: list[Any] = field(default_factory=list)

    def get_slot(self, index: int) -> Any:
        if not 0 <= index < len(self.slots):  # the index comes from the file: -1 is no slot either
            raise ExecutionError(f"object of type {self.type_name} has no attribute slot {index}")
        return self.slots[index]

    def set_slot(self, index: int, value: Any) -> None:
        # Like c10::ivalue::Object::setSlot: objects rebuilt by __setstate__ grow their slots.
        if index >= len(self.slots):
            if index >= MAX_OBJECT_SLOTS:  # the index comes from the file: refused before growing
                raise ExecutionError(f"SET_ATTR of attribute slot {index} of an object of type {self.type_name}: "
                                     f"objects hold at most {MAX_OBJECT_SLOTS} attributes")
            self.slots.extend([None] * (index + 1 - len(self.slots)))
        self.slots[index] = value


@dataclass(frozen=True)
class ScriptEnum:
    """A TorchScript enum value: its class name and underlying value."""

    type_name: str
    value: Any
