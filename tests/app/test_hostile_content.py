"""Hostile content behind well-formed inputs: each is refused before any work starts, in one line on stderr
(``moecl-verify: error: ...`` naming the flag and the path), with exit 2, no traceback, and nothing written
anywhere (the folder tree around the command, cache included, is the same after it, sizes and mtimes too).

| input                                                      | answer                                               |
|------------------------------------------------------------|------------------------------------------------------|
| --mnist: fewer training images than Figure 3's tasks need  | exit 2 as the command line is read, names the file   |
| --mnist: fewer test images than one of each digit          | exit 2, names the test images file                   |
| --mnist: labels of one digit only, or missing a digit      | exit 2, names the labels file and the missing digits |
| --mnist: a split task's digits with fewer than s images    | exit 2, names the digits and the sample size         |
| --mnist: a label that is not a digit                       | exit 2, names the label                              |
| --mnist: blank (constant) images, of the file or a digit   | exit 2, names the images file (plain or .gz)         |
| --mnist: NaN pixel values (a float IDX file)               | exit 2, names the images file                        |
| --mnist: identical images (the gate's input undefined)     | exit 2, names the folder                             |
| --mnist: images not divisible into 14 x 14 blocks          | exit 2, names the images file and their size         |
| simulate --plot into a folder that does not exist, a file, | exit 2 before simulating, names --plot               |
| a folder, an unknown suffix, an unwritable folder          |                                                      |
| simulate --plot when saving fails (e.g. a full disk)       | exit 2, names --plot; no partial file, old one kept  |

Before this check existed, the MNIST folders above ran into Figure 3 and failed there with a traceback ("s = 100
exceeds the smallest task pool", "eta must be finite and > 0, got nan") or, with another claim chosen, were
accepted; ``simulate --plot`` simulated first and then failed with a traceback.  The runs here choose a quick
claim (lemma2): the refusal comes as the command line is read, whatever the claims, so without the check the run
goes on and writes its reports.  The three faults of Figure 3 itself are also run as a user starts them,
in a subprocess with Figure 3's claim.
"""

from __future__ import annotations

import errno
import gzip
import os
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from moecl_verify.cli import main
from moecl_verify.errors import UsageError
from moecl_verify.execution import CACHE_ENV
from moecl_verify.packs.moe_cl.experiments import fig3_runs
from moecl_verify.packs.moe_cl.options import mnist_dir

pytestmark = pytest.mark.app

TRAIN = np.arange(340) % 10  # 34 of each digit: each split group holds 102 >= s = 100
TEST = np.arange(20) % 10


def _idx(array: np.ndarray, code: int = 0x08) -> bytes:
    """An IDX file (the format's description: two zero bytes, the type code, the dimensions, big-endian data)."""
    dtype = {0x08: np.uint8, 0x0D: ">f4", 0x0E: ">f8"}[code]
    return (bytes([0, 0, code, array.ndim]) + b"".join(struct.pack(">I", n) for n in array.shape)
            + np.ascontiguousarray(array).astype(dtype).tobytes())


def _mnist(folder: Path, train_labels=TRAIN, test_labels=TEST, train_images=None, test_images=None, code=0x08,
           compressed=False) -> Path:
    """MNIST's four files in ``folder``: random 28 x 28 images unless given."""
    rng = np.random.default_rng(0)
    train_images = rng.integers(0, 256, (len(train_labels), 28, 28)) if train_images is None else train_images
    test_images = rng.integers(0, 256, (len(test_labels), 28, 28)) if test_images is None else test_images
    folder.mkdir(parents=True)
    for name, array, kind in (("train-images-idx3-ubyte", train_images, code),
                              ("train-labels-idx1-ubyte", np.asarray(train_labels), 0x08),
                              ("t10k-images-idx3-ubyte", test_images, code),
                              ("t10k-labels-idx1-ubyte", np.asarray(test_labels), 0x08)):
        data = _idx(np.asarray(array), kind)
        (folder / (name + (".gz" if compressed else ""))).write_bytes(gzip.compress(data) if compressed else data)
    return folder


def _tree(root: Path) -> dict:
    """Every file and folder under ``root`` (itself included) with its size and modification time: what a
    refused command must leave as it found it."""
    return {str(path.relative_to(root)): (path.is_dir(), path.lstat().st_size, path.lstat().st_mtime_ns)
            for path in [root, *root.rglob("*")]}


def _files(root: Path, tree: dict | None = None) -> dict:
    """:func:`_tree` (of ``root`` now, or the one given) without the folders' modification times."""
    tree = _tree(root) if tree is None else tree
    return {path: (True, None, None) if is_dir else (is_dir, size, mtime)
            for path, (is_dir, size, mtime) in tree.items()}


@pytest.fixture
def place(tmp_path, monkeypatch):
    """The test's folder as the working directory and the cache's home, so anything a command wrote would show
    in :func:`_tree`."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path


def _assert_refused(code: int, out: str, err: str, *words: str) -> None:
    assert code == 2, (code, err)
    assert out == "" and "Traceback" not in err, err
    assert err.endswith("\n") and len(err.splitlines()) == 1, err
    assert err.startswith("moecl-verify: error: "), err
    missing = [w for w in words if w not in err]
    assert not missing, (missing, err)


def _refused_run(capsys, place: Path, folder: Path, *words: str) -> None:
    out = place / "out"
    before = _tree(place)
    code = main(["run", "--mnist", str(folder), "--claims", "lemma2", "--budget", "smoke", "--format", "json",
                 "--quiet", "--out", str(out)])
    stdout, err = capsys.readouterr()
    _assert_refused(code, stdout, err, "--mnist: ", str(folder), *words)
    assert not out.exists()
    assert _tree(place) == before


# -- --mnist ---------------------------------------------------------------------------------------------------------


def test_the_least_folder_is_derived_from_the_sample_size_and_the_task_definitions():
    # 'split': three disjoint digit groups of s = 100 training images each, and a 9 for 'mirrors' (10 classes);
    # test: one image of each digit (a task's test set is as large as the smallest task's, up to 1,000).
    assert fig3_runs.S == 100 and fig3_runs.DEFINITIONS == ("mirrors", "split")
    assert fig3_runs.mnist_minimum() == {"train": 3 * fig3_runs.S + 1, "test": 10}


@pytest.mark.parametrize("compressed", [False, True])
def test_a_usable_folder_is_accepted(tmp_path, compressed):
    folder = _mnist(tmp_path / "mnist", compressed=compressed)
    assert mnist_dir(str(folder)) == str(folder.resolve())


def test_the_least_usable_folder_is_accepted_and_one_image_fewer_is_not(tmp_path):
    group = np.arange(300) // 100
    least = np.r_[3 * group + np.arange(300) % 3, 9]  # 100 images of each split group's digits, and one 9
    assert mnist_dir(str(_mnist(tmp_path / "least", train_labels=least))) == str((tmp_path / "least").resolve())
    with pytest.raises(UsageError, match=r"has 300 images; Figure 3's tasks need at least 301"):
        mnist_dir(str(_mnist(tmp_path / "fewer", train_labels=least[1:])))
    with pytest.raises(UsageError, match=r"99 images of digits \{0, 1, 2\}; Figure 3's 'split' tasks draw 100"):
        mnist_dir(str(_mnist(tmp_path / "short", train_labels=np.r_[least[1:], 9])))


def _cases():
    rng = np.random.default_rng(1)
    noisy = rng.integers(0, 256, (len(TRAIN), 28, 28))
    nan = rng.random((len(TRAIN), 28, 28))
    nan[17, 3, 4] = np.nan
    short = np.r_[[0] * 5, [1] * 40, [2] * 40, np.arange(300) % 6 + 3, [9] * 5]  # {0, 1, 2}: 85 images
    return {
        "60 images": (dict(train_labels=np.arange(60) % 10),
                      ["train-images-idx3-ubyte has 60 images", "at least 301"]),
        "one digit": (dict(train_labels=np.full(400, 3), test_labels=np.full(20, 3)),
                      ["train-labels-idx1-ubyte: no image of digits 0, 1, 2, 4, 5, 6, 7, 8, 9"]),
        "blank images": (dict(train_images=np.zeros((len(TRAIN), 28, 28))),
                         ["train-images-idx3-ubyte: every image is blank"]),
        "blank images, gzip": (dict(train_images=np.full((len(TRAIN), 28, 28), 255), compressed=True),
                               ["train-images-idx3-ubyte.gz: every image is blank"]),
        "blank test images": (dict(test_images=np.zeros((len(TEST), 28, 28))),
                              ["t10k-images-idx3-ubyte: every image is blank"]),
        "one digit blank": (dict(train_images=np.where((TRAIN == 9)[:, None, None], 7, noisy)),
                            ["train-images-idx3-ubyte: every image of digit 9 is blank"]),
        "NaN pixels": (dict(train_images=nan, test_images=rng.random((len(TEST), 28, 28)), code=0x0E),
                       ["train-images-idx3-ubyte: pixel values that are not finite"]),
        "identical images": (dict(train_images=np.broadcast_to(noisy[0], noisy.shape)),
                             ["the 'split' tasks' average images coincide"]),
        "a split group short": (dict(train_labels=short),
                                ["train-labels-idx1-ubyte: 85 images of digits {0, 1, 2}", "'split'", "100"]),
        "label not a digit": (dict(train_labels=np.where(np.arange(len(TRAIN)) == 5, 200, TRAIN)),
                              ["train-labels-idx1-ubyte: label 200 is not a digit 0-9"]),
        "10 x 10 images": (dict(train_images=rng.integers(0, 256, (len(TRAIN), 10, 10))),
                           ["train-images-idx3-ubyte: images of 10 x 10 pixels", "multiple of 14"]),
        "5 test images": (dict(test_labels=np.arange(5)),
                          ["t10k-images-idx3-ubyte has 5 images", "at least 10"]),
        "a test digit missing": (dict(test_labels=np.where(TEST == 7, 8, TEST)),
                                 ["t10k-labels-idx1-ubyte: no image of digit 7;"]),
    }


CASES = _cases()


@pytest.mark.parametrize("case", list(CASES))
def test_an_mnist_folder_figure_3_cannot_use_is_refused_before_the_run(capsys, place, case):
    files, words = CASES[case]
    folder = _mnist(place / "mnist", **files)
    _refused_run(capsys, place, folder, *words)


def _cli(cwd: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "moecl_verify", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=600)


@pytest.mark.heavy
@pytest.mark.parametrize("case", ["60 images", "one digit", "blank images"])
def test_figure_3_run_on_an_unusable_mnist_folder_stops_in_one_line(place, case):
    # Before: "s = 100 exceeds the smallest task pool (60 images)" and "eta must be finite and > 0, got nan",
    # tracebacks once Figure 3's runs had started (exit 1), or not_checkable entries without the dnn extra.
    files, words = CASES[case]
    folder = _mnist(place / "mnist", **files)
    before = _tree(place)
    ran = _cli(place, "run", "--mnist", str(folder), "--claims", "fig3.moe_beats_single", "--budget", "smoke",
               "--format", "json", "--quiet", "--out", str(place / "out"), env={CACHE_ENV: str(place / "cache")})
    _assert_refused(ran.returncode, ran.stdout, ran.stderr, "--mnist: ", str(folder), *words)
    assert not (place / "out").exists() and _tree(place) == before


def test_the_content_check_needs_no_jax(tmp_path):
    # Figure 3's engine needs JAX (the dnn extra); the check runs without it, in the default suite.
    good, bad = _mnist(tmp_path / "good"), _mnist(tmp_path / "bad", train_labels=np.arange(60) % 10)
    code = ("import sys; sys.modules['jax'] = None; sys.modules['sklearn'] = None\n"
            "from moecl_verify.errors import UsageError\n"
            "from moecl_verify.packs.moe_cl.options import mnist_dir\n"
            f"print(mnist_dir({str(good)!r}))\n"
            f"try:\n    mnist_dir({str(bad)!r})\nexcept UsageError as exc:\n    print(exc)\n")
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines() == [str(good.resolve()), f"--mnist: {bad / 'train-images-idx3-ubyte'} has 60 "
                                       "images; Figure 3's tasks need at least 301 (each task draws 100 training "
                                       "images per round from its digits, and every digit 0-9 must appear)"]


# -- simulate --plot -------------------------------------------------------------------------------------------------

SIMULATE = ["simulate", "--T", "3", "--replicates", "4", "--engine", "numpy", "--json"]


@pytest.fixture
def simulations(monkeypatch):
    """The simulator, counting its calls: a refused --plot must stop the command before it simulates."""
    from moecl_verify.numeric import single_expert

    calls = []
    real = single_expert.simulate_single_expert

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(single_expert, "simulate_single_expert", counted)
    return calls


def _plot_cases(place: Path) -> dict:
    (place / "notes.txt").write_text("not a folder")
    (place / "pictures").mkdir()
    return {
        "folder missing": (place / "missing" / "f.png", ["the folder", "missing", "does not exist"]),
        "folder is a file": (place / "notes.txt" / "f.png", ["notes.txt' is not a folder"]),
        "path is a folder": (place / "pictures", ["pictures' is a folder"]),
        "unknown suffix": (place / "f.txt", ["cannot write a picture as .txt", ".png", ".pdf", ".svg"]),
    }


@pytest.mark.parametrize("case", ["folder missing", "folder is a file", "path is a folder", "unknown suffix"])
def test_plot_path_that_cannot_be_written_is_refused_before_simulating(capsys, place, simulations, case):
    path, words = _plot_cases(place)[case]
    before = _tree(place)
    code = main([*SIMULATE, "--plot", str(path)])
    out, err = capsys.readouterr()
    _assert_refused(code, out, err, "--plot: ", *words)
    assert simulations == [] and _tree(place) == before


def test_plot_into_an_unwritable_folder_is_refused_before_simulating(capsys, place, simulations):
    # A folder without write permission; as root, who may write into any folder, sysfs (no files can be made there).
    root = os.geteuid() == 0
    locked = Path("/sys") if root else place / "locked"
    if root and not (sys.platform.startswith("linux") and locked.is_dir()):
        pytest.skip("no folder that root cannot write into")
    if not root:
        locked.mkdir()
        locked.chmod(0o500)
    try:
        before = _tree(place)
        code = main([*SIMULATE, "--plot", str(locked / "f.png")])
        out, err = capsys.readouterr()
        after = _tree(place)
    finally:
        if not root:
            locked.chmod(0o700)
    _assert_refused(code, out, err, "--plot: cannot write into the folder", str(locked / "f.png"))
    assert simulations == [] and after == before and not (locked / "f.png").exists()


def test_plot_that_fails_while_saving_is_one_line_and_leaves_the_old_file(capsys, place, monkeypatch):
    # Before: the OSError of matplotlib's savefig escaped as a traceback after the simulation.
    from matplotlib.figure import Figure

    def full_disk(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(Figure, "savefig", full_disk)
    picture = place / "f.png"
    picture.write_bytes(b"the picture of an earlier run")
    before = _tree(place)
    code = main([*SIMULATE, "--plot", str(picture)])
    out, err = capsys.readouterr()
    _assert_refused(code, out, err, "--plot: cannot write", str(picture), os.strerror(errno.ENOSPC))
    # The folder's own mtime moves (the picture is written to a temporary file beside it, then removed); every
    # file in it is as it was, and no file was added.
    assert _files(place) == _files(place, before) and picture.read_bytes() == b"the picture of an earlier run"


@pytest.mark.parametrize("name, magic", [("f.png", b"\x89PNG\r\n\x1a\n"), ("f.PDF", b"%PDF"), ("f.svg", b"<?xml"),
                                         ("curves", b"\x89PNG\r\n\x1a\n")])
def test_plot_is_written_in_the_format_of_its_suffix(capsys, place, name, magic):
    code = main([*SIMULATE, "--plot", str(place / name)])
    _, err = capsys.readouterr()
    assert code == 0, err
    assert (place / name).read_bytes().startswith(magic)
    assert sorted(p.name for p in place.iterdir() if p.name != "cache") == [name]  # no temporary file left
