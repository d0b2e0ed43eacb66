"""``calcheck figures --jobs``: the figures' cache tasks, run in parallel before drawing."""

from functools import partial
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from calcheck.figures import registry
from calcheck.figures.gr22 import _cifar
from calcheck.figures.registry import fill_caches, select_figures


def _module_with_tasks(names):
    def cache_tasks(cache_dir, **_):
        # Path.write_text pickles by reference: the loky workers can run it
        return [(n, partial(Path.write_text, Path(cache_dir) / f"{n}.txt", n)) for n in names]

    return SimpleNamespace(cache_tasks=cache_tasks)


def test_fill_caches_runs_each_key_once_on_workers(tmp_path, monkeypatch):
    modules = {"a.fig1": _module_with_tasks(["x", "y"]), "a.fig2": _module_with_tasks(["y", "z"])}
    modules["a.fig3"] = SimpleNamespace()  # no cache_tasks: nothing to prefetch
    monkeypatch.setattr(registry, "get_figure", modules.__getitem__)
    seen = []
    n = fill_caches(
        list(modules), tmp_path, jobs=2, on_task=lambda *a: seen.append((a[0], a[2], a[3]))
    )
    assert n == 3  # "y" is shared by two figures: filled once
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.txt", "y.txt", "z.txt"]
    assert sorted(k for k, _, _ in seen) == ["x", "y", "z"]
    assert sorted(done for _, done, _ in seen) == [1, 2, 3]
    assert {total for _, _, total in seen} == {3}
    assert fill_caches(["a.fig3"], tmp_path, jobs=2) == 0


@pytest.mark.parametrize("jobs", [0, -2, 1.5, True, "2"])
def test_fill_caches_rejects_bad_jobs(tmp_path, jobs):
    with pytest.raises(ValueError, match="jobs must be a positive integer or -1"):
        fill_caches([], tmp_path, jobs=jobs)


def _fake_evaluation(dataset, arch, *, bins, seed, cache_dir=None, data_root=None):
    value = float(len(dataset) * 100 + len(arch) + seed)
    return {"bins": np.asarray(bins), "base/tl_ece": np.full(len(bins), value)}


def test_every_gr22_cache_task_is_what_its_figure_reads(tmp_path, monkeypatch):
    """After a figure's tasks ran, its compute reads every network from the cache."""
    monkeypatch.setattr(_cifar, "evaluate_model", _fake_evaluation)
    with_tasks = [
        f for f in select_figures(["gr22"]) if hasattr(registry.get_figure(f), "cache_tasks")
    ]
    assert {"gr22.fig2", "gr22.table2", "gr22.table5", "gr22.fig8"} <= set(with_tasks)
    for fig_id in with_tasks:
        mod = registry.get_figure(fig_id)
        cache = tmp_path / fig_id
        tasks = mod.cache_tasks(cache, reps=100, seed=2022, data_root=None)
        assert len({k for k, _ in tasks}) == len(tasks)
        for _, fill in tasks:
            fill()
        assert len(list(cache.glob("gr22-eval-*.npz"))) == len(tasks)

        def not_cached(*args, fig_id=fig_id, **kwargs):
            raise AssertionError(f"{fig_id}: compute missed the cache: {args}")

        monkeypatch.setattr(_cifar, "evaluate_model", not_cached)
        data = mod.compute(cache, seed=2022)
        monkeypatch.setattr(_cifar, "evaluate_model", _fake_evaluation)
        expected = _fake_evaluation("cifar100", "resnet50", bins=_cifar.BINS, seed=2022)
        if "cifar100/resnet50/base/tl_ece" in data:
            assert np.array_equal(data["cifar100/resnet50/base/tl_ece"], expected["base/tl_ece"])


def test_gr22_tasks_start_with_cifar100():
    """The Dirichlet fits on CIFAR-100 take most of the time: they are handed out first."""
    keys = [k for k, _ in _cifar.model_tasks(("cifar10", "cifar100"), cache_dir="/nowhere")]
    assert keys[0].startswith("gr22-eval-cifar100-")
    assert len(keys) == 8
