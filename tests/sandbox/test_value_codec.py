"""The value codec: what crosses between judge and sandbox, and what is refused."""

from __future__ import annotations

import collections
import json

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from grader.protocol import value_codec
from grader.protocol.value_codec import DecodeError, ErrorInfo


def _no_handles(obj):
    raise TypeError(f"not data: {type(obj).__name__}")


def roundtrip(value, allow=frozenset()):
    enc = value_codec.Encoder(_no_handles)
    msg = json.loads(json.dumps(enc.encode(value)))  # through real JSON, as on the wire
    buffers = [memoryview(bytes(b)) for b in enc.buffers]
    return value_codec.Decoder(buffers, lambda tag: ("handle", tag["id"]), allow=allow).decode(msg)


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
    return value_codec.Decoder([memoryview(b) for b in buffers], lambda t: t, allow=allow).decode(
        msg
    )


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
    for _ in range(value_codec.MAX_DEPTH + 5):
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


def test_the_wire_form_of_each_kind_of_value():
    enc = value_codec.Encoder(lambda obj: {"t": "handle", "id": 7})
    Point = collections.namedtuple("Point", "x y")
    value = [
        None, True, 3, 0.5, 1j, "s", b"ab", value_codec.HOLE, np.int16(2), np.arange(2, dtype=np.uint8),
        Point(1, None), (1,), collections.OrderedDict([("k", 1)]), {(1, "a"): None}, object,
        np.datetime64("2020-01-01"), np.float64(0.25),
    ]  # fmt: skip
    assert enc.encode(value) == {
        "t": "list",
        "items": [
            None,
            True,
            {"t": "int", "v": "3"},
            {"t": "float", "v": "0x1.0000000000000p-1"},
            {"t": "complex", "re": "0x0.0p+0", "im": "0x1.0000000000000p+0"},
            "s",
            {"t": "bytes", "b": 0},
            {"t": "hole"},
            {"t": "array", "kind": "scalar", "dtype": "int16", "shape": [], "b": 1},
            {"t": "array", "kind": "numpy", "dtype": "uint8", "shape": [2], "b": 2},
            {
                "t": "namedtuple",
                "type": f"{__name__}:Point",
                "fields": ["x", "y"],
                "items": [{"t": "int", "v": "1"}, None],
            },
            {"t": "tuple", "items": [{"t": "int", "v": "1"}]},
            {"t": "odict", "items": [["k", {"t": "int", "v": "1"}]]},
            {
                "t": "dict",
                "items": [[{"t": "tuple", "items": [{"t": "int", "v": "1"}, "a"]}, None]],
            },
            {"t": "handle", "id": 7},
            {"t": "handle", "id": 7},
            {"t": "float", "v": "0x1.0000000000000p-2"},
        ],
    }
    assert [bytes(b) for b in enc.buffers] == [b"ab", np.int16(2).tobytes(), b"\0\1"]


def test_public_values_holes_and_handles_cross_where_allowed():
    public = value_codec.Public("loss", (value_codec.HOLE, 2), {"scale": 0.5})
    allow = frozenset({"public", "hole", "handle"})
    assert roundtrip(public, allow=allow) == public
    assert roundtrip([value_codec.HOLE], allow=allow) == [value_codec.HOLE]
    assert _decode({"t": "handle", "id": 3}, allow=allow) == {"t": "handle", "id": 3}
    errors = []
    info = ErrorInfo("KeyError", ("LookupError",), "'w'")
    enc = value_codec.Encoder(_no_handles)
    decoder = value_codec.Decoder([], lambda t: t, allow=frozenset({"error"}), error=errors.append)
    decoder.decode(json.loads(json.dumps(enc.encode(info))))
    assert errors == [info]


def test_what_cannot_be_sent_is_refused_when_encoding():
    enc = value_codec.Encoder(_no_handles)
    with pytest.raises(TypeError, match="dict key of type complex cannot be sent"):
        enc.encode({1.5j: 1})
    deep = None
    for _ in range(value_codec.MAX_DEPTH + 1):
        deep = [deep]
    with pytest.raises(TypeError, match="value too deep or too large to send"):
        value_codec.Encoder(_no_handles).encode(deep)
    with pytest.raises(TypeError, match="arrays of 17 dimensions cannot be sent"):
        value_codec.Encoder(_no_handles).encode(np.zeros((1,) * 17))

    def traced(x):
        value_codec.Encoder(_no_handles).encode(x)
        return x

    with pytest.raises(TypeError, match="a traced value cannot be sent"):
        jax.jit(traced)(1.0)


@pytest.mark.parametrize(
    "msg, buffers, match",
    [
        ({"t": "float", "v": "nope"}, [], "malformed float"),
        ({"t": "complex", "re": "0x1p0"}, [], "malformed complex"),
        ({"t": "bytes", "b": True}, [], "buffer index must be an integer"),
        ({"t": "list", "items": {}}, [], "expected a list"),
        ({"t": "dict", "items": [[1]]}, [], "dict item is not a pair"),
        ({"t": "dict", "items": [[{"t": "list", "items": []}, None]]}, [], "unhashable dict key"),
        (
            {"t": "array", "kind": "scalar", "dtype": "uint8", "shape": [1], "b": 0},
            [b"x"],
            "a scalar must have shape",
        ),
        (
            {"t": "array", "kind": "other", "dtype": "uint8", "shape": [1], "b": 0},
            [b"x"],
            "unknown array kind 'other'",
        ),
        (
            {"t": "key", "impl": "threefry2x32", "dtype": "int32", "shape": [2], "b": 0},
            [b"x" * 8],
            "key data must be uint32",
        ),
        ({"t": "array", "kind": "numpy", "shape": [1], "b": 0}, [b"x"], "malformed array: 'dtype'"),
        (
            {"t": "namedtuple", "type": "m:P", "fields": ["class"], "items": [None]},
            [],
            "malformed namedtuple",
        ),
        ({"t": "error", "type": "E", "location": [1]}, [], "error location malformed"),
        ({"t": "int", "v": 5}, [], "int must be a string"),
        ({"x": 1}, [], "untagged value dict"),
        ("x" * (value_codec.MAX_STR_CHARS + 1), [], "string must be a string of at most"),
        ({"t": "public", "name": "f", "args": None}, [], "malformed public: 'kwargs'"),
    ],
)
def test_more_malformed_values_are_refused(msg, buffers, match):
    with pytest.raises(DecodeError, match=match):
        _decode(msg, buffers, allow=frozenset({"error", "public"}))


def test_public_arguments_must_be_a_tuple_and_a_dict():
    msg = {"t": "public", "name": "f", "args": {"t": "list", "items": []}, "kwargs": None}
    with pytest.raises(DecodeError, match="public input arguments malformed"):
        _decode(msg, allow=frozenset({"public"}))
