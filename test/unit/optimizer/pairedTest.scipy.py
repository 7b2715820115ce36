# Expected values for pairedTest.test.ts, computed with scipy 1.17.1 (python3 pairedTest.scipy.py).
import numpy as np
from scipy import stats

for k, n in [(7, 10), (15, 20), (60, 100), (0, 5), (5, 5), (520, 1000), (3, 3)]:
    print('tail', k, n, repr(stats.binom.sf(k - 1, n, 0.5)))
for w, l in [(6, 1), (9, 3), (4, 4), (12, 2)]:
    print('sign', w, l, repr(stats.binomtest(w, w + l, 0.5, alternative='greater').pvalue))
for d in [[0.5, 0.25, -0.1, 0.75, 0.3, 0, 0.2, -0.05],
          [1/3, 2/3, -1/3, 1/3, 0, 1/3, -2/3, 1/3, 1/3, 2/3, 1/3, 0.0]]:
    r = stats.permutation_test((np.array(d),), lambda x, axis: np.mean(x, axis=axis),
                               permutation_type='samples', alternative='greater',
                               n_resamples=np.inf, vectorized=True)
    print('perm', d, repr(r.pvalue))
