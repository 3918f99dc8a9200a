"""Figure 3's data: labelled digit images, the N tasks built from them, and the gate's input.

Appendix A.3 trains on MNIST; the tasks themselves are not described.  A task here is an input
transformation and a map from digit labels to the task's classes, applied to a pool of training
images and a fixed test set of its own:

* ``mirrors``: task 1 shows the digits as they are, task 2 mirrored left to right, task 3 upside
  down, labels unchanged (10 classes).  The tasks' optimal networks differ (a mirrored 2 looks like a
  5).  Mirrors rather than quarter turns: two images half a turn apart average to nearly the same
  picture, so a gate would barely tell those two tasks apart.
* ``split``: task n shows only the digits of group n ({0, 1, 2}, {3, 4, 5}, {6, 7, 8}) and asks for
  the digit's position in its group (3 classes), the shared-head "split digits" setting.  The same
  output means a different digit in each task.

Either way each task has its own input distribution, so the averaged images the gate sees tell tasks
apart, as the feature signals v_n do in the linear model (Definition 1); a definition that changes only
the labels of the same images would give every task the same gate input and no gate could route it.

The gate's input for a round is its s training images averaged into one d x d image, taken relative
to the tasks' mean training image, flattened and scaled to unit Euclidean norm (Section 6: "a
normalized d^2-vector").  Without the centering every averaged digit image points nearly the same way
(nonnegative pixels around one common shape), so a linear gate sees the tasks almost on one ray.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from moecl_verify.numeric.idx import LabelledImages

DEFINITIONS = ("mirrors", "split")
SPLIT_GROUPS = ((0, 1, 2), (3, 4, 5), (6, 7, 8))
MIRRORS = ("none", "left-right", "up-down")


@dataclass(frozen=True, eq=False)
class DigitData:
    """Images (n, d, d) as float32 in [0, 1] with digit labels (n,), a training and a held-out test part."""

    name: str
    train_x: np.ndarray
    train_y: np.ndarray
    test_x: np.ndarray
    test_y: np.ndarray

    @property
    def d(self) -> int:
        return int(self.train_x.shape[-1])


def split_digits(images: np.ndarray, labels: np.ndarray, test: int, rng: np.random.Generator, name: str) -> DigitData:
    """A fixed train/test split of one labelled image set: ``test`` images drawn by ``rng`` are held out."""
    if not 0 < test < len(labels):
        raise ValueError(f"test must be in (0, {len(labels)}), got {test}")
    order = rng.permutation(len(labels))
    held, kept = np.sort(order[:test]), np.sort(order[test:])
    x = images.astype(np.float32)
    return DigitData(name, x[kept], labels[kept].astype(np.int64), x[held], labels[held].astype(np.int64))


def sklearn_digits(rng: np.random.Generator, test: int = 600) -> DigitData:
    """scikit-learn's bundled 8 x 8 digits (1,797 images, pixel values 0-16, scaled to [0, 1]), with ``test``
    images held out by ``rng``.  Needs scikit-learn; reads only the copy shipped with it."""
    from sklearn.datasets import load_digits  # optional dependency: imported where it is needed

    bunch = load_digits()
    return split_digits(bunch.images / 16.0, bunch.target, test, rng, "scikit-learn digits (8 x 8, 1,797 images)")


def block_average(images: np.ndarray, d: int) -> np.ndarray:
    """(n, D, D) images averaged over k x k blocks into (n, d, d), k = D / d (D divisible by d)."""
    n, D, D2 = images.shape
    if D != D2 or d < 1 or D % d:
        raise ValueError(f"cannot average {D} x {D2} images into {d} x {d} blocks")
    k = D // d
    return images.reshape(n, d, k, d, k).mean(axis=(2, 4))


def mnist_digits(data: LabelledImages, d: int, source: str) -> DigitData:
    """MNIST's images scaled to [0, 1] and averaged down to d x d, its own training and test sets."""
    def prep(images):
        return block_average(images.astype(np.float32) / np.float32(255.0), d).astype(np.float32)

    return DigitData(f"MNIST IDX files from {source} ({d} x {d})", prep(data.train_images), data.train_labels,
                     prep(data.test_images), data.test_labels)


def mirror(images: np.ndarray, how: str) -> np.ndarray:
    """Images (n, d, d) as they are (``"none"``), mirrored left to right or upside down."""
    if how == "none":
        return images
    if how == "left-right":
        return images[:, :, ::-1]
    if how == "up-down":
        return images[:, ::-1, :]
    raise ValueError(f"mirror must be one of {MIRRORS}, got {how!r}")


@dataclass(frozen=True, eq=False)
class TaskSet:
    """N tasks over one image set.  Task n draws training images from ``pools[n]`` (indices into
    ``train_x``), mirrors them as ``mirrors[n]`` says (:func:`mirror`) and labels them
    ``label_maps[n][digit]``; its test set is ``test_x[n]`` with one-hot targets ``test_y[n]`` (equal sizes
    for every task).  ``center`` (d, d) is subtracted from the averaged image the gate sees."""

    definition: str
    classes: int
    train_x: np.ndarray
    train_y: np.ndarray
    pools: tuple
    mirrors: tuple
    label_maps: np.ndarray
    test_x: np.ndarray
    test_y: np.ndarray
    center: np.ndarray

    @property
    def N(self) -> int:
        return len(self.pools)

    @property
    def d(self) -> int:
        return int(self.train_x.shape[-1])

    def pool_sizes(self) -> tuple[int, ...]:
        return tuple(len(p) for p in self.pools)

    def batch(self, task: int, picks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Images (s, d, d) and one-hot targets (s, classes) of task ``task``'s pool entries ``picks``."""
        rows = self.pools[task][picks]
        x = mirror(self.train_x[rows], self.mirrors[task])
        y = np.eye(self.classes, dtype=np.float32)[self.label_maps[task][self.train_y[rows]]]
        return np.ascontiguousarray(x, dtype=np.float32), y


def task_groups(definition: str) -> tuple[tuple[tuple[int, ...], ...], tuple[str, ...], int]:
    """The digits each task of ``definition`` draws its images from, each task's mirror and the number of
    classes: what :func:`make_tasks` builds the tasks from, and so what a data set must hold for them (which
    digits, in which groups), for a check of the data before any task is built."""
    if definition == "mirrors":
        return (tuple(range(10)),) * len(MIRRORS), MIRRORS, 10
    if definition == "split":
        return SPLIT_GROUPS, ("none",) * len(SPLIT_GROUPS), len(SPLIT_GROUPS[0])
    raise ValueError(f"definition must be one of {DEFINITIONS}, got {definition!r}")


def make_tasks(data: DigitData, definition: str, test_size: int, centered: bool = True) -> TaskSet:
    """The three tasks of ``definition`` over ``data``; each task's test set is its first ``test_size``
    eligible held-out images (fewer if every task has fewer: the sizes are made equal).  ``centered``: the
    gate's inputs are taken relative to the tasks' mean training image (:func:`gate_inputs`)."""
    groups, mirrors, classes = task_groups(definition)
    label_maps = np.full((len(groups), 10), -1, dtype=np.int64)
    for n, group in enumerate(groups):
        label_maps[n, list(group)] = np.arange(len(group)) if definition == "split" else np.array(group)
    pools = tuple(np.flatnonzero(np.isin(data.train_y, group)) for group in groups)
    tests = [np.flatnonzero(np.isin(data.test_y, group)) for group in groups]
    size = min(test_size, *(len(t) for t in tests))
    eye = np.eye(classes, dtype=np.float32)
    test_x = np.stack([mirror(data.test_x[t[:size]], how) for t, how in zip(tests, mirrors)])
    test_y = np.stack([eye[label_maps[n][data.test_y[t[:size]]]] for n, t in enumerate(tests)])
    task_means = [mirror(data.train_x[pool], how).mean(axis=0, dtype=np.float64) for pool, how in zip(pools, mirrors)]
    center = np.mean(task_means, axis=0) if centered else np.zeros((data.d, data.d))
    return TaskSet(definition, classes, data.train_x, data.train_y, pools, tuple(mirrors), label_maps,
                   np.ascontiguousarray(test_x, dtype=np.float32), test_y, center)


def gate_inputs(images: np.ndarray, center: np.ndarray | float = 0.0) -> np.ndarray:
    """The gate's input for rounds of images (..., s, d, d): their average image less ``center`` (d, d),
    flattened, unit norm."""
    mean = images.mean(axis=-3, dtype=np.float64) - center
    flat = mean.reshape(*mean.shape[:-2], -1)
    return flat / np.linalg.norm(flat, axis=-1, keepdims=True)


def task_inputs(tasks: TaskSet) -> np.ndarray:
    """Each task's mean gate input (N, d^2): its whole training pool averaged, less the center, unit norm."""
    return np.stack([gate_inputs(mirror(tasks.train_x[pool], how), tasks.center)
                     for pool, how in zip(tasks.pools, tasks.mirrors)])


def input_variance(tasks: TaskSet) -> float:
    """The variance of the entries of the gate's input vectors (Section 6 computes it to set Algorithm 1's
    parameters), taken over the tasks' mean inputs (:func:`task_inputs`), all entries pooled."""
    return float(np.var(task_inputs(tasks)))


def input_cosines(tasks: TaskSet) -> list[float]:
    """Cosines between the tasks' mean gate inputs, pairs (0, 1), (0, 2), (1, 2), ...: how far apart a
    linear gate sees the tasks."""
    v = task_inputs(tasks)
    return [float(v[a] @ v[b]) for a in range(len(v)) for b in range(a + 1, len(v))]
