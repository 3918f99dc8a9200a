"""MNIST's IDX files: a reader for the format, and the four files of the data set.

The IDX format (LeCun et al., the MNIST distribution): two zero bytes, a type code, the number of
dimensions, then each dimension as a big-endian uint32, then the data in C order, big-endian.  Files
may be gzip-compressed (the ``.gz`` files MNIST is distributed as) or plain; the reader tells them
apart by gzip's magic bytes, not by the name.  Nothing is ever downloaded: the files are read from
a folder the user names.

A header is checked against the data before anything the size of the data is allocated: a header whose
shape does not match the file's length (for a gzip file, its decompressed length, streamed in blocks) is an
:class:`IdxError`, so a damaged 100-byte file claiming 2**31 images fails at once.  :func:`check_mnist`
checks a folder's four files that way without loading them, so a command can refuse a bad folder before it
starts any work.
"""

from __future__ import annotations

import gzip
import math
import os
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# IDX type code -> numpy dtype (big-endian where it matters).
IDX_TYPES = {0x08: np.dtype(np.uint8), 0x09: np.dtype(np.int8), 0x0B: np.dtype(">i2"), 0x0C: np.dtype(">i4"),
             0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}
GZIP_MAGIC = b"\x1f\x8b"
# The four files of MNIST, under the names it is distributed with (with or without .gz).
MNIST_FILES = {"train_images": "train-images-idx3-ubyte", "train_labels": "train-labels-idx1-ubyte",
               "test_images": "t10k-images-idx3-ubyte", "test_labels": "t10k-labels-idx1-ubyte"}


# The longest header: 4 bytes, then 4 per dimension.
MAX_HEADER = 4 + 4 * 255
# numpy's arrays have at most 32 dimensions (numpy 1; 64 in numpy 2); MNIST's files have 1 or 3.
MAX_DIMS = 32
# Decompressed bytes read at a time when a gzip file's length is counted.
BLOCK = 1 << 16


class IdxError(ValueError):
    """A file that is not a well-formed IDX file."""


@dataclass(frozen=True)
class IdxHeader:
    """What an IDX header declares: the element type, the shape, and the header's own length in bytes."""

    dtype: np.dtype
    shape: tuple[int, ...]
    length: int

    @property
    def data_bytes(self) -> int:
        """The length of the data the shape needs (a Python int: no overflow, whatever the header says)."""
        return math.prod(self.shape) * self.dtype.itemsize


def parse_header(data: bytes, name: str = "IDX data") -> IdxHeader:
    """The header at the start of ``data`` (the whole file, or at least its first MAX_HEADER bytes)."""
    if len(data) < 4 or data[0] != 0 or data[1] != 0:
        raise IdxError(f"{name}: not an IDX file (the first two bytes must be zero)")
    code, ndim = data[2], data[3]
    if code not in IDX_TYPES:
        raise IdxError(f"{name}: unknown IDX type code 0x{code:02x}")
    length = 4 + 4 * ndim
    if len(data) < length:
        raise IdxError(f"{name}: truncated header ({len(data)} bytes for {ndim} dimensions)")
    if ndim > MAX_DIMS:
        raise IdxError(f"{name}: {ndim} dimensions (at most {MAX_DIMS})")
    header = IdxHeader(IDX_TYPES[code], struct.unpack(f">{ndim}I", data[4:length]), length)
    # numpy cannot shape even an empty array whose other dimensions multiply beyond its index range.
    if math.prod(n for n in header.shape if n) * header.dtype.itemsize >= 2**63:
        raise IdxError(f"{name}: the header's shape {header.shape} is too large for an array")
    return header


def _check_length(header: IdxHeader, total: int, name: str) -> None:
    """The file's (decompressed) length ``total`` against what the header needs."""
    if total - header.length != header.data_bytes:
        raise IdxError(f"{name}: {total - header.length} data bytes, the header's shape {header.shape} "
                       f"needs {header.data_bytes}")


def parse_idx(data: bytes, name: str = "IDX data") -> np.ndarray:
    """The array an IDX byte string holds (native byte order)."""
    header = parse_header(data, name)
    _check_length(header, len(data), name)
    array = np.frombuffer(data, dtype=header.dtype, offset=header.length).reshape(header.shape)
    return array.astype(header.dtype.newbyteorder("="))


def _gzip_header(raw, name: str) -> IdxHeader:
    """The header of a gzip-compressed IDX file, checked against its decompressed length, which is counted
    in blocks of BLOCK bytes (and no further than one block past what the header needs): memory stays
    within a block, whatever the header or the compression ratio."""
    try:
        with gzip.GzipFile(fileobj=raw) as stream:
            head = stream.read(MAX_HEADER)
            header = parse_header(head, name)
            needed = header.length + header.data_bytes
            total, block = len(head), bytearray(BLOCK)
            while total <= needed and (count := stream.readinto(block)):
                total += count
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise IdxError(f"{name}: damaged gzip data ({exc})") from None
    if total > needed:
        raise IdxError(f"{name}: at least {total - header.length} data bytes, the header's shape "
                       f"{header.shape} needs {header.data_bytes}")
    _check_length(header, total, name)
    return header


def check_idx(path: str | Path) -> IdxHeader:
    """The header of the IDX file at ``path``, checked against the file's length, without reading the data
    into memory. Raises :class:`IdxError` when the file is not a well-formed IDX file, ``OSError`` when it
    cannot be read."""
    path = Path(path)
    with open(path, "rb") as raw:
        if raw.read(2) == GZIP_MAGIC:
            raw.seek(0)
            return _gzip_header(raw, str(path))
        raw.seek(0)
        header = parse_header(raw.read(MAX_HEADER), str(path))
        _check_length(header, os.fstat(raw.fileno()).st_size, str(path))
        return header


def read_idx(path: str | Path, checked: bool = False) -> np.ndarray:
    """Read one IDX file, gzip-compressed or plain; its header is checked first (:func:`check_idx`), so
    nothing larger than the file's (decompressed) contents is allocated.  ``checked``: the caller has just
    checked it so (e.g. by :func:`check_mnist`), and a compressed file is not decompressed once more for it."""
    path = Path(path)
    if not checked:
        check_idx(path)
    raw = path.read_bytes()
    if raw[:2] == GZIP_MAGIC:
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise IdxError(f"{path}: damaged gzip data ({exc})") from None
    return parse_idx(raw, str(path))


def find_file(folder: str | Path, stem: str) -> Path:
    """``stem`` or ``stem.gz`` in ``folder`` (also the ``stem`` with its last '-' as '.', as some copies name
    them, e.g. ``train-images.idx3-ubyte``)."""
    folder = Path(folder)
    dotted = stem[::-1].replace("-", ".", 1)[::-1]
    for name in (stem, stem + ".gz", dotted, dotted + ".gz"):
        if (folder / name).is_file():
            return folder / name
    raise FileNotFoundError(f"{folder}: no {stem} or {stem}.gz (MNIST's IDX files are expected there)")


@dataclass(frozen=True, eq=False)
class LabelledImages:
    """Images (n, h, w) as uint8 and their labels (n,) as int64, of a training and a test set."""

    train_images: np.ndarray
    train_labels: np.ndarray
    test_images: np.ndarray
    test_labels: np.ndarray


def _check_pairs(folder: str | Path, shapes: dict[str, tuple[int, ...]]) -> None:
    """Images 3-D and labels 1-D, as many labels as images, in each of the training and test sets."""
    for part in ("train", "test"):
        images, labels = shapes[f"{part}_images"], shapes[f"{part}_labels"]
        if len(images) != 3 or len(labels) != 1:
            raise IdxError(f"{folder}: {part} images must be 3-D and labels 1-D, got {images} and {labels}")
        if images[0] != labels[0]:
            raise IdxError(f"{folder}: {images[0]} {part} images but {labels[0]} labels")


def check_mnist(folder: str | Path) -> dict[str, IdxHeader]:
    """The headers of the four MNIST files of ``folder``, each checked against its file and the images
    against the labels, without loading them. Raises ``FileNotFoundError`` (a file is missing),
    :class:`IdxError` (a file is malformed) or ``OSError`` (a file cannot be read)."""
    headers = {key: check_idx(find_file(folder, stem)) for key, stem in MNIST_FILES.items()}
    _check_pairs(folder, {key: header.shape for key, header in headers.items()})
    return headers


def load_mnist(folder: str | Path) -> LabelledImages:
    """The four MNIST files of ``folder``, checked for matching counts and 3-D images."""
    arrays = {key: read_idx(find_file(folder, stem)) for key, stem in MNIST_FILES.items()}
    _check_pairs(folder, {key: array.shape for key, array in arrays.items()})
    return LabelledImages(arrays["train_images"], arrays["train_labels"].astype(np.int64),
                          arrays["test_images"], arrays["test_labels"].astype(np.int64))
