//! Rank intervals by a residual bootstrap with a fixed design.
//!
//! Why residuals and not "resample reviews within a project": with 3–5
//! reviews per project the within-project case bootstrap underestimates the
//! variance by a factor (k-1)/k, and every replicate changes the design, so
//! the Schur complement would have to be refactored 200 times (O(J³) each).
//! Here the design, the weights and λ stay fixed, so the single Cholesky
//! factor of the fit is reused: a replicate costs O(reviews + J²) and all
//! replicates are solved as one multi-right-hand-side triangular solve.
//!
//! Residuals are standardised by the judge's noise and by `sqrt(1 - h)` (the
//! hat-matrix diagonal; fitted residuals are shrunk by the fit, so without
//! this correction intervals come out too narrow), pooled, centred and
//! resampled with replacement, then rescaled by the judge's noise:
//! `y* = ŷ + σ_j e*`.

use faer::Mat;

use super::fit::ModelFit;
use super::model::Design;
use super::posterior::spread;
use super::progress::{Progress, Stage};
use super::rng::{Rng, STREAM_BOOTSTRAP};

/// Competition ranks (1 = largest; values within a tiny relative tolerance
/// of the best value of their group share its rank).
pub(crate) fn competition_ranks(values: &[f64]) -> Vec<u32> {
    let mut idx: Vec<usize> = (0..values.len()).collect();
    idx.sort_by(|&a, &b| values[b].total_cmp(&values[a]).then(a.cmp(&b)));
    let mut ranks = vec![0u32; values.len()];
    let mut group_value = f64::INFINITY;
    let mut group_rank = 0u32;
    for (pos, &i) in idx.iter().enumerate() {
        let v = values[i];
        if pos == 0 || group_value - v > 1e-12 * (1.0 + group_value.abs()) {
            group_value = v;
            group_rank = u32::try_from(pos + 1).unwrap_or(u32::MAX);
        }
        ranks[i] = group_rank;
    }
    ranks
}

/// Nearest-rank quantile of sorted data (`q` in 0..=1).
pub(crate) fn nearest_rank(sorted: &[u32], q: f64) -> u32 {
    if sorted.is_empty() {
        return 0;
    }
    let n = sorted.len();
    let k = ((q * n as f64).ceil() as usize).clamp(1, n);
    sorted[k - 1]
}

/// Central coverage of the intervals.
pub(crate) const INTERVAL_LEVEL: f64 = 0.90;

/// `sqrt(1 - mean(var q̂_p) / var(q̂))`, clamped to [0, 1] (1 when there is
/// no spread to speak of), from [`spread`].
pub(crate) fn dispersion_shrink(fit: &ModelFit) -> f64 {
    let s = spread(fit);
    if fit.q.len() < 2 || s.estimates <= 1e-18 {
        return 1.0;
    }
    (1.0 - s.noise / s.estimates).clamp(0.0, 1.0).sqrt()
}

/// `(low, high)` rank interval per project of the design, or `None` when
/// `replicates == 0`.
pub(crate) fn rank_intervals(
    d: &Design,
    fit: &ModelFit,
    replicates: u32,
    seed: u64,
    progress: &Progress,
) -> Option<Vec<(u32, u32)>> {
    if replicates == 0 || d.np == 0 {
        return None;
    }
    let nb = replicates as usize;
    let n = d.len();
    let sd: Vec<f64> = (0..n).map(|i| fit.sig2[d.j[i]].max(0.0).sqrt()).collect();
    // Standardised, leverage-corrected residual pool.
    let mut pool: Vec<f64> = (0..n)
        .filter(|&i| 1.0 - fit.lev[i] > 1e-6 && sd[i] > 0.0)
        .map(|i| fit.resid[i] / (sd[i] * (1.0 - fit.lev[i]).sqrt()))
        .collect();
    if !pool.is_empty() {
        let mean = pool.iter().sum::<f64>() / pool.len() as f64;
        for e in &mut pool {
            *e -= mean;
        }
    }
    // The bootstrap world's qualities: the estimates shrunk towards their
    // mean so that their spread matches the estimated spread of the true
    // qualities (var q̂ = var q + mean estimation variance). Using q̂ itself
    // would make projects look further apart than they are, and the rank
    // intervals too narrow. Shrinking is monotone, so ranks are unchanged.
    let shrink = dispersion_shrink(fit);
    let mean_q = fit.q.iter().sum::<f64>() / d.np as f64;
    let fitted: Vec<f64> = (0..n)
        .map(|i| mean_q + shrink * (fit.q[d.p[i]] - mean_q) + fit.b[d.j[i]])
        .collect();

    let wp = &fit.normal.wp;
    let mut rhs = Mat::<f64>::zeros(d.nj, nb);
    let mut pyp = Mat::<f64>::zeros(d.np, nb);
    let mut ystar = vec![0.0; n];
    for b in 0..nb {
        progress.step(Stage::Bootstrapping, b, 2 * nb);
        let mut rng = Rng::stream(seed, STREAM_BOOTSTRAP + b as u64);
        for p in 0..d.np {
            let range = d.start[p]..d.start[p + 1];
            let mut ty = 0.0;
            for i in range.clone() {
                let e = if pool.is_empty() {
                    0.0
                } else {
                    pool[rng.index(pool.len())]
                };
                ystar[i] = fitted[i] + sd[i] * e;
                ty += fit.w[i] * ystar[i];
            }
            pyp[(p, b)] = ty;
            if wp[p] > 0.0 {
                let mean = ty / wp[p];
                for i in range {
                    rhs[(d.j[i], b)] += fit.w[i] * (ystar[i] - mean);
                }
            }
        }
    }
    // Same S(λ) for every replicate: one factorisation, many right-hand sides.
    match &fit.chol {
        Some(c) => c.solve_in_place(&mut rhs),
        None => rhs.as_mut().fill(0.0),
    }

    let mut samples = vec![0u32; d.np * nb];
    let mut q = vec![0.0; d.np];
    for b in 0..nb {
        progress.step(Stage::Bootstrapping, nb + b, 2 * nb);
        for (p, qp) in q.iter_mut().enumerate() {
            if wp[p] <= 0.0 {
                *qp = 0.0;
                continue;
            }
            let mut cb = 0.0;
            for i in d.start[p]..d.start[p + 1] {
                cb += fit.w[i] * rhs[(d.j[i], b)];
            }
            *qp = (pyp[(p, b)] - cb) / wp[p];
        }
        for (p, r) in competition_ranks(&q).into_iter().enumerate() {
            samples[p * nb + b] = r;
        }
    }
    let tail = (1.0 - INTERVAL_LEVEL) / 2.0;
    Some(
        samples
            .chunks_mut(nb)
            .map(|s| {
                s.sort_unstable();
                (nearest_rank(s, tail), nearest_rank(s, 1.0 - tail))
            })
            .collect(),
    )
}
