"""Type stubs of the `mediaslice` module (see docs/python.md)."""
import os
from typing import Any, Iterator, Literal, Optional, Union

Source = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview]

__version__: str

class Error(Exception):
    code: str
    offset: Optional[int]
    path: str
    message: str

class Packet:
    track: int
    pts: Optional[int]
    dts: Optional[int]
    duration: Optional[int]
    keyframe: bool
    discard: bool
    truncated: bool
    offset: Optional[int]
    size: int
    data: Union[memoryview, bytes]
    copied: bool

class Packets(Iterator[Packet]):
    def __iter__(self) -> "Packets": ...
    def __next__(self) -> Packet: ...
    def close(self) -> None: ...

def probe(
    src: Source, name: Optional[str] = None, errors: Literal["raise", "return"] = "raise"
) -> dict[str, Any]: ...
def packets(src: Source, name: Optional[str] = None) -> Packets: ...
def tags(src: Source, name: Optional[str] = None) -> dict[str, Any]: ...
