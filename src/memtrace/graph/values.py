"""Content-addressed value encoding: a value becomes (hash, encoding, bytes), stored once per hash.

Strings stay text, small JSON-able values stay structured JSON, anything else falls back to a
readable `repr`. Large payloads are zlib-compressed; the encoding records how to read them back.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from typing import Any

TEXT = "text"
JSON = "json"
REPR = "repr"
COMPRESSED_SUFFIX = "+z"

#: Payloads above this many bytes are compressed before storage.
COMPRESS_ABOVE = 4096

_json_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=True).encode
_blake2b = hashlib.blake2b
_JSON_SCALARS = (int, float, bool, type(None))


def encode_value(value: Any) -> tuple[str, str, bytes]:
    """Encode a value for storage and return (content hash, encoding, payload bytes)."""
    if type(value) is str:
        encoding, data = TEXT, value.encode("utf-8", "surrogatepass")
    elif isinstance(value, (dict, list, tuple, *_JSON_SCALARS)):
        try:
            encoding, data = JSON, _json_dumps(value).encode("utf-8", "surrogatepass")
        except (TypeError, ValueError):
            encoding, data = REPR, readable_text(value).encode("utf-8", "surrogatepass")
    else:
        encoding, data = REPR, readable_text(value).encode("utf-8", "surrogatepass")
    digest = _blake2b(data, digest_size=16, person=encoding.encode()).hexdigest()
    if len(data) > COMPRESS_ABOVE:
        return digest, encoding + COMPRESSED_SUFFIX, zlib.compress(data, 6)
    return digest, encoding, data


def decode_value(encoding: str, data: bytes) -> Any:
    """Turn a stored payload back into a value (repr-encoded objects come back as their text)."""
    if encoding.endswith(COMPRESSED_SUFFIX):
        encoding, data = encoding[: -len(COMPRESSED_SUFFIX)], zlib.decompress(data)
    text = bytes(data).decode("utf-8", "surrogatepass")
    if encoding == JSON:
        return json.loads(text)
    return text


def readable_text(value: Any) -> str:
    """A readable text form of an arbitrary object: pydantic/dataclass fields when it has them."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            return f"{type(value).__name__}({_json_dumps(dump(mode='json'))})"
        except Exception:
            pass
    try:
        return repr(value)
    except Exception as exc:
        return f"<{type(value).__name__} object (repr failed: {exc})>"


def value_text(value: Any) -> str:
    """A value as text for matching and display: strings as they are, structures as JSON."""
    if isinstance(value, str):
        return value
    try:
        return _json_dumps(value)
    except (TypeError, ValueError):
        return readable_text(value)
