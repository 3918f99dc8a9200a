"""The Figure 3 simulations (Section 6 'Real-data validation'; details Appendix A.3): Algorithm 1 with
five-layer convolutional experts on handwritten digits, scaled down to run on two CPU cores.

As stated: N = 3 tasks, M in {1, 4, 7}; each round s = 100 training samples of the round's task and a
test set; the gate's input is the round's samples averaged into one d x d image, as a normalized
d^2-vector; sigma0 is computed from these inputs and sets Algorithm 1's parameters; experts with two
convolutional layers (the first followed by 2 x 2 max pooling, stride 2) and three fully connected
layers, trained by SGD at learning rate 0.2; F_t and G_t by eq. (15)-(16) with the mean-squared test
error in place of eq. (14).

Everything else is a reading or a reduction, listed in ``INTERPRETATIONS`` (each reduction is one): the
data set (scikit-learn's bundled 8 x 8 digits unless ``--mnist`` names MNIST's IDX files), the two task
definitions, the centering of the gate input, sigma0 as a standard deviation, the widths, the epochs
(20, not 600), the minibatch, the number of rounds, the replicates, the test-set size.  The engine is
:mod:`numeric.dnn_moe` (JAX, one replicate after another) on the CPU and :mod:`numeric.dnn_batch` (every
replicate of a chunk together) where JAX's default device is an accelerator, imported only when the run needs it: without the
``dnn`` extra the Figure 3 claims say so instead of failing.

Draws: replicate r of task definition ``def`` draws from ``generator_for(ctx.seed, "fig3", def, "replicate",
r)``, shared by every M and by the runs with and without termination (paired comparisons); the
held-out digits come from ``generator_for(DATA_SEED, "fig3", "digits", "split")``, fixed whatever the
seed.
"""

from __future__ import annotations

import importlib
import math

import numpy as np

from moecl_verify.checks.context import Context
from moecl_verify.packs.moe_cl.budgets import BUDGETS
from moecl_verify.packs.moe_cl.experiments.model_readings import SIGMA0_CONVENTION
from moecl_verify.checks.model import Interpretation
from moecl_verify.numeric import digit_tasks
from moecl_verify.numeric.chunk import Chunk
from moecl_verify.numeric.idx import MNIST_FILES, LabelledImages, find_file, load_mnist, read_idx
from moecl_verify.numeric.seeding import generator_for

N = 3
EXPERTS = (1, 4, 7)
MOE_EXPERTS = (4, 7)
DEFINITIONS = digit_tasks.DEFINITIONS  # ("mirrors", "split"); the first is the default reading
S = 100  # training samples per round (stated)
LR = 0.2  # SGD learning rate (stated)
EPOCHS = 80  # per round (paper: 600); chosen by the epochs ladder in docs/design.md, checked in every run
BATCH = 10  # minibatch
# The rounds T, the replicates and the epochs check's size of each budget: packs/moe_cl/budgets.py (fig3_*).
WIDTHS = dict(conv1=4, conv2=8, fc1=64, fc2=32)
DIGITS_TEST = 600  # scikit-learn digits held out for testing
TEST_SIZE = {"digits": 200, "mnist": 1000}  # test images per task (paper: 1,000)
MNIST_D = 14  # MNIST's 28 x 28 averaged over 2 x 2 blocks
DATA_SEED = 2024
CHUNK = 2  # replicates per cached chunk (the reference engine, one replicate after another: on the CPU)
BATCHED_CHUNK = 50  # replicates per cached chunk of the batched engine (numeric/dnn_batch.py: on an accelerator)
KEEP = ("forgetting", "generalization", "freeze_round", "chosen", "tasks")  # what a chunk returns
REQUIRED = ("jax", "sklearn")  # sklearn only for the bundled digits
# The distribution's name works wherever the tool was installed from; the checkout form only inside a checkout.
INSTALL = '`pip install "moecl-verify[dnn]"` (from a checkout: `pip install ".[dnn]"`)'
CHECK_M = 4  # the configuration of the epochs check: M = 4 with termination, per checked definition
# The epochs check's tolerance: doubling the epochs may move a round's errors, F_T and G_T by at most this share of
# their level (epoch_check_one, settled_status).
SETTLED_WITHIN = 0.10

INTERPRETATIONS = (
    SIGMA0_CONVENTION,
    Interpretation(
        id="fig3.data",
        location="Section 6; Appendix A.3 (MNIST)",
        issue="MNIST is not shipped with any package the tool may use, and nothing may be downloaded at run time.",
        choice="scikit-learn's bundled 8 x 8 digits (1,797 images; 600 held out for testing by a fixed draw) by "
        "default; MNIST itself when `moecl-verify run --mnist DIR` names its IDX files, averaged to 14 x 14. "
        "Each entry names the data set it was computed on.",
        option="--mnist",
    ),
    Interpretation(
        id="fig3.tasks",
        location="Section 6 ('N = 3'); Appendix A.3",
        issue="The three tasks are not described.",
        choice="Two definitions, each its own entries: 'mirrors' (the default) = the digits as they are, mirrored "
        "left to right, and upside down, 10 classes each; 'split' = the digit groups {0, 1, 2}, {3, 4, 5}, "
        "{6, 7, 8}, each labelled by the digit's place in its group (3 shared outputs). Both give every task "
        "its own input distribution, as the linear model's feature signals v_n do; a definition that relabels "
        "the same images would give every task the same averaged input, which no gate could route.",
        option="definition",
    ),
    Interpretation(
        id="fig3.gate_input",
        location="Section 6 ('convert the d x d matrix into a normalized d^2-dimensional vector')",
        issue="What 'normalized' means.",
        choice="The round's averaged image less the tasks' mean training image, flattened, scaled to unit norm. "
        "Without the centering the averaged digit images of the three tasks have cosines 0.96-0.99 (nonnegative "
        "pixels around one shape) and a linear gate sees them almost on one ray; each entry records the "
        "cosines the gate sees.",
    ),
    Interpretation(
        id="fig3.sigma0",
        location="Section 6 ('the variance sigma_0 of each element of the input vector'); Algorithm 1",
        issue="How sigma_0 is computed and how it sets Algorithm 1's parameters.",
        choice="sigma_0 = the standard deviation of the entries of the tasks' mean gate inputs (read as the "
        "linear model's sigma_0, a standard deviation; see sigma0_convention), then Algorithm 1's scalings with "
        "constant 1: eta = alpha = sigma_0^0.5, lambda = Gamma = sigma_0^1.25, T1 = ceil(M / eta).",
    ),
    Interpretation(
        id="fig3.error",
        location="Appendix A.3 ('E_t defined as the mean-squared test error'); eq. (3)",
        issue="The mean-squared error of a classifier with several outputs, and the training loss.",
        choice="E_t = the mean over the task's test images of ||f(x) - onehot(y)||^2 (summed over outputs), and "
        "the same loss on the round's samples for training, as eq. (3) averages ||X^T w - y||^2 over samples.",
    ),
    Interpretation(
        id="fig3.experts",
        location="Appendix A.3 (architecture; SGD, learning rate 0.2, 600 epochs)",
        issue="Layer widths, initialization, batch size; 600 epochs per round do not fit the run's budget.",
        choice=f"Reduction: 3 x 3 convolutions with {WIDTHS['conv1']} and {WIDTHS['conv2']} channels, fully "
        f"connected widths {WIDTHS['fc1']} and {WIDTHS['fc2']}, ReLU; weights and biases Uniform(+-1/sqrt(fan in)); "
        f"all experts start from one random network (as every w_0^(m) = 0); {EPOCHS} epochs of SGD per round in "
        f"minibatches of {BATCH} at learning rate {LR}. The epochs were chosen where doubling them stops moving "
        "the final errors (a ladder of 10 to 160 epochs, docs/design.md), and every run checks it again: entries "
        f"record a run with {2 * EPOCHS} epochs on the same replicates (M = {CHECK_M}, with termination): how much "
        f"epochs {EPOCHS + 1}-{2 * EPOCHS} change the routed expert's error within a round, and F_T and G_T at both "
        f"epochs; settled means within {SETTLED_WITHIN:.0%}.",
        option="epochs",
    ),
    Interpretation(
        id="fig3.delta",
        location="eq. (6) with network experts",
        issue="||w_t^(m) - w_(t-1)^(m)||^2 for a network.",
        choice="The squared change of all the routed expert's parameters over the round.",
    ),
    Interpretation(
        id="fig3.scale",
        location="Section 6, Figure 3; Appendix A.1 (100 minutes for Figure 3)",
        issue="The number of rounds T and of repetitions are not given; 1,000 test samples per task.",
        choice=f"Reduction: T = {BUDGETS['smoke'].fig3_rounds} / {BUDGETS['standard'].fig3_rounds} / "
        f"{BUDGETS['full'].fig3_rounds} rounds and "
        f"{BUDGETS['smoke'].fig3_replicates} / {BUDGETS['standard'].fig3_replicates} / "
        f"{BUDGETS['full'].fig3_replicates} independent replicates at the smoke / standard / full budget (at smoke, M = 7's gate "
        "has not frozen by the last round); "
        f"{TEST_SIZE['digits']} test images per task on the bundled digits (1,000 on MNIST), a fixed test set per "
        "task; each round draws its 100 training images afresh from the task's training pool.",
        option="budget",
    ),
    Interpretation(
        id="moe.termination_flags",
        location="Algorithm 1, lines 7-13; Section 3.3 'Key design II'",
        issue="Whether converged marks persist across rounds and whether they are tested before or after "
        "the round's gate update.",
        choice="As in the linear model: marks are sticky and tested on the gate that routed the round, before "
        "its update; the gate is frozen for good once all experts are marked.",
    ),
)


def missing_libraries(ctx: Context) -> list[str]:
    """The optional libraries Figure 3 needs that cannot be imported (scikit-learn only without --mnist)."""
    needed = ("jax",) if ctx.options.get("mnist_dir") else REQUIRED
    missing = []
    for name in needed:
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append("scikit-learn" if name == "sklearn" else name)
    return missing


def unavailable_reason(missing: list[str]) -> str:
    return (f"Figure 3's deep-network experiment needs {', '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} "
            f"not installed; install the optional extra with {INSTALL} and run again")


def data_kind(ctx: Context) -> str:
    return "mnist" if ctx.options.get("mnist_dir") else "digits"


def data(ctx: Context) -> digit_tasks.DigitData:
    """The labelled images: MNIST from ``ctx.options.get("mnist_dir")`` or scikit-learn's digits with a fixed held-out part."""
    def compute():
        if ctx.options.get("mnist_dir"):
            return digit_tasks.mnist_digits(load_mnist(ctx.options.get("mnist_dir")), MNIST_D, ctx.options.get("mnist_dir"))
        return digit_tasks.sklearn_digits(generator_for(DATA_SEED, "fig3", "digits", "split"), test=DIGITS_TEST)

    return ctx.shared(("fig3", "data", ctx.options.get("mnist_dir")), compute)


def tasks(ctx: Context, definition: str) -> digit_tasks.TaskSet:
    return ctx.shared(("fig3", "tasks", definition, ctx.options.get("mnist_dir")),
                      lambda: digit_tasks.make_tasks(data(ctx), definition, TEST_SIZE[data_kind(ctx)]))


def parameters(task_set: digit_tasks.TaskSet) -> dict:
    """sigma0 from the gate's inputs and Algorithm 1's parameters from it (``fig3.sigma0``)."""
    sigma0 = math.sqrt(digit_tasks.input_variance(task_set))
    return {"sigma0": sigma0, "eta": sigma0**0.5, "alpha": sigma0**0.5, "lam": sigma0**1.25, "Gamma": sigma0**1.25}


# -- what an MNIST folder must hold (checked by ``--mnist`` before any claim runs) -------------------------------

DIGITS = tuple(range(10))  # the labels MNIST's files hold, and every one the task definitions classify


def _pools(definition: str) -> tuple[tuple[int, ...], ...]:
    """The distinct training pools (digit groups) of one task definition's tasks (``mirrors``: one pool, shared by
    its three tasks)."""
    return tuple(dict.fromkeys(digit_tasks.task_groups(definition)[0]))


def mnist_minimum() -> dict[str, int]:
    """The fewest training and test images any folder must hold for every Figure 3 run, whatever the budget:

    * training: each round draws S images without replacement from its task's pool (numeric/dnn_moe.py,
      draw_replicate), so every pool of every task definition needs S images, and every digit of DIGITS must
      appear; a definition's pools are disjoint, so it needs sum(max(S, digits in the pool)) plus one image
      of each digit none of its pools uses ('split': 3 x 100 for {0, 1, 2}, {3, 4, 5}, {6, 7, 8} and one 9);
    * test: a task's test set is its first TEST_SIZE["mnist"] eligible test images, fewer when there are fewer
      (digit_tasks.make_tasks), so the code needs at least one per task; here every digit once (10), so that no
      task is tested without one of the classes it learns."""
    train = max(sum(max(S, len(pool)) for pool in _pools(d)) + len(set(DIGITS).difference(*_pools(d)))
                for d in DEFINITIONS)
    return {"train": train, "test": len(DIGITS)}


def _digits(values) -> str:
    return "{" + ", ".join(str(v) for v in values) + "}"


def _check_labels(path, labels: np.ndarray) -> np.ndarray:
    """The labels as int64, refused unless each is a digit of DIGITS and every digit appears."""
    finite = np.isfinite(labels)
    whole = np.where(finite, labels, 0)
    bad = ~finite | (whole != np.round(whole)) | (whole < min(DIGITS)) | (whole > max(DIGITS))
    if bad.any():
        raise ValueError(f"{path}: label {labels[bad][0].item()} is not a digit 0-9 (MNIST's labels are the digits)")
    labels = labels.astype(np.int64)
    missing = sorted(set(DIGITS) - set(np.unique(labels).tolist()))
    if missing:
        which = f"digit{'s' if len(missing) > 1 else ''} {', '.join(map(str, missing))}"
        raise ValueError(f"{path}: no image of {which}; Figure 3's task definitions ({', '.join(DEFINITIONS)}) "
                         "need every digit 0-9")
    return labels


def _check_images(path, images: np.ndarray) -> np.ndarray:
    """Per image: whether it is blank (one value throughout); refused when a value is not finite or every
    image is blank."""
    flat = images.reshape(len(images), -1)
    if images.dtype.kind == "f" and not np.isfinite(flat).all():
        raise ValueError(f"{path}: pixel values that are not finite (NaN or infinite); Figure 3 cannot train on them")
    blank = flat.max(axis=1) == flat.min(axis=1)
    if blank.all():
        raise ValueError(f"{path}: every image is blank (one value throughout); Figure 3 needs images of digits")
    return blank


def check_mnist_content(folder, headers: dict) -> None:
    """Refuse, with a ``ValueError`` of one line naming the file, an MNIST folder whose well-formed files
    (``headers``: numeric/idx.py::check_mnist, just run) cannot be used by every Figure 3 run: images not
    square or not divisible into MNIST_D x MNIST_D blocks, fewer images than :func:`mnist_minimum`, labels that are not
    digits or miss one, a task pool smaller than S, pixel values that are not finite, only blank images (of
    the file, or of one digit), or tasks whose averaged images coincide (the gate's input, and sigma0 with
    it, undefined).  Run when the command line is read, so that such a folder stops the run before any
    claim starts instead of failing minutes into Figure 3 with an error about its inner workings.  Needs
    no JAX: the data is read and reduced as the run would (mnist_digits, make_tasks, parameters)."""
    paths = {key: find_file(folder, stem) for key, stem in MNIST_FILES.items()}
    least = mnist_minimum()
    for part in ("train", "test"):
        path, (n, h, w) = paths[f"{part}_images"], headers[f"{part}_images"].shape
        if h != w or h == 0 or h % MNIST_D:
            raise ValueError(f"{path}: images of {h} x {w} pixels; Figure 3 averages square images down to "
                             f"{MNIST_D} x {MNIST_D}, so their side must be a multiple of {MNIST_D} (MNIST's is 28)")
        if n < least[part]:
            need = (f"each task draws {S} training images per round from its digits, and every digit 0-9 must appear"
                    if part == "train" else "every digit 0-9 at least once")
            raise ValueError(f"{path} has {n} images; Figure 3's tasks need at least {least[part]} ({need})")
    labels = {part: _check_labels(paths[f"{part}_labels"], read_idx(paths[f"{part}_labels"], checked=True))
              for part in ("train", "test")}
    for definition in DEFINITIONS:
        for pool in _pools(definition):
            count = int(np.isin(labels["train"], pool).sum())
            if count < S:
                raise ValueError(f"{paths['train_labels']}: {count} images of digits {_digits(pool)}; Figure 3's "
                                 f"'{definition}' tasks draw {S} per round from them")
    images = {part: read_idx(paths[f"{part}_images"], checked=True) for part in ("train", "test")}
    blank = {part: _check_images(paths[f"{part}_images"], images[part]) for part in ("train", "test")}
    for digit in DIGITS:
        if blank["train"][labels["train"] == digit].all():
            raise ValueError(f"{paths['train_images']}: every image of digit {digit} is blank (one value "
                             "throughout); Figure 3's tasks learn from them")
    data = digit_tasks.mnist_digits(LabelledImages(images["train"], labels["train"], images["test"], labels["test"]),
                                    MNIST_D, str(folder))
    for definition in DEFINITIONS:
        with np.errstate(invalid="ignore", divide="ignore"):
            sigma0 = parameters(digit_tasks.make_tasks(data, definition, TEST_SIZE["mnist"]))["sigma0"]
        if not (math.isfinite(sigma0) and sigma0 > 0):
            raise ValueError(f"{folder}: the '{definition}' tasks' average images coincide, so the gate cannot tell "
                             "them apart (its input and sigma0, from which Algorithm 1's parameters are set, are "
                             "undefined)")


def rounds(ctx: Context) -> int:
    """T, the rounds of every Figure 3 run at the context's budget."""
    return ctx.sizes.fig3_rounds


def engine_config(task_set: digit_tasks.TaskSet, M: int, T: int, epochs: int | None = None, probe_epochs: int = 0):
    """Algorithm 1's configuration for the networks; ``epochs`` None: ``EPOCHS`` (read when called)."""
    from moecl_verify.numeric import dnn_moe  # needs jax: imported only when a run is due

    epochs = EPOCHS if epochs is None else epochs
    p = parameters(task_set)
    return dnn_moe.DnnMoEConfig(M=M, eta=p["eta"], alpha=p["alpha"], lam=p["lam"], Gamma=p["Gamma"], termination=True,
                                T=T, s=S, epochs=epochs, lr=LR, batch=BATCH, probe_epochs=probe_epochs)


def net_shape(task_set: digit_tasks.TaskSet):
    from moecl_verify.numeric import dnn

    return dnn.NetShape(d=task_set.d, classes=task_set.classes, **WIDTHS)


def run(ctx: Context, definition: str, M: int, epochs: int | None = None, replicates: int | None = None,
        without_termination: bool = True, probe_epochs: int = 0) -> dict:
    """Task definition ``definition`` with M experts: ``{"on": arrays, "off": arrays}`` with and without
    termination (M = 1 has no gate to terminate: one run, both keys; ``without_termination=False`` skips the run
    without termination, "off" is then None), each holding ``forgetting``, ``generalization`` (R, T),
    ``freeze_round`` (R,), ``chosen``, ``tasks`` (R, T); with ``probe_epochs`` also ``model_error`` (R, T) and
    ``probe_errors`` (R, T, N), the routed expert's errors after the round's first probe_epochs epochs."""
    from moecl_verify.numeric import dnn, dnn_batch, dnn_moe

    R = ctx.sizes.fig3_replicates if replicates is None else replicates
    batched = dnn_batch.preferred()  # on an accelerator, every replicate of a chunk in one compiled call per round
    chunk_function, chunk_size = (dnn_batch.dnn_batch_chunk, BATCHED_CHUNK) if batched else (dnn_moe.dnn_moe_chunk, CHUNK)
    epochs = EPOCHS if epochs is None else epochs  # read when called, not when defined

    def compute():
        task_set = tasks(ctx, definition)
        fork = M > 1 and without_termination
        common = dict(tasks=task_set, shape=net_shape(task_set),
                      cfg=engine_config(task_set, M, rounds(ctx), epochs, probe_epochs), seed=ctx.seed,
                      key=("fig3", definition), noise_experts=max(EXPERTS), fork=fork, libraries=dnn.library_versions())
        if probe_epochs:
            common["keep"] = KEEP + ("model_error", "probe_errors")
        chunks = [Chunk(chunk_function, dict(common, replicates=tuple(range(a, min(a + chunk_size, R)))),
                        size=min(chunk_size, R - a)) for a in range(0, R, chunk_size)]
        label = f"fig3 {definition} M={M}" + ("" if epochs == EPOCHS else f" {epochs} epochs")
        parts = ctx.runner.run(chunks, progress=lambda done, total: ctx.progress(label, done, total))
        arrays = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
        on = {k: v for k, v in arrays.items() if not k.startswith("off.")}
        if M == 1:
            return {"on": on, "off": on}
        off = {k[len("off."):]: v for k, v in arrays.items() if k.startswith("off.")} if fork else None
        return {"on": on, "off": off}

    return ctx.shared(("fig3", definition, M, epochs, R, without_termination, probe_epochs, ctx.seed,
                       ctx.budget.name, ctx.options.get("mnist_dir")), compute)


def _mean_se(x: np.ndarray) -> tuple[float, float]:
    if x.size == 0:
        return float("nan"), float("nan")
    return float(np.mean(x)), float(np.std(x, ddof=1) / math.sqrt(x.size)) if x.size > 1 else float("nan")


def _curve(x: np.ndarray) -> list:
    """Mean per round over the replicates whose value is finite (None where none is)."""
    with np.errstate(invalid="ignore"):
        n = np.sum(np.isfinite(x), axis=0)
        mean = np.nansum(np.where(np.isfinite(x), x, 0.0), axis=0) / np.where(n > 0, n, np.nan)
    return [None if not np.isfinite(v) else float(v) for v in mean]


def settled_status(level: float, change: float, p_value: float, stderr: float) -> str:
    """The epochs check's rule for one final value, whose doubling of the epochs moved it by ``change`` (paired
    mean, standard error ``stderr``, paired t-test p-value ``p_value``) from ``level``:

    * "settled": the move is at most ``SETTLED_WITHIN`` of the level, and the check resolves moves of twice that
      (2.576 stderr <= 2 SETTLED_WITHIN |level|), so a small move is not just a noisy one;
    * "still changing": the move is larger than ``SETTLED_WITHIN`` of the level and significant (p < 0.01);
    * "undetermined": otherwise (the replicates cannot tell)."""
    if not all(np.isfinite(v) for v in (level, change, stderr)) or level == 0.0:
        return "undetermined"
    tolerance = SETTLED_WITHIN * abs(level)
    if abs(change) <= tolerance and 2.576 * stderr <= 2.0 * tolerance:
        return "settled"
    if abs(change) > tolerance and np.isfinite(p_value) and p_value < 0.01:
        return "still changing"
    return "undetermined"


def within_round_change(run_arrays: dict) -> np.ndarray:
    """Per replicate: how much the second half of each round's training still changes the routed expert's test
    error on the round's task, relative to its level: sum_t |E_t(after all epochs) - E_t(after the probe
    epochs)| / sum_t E_t(after the probe epochs), over the rounds of a run made with ``probe_epochs``."""
    tasks = run_arrays["tasks"]
    rows, steps = np.indices(tasks.shape)
    probed = run_arrays["probe_errors"][rows, steps, tasks]
    final_ = run_arrays["model_error"]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.nansum(np.abs(final_ - probed), axis=1) / np.nansum(probed, axis=1)


def epoch_check_one(ctx: Context, definition: str) -> dict:
    """Whether EPOCHS per round are enough, on one configuration (M = ``CHECK_M``, with termination) run again
    with 2 x EPOCHS epochs on the same replicates (every draw shared, the first EPOCHS epochs in the same orders):

    * within rounds: in the 2 x EPOCHS run, the routed expert's test error on its task after EPOCHS epochs and
      after all of them, from the same start (:func:`within_round_change`): the extra epochs' effect on one
      round's training, free of the routing's sensitivity to small differences;
    * curves: the final F_T and G_T of the two runs, compared by a paired t-test (``scipy.stats.ttest_rel``)
      and :func:`settled_status`; the mean curves at both epochs are kept for the figure.

    Settled when the extra epochs move the within-round errors by at most ``SETTLED_WITHIN`` and no final value
    is still changing; still changing when either moves by more, significantly; undetermined otherwise."""
    from scipy import stats as sps

    M = CHECK_M
    R = min(ctx.sizes.fig3_check_replicates, ctx.sizes.fig3_replicates)
    base = run(ctx, definition, M)["on"]
    more = run(ctx, definition, M, epochs=2 * EPOCHS, replicates=R, without_termination=False,
               probe_epochs=EPOCHS)["on"]
    out = {"definition": definition, "M": M, "termination": True, "replicates": R, "epochs": [EPOCHS, 2 * EPOCHS],
           "settled_within": SETTLED_WITHIN, "curves": {}}
    within = within_round_change(more)
    within = within[np.isfinite(within)]
    level, se = _mean_se(within)
    out["within-round change"], out["within-round change stderr"] = level, se
    # A relative change is its own level: settled at most SETTLED_WITHIN, resolved to twice that.
    out["within-round status"] = (
        "undetermined" if not (np.isfinite(level) and np.isfinite(se))
        else "settled" if level <= SETTLED_WITHIN and 2.576 * se <= 2 * SETTLED_WITHIN
        else "still changing" if level - 2.576 * se > SETTLED_WITHIN else "undetermined")
    statuses = [out["within-round status"]]
    for metric, short in (("forgetting", "F_T"), ("generalization", "G_T")):
        a, b = base[metric][:R, -1], more[metric][:, -1]
        kept = np.isfinite(a) & np.isfinite(b)  # pairs whose training did not diverge
        a, b = a[kept], b[kept]
        out[short] = [_mean_se(a)[0], _mean_se(b)[0]]
        change, se = _mean_se(b - a)
        p = float(sps.ttest_rel(b, a).pvalue) if a.size > 1 and se > 0 else float("nan")
        out[f"{short} change"] = change
        out[f"{short} change stderr"] = se
        out[f"{short} change p"] = p
        out[f"{short} relative change"] = change / abs(out[short][0]) if out[short][0] else float("nan")
        out[f"{short} status"] = settled_status(out[short][0], change, p, se)
        statuses.append(out[f"{short} status"])
        out["curves"][metric] = [_curve(base[metric][:R]), _curve(more[metric])]
    out["status"] = ("still changing" if "still changing" in statuses
                     else "settled" if statuses[0] == "settled" else "undetermined")
    return out


def epoch_check(ctx: Context) -> list[dict]:
    """:func:`epoch_check_one` for each definition the budget checks (``ctx.sizes.fig3_check_definitions``)."""
    return [epoch_check_one(ctx, definition) for definition in ctx.sizes.fig3_check_definitions]


def setting(ctx: Context, definition: str) -> dict:
    """What identifies the runs of one task definition in an entry's config."""
    task_set = tasks(ctx, definition)
    p = parameters(task_set)
    return {
        "part": f"tasks: {definition}",
        "definition": definition,
        "data": data(ctx).name,
        "N": N,
        "experts": list(EXPERTS),
        "T": rounds(ctx),
        "s": S,
        "epochs": EPOCHS,
        "batch": BATCH,
        "lr": LR,
        "widths": dict(WIDTHS),
        "d": task_set.d,
        "test_per_task": int(task_set.test_x.shape[1]),
        "sigma0": p["sigma0"],
        "eta": p["eta"],
        "alpha": p["alpha"],
        "lam": p["lam"],
        "Gamma": p["Gamma"],
        "T1": {str(M): int(math.ceil(M / p["eta"] - 1e-12)) for M in EXPERTS},
        "gate_input_cosines": digit_tasks.input_cosines(task_set),
        "replicates": ctx.sizes.fig3_replicates,
        "seed": ctx.seed,
        **engine_record(),
    }


def engine_record() -> dict:
    """The device the networks were computed on (JAX's choice) and the engine that computed them: results are
    deterministic for a given device, not across devices.  Without JAX nothing is computed on one: empty."""
    try:
        from moecl_verify.numeric import dnn, dnn_batch
    except ImportError:
        return {}
    return {"device": dnn.device(), "engine": "batched" if dnn_batch.preferred() else "reference"}
