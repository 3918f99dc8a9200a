"""MNIST's IDX files: a reader for the format, and the four files of the data set.

The IDX format (LeCun et al., the MNIST distribution): two zero bytes, a type code, the number of
dimensions, then each dimension as a big-endian uint32, then the data in C order, big-endian.  Files
may be gzip-compressed (the ``.gz`` files MNIST is distributed as) or plain; the reader tells them
apart by gzip's magic bytes, not by the name.  Nothing is ever downloaded: the files are read from
a folder the user names.
"""

from __future__ import annotations

import gzip
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


class IdxError(ValueError):
    """A file that is not a well-formed IDX file."""


def parse_idx(data: bytes, name: str = "IDX data") -> np.ndarray:
    """The array an IDX byte string holds (native byte order)."""
    if len(data) < 4 or data[0] != 0 or data[1] != 0:
        raise IdxError(f"{name}: not an IDX file (the first two bytes must be zero)")
    code, ndim = data[2], data[3]
    if code not in IDX_TYPES:
        raise IdxError(f"{name}: unknown IDX type code 0x{code:02x}")
    header = 4 + 4 * ndim
    if len(data) < header:
        raise IdxError(f"{name}: truncated header ({len(data)} bytes for {ndim} dimensions)")
    shape = tuple(int(v) for v in np.frombuffer(data, dtype=">u4", count=ndim, offset=4))
    dtype = IDX_TYPES[code]
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if len(data) - header != expected:
        raise IdxError(f"{name}: {len(data) - header} data bytes, the header's shape {shape} needs {expected}")
    array = np.frombuffer(data, dtype=dtype, offset=header).reshape(shape)
    return array.astype(dtype.newbyteorder("="))


def read_idx(path: str | Path) -> np.ndarray:
    """Read one IDX file, gzip-compressed or plain."""
    path = Path(path)
    raw = path.read_bytes()
    if raw[:2] == GZIP_MAGIC:
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
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


def load_mnist(folder: str | Path) -> LabelledImages:
    """The four MNIST files of ``folder``, checked for matching counts and 3-D images."""
    arrays = {key: read_idx(find_file(folder, stem)) for key, stem in MNIST_FILES.items()}
    for part in ("train", "test"):
        images, labels = arrays[f"{part}_images"], arrays[f"{part}_labels"]
        if images.ndim != 3 or labels.ndim != 1:
            raise IdxError(f"{folder}: {part} images must be 3-D and labels 1-D, got {images.shape} and {labels.shape}")
        if images.shape[0] != labels.shape[0]:
            raise IdxError(f"{folder}: {images.shape[0]} {part} images but {labels.shape[0]} labels")
    return LabelledImages(arrays["train_images"], arrays["train_labels"].astype(np.int64),
                          arrays["test_images"], arrays["test_labels"].astype(np.int64))
