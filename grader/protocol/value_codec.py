"""How values cross between judge and sandbox: tagged JSON plus raw array buffers.

Data crosses as data: `None`, bools, ints, floats, complex, str, bytes, NumPy
arrays and scalars, JAX arrays, typed PRNG keys, and tuples, lists, dicts (plain or
`OrderedDict`, the state of `optax.named_chain`) and namedtuples of them. Anything
else a student's code returns (a function, a Flax module, an object) stays in the sandbox and crosses as a *handle*: a number the
judge can call, read attributes of, or pass back. An exception raised by the
student's code crosses as an *error*: its type name, the names of its bases,
its message and the student's line.

Decoding validates everything: dtypes come from an allow-list, a buffer's size
must equal `prod(shape) * itemsize`, strings, depth and node counts are capped,
and namedtuple classes are only rebuilt from libraries the receiver already
imported (optax's states, say); otherwise a plain namedtuple of the same fields.
"""

from __future__ import annotations

import collections
import math
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

MAX_DEPTH = 64
"""Nesting of containers in one value."""
MAX_NODES = 200_000
"""Containers and leaves in one value."""
MAX_STR_CHARS = 1 << 20
"""One string."""
MAX_NDIM = 16

DTYPES = frozenset(
    [
        "bool",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float16",
        "float32",
        "float64",
        "complex64",
        "complex128",
        "bfloat16",
    ]
)
KEY_IMPLS = frozenset({"threefry2x32", "rbg", "unsafe_rbg"})
NAMEDTUPLE_LIBRARIES = ("optax", "flax", "chex", "equinox", "jax")
"""A namedtuple type from these libraries is rebuilt as itself when the receiver has
already imported its module; any other namedtuple becomes a plain one of the same fields."""
PUBLIC_NAMEDTUPLES = "grader.inputs."
"""Namedtuples defined in the public inputs (`grader/inputs/<lesson>.py`, imported by judge and
sandbox alike) are rebuilt as themselves too: a suite's containers keep their type both ways."""


class DecodeError(ValueError):
    """A value that does not follow this protocol."""


@dataclass(frozen=True)
class ErrorInfo:
    """An exception raised by student code, as data.

    `bases` are the names of the exception's classes from its own to `BaseException`,
    `location` the student's innermost line as (path, line, code), `function` the
    innermost student function, `in_student` whether the exception was raised on a
    line of the student's file itself (a stub's `raise NotImplementedError`)."""

    type: str
    bases: tuple[str, ...]
    message: str
    location: tuple[str, int, str] | None = None
    function: str = ""
    in_student: bool = False

    def is_a(self, name: str) -> bool:
        return name == self.type or name in self.bases


@dataclass(frozen=True)
class Hole:
    """An argument left open in a remote `partial`: filled by the call's arguments in order."""


HOLE = Hole()


@dataclass(frozen=True)
class Public:
    """A value built in the sandbox from `grader.sandbox.public_inputs`: a function or object the
    judge hands to student code (a loss for `per_example_grads`, a timed step)."""

    name: str
    args: tuple[Any, ...] = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)


def _check_str(value: Any, what: str) -> str:
    if not isinstance(value, str) or len(value) > MAX_STR_CHARS:
        raise DecodeError(f"{what} must be a string of at most {MAX_STR_CHARS} characters")
    return value


def _check_int(value: Any, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise DecodeError(f"{what} must be an integer")
    return value


class Encoder:
    """Turns a value into tagged JSON and buffers. `other(obj)` returns the tag for an object
    that is not data (a handle), or raises `TypeError`."""

    def __init__(self, other: Callable[[Any], dict[str, Any]]) -> None:
        self.buffers: list[bytes | memoryview] = []
        self._other = other
        self._nodes = 0

    def encode(self, value: Any, depth: int = 0) -> Any:
        self._nodes += 1
        if depth > MAX_DEPTH or self._nodes > MAX_NODES:
            raise TypeError("value too deep or too large to send")
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, int | float | complex | str | bytes | bytearray):
            return self._atom(value)
        if isinstance(value, Hole):
            return {"t": "hole"}
        if isinstance(value, ErrorInfo):
            return _error_tag(value)
        if isinstance(value, Public):
            return {
                "t": "public",
                "name": value.name,
                "args": self.encode(tuple(value.args), depth + 1),
                "kwargs": self.encode(dict(value.kwargs), depth + 1),
            }
        if isinstance(value, np.generic | np.ndarray):
            return self._numpy(value)
        jax_array = _jax_array_tag(value, self)
        if jax_array is not None:
            return jax_array
        return self._container(value, depth)

    def _atom(self, value: int | float | complex | str | bytes | bytearray) -> Any:
        """A Python number, string or bytes (a bool is itself)."""
        if isinstance(value, int):
            return {"t": "int", "v": str(value)}
        if isinstance(value, float):
            return {"t": "float", "v": float.hex(value)}
        if isinstance(value, complex):
            return {"t": "complex", "re": float.hex(value.real), "im": float.hex(value.imag)}
        if isinstance(value, str):
            return value[:MAX_STR_CHARS]
        return {"t": "bytes", "b": self._buffer(bytes(value))}

    def _numpy(self, value: np.generic | np.ndarray[Any, Any]) -> Any:
        """A NumPy scalar or array of an allowed dtype; any other is not data."""
        if isinstance(value, np.generic) and np.asarray(value).dtype.name in DTYPES:
            return {"t": "array", "kind": "scalar", **self._array(np.asarray(value))}
        if isinstance(value, np.ndarray) and value.dtype.name in DTYPES:
            return {"t": "array", "kind": "numpy", **self._array(value)}
        return self._other(value)

    def _container(self, value: Any, depth: int) -> Any:
        """A namedtuple, tuple, list, dict or OrderedDict, items encoded; anything else is
        not data (`other`)."""
        if isinstance(value, tuple) and hasattr(value, "_fields") and type(value) is not tuple:
            cls = type(value)
            return {
                "t": "namedtuple",
                "type": f"{cls.__module__}:{cls.__qualname__}",
                "fields": list(cls._fields),
                "items": [self.encode(v, depth + 1) for v in value],
            }
        if type(value) in (tuple, list):
            return {"t": type(value).__name__, "items": [self.encode(v, depth + 1) for v in value]}
        if type(value) in (dict, collections.OrderedDict):
            tag = "dict" if type(value) is dict else "odict"
            return {
                "t": tag,
                "items": [
                    [self._key(k, depth), self.encode(v, depth + 1)] for k, v in value.items()
                ],
            }
        return self._other(value)

    def _key(self, key: Any, depth: int) -> Any:
        if (
            key is None
            or isinstance(key, str | int | float | bool)
            or (
                type(key) is tuple
                and all(k is None or isinstance(k, str | int | bool) for k in key)
            )
        ):
            return self.encode(key, depth + 1)
        raise TypeError(f"dict key of type {type(key).__name__} cannot be sent")

    def _array(self, arr: np.ndarray[Any, Any]) -> dict[str, Any]:
        name = arr.dtype.name
        if name not in DTYPES:
            raise TypeError(f"arrays of dtype {name} cannot be sent")
        if arr.ndim > MAX_NDIM:
            raise TypeError(f"arrays of {arr.ndim} dimensions cannot be sent")
        data = np.ascontiguousarray(arr)
        return {"dtype": name, "shape": list(arr.shape), "b": self._buffer(data.tobytes())}

    def _buffer(self, data: bytes) -> int:
        self.buffers.append(data)
        return len(self.buffers) - 1


def _jax_array_tag(value: Any, enc: Encoder) -> dict[str, Any] | None:
    jax = sys.modules.get("jax")
    if jax is None or not isinstance(value, jax.Array):
        return None
    if isinstance(value, jax.core.Tracer):
        raise TypeError(
            "a traced value cannot be sent to the sandbox: student code is transformed in the "
            "sandbox (grader.sandbox.client.jit/vmap/grad/partial), never traced by the judge"
        )
    if jax.numpy.issubdtype(value.dtype, jax.dtypes.prng_key):
        impl = str(jax.random.key_impl(value))
        data = np.asarray(jax.random.key_data(value))
        return {"t": "key", "impl": impl, **enc._array(data)}
    return {"t": "array", "kind": "jax", **enc._array(np.asarray(value))}


def _error_tag(value: ErrorInfo) -> dict[str, Any]:
    """An `ErrorInfo` as data."""
    return {
        "t": "error",
        "type": value.type,
        "bases": list(value.bases),
        "message": value.message,
        "function": value.function,
        "location": list(value.location) if value.location else None,
        "in_student": value.in_student,
    }


class Decoder:
    """Turns tagged JSON and buffers back into a value. `handle(tag)` builds the receiver's
    view of a handle; `allow` limits which special tags this direction may carry."""

    def __init__(
        self,
        buffers: list[memoryview],
        handle: Callable[[dict[str, Any]], Any],
        *,
        allow: frozenset[str],
        error: Callable[[ErrorInfo], Any] | None = None,
    ) -> None:
        self._buffers = buffers
        self._handle = handle
        self._allow = allow
        self._error = error
        self._nodes = 0

    def decode(self, raw: Any, depth: int = 0) -> Any:
        self._nodes += 1
        if depth > MAX_DEPTH or self._nodes > MAX_NODES:
            raise DecodeError("value too deep or too large")
        if raw is None or isinstance(raw, bool):
            return raw
        if isinstance(raw, str):
            return _check_str(raw, "string")
        if isinstance(raw, int | float):
            raise DecodeError("bare JSON numbers are not part of the protocol")
        if not isinstance(raw, dict) or not isinstance(raw.get("t"), str):
            raise DecodeError(f"untagged value {type(raw).__name__}")
        tag = raw["t"]
        if tag in ("handle", "hole", "public", "error") and tag not in self._allow:
            raise DecodeError(f"a {tag} is not allowed in this direction")
        decode_tag = _DECODERS.get(tag)
        if decode_tag is None:
            raise DecodeError(f"unknown tag {tag!r}")
        try:
            return decode_tag(self, raw, depth)
        except DecodeError:
            raise
        except (KeyError, TypeError, OverflowError, ValueError) as exc:
            # ValueError: a namedtuple field named `class` or `_x`, a float that is not hex
            raise DecodeError(f"malformed {tag}: {exc}") from None

    def _int(self, raw: dict[str, Any], depth: int) -> int:
        text = _check_str(raw["v"], "int")
        if len(text) > 4300:
            raise DecodeError("int too long")
        return int(text)

    def _float(self, raw: dict[str, Any], depth: int) -> float:
        return float.fromhex(_check_str(raw["v"], "float"))

    def _complex(self, raw: dict[str, Any], depth: int) -> complex:
        return complex(float.fromhex(raw["re"]), float.fromhex(raw["im"]))

    def _bytes(self, raw: dict[str, Any], depth: int) -> bytes:
        return bytes(self._buffer(raw["b"]))

    def _sequence(self, raw: dict[str, Any], depth: int) -> tuple[Any, ...] | list[Any]:
        items = [self.decode(v, depth + 1) for v in _list(raw["items"])]
        return tuple(items) if raw["t"] == "tuple" else items

    def _dict(self, raw: dict[str, Any], depth: int) -> dict[Any, Any]:
        out: dict[Any, Any] = {} if raw["t"] == "dict" else collections.OrderedDict()
        for pair in _list(raw["items"]):
            if not isinstance(pair, list) or len(pair) != 2:
                raise DecodeError("dict item is not a pair")
            key = self.decode(pair[0], depth + 1)
            if isinstance(key, list | dict):
                raise DecodeError("unhashable dict key")
            out[key] = self.decode(pair[1], depth + 1)
        return out

    def _handle_tag(self, raw: dict[str, Any], depth: int) -> Any:
        _check_int(raw.get("id"), "handle id")
        return self._handle(raw)

    def _public(self, raw: dict[str, Any], depth: int) -> Public:
        args = self.decode(raw["args"], depth + 1)
        kwargs = self.decode(raw["kwargs"], depth + 1)
        if not isinstance(args, tuple) or not isinstance(kwargs, dict):
            raise DecodeError("public input arguments malformed")
        return Public(_check_str(raw["name"], "public name"), args, kwargs)

    def _error_info(self, raw: dict[str, Any], depth: int) -> Any:
        info = error_info(raw)
        return self._error(info) if self._error else info

    def _buffer(self, index: Any) -> memoryview:
        i = _check_int(index, "buffer index")
        if not 0 <= i < len(self._buffers):
            raise DecodeError("buffer index out of range")
        return self._buffers[i]

    def _ndarray(self, raw: dict[str, Any]) -> np.ndarray[Any, Any]:
        name = raw["dtype"]
        if name not in DTYPES:
            raise DecodeError(f"dtype {name!r} is not allowed")
        dtype = _dtype(name)
        shape = raw["shape"]
        if not isinstance(shape, list) or len(shape) > MAX_NDIM:
            raise DecodeError("bad shape")
        dims = tuple(_check_int(d, "dimension") for d in shape)
        if any(d < 0 for d in dims):
            raise DecodeError("negative dimension")
        data = self._buffer(raw["b"])
        if math.prod(dims) * dtype.itemsize != data.nbytes:
            raise DecodeError(f"buffer of {data.nbytes} bytes does not hold {name}{list(dims)}")
        return np.frombuffer(data, dtype=dtype).reshape(dims).copy()

    def _array(self, raw: dict[str, Any]) -> Any:
        arr = self._ndarray(raw)
        kind = raw.get("kind")
        if kind == "scalar":
            if arr.ndim != 0:
                raise DecodeError("a scalar must have shape ()")
            return arr[()]
        if kind == "numpy":
            return arr
        if kind == "jax":
            import jax

            # device_put, not jnp.asarray: the same array (dtype, weak type, uncommitted), but
            # no small program compiled for every new shape and dtype (30-100 ms each)
            return jax.device_put(arr)
        raise DecodeError(f"unknown array kind {kind!r}")

    def _key(self, raw: dict[str, Any]) -> Any:
        impl = raw.get("impl")
        if impl not in KEY_IMPLS:
            raise DecodeError(f"PRNG implementation {impl!r} is not allowed")
        data = self._ndarray(raw)
        if data.dtype != np.uint32:
            raise DecodeError("key data must be uint32")
        import jax

        return jax.random.wrap_key_data(jax.numpy.asarray(data), impl=impl)

    def _namedtuple(self, raw: dict[str, Any], depth: int) -> Any:
        fields = [_check_str(f, "field") for f in _list(raw["fields"])]
        items = [self.decode(v, depth + 1) for v in _list(raw["items"])]
        if len(fields) != len(items) or not all(f.isidentifier() for f in fields):
            raise DecodeError("namedtuple fields malformed")
        module, _, qualname = _check_str(raw["type"], "type").partition(":")
        known = _known_namedtuple(module, qualname, fields)
        if known is not None:
            return known(*items)
        name = qualname.rsplit(".", 1)[-1]
        plain = collections.namedtuple(name if name.isidentifier() else "Record", fields)  # type: ignore[misc]
        return plain(*items)


# How each tag decodes: (decoder, raw tag, depth) -> value.
_DECODERS: dict[str, Callable[[Decoder, dict[str, Any], int], Any]] = {
    "int": Decoder._int,
    "float": Decoder._float,
    "complex": Decoder._complex,
    "bytes": Decoder._bytes,
    "array": lambda decoder, raw, depth: decoder._array(raw),
    "key": lambda decoder, raw, depth: decoder._key(raw),
    "tuple": Decoder._sequence,
    "list": Decoder._sequence,
    "dict": Decoder._dict,
    "odict": Decoder._dict,
    "namedtuple": Decoder._namedtuple,
    "handle": Decoder._handle_tag,
    "hole": lambda decoder, raw, depth: HOLE,
    "public": Decoder._public,
    "error": Decoder._error_info,
}


def _list(raw: Any) -> list[Any]:
    if not isinstance(raw, list):
        raise DecodeError("expected a list")
    return raw


def _dtype(name: str) -> np.dtype[Any]:
    if name == "bfloat16":
        import ml_dtypes

        bf16: np.dtype[Any] = np.dtype(ml_dtypes.bfloat16)
        return bf16
    return np.dtype(name)


def _known_namedtuple(module: str, qualname: str, fields: list[str]) -> type | None:
    if module.split(".")[0] not in NAMEDTUPLE_LIBRARIES and not module.startswith(
        PUBLIC_NAMEDTUPLES
    ):
        return None
    mod = sys.modules.get(module)  # never imports: only what the receiver already loaded
    obj: Any = mod
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    if (
        isinstance(obj, type)
        and issubclass(obj, tuple)
        and list(getattr(obj, "_fields", ())) == fields
    ):
        return obj
    return None


def error_info(raw: Mapping[str, Any]) -> ErrorInfo:
    loc = raw.get("location")
    location = None
    if loc is not None:
        if not (isinstance(loc, list) and len(loc) == 3):
            raise DecodeError("error location malformed")
        location = (
            _check_str(loc[0], "path")[:200],
            _check_int(loc[1], "line"),
            _check_str(loc[2], "code")[:300],
        )
    bases = tuple(_check_str(b, "base")[:100] for b in _list(raw.get("bases", []))[:32])
    return ErrorInfo(
        type=_check_str(raw["type"], "type")[:100],
        bases=bases,
        message=_check_str(raw.get("message", ""), "message")[:4000],
        location=location,
        function=_check_str(raw.get("function", ""), "function")[:100],
        in_student=bool(raw.get("in_student") is True),
    )
