"""The value codec: what crosses between judge and sandbox, and what is refused."""

from __future__ import annotations

import collections
import json

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from grader.protocol import values
from grader.protocol.values import DecodeError, ErrorInfo


def _no_handles(obj):
    raise TypeError(f"not data: {type(obj).__name__}")


def roundtrip(value, allow=frozenset()):
    enc = values.Encoder(_no_handles)
    msg = json.loads(json.dumps(enc.encode(value)))  # through real JSON, as on the wire
    buffers = [memoryview(bytes(b)) for b in enc.buffers]
    return values.Decoder(buffers, lambda tag: ("handle", tag["id"]), allow=allow).decode(msg)


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        0,
        -7,
        2**80,
        1.5,
        float("inf"),
        -0.0,
        1 + 2j,
        "text",
        b"\x00\xff",
        (1, "a"),
        [1, [2, None]],
        {"a": 1, 3: (4,), ("k", 1): None},
    ],
)
def test_python_values_round_trip(value):
    assert roundtrip(value) == value
    assert type(roundtrip(value)) is type(value)


def test_nan_round_trips():
    assert np.isnan(roundtrip(float("nan")))


@pytest.mark.parametrize(
    "dtype", ["float32", "float64", "int32", "uint8", "bool", "complex64", "bfloat16"]
)
def test_arrays_keep_dtype_shape_and_kind(dtype):
    arr = np.arange(6).reshape(2, 3).astype(jnp.dtype(dtype))
    back = roundtrip(arr)
    assert isinstance(back, np.ndarray) and back.dtype == arr.dtype and back.shape == (2, 3)
    np.testing.assert_array_equal(back, arr)
    jx = roundtrip(jnp.asarray(arr))
    assert isinstance(jx, jax.Array) and jx.dtype == jnp.asarray(arr).dtype
    scalar = roundtrip(np.float32(2.5))
    assert isinstance(scalar, np.float32) and scalar == 2.5


def test_typed_keys_round_trip_and_draw_the_same_numbers():
    key = jax.random.key(3)
    back = roundtrip(key)
    assert jax.dtypes.issubdtype(back.dtype, jax.dtypes.prng_key)
    np.testing.assert_array_equal(jax.random.normal(back, (3,)), jax.random.normal(key, (3,)))


def test_library_namedtuples_come_back_as_themselves_others_as_plain_namedtuples():
    state = optax.adam(1e-3).init({"w": jnp.ones(2)})
    back = roundtrip(state)
    assert jax.tree.structure(back) == jax.tree.structure(state)
    Point = collections.namedtuple("Point", "x y")
    plain = roundtrip(Point(1, 2))
    assert plain == (1, 2) and plain._fields == ("x", "y") and type(plain) is not Point


def test_objects_that_are_not_data_are_refused_without_a_handle_hook():
    with pytest.raises(TypeError, match="not data"):
        roundtrip(object())
    with pytest.raises(TypeError, match="not data"):
        roundtrip(np.array([object()]))  # object arrays never cross as data


def test_errors_cross_as_data_only_where_allowed():
    info = ErrorInfo(
        "ValueError", ("Exception", "BaseException"), "bad", ("03_jit.py", 3, "x = 1"), "f", True
    )
    assert roundtrip(info, allow=frozenset({"error"})) == info
    with pytest.raises(DecodeError, match="not allowed"):
        roundtrip(info)


def _decode(msg, buffers=(), allow=frozenset()):
    return values.Decoder([memoryview(b) for b in buffers], lambda t: t, allow=allow).decode(msg)


@pytest.mark.parametrize(
    "msg, buffers, match",
    [
        (
            {"t": "array", "kind": "numpy", "dtype": "object", "shape": [1], "b": 0},
            [b"x" * 8],
            "not allowed",
        ),
        (
            {"t": "array", "kind": "numpy", "dtype": "float32", "shape": [3], "b": 0},
            [b"x" * 8],
            "does not hold",
        ),
        (
            {"t": "array", "kind": "numpy", "dtype": "float32", "shape": [-1], "b": 0},
            [b""],
            "negative",
        ),
        (
            {"t": "array", "kind": "numpy", "dtype": "float32", "shape": [1], "b": 5},
            [b"x" * 4],
            "out of range",
        ),
        (
            {"t": "array", "kind": "numpy", "dtype": "float32", "shape": [2**40, 2**40], "b": 0},
            [b""],
            "does not hold",
        ),
        (
            {"t": "key", "impl": "evil", "dtype": "uint32", "shape": [2], "b": 0},
            [b"x" * 8],
            "not allowed",
        ),
        ({"t": "handle", "id": 1}, [], "not allowed"),
        ({"t": "pickle", "v": "..."}, [], "unknown tag"),
        (5, [], "bare JSON numbers"),
        ({"t": "int", "v": "9" * 5000}, [], "too long"),
        (
            {"t": "namedtuple", "type": "os:system", "fields": ["a b"], "items": [None]},
            [],
            "fields malformed",
        ),
    ],
)
def test_malformed_values_are_refused(msg, buffers, match):
    with pytest.raises(DecodeError, match=match):
        _decode(msg, buffers)


def test_depth_is_capped():
    msg = None
    for _ in range(values.MAX_DEPTH + 5):
        msg = {"t": "list", "items": [msg]}
    with pytest.raises(DecodeError, match="too deep"):
        _decode(msg)


def test_namedtuple_types_are_never_imported_or_taken_from_outside_the_libraries():
    msg = {
        "t": "namedtuple",
        "type": "subprocess:CompletedProcess",
        "fields": ["args"],
        "items": [None],
    }
    back = _decode(msg)
    assert type(back).__module__ != "subprocess" and back.args is None


def test_ordered_dicts_round_trip_as_ordered_dicts():
    # optax.named_chain's state is an OrderedDict of the named states
    state = optax.named_chain(
        ("clip", optax.clip_by_global_norm(1.0)), ("adam", optax.adam(1e-3))
    ).init({"w": jnp.ones(2)})
    back = roundtrip(state)
    assert type(back) is collections.OrderedDict and list(back) == ["clip", "adam"]
    assert jax.tree_util.tree_structure(back) == jax.tree_util.tree_structure(state)
    plain = roundtrip(collections.OrderedDict([("b", 1), ("a", 2)]))
    assert type(plain) is collections.OrderedDict and list(plain.items()) == [("b", 1), ("a", 2)]
