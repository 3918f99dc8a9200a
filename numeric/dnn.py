"""The deep experts of Figure 3 (Appendix A.3) in JAX: a five-layer convolutional network, its
mean-squared error, and its training by gradient descent.

Architecture as Appendix A.3 describes it: two convolutional layers, the first followed by 2-D max
pooling with stride 2, then three fully connected layers (ReLU between layers; widths are a
configuration, :class:`NetShape`).  Training and test error are the mean-squared error between the
network's outputs and the one-hot label: the squared error summed over the outputs, averaged over the
samples, as eq. (3) averages ||X^T w - y||^2 over the s samples; gradients come from ``jax.grad``,
never written by hand.

Determinism: XLA on the CPU with one intra-op thread, on a GPU with deterministic reductions (set through
``XLA_FLAGS`` before jax is first imported, unless the caller already set them), float32 throughout (64-bit mode switched off
explicitly), and parameters drawn by numpy from the caller's :func:`numeric.seeding.generator_for`
stream, not by JAX's own PRNG.  The same arguments then give bit-identical results on the same
machine and device, whatever process runs them.

Parameters are a flat tuple of arrays in a fixed order (:data:`PARAM_NAMES`), so they travel as plain
numpy arrays.  Convolutions are written as a product of shifted copies of the input with the kernel
(:func:`conv3x3`), which XLA runs several times faster on the CPU than its own convolution for these
small images.
"""

from __future__ import annotations

import os

# Fixed before jax creates its backend; an explicit setting by the caller is respected.  On the CPU, one
# intra-op thread, so results do not depend on the number of cores; on a GPU, deterministic reductions, so
# results do not depend on the order in which threads finish, and memory taken as needed rather than most of
# it at once (the run's claim lanes are separate processes that may share one device).  The device itself is
# JAX's choice: its default backend (a GPU where a CUDA build of jaxlib is installed; ``JAX_PLATFORMS=cpu``
# keeps the CPU).
_FLAGS = {"xla_cpu_multi_thread_eigen": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
          "xla_gpu_deterministic_ops": "--xla_gpu_deterministic_ops=true"}
for _name, _flag in _FLAGS.items():
    if _name not in os.environ.get("XLA_FLAGS", ""):
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + _flag).strip()
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import functools  # noqa: E402
from dataclasses import dataclass  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

# float32 throughout, whatever JAX_ENABLE_X64 says: the dtypes of every intermediate are then fixed.
jax.config.update("jax_enable_x64", False)

PARAM_NAMES = ("conv1_w", "conv1_b", "conv2_w", "conv2_b", "fc1_w", "fc1_b", "fc2_w", "fc2_b", "fc3_w", "fc3_b")
DTYPE = np.float32


@dataclass(frozen=True)
class NetShape:
    """Input ``d x d`` images, ``classes`` outputs; channels of the two convolutions (3 x 3, 'same'
    padding) and widths of the first two fully connected layers."""

    d: int
    classes: int
    conv1: int = 4
    conv2: int = 8
    fc1: int = 32
    fc2: int = 16

    def __post_init__(self) -> None:
        for name in ("d", "classes", "conv1", "conv2", "fc1", "fc2"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        if self.d % 2:
            raise ValueError(f"d must be even (2 x 2 pooling with stride 2), got {self.d}")

    @property
    def flat(self) -> int:
        """Features entering the first fully connected layer: conv2's channels on the pooled d/2 x d/2 grid."""
        return (self.d // 2) ** 2 * self.conv2

    def shapes(self) -> tuple[tuple[int, ...], ...]:
        """Each parameter's shape, in :data:`PARAM_NAMES` order (convolution kernels HWIO)."""
        return ((3, 3, 1, self.conv1), (self.conv1,), (3, 3, self.conv1, self.conv2), (self.conv2,),
                (self.flat, self.fc1), (self.fc1,), (self.fc1, self.fc2), (self.fc2,),
                (self.fc2, self.classes), (self.classes,))

    def fan_ins(self) -> tuple[int, ...]:
        return (9, 9, 9 * self.conv1, 9 * self.conv1, self.flat, self.flat, self.fc1, self.fc1, self.fc2, self.fc2)

    @property
    def size(self) -> int:
        return int(sum(np.prod(s) for s in self.shapes()))


def init_params(rng: np.random.Generator, shape: NetShape) -> tuple[np.ndarray, ...]:
    """Uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)) for every weight and bias (the common default of
    deep-learning libraries for these layers), drawn from ``rng`` in :data:`PARAM_NAMES` order."""
    return tuple((rng.uniform(-1.0, 1.0, size=s) / np.sqrt(f)).astype(DTYPE)
                 for s, f in zip(shape.shapes(), shape.fan_ins()))


def conv3x3(x, w):
    """3 x 3 convolution with 'same' zero padding, x (B, H, W, C_in), w (3, 3, C_in, C_out): the nine shifted
    copies of x side by side, times the kernel as a matrix (on the CPU this is several times faster for
    such small images than XLA's convolution, and it is the same function)."""
    B, H, W, C = x.shape
    padded = jnp.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    columns = jnp.concatenate([padded[:, i:i + H, j:j + W, :] for i in range(3) for j in range(3)], axis=-1)
    return columns @ w.reshape(9 * C, -1)


def max_pool2(z):
    """2 x 2 max pooling with stride 2, z (B, H, W, C) with H, W even."""
    B, H, W, C = z.shape
    return z.reshape(B, H // 2, 2, W // 2, 2, C).max(axis=(2, 4))


def forward(params, x):
    """Outputs (B, classes) of the network for images x (B, d, d): conv, ReLU, max pool, conv, ReLU, then three
    fully connected layers with ReLU between them."""
    c1w, c1b, c2w, c2b, f1w, f1b, f2w, f2b, f3w, f3b = params
    z = max_pool2(jax.nn.relu(conv3x3(x[..., None], c1w) + c1b))
    z = jax.nn.relu(conv3x3(z, c2w) + c2b)
    z = z.reshape(z.shape[0], -1)
    z = jax.nn.relu(z @ f1w + f1b)
    z = jax.nn.relu(z @ f2w + f2b)
    return z @ f3w + f3b


def mse(params, x, y_onehot):
    """Mean over samples of the squared error ||f(x) - onehot(y)||^2 summed over the outputs: eq. (3)'s
    (1/s) ||X^T w - y||^2 with a vector output per sample."""
    return jnp.mean(jnp.sum((forward(params, x) - y_onehot) ** 2, axis=-1))


def train(params, x, y_onehot, orders, lr, batch: int):
    """Stochastic gradient descent on the mean-squared error: one epoch per row of ``orders`` (E, s), each a
    permutation of the s samples, visited in consecutive minibatches of ``batch`` samples (s divisible by
    ``batch``), one step of size ``lr`` per minibatch."""
    grad = jax.grad(mse)
    steps = x.shape[0] // batch

    def epoch(e, p):
        def step(b, p):
            rows = jax.lax.dynamic_slice(orders[e], (b * batch,), (batch,))
            g = grad(p, x[rows], y_onehot[rows])
            return tuple(a - lr * c for a, c in zip(p, g))

        return jax.lax.fori_loop(0, steps, step, p)

    return jax.lax.fori_loop(0, orders.shape[0], epoch, tuple(params))


def squared_change(new, old):
    """||new - old||^2 over every parameter (Delta_t of eq. 6 for a network)."""
    return sum(jnp.sum((a - b) ** 2) for a, b in zip(new, old))


@jax.jit
def test_errors(params, test_x, test_y):
    """Test error of one network on every task's test set (N, n, d, d), (N, n, classes) -> (N,)."""
    return jax.vmap(lambda tx, ty: mse(params, tx, ty))(test_x, test_y)


@functools.partial(jax.jit, static_argnames=("batch",))
def expert_round(params, x, y_onehot, orders, lr, test_x, test_y, batch: int):
    """One round of the routed expert: train on the round's samples (:func:`train`), then return the new
    parameters, Delta_t = ||new - old||^2 and the new network's test error on every task's test set."""
    new = train(params, x, y_onehot, orders, lr, batch)
    return new, squared_change(new, params), test_errors(new, test_x, test_y)


squared_change_jit = jax.jit(squared_change)


def device() -> str:
    """The device the networks are computed on: JAX's default backend, with its first device's kind where that
    says more (``"cpu"``, ``"gpu (NVIDIA H200)"``)."""
    backend, kind = jax.default_backend(), jax.devices()[0].device_kind
    return backend if kind.lower() == backend else f"{backend} ({kind})"


def library_versions() -> dict:
    """The versions of the libraries the networks are computed with, and the device (results are deterministic
    for a given device, not across devices)."""
    import jaxlib

    return {"jax": jax.__version__, "jaxlib": jaxlib.__version__, "device": device()}
