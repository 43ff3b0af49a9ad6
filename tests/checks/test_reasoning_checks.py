"""The checks of the exercises that are not fill-ins name each mistake they know (issue 30).

For each check: the stub is "not written", the answer computed with the library passes,
and every known wrong answer gets its own mistake, with feedback that does not write out
the expected numbers.
"""

from __future__ import annotations

import numpy as np
import pytest

import course_lib as cl
from course_lib import checks, projections
from course_lib.checks import reasoning as reasoning_checks


def stub():
    raise NotImplementedError("Student exercise: ...")


def own_output(**kw):
    own = cl.the_cat_sat_own_keys()
    return cl.attention(own.Q, own.K, own.V, **kw)[0][0]


SAT_SCALED = cl.scaled_scores(cl.the_cat_sat().Q, cl.the_cat_sat().K)[2]
SAT_WEIGHTS = cl.softmax(SAT_SCALED)
SAT_OUTPUT = SAT_WEIGHTS @ cl.the_cat_sat().V
MAT = np.array(reasoning_checks.MAT_EMBEDDING)
D_K, SD_Q, SD_K = reasoning_checks.SPREAD_EXAMPLE
SPREAD = SD_Q * SD_K * np.sqrt(D_K)  # the standard deviation of q·k
EMB = projections.embedded_example()

SECOND, THIRD = ([float(np.ravel(a)[0]) for a in reasoning_checks.online_example_state(k)]
                 for k in (2, 3))
C3 = np.exp(3.0 - 4.5)  # lesson 14's third block raises the maximum from 3 to 4.5
P3 = np.exp(np.array([4.5, 2.5]) - 4.5)
OLD3 = np.exp(np.array([4.5, 2.5]) - 3.0)

#: check -> (a right answer, {mistake: a wrong answer that makes it}), the answers computed.
CASES = {
    "check_table_sizes": ([100 * 100, 100 * 8], {
        "used_d_k": [100 * 16, 800], "one_score_per_query": [100, 800],
        "output_is_square": [10_000, 10_000], "output_uses_d_k": [10_000, 1600],
        "wrong_values": [10_001, 800], "wrong_shape": [10_000]}),
    "check_which_is_qkt": ("A", {"transposed_table": "B", "not_an_option": "C"}),
    "check_spread_by_hand": ([SPREAD, SPREAD / np.sqrt(D_K)], {
        "unit_variance_assumed": [np.sqrt(D_K), 1.0],
        "one_spread_only": [SD_K * np.sqrt(D_K), SD_K],
        "spreads_added": [(SD_Q + SD_K) * np.sqrt(D_K), SD_Q + SD_K],
        "variance_not_spread": [SPREAD**2, SPREAD**2 / np.sqrt(D_K)],
        "no_square_root_of_d_k": [SD_Q * SD_K * D_K, SD_Q * SD_K * np.sqrt(D_K)],
        "scaling_always_gives_one": [SPREAD, 1.0],
        "divided_by_d_k": [SPREAD, SPREAD / D_K],
        "not_scaled": [SPREAD, SPREAD],
        "wrong_values": [SPREAD + 1, SPREAD / np.sqrt(D_K)], "wrong_shape": [SPREAD]}),
    "check_breaks_global_max": ([[0.0, 1.0], [-2000.0, -2001.0]], {
        "rows_too_close": [[0.0, 1.0], [-3.0, 2.0]], "one_key": [[0.0], [-3.0]]}),
    "check_weights_for_point": (
        np.linalg.solve(np.vstack([cl.the_cat_sat().V.T, np.ones(3)]), [0.6, 1.4, 1.0]), {
            "not_a_budget": [0.6, 0.7, 0.0], "negative_weight": [1.0, 1.0, -1.0],
            "wrong_point": [0.2, 0.3, 0.5]}),
    "check_sat_by_hand": ([*SAT_WEIGHTS, *SAT_OUTPUT], {
        "missing_scale": [*cl.softmax(np.array([1.0, 1.0, 2.0])), 1.4, 1.6],
        "not_normalised": [*np.exp(SAT_SCALED), *SAT_OUTPUT],
        "no_softmax": [*SAT_SCALED, *SAT_OUTPUT], "scores_as_weights": [1, 1, 2, 1, 1],
        "not_a_budget": [0.3, 0.3, 0.5, *SAT_OUTPUT],
        "wrong_weights": [0.5, 0.0, 0.5, *SAT_OUTPUT],
        "value_of_sat": [*SAT_WEIGHTS, 2.0, 2.0], "sum_not_mean": [*SAT_WEIGHTS, 3.0, 4.0],
        "wrong_output": [*SAT_WEIGHTS, 1.0, 1.5], "wrong_shape": [*SAT_WEIGHTS]}),
    "check_own_the_output": (own_output(), {
        "keys_tied": cl.attention(cl.the_cat_sat().Q, cl.the_cat_sat().K,
                                  cl.the_cat_sat().V)[0][0],
        "weights_one_hot": [1.0, 0.0], "sum_not_mean": [3.0, 4.0],
        "wrong_values": [1.0, 1.0]}),
    "check_rows_the_bug_changes": (["the", "cat"], {
        "sat_hides_nothing": ["the", "cat", "sat"], "hidden_score_zero_is_harmless": ["cat"],
        "not_a_token": ["mat"], "not_a_list": "the cat"}),
    "check_mat_key": (MAT @ EMB.W_K, {
        "query_not_key": MAT @ EMB.W_Q, "third_row_left_out": MAT[:2] @ EMB.W_K[:2],
        "third_row_sign": [1.1, 0.5], "wrong_values": [0.7, -0.1]}),
    "check_head_table_sizes": ([8 * 100 * 100, 100 * 100], {
        "heads_share_a_table": [10_000, 10_000], "split_the_table": [10_000, 80_000],
        "tables_n_by_d_k": [8 * 100 * 64, 100 * 512]}),
    "check_table_bytes": ([8 * 3000**2, 12 * 8 * 3000**2], {
        "forgot_bytes_per_number": [3000**2, 12 * 3000**2],
        "linear_in_n": [8 * 3000, 12 * 8 * 3000], "float32": [4 * 3000**2, 48 * 3000**2],
        "heads_share_a_table": [8 * 3000**2, 8 * 3000**2]}),
    "check_buggy_line": (2, {"shift_is_harmless": 3, "transpose_is_right": 1,
                             "sum_axis_is_right": 5, "not_an_option": 7}),
    # lesson 14: state after block 2 is (3, 1.553, 4.682); block 3 scores 4.5, 2.5, values 1, 5
    "check_third_block": ([THIRD[1], THIRD[2]], {
        "neither_rescaled": [SECOND[1] + P3.sum(), SECOND[2] + P3 @ [1.0, 5.0]],
        "sum_not_rescaled": [SECOND[1] + P3.sum(), C3 * SECOND[2] + P3 @ [1.0, 5.0]],
        "output_not_rescaled": [C3 * SECOND[1] + P3.sum(), SECOND[2] + P3 @ [1.0, 5.0]],
        "correction_inverted": [SECOND[1] / C3 + P3.sum(), SECOND[2] / C3 + P3 @ [1.0, 5.0]],
        "kept_old_maximum": [SECOND[1] + OLD3.sum(), SECOND[2] + OLD3 @ [1.0, 5.0]],
        "started_over": [P3.sum(), P3 @ [1.0, 5.0]],
        "no_max_shift": [SECOND[1] + np.exp([4.5, 2.5]).sum(),
                         SECOND[2] + np.exp([4.5, 2.5]) @ [1.0, 5.0]],
        "wrong_values": [1.40, 2.90], "wrong_shape": [1.48]}),
    "check_multiply_adds": ([2 * 1500 * 64, 2 * 1500**2 * 64], {
        "scores_only": [1500 * 64, 1500**2 * 64],
        "cache_still_quadratic": [2 * 1500**2 * 64, 2 * 1500**2 * 64],
        "recompute_linear": [2 * 1500 * 64, 2 * 1500 * 64],
        "forgot_d": [2 * 1500, 2 * 1500**2], "half_table": [2 * 1500 * 64, 1500**2 * 64],
        "wrong_values": [1, 2], "wrong_shape": [192_000]}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_stub_right_answer_and_each_named_mistake(name):
    check = getattr(checks, name)
    assert check(stub).mistake == "not_written"
    right, wrong = CASES[name]
    verdict = check(lambda: right)
    assert verdict, verdict.message
    for mistake, answer in wrong.items():
        verdict = check(lambda a=answer: a)
        assert (bool(verdict), verdict.mistake) == (False, mistake), (answer, verdict.message)


def test_feedback_never_writes_the_expected_numbers():
    for name, (right, wrong) in CASES.items():
        values = np.atleast_1d(np.asarray(right, dtype=object)).ravel()
        numbers = [f"{float(v):.2f}" for v in values
                   if (isinstance(v, int | float | np.floating) and abs(float(v)) >= 10)
                   or (isinstance(v, float | np.floating) and float(v) % 1)]
        for answer in wrong.values():
            message = getattr(checks, name)(lambda a=answer: a).message
            for number in numbers:
                assert number not in message, (name, number, message)
                whole = number.removesuffix(".00")
                assert f" {whole} " not in f" {message} ".replace(",", " "), (name, message)


def test_sat_by_hand_takes_the_rounded_weights_and_their_blend():
    """Two decimals are enough: [0.25, 0.25, 0.50] and their blend [1.25, 1.50] pass, as do
    the unrounded output's [1.26, 1.50]; the row's coincidence is said (issue 44)."""
    for out in ([1.25, 1.5], [1.26, 1.5]):
        verdict = checks.check_sat_by_hand(lambda o=out: [0.25, 0.25, 0.5, *o])
        assert verdict and "by coincidence" in verdict.message
    assert not checks.check_sat_by_hand(lambda: [0.25, 0.25, 0.5, 1.3, 1.5])


def test_checks_module_hands_them_out_and_refuses_other_names():
    assert checks.check_buggy_line is reasoning_checks.check_buggy_line
    with pytest.raises(AttributeError, match="no attribute 'check_nothing'"):
        checks.check_nothing  # noqa: B018  (the lookup is the test)


def test_the_bugs_are_real():
    """The given functions differ from the library exactly where the lessons say."""
    ex = cl.the_cat_sat()
    mask = cl.causal_mask(3)
    bad = reasoning_checks.zero_masked_weights(ex.Q, ex.K, mask)
    good = cl.attention_weights(ex.Q, ex.K, mask=mask)
    assert [bool(np.allclose(b, g)) for b, g in zip(bad, good, strict=True)] == [
        False, False, True]
    rng = np.random.default_rng(0)
    Q, K = rng.normal(size=(2, 12, 9, 32))
    assert not np.allclose(reasoning_checks.buggy_model_weights(Q, K),
                           cl.attention_weights(Q, K))
    x = np.array([[0.0, 1.0], [-2000.0, -2001.0]])
    with np.errstate(all="ignore"):
        assert np.isnan(reasoning_checks.buggy_softmax(x)[1]).all()
    assert np.allclose(reasoning_checks.buggy_softmax(x[:1]), cl.softmax(x[:1]))


def test_the_spread_by_hand_is_what_a_measurement_gives():
    """Lesson 03's hand answer, sd_q·sd_k·sqrt(d_k), is the spread of q·k when measured."""
    rng = np.random.default_rng(0)
    q = rng.normal(0.0, SD_Q, size=(200_000, D_K))
    k = rng.normal(0.0, SD_K, size=(200_000, D_K))
    spread = (q * k).sum(axis=1).std()
    assert abs(spread - SPREAD) < 0.01 * SPREAD, spread
    assert abs(spread / np.sqrt(D_K) - SD_Q * SD_K) < 0.01 * SD_Q * SD_K
    assert checks.check_spread_by_hand(lambda: [SPREAD, SPREAD / np.sqrt(D_K)])


def test_the_third_block_is_the_online_softmax_of_six_keys():
    """Lesson 14's by-hand state, finished, is softmax · V of the row's six keys."""
    blocks = reasoning_checks.ONLINE_BLOCKS
    scores = np.array([s for b in blocks for s in b[0]])
    values = np.array([v for b in blocks for v in b[1]])
    assert SECOND[0] == 3.0 and THIRD[0] == 4.5
    assert abs(THIRD[2] / THIRD[1] - cl.softmax(scores) @ values) < 1e-12
    assert abs(SECOND[2] / SECOND[1] - cl.softmax(scores[:4]) @ values[:4]) < 1e-12
