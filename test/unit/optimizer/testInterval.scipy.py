# Expected values for testInterval.test.ts, computed with scipy (python3 testInterval.scipy.py):
# the one-sided p-value of the exact sign-flip test, and the interval found independently here by
# bisecting scipy's own p-values of the same test on (deltas - mu), each side at alpha.
import numpy as np
import scipy
from scipy import stats

ALPHA = 0.05


def p(d, mu, side):
    x = np.array(d, dtype=float) - mu
    return stats.permutation_test((x,), lambda v, axis: np.sum(v, axis=axis),
                                  permutation_type='samples', alternative=side,
                                  n_resamples=np.inf, vectorized=True).pvalue


def end(d, side):
    # greater: the least mu not rejected (p rises with mu); less: the greatest (p falls).
    lo, hi = -1.0, 1.0
    for _ in range(50):
        mid = (lo + hi) / 2
        ok = p(d, mid, side) > ALPHA
        if side == 'greater':
            lo, hi = (lo, mid) if ok else (mid, hi)
        else:
            lo, hi = (mid, hi) if ok else (lo, mid)
    return hi if side == 'greater' else lo


CASES = [
    [1] * 6 + [-1] + [0] * 5,                      # the sim run's step: p 0.0625, inconclusive
    [1] * 5 + [0] * 10,                            # 5 of 15 improved, none broken: p 1/32
    [1] * 9 + [-1] * 2 + [0] * 4,                  # sign test with ties
    [0.5, 0.25, -0.1, 0.75, 0.3, 0, 0.2, -0.05],   # soft scores
    [1/3, 2/3, -1/3, 1/3, 0, 1/3, -2/3, 1/3, 1/3, 2/3, 1/3, 0.0],  # 3 repeats
]
print('scipy', scipy.__version__)
for d in CASES:
    print(repr(d), repr(p(d, 0, 'greater')), repr(end(d, 'greater')), repr(end(d, 'less')))
