"""The time-aware choice between the dense and the block kernel operators."""

import math

import numpy as np

from semisvm import LapRLS, LapSVM, SolverOptions
from semisvm.datasets import make_two_moons
from semisvm.models import _cost
from semisvm.models._scale import default_n_components

RATES = {"gemm": 2.0**35, "bandwidth": 2.0**33}


def test_predicted_seconds_are_the_closed_forms():
    n, d, m, b = 9298, 256, 882, 300
    G, B = RATES["gemm"], RATES["bandwidth"]
    I = 2 * math.ceil(math.sqrt(n) / 2) + 10
    dense = _cost.predicted_seconds(
        "dense", n=n, d=d, itemsize=8, n_components=m, block_size=b, rates=RATES
    )
    assert np.isclose(dense, 2 * n * n * d / G + I * n * n * 8 / B)
    blocks = _cost.predicted_seconds(
        "blocks", n=n, d=d, itemsize=8, n_components=m, block_size=b, rates=RATES
    )
    bb = 1.5 * b
    expect = (2 * n * m * (d + m) + 2 * n * bb * d) / G + I * (
        8 * n * m + 8 * n * bb
    ) / B
    assert np.isclose(blocks, expect)


def test_the_exact_dense_k_unless_the_blocks_save_half_and_a_second():
    def choice(n, d=10, itemsize=8):
        return _cost.cheaper(
            n=n,
            d=d,
            itemsize=itemsize,
            n_components=default_n_components(n),
            block_size=300,
            rates=RATES,
        )

    kind, info = choice(1500)
    t = info["predicted_seconds"]
    assert kind == "dense" and t["dense"] - t["blocks"] < _cost.MIN_SAVING
    kind, info = choice(20000)
    t = info["predicted_seconds"]
    assert kind == "blocks" and t["dense"] >= 2 * t["blocks"] + 1.0
    assert "save half the time" in info["reason"]
    # a float32 K halves the dense products: the crossover moves up, never down
    sizes = np.arange(1000, 20001, 500)
    first64 = next(n for n in sizes if choice(n)[0] == "blocks")
    first32 = next(n for n in sizes if choice(n, itemsize=4)[0] == "blocks")
    assert first32 >= first64
    # a choice once made stays made above it (monotone in n)
    assert all(choice(n)[0] == "blocks" for n in sizes[sizes >= first64])


def test_rates_are_measured_once_and_rounded_to_powers_of_two():
    r1 = _cost.machine_rates()
    r2 = _cost.machine_rates()
    assert r1 is r2
    for v in r1.values():
        assert v > 0 and float(np.log2(v)).is_integer()


def test_auto_takes_the_block_operator_where_it_is_predicted_faster(monkeypatch):
    X, y, _ = make_two_moons(1200, noise=0.1, n_labeled_per_class=3, random_state=0)
    # a machine whose memory is slow: the dense products cost far more than the
    # blocks' (the rule is the same; only the rates change)
    monkeypatch.setattr(
        _cost, "machine_rates", lambda: {"gemm": 2.0**35, "bandwidth": 2.0**22}
    )
    opts = SolverOptions(graph_width=None, block_size=100)
    clf = LapSVM(options=opts).fit(X, y)
    assert clf.kernel_operator_ == "blocks"
    sel = clf.operator_selection_
    assert sel["requested"] == "auto" and sel["chosen"] == "blocks"
    assert sel["predicted_seconds"]["dense"] > 2 * sel["predicted_seconds"]["blocks"]
    # the same call gives the same model
    again = LapSVM(options=opts).fit(X, y)
    np.testing.assert_array_equal(again.dual_coef_, clf.dual_coef_)
    # fast memory: the exact dense K
    monkeypatch.setattr(_cost, "machine_rates", lambda: RATES)
    clf = LapSVM(options=opts).fit(X, y)
    assert clf.kernel_operator_ == "dense"
    assert "exact dense K" in clf.operator_selection_["reason"]
    # a direct solver never takes the blocks
    assert LapRLS(solver="direct").fit(X, y).kernel_operator_ == "dense"
