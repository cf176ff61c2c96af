"""The plotly builders draw the numbers they are given (read back from the figure objects)."""
import pytest

from specviz.lessons.admission import algorithm1
from specviz.viz import admission as afigs
from specviz.viz import costs, distributions
from specviz.viz.charts import num
from specviz.viz.style import stylesheet
from tests.unit.viz.test_viz_tokens import greedy_round


def test_pq_bars_show_both_distributions_with_safe_labels():
    fig = distributions.pq_bars([" to", "<b>"], [0.7, 0.3], [0.5, 0.5])
    assert [t.name for t in fig.data] == ["p (target)", "q (drafter)"]
    assert list(fig.data[0].x) == [" to", "‹b›"] and list(fig.data[1].y) == [0.5, 0.5]


def test_rebuild_bars_stack_min_and_residual_to_p():
    fig = distributions.rebuild_bars(["A", "B"], [0.7, 0.3], [0.5, 0.5])
    accepted, residual, target = fig.data
    assert list(accepted.y) == [0.5, 0.3]
    assert [a + r for a, r in zip(accepted.y, residual.y)] == pytest.approx([0.7, 0.3])
    assert "0.800" in fig.layout.title.text


def test_convergence_plots_each_rule_against_p():
    fig = distributions.convergence(["A", "B"], [0.7, 0.3], {"ratio": [0.69, 0.31], "match": [0.71, 0.29]}, 1000)
    assert [t.name for t in fig.data] == ["ratio", "match", "target p"] and "1,000" in fig.layout.title.text


def test_round_costs_stack_phases_and_label_tokens():
    fig = costs.round_costs([greedy_round()], baseline_ms=4.0)
    assert [t.name for t in fig.data] == ["draft", "verify (target)", "overhead", "plain decoding: 4.0 ms per token"]
    assert list(fig.data[2].text) == ["3 tok"]
    # the baseline spans every bar and is named in the legend, with no label lying across the bars
    assert list(fig.data[3].y) == [4.0, 4.0] and fig.data[3].x[0] < 1 < fig.data[3].x[1]
    assert not fig.layout.annotations


def test_break_even_curve_crosses_plain_decoding_at_round_over_baseline():
    fig = costs.break_even(14.0, 10.0, 5, observed=2.0)
    assert list(fig.data[0].y) == pytest.approx([14, 7, 14 / 3, 3.5, 2.8])
    assert any("1.40 tokens/round" in a.text for a in fig.layout.annotations)
    assert fig.data[1].y[0] == 7.0


def test_width_cost_labels_the_fitted_line_relative_to_one_token_beside_the_raw_points():
    fig = costs.width_cost([{"width": 1, "ms": 5.2, "fitted_ms": 5.0, "relative": 1.0},
                            {"width": 8, "ms": 7.1, "fitted_ms": 7.5, "relative": 1.5}])
    raw, line = fig.data
    assert list(raw.y) == [5.2, 7.1] and raw.marker.opacity < 1
    assert list(line.y) == [5.0, 7.5] and list(line.text) == ["1.00×", "1.50×"]


def test_width_cost_leaves_room_for_the_label_of_the_widest_and_the_highest_point():
    """Catches the clipped "1.48×": a label centred above the last point, on an axis that ends at that point,
    drawn half outside the plot and cut there."""
    rows = [{"width": w, "ms": 5.0 + 0.2 * w, "fitted_ms": 5.0 + 0.2 * w, "relative": 1 + 0.04 * (w - 1)}
            for w in (1, 2, 3, 4, 6, 8, 12, 16)]
    fig = costs.width_cost(rows)
    line = fig.data[1]
    assert line.text[-1] == "1.60×" and line.cliponaxis is False
    x0, x1 = fig.layout.xaxis.range
    assert x0 <= 1 - 0.5 and x1 >= 16 + 0.08 * 15          # room each side of the end points' labels
    assert fig.layout.yaxis.range[0] == 0 and fig.layout.yaxis.range[1] >= 1.2 * 8.2 - 1e-9   # and above the top one
    raw_high = costs.width_cost([dict(rows[0], ms=20.0), rows[-1]])
    assert raw_high.layout.yaxis.range[1] >= 1.2 * 20.0 - 1e-9   # a raw point above the line sets the top too


def test_one_outlier_round_does_not_squash_the_others():
    from types import SimpleNamespace
    rounds = [SimpleNamespace(index=i, draft_ms=2.0, verify_ms=10.0, overhead_ms=1.0, total_ms=13.0, emitted=[0, 1])
              for i in range(5)]
    rounds[2] = SimpleNamespace(index=2, draft_ms=2.0, verify_ms=197.0, overhead_ms=1.0, total_ms=200.0, emitted=[0])
    fig = costs.round_costs(rounds)
    assert fig.layout.yaxis.range[1] == pytest.approx(3 * 13.0 * 1.1)      # cut at 3× the median round
    assert [a.text for a in fig.layout.annotations] == ["↑ 200 ms (axis cut)"]
    assert costs.round_costs(rounds[:2] + rounds[3:]).layout.yaxis.range is None


def test_theta_bars_show_the_appendix_a_values():
    r = algorithm1([[0.8, 0.9]], (1.0, 0.5, 0.45), stop_at_first_non_improvement=False)
    fig = afigs.theta_steps(r["theta0"], r["steps"], "t")
    assert list(fig.data[0].text) == ["1.0", "0.9", "1.134"]


def test_running_frequency_draws_one_line_per_policy_and_the_target():
    fig = afigs.running({"retrospective": [1.0, 0.5, 0.85], "non_anticipating": [0.0, 0.5, 0.7]}, 0.7)
    assert len(fig.data) == 2 and "p(A) = 0.7" in fig.layout.annotations[0].text


def test_numbers_are_written_as_the_seeds_write_them():
    assert [num(x) for x in (1.0, 0.9, 1.134, 0.81, 0.85)] == ["1.0", "0.9", "1.134", "0.81", "0.85"]


def test_presenter_mode_adds_large_type():
    assert "21px" in stylesheet(True) and "21px" not in stylesheet(False)


def test_parallel_figures_draw_their_numbers():
    from specviz.viz import parallel
    rows = [{"phrase": " of problem", "product_of_marginals": 0.25, "sequential": 0.01}]
    fig = parallel.phrase_bars(rows, "t")
    assert list(fig.data[0].y) == [0.25] and list(fig.data[1].y) == [0.01] and list(fig.data[0].x) == ["of problem"]
    fig = parallel.sample_bars({"dflash": {" of problem": 7}}, [" of course", " of problem"], 20)
    assert list(fig.data[0].y) == [0, 7] and "20 sampled" in fig.layout.title.text
    assert list(parallel.position_lines({"dflash": [0.8, 0.4]}).data[0].x) == [1, 2]
    from specviz.lessons.protocol import spread
    fig = parallel.cost_lines([{"drafter": d, "k": k, "draft_ms": spread(ms).median, "spread": spread(ms)}
                               for d, k, ms in [("ar", 1, [1.5, 2.0, 2.5]), ("ar", 4, [7.0, 8.0, 8.5]),
                                                ("dflash", 4, [3.0, 3.0, 3.0])]], str.upper)
    assert [t.name for t in fig.data] == ["AR", "DFLASH"] and list(fig.data[0].y) == [2.0, 8.0]
    assert list(fig.data[0].error_y.array) == [0.5, 0.5] and list(fig.data[0].error_y.arrayminus) == [0.5, 1.0]
