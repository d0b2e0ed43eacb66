"""klm19 bounds: hand-computed values, the required constant, validation, registry."""

import math

import pytest

from calcheck.bounds import klm19, registry


def test_sample_sizes_hand_computed():
    log_b = math.log(100 / 0.1)
    assert klm19.thm53_sample_size(100, 0.01, 0.1, c=1) == pytest.approx(1e4 * log_b)
    assert klm19.thm54_sample_size(100, 0.01, 0.1, c=1) == pytest.approx(1e3 * log_b)
    assert klm19.lem43_sample_size(100, 0.1, c=2) == pytest.approx(200 * log_b)
    assert klm19.lem43_vc_sample_size(100, 0.1, c=1) == pytest.approx(1e4 * log_b)
    # The debiased rate is smaller by sqrt(B): the paper's O(sqrt(B)) instead of O(B).
    assert klm19.thm53_sample_size(400, 0.01, 0.1, c=1) / klm19.thm54_sample_size(
        400, 0.01, 0.1, c=1
    ) == pytest.approx(20)


def test_constant_is_required_and_inputs_validated():
    with pytest.raises(TypeError):
        klm19.thm53_sample_size(100, 0.01, 0.1)  # c is keyword-only and required
    with pytest.raises(ValueError, match="c must be given"):
        klm19.thm54_sample_size(100, 0.01, 0.1, c=None)
    with pytest.raises(ValueError, match="ce_sq"):
        klm19.thm53_sample_size(100, 0.0, 0.1, c=1)
    with pytest.raises(ValueError, match="delta"):
        klm19.lem43_sample_size(100, 1.0, c=1)
    with pytest.raises(ValueError, match="n_bins"):
        klm19.lem43_sample_size(2.5, 0.1, c=1)


def test_registry_rate_quantifier():
    for gid in ("klm19.lem43", "klm19.lem43.vc", "klm19.thm53", "klm19.thm54"):
        g = registry.get(gid)
        assert g.quantifier == "rate"
        assert "c" in g.parameters
    assert registry.get("klm19.lem43.vc").variant_of == "klm19.lem43"


def test_gi3_plugin_bias_exact_refuses_an_array_of_n():
    from calcheck.bounds.klm19_informal import gi3_plugin_bias_exact

    for n in ([], [10, 20]):
        with pytest.raises(ValueError, match="n must be a single integer"):
            gi3_plugin_bias_exact([0.5, 0.5], [0.5, 0.5], n)
