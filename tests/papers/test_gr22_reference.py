"""gr22 reference values (Gupta & Ramdas 2022).

Catalog gr22 §5 ("derived bound values", 4 decimals; tolerance = rounding) and Example 1.
"""

import pytest

from calcheck.bounds import gr22


@pytest.mark.parametrize(
    ("k", "half", "e1_10", "e1_05", "e2_5000", "e2_40671"),
    [
        (2, 0.5000, 1.2239, 1.3581, 2.3259, 2.5412),
        (10, 0.2236, 0.4080, 0.4527, 0.7153, 0.7925),
        (20, 0.1581, 0.2808, 0.3116, 0.4734, 0.5285),
        (50, 0.1000, 0.1748, 0.1940, 0.2785, 0.3146),
        (100, 0.0707, 0.1230, 0.1365, 0.1868, 0.2132),
        (150, 0.0577, 0.1003, 0.1113, 0.1477, 0.1699),
        (313, 0.0400, 0.0693, 0.0769, 0.0961, 0.1123),
        (333, 0.0387, 0.0672, 0.0745, 0.0927, 0.1084),
    ],
)
def test_catalog_bound_table(k, half, e1_10, e1_05, e2_5000, e2_40671):
    """Catalog §5 table (delta = 0), 4 decimals; eps > 1 is returned raw, never clipped."""
    tol = 5.1e-5
    assert gr22.thm1_ece_mean_bound(k) == pytest.approx(half, abs=tol)
    assert gr22.thm1_marginal_eps(k, 0.1) == pytest.approx(e1_10, abs=tol)
    assert gr22.thm1_marginal_eps(k, 0.05) == pytest.approx(e1_05, abs=tol)
    assert gr22.thm1_conditional_eps(5000, k, 0.1) == pytest.approx(e2_5000, abs=tol)
    assert gr22.thm1_conditional_eps(40671, k, 0.1) == pytest.approx(e2_40671, abs=tol)


def test_example1_exact():
    """Sec. 2 Example 1: conf-ECE = 0, TL-ECE = 0.4 (and TL-MCE 0.4, conf-MCE 0)."""
    conf, tl, conf_mce, tl_mce = gr22.discrete_top_label_errors(
        [0.5, 0.5], [0, 1], [0.6, 0.6], [0.2, 1.0]
    )
    assert conf == pytest.approx(0.0, abs=1e-15)
    assert tl == pytest.approx(0.4)
    assert conf_mce == pytest.approx(0.0, abs=1e-15)
    assert tl_mce == pytest.approx(0.4)
