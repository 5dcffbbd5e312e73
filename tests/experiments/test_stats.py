"""Mean and t-interval over seeds against a hand computation with a tabulated t quantile."""

import math

from inr.experiments.stats import format_interval, mean_interval


def test_interval_uses_student_t_and_skips_nans():
    values = [1.0, 2.0, 4.0, 7.0, 11.0, 3.0, 5.0, 6.0, 2.0, 9.0, math.nan]
    mean, half, n = mean_interval(values)
    clean = values[:-1]
    m = sum(clean) / 10
    s = math.sqrt(sum((v - m) ** 2 for v in clean) / 9)
    assert n == 10 and abs(mean - m) < 1e-12
    assert abs(half - 2.262157 * s / math.sqrt(10)) < 1e-5  # t_{0.975, 9} = 2.262157 (standard tables)
    assert mean_interval([math.nan, math.nan])[2] == 0 and math.isnan(mean_interval([3.0])[1])
    assert format_interval(math.nan, math.nan) == "–"
