"""The network method's fixed settings: the paper's training values and the rules measured
once and kept (docs/decisions.md says what each replaced). They are constants, not options:
nothing a user gains from changing them has been measured."""

from __future__ import annotations

#: learning rates: the surrogate's warm-up, the surrogate in the joint phases, the network
LR_SURROGATE = 1e-2
LR_JOINT_SURROGATE = 1e-3
LR_NETWORK = 2e-2
#: the warm-up stops once its held-out loss has not improved for this fraction of its epochs
#: (noisy data: the loss rises after its minimum while the surrogate fits the noise)
WARMUP_PATIENCE = 0.25
#: weights of the weak loss (λ_w) and of the pruning phase's L1 penalty (λ_r)
LAMBDA_W = 0.1
LAMBDA_R = 1e-3
#: points of the training quadrature grid (the final fit uses the data's own grid)
GRID_POINTS = 8000

#: the symbolic network: nodes per operator and layer, candidate node counts K (the paper's)
NODES_PER_OP = 3
COUNTS = (0, 1, 2, 3)
#: read-back: the highest polynomial degree, the relative weight below which an output is
#: pruned, and how far f(u) must differ from its cubic Taylor polynomial to be offered: the
#: estimated noise / std, within [SHAPE_TOL_MIN, SHAPE_TOL] (noisy data cannot tell a
#: function from its cubic where they differ by less than the noise; clean data can)
MAX_DEGREE = 4
EXTRACT_TOL = 1e-3
SHAPE_TOL = 0.1
SHAPE_TOL_MIN = 0.01

#: kernels="auto": observations per Gaussian (clean, noisy), the noise / std counted as
#: noisy, and the counts chosen from (also those kernels="compare" compares)
POINTS_PER_KERNEL = (10, 40)
NOISE_THRESHOLD = 0.05
#: a field the round neighbourhood misreads (it reads at least NOISE_THRESHOLD and this
#: many times the lowest reading: it misses the field by more than the noise) gets Gaussians
#: shaped by its length scales, each within [1/ASPECT_MAX, ASPECT_MAX] of a round one's,
#: and the clean rule's kernel count
ASPECT_MISREAD = 2.0**0.5
ASPECT_MAX = 8.0
KERNEL_CHOICES = (64, 250, 1000)
#: kernels="compare" compares up to this many observations (above: the paper's 1 000)
COMPARE_POINTS = 100_000

#: surrogates="auto": this many where the estimated noise / std reaches SURROGATES_NOISE
AUTO_SURROGATES = 3
SURROGATES_NOISE = 0.5

#: the final fit: at least this many test functions per candidate term, added only while
#: test functions × grid points × columns (the assembly's work) stays below the budget
FINAL_TEST_RATIO = 3.0
FINAL_TEST_BUDGET = 1e11
#: the data correction's smoothing width, in mean spacings between observations
CORRECTION_WIDTH = 0.33
#: products of derivatives by default (network path, no `inputs:`): the final fit is made
#: again with them when it leaves at least WIDEN_FLOOR of the weak form unexplained, and kept
#: when it leaves at most WIDEN_GAIN of that; the products' degree (one field in one space
#: dimension, otherwise) and the most terms offered
WIDEN_FLOOR = 0.03
WIDEN_GAIN = 0.5
WIDEN_DEGREE = (3, 2)
WIDEN_MAX_TERMS = 24
#: the library's monomial neighbours (D^α(u³) beside D^α(u²)) are offered under the same
#: floor and kept when the fit with them leaves at most this part of the first fit's
#: unexplained weak form on every variant (a few terms, so a looser gain than the products')
NEIGHBOURS_GAIN = 0.8
#: ... and offered where the first fit leaves at least this part unexplained on every
#: variant (a few terms and a one-selection probe first: a lower floor than the products').
#: Schnakenberg (u_t = 0.01 u_xx + 0.1 − u + u²v) clean left 2.99 % on one variant without
#: its feed and u²v; with them 0.1015 + 0.9998 u²v − 1.001 u
NEIGHBOURS_FLOOR = 0.02
#: the full-grid path (whose library holds every monomial but the constant) makes its fit
#: again with the constant F = 1 where the first leaves at least this part unexplained on
#: every scale, kept under NEIGHBOURS_GAIN
GRID_CONSTANT_FLOOR = 0.01
#: two fields' final fit is made again under U(1) phase symmetry (network/_symmetry.py) and
#: kept when it leaves at most this part of the first fit's unexplained weak form
SYMMETRY_GAIN = 0.5
#: ... and only tried where the first fit leaves at least this part unexplained on every variant
SYMMETRY_FLOOR = 0.03
#: stability selection: the fraction of halves that must choose a term, and the `log`
#: criterion's penalty on each half (a support most halves chose exactly is kept whole)
STABILITY_THRESHOLD = 0.6
STABILITY_PENALTY = 0.5
#: row resamples of the bootstrap intervals
BOOTSTRAP_RESAMPLES = 200
#: a 95 % interval reaches at least this part of its coefficient either side of it: on clean
#: data the weak form's quadrature and the surrogate bias a coefficient by about a percent,
#: which no resampling of the test functions sees (zoo tuning half, r 10 %, σ 0: 8 of 66
#: intervals of right supports missed the truth, by 0.06–2.4 % of the estimate; 1 with
#: this floor)
INTERVAL_PRECISION = 0.02
#: ... plus this share of the estimated noise / std: the surrogate smooths noisy data, and the
#: coefficients it gives are biased by a few percent, which neither the bootstrap nor the
#: test-function scales see (zoo tuning half with its variants, r 10 %, seeds 0, 1, right
#: supports, the nominal σ: coverage 94 → 98 % at σ 0.1, 85 and 100 % at σ 0.05 and 0.2
#: unchanged, mean width 0.43 → 0.46 of the coefficient at σ 0.1)
INTERVAL_NOISE_SHARE = 0.5
#: the likelihood ratio a term must reach on the data to stay determined, and a swap to be
#: returned (χ² with one degree of freedom at 99.9 %; :mod:`.network._refit`)
REFIT_CHI2 = 10.83
#: ... and an uncertain term added to the equation, to be returned with it (χ² at 99.99 %):
#: adding a term to the weak form the surrogate is refitted under lets it bend further, so
#: the ratio of a term the data do not hold runs above χ² (built for tuning, r 10 %,
#: σ 0.05–0.2: absent terms added at 0.5–12.9, the true diffusions left out at 17.0–158)
ADDED_CHI2 = 15.14
#: weight of the equation's weak form beside the data in a refit (:mod:`.network._refit`)
REFIT_LAMBDA = 1.0
#: ... and in the refits that add a term to the equation (with the equation's own refit
#: beside them, and the drop of a term added so): at weight 1 a surrogate refitted without
#: a term the data hold leaves its part in the weak form rather than bend off the data
#: (tuning half, σ 0.2: a damped heat's 0.1 u_xx added at 8.4, at 10 by 23.9); a drop at 10
#: let a spurious v_xx and d_xx(sin u) stay determined, so the drops and swaps keep 1
ADDED_LAMBDA = 10.0
