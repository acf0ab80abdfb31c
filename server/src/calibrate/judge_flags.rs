//! Judge flags of engine `verdict-calibrate/3`: tests with a null distribution, flagged at
//! a controlled false-discovery rate.
//!
//! An honest judge scores `y = q_p + b_j + e` with its own noise, and honest judges differ
//! in how noisy they are and how widely they spread their scores. Two ways to be unlike
//! that, two tests, each with the *honest* judge as its null hypothesis:
//!
//! - **Agreement.** The slope of the judge's scores on the consensus of the *other* judges
//!   of the same projects (the leave-this-review-out quality). An honest judge's slope is
//!   near the panel's typical slope; a judge who scores at random has slope ≈ 0 and a
//!   reversed one < 0. `z = (ŝ − s̄) / sqrt(se² + ω²)` with `se²` the slope's sampling
//!   variance from the judge's noise and the consensus's, and `s̄` and `ω²` the panel's
//!   typical slope and the spread of honest slopes beyond sampling
//!   ([`random_effects`] over all judges); lower-tail p-value from the standard normal.
//! - **Noise.** `X = Σ r² / (1 − h) / σ̄²` over the judge's leverage-corrected residuals.
//!   For one honest judge `X = g · χ²_n`; `log g` varies between honest judges as
//!   `N(m, ω_g²)`, with `m` and `ω_g²` fitted to all judges' bias-corrected `log(X/n)`,
//!   whose own sampling variance is `ψ₁(n/2)` ([`random_effects`], [`log_variance`]).
//!   Upper-tail p-value of the mixture: `∫ P(χ²_n > X/g) dN(log g)`.
//!
//! The two p-values are combined by Fisher's method (`−2 Σ ln p ~ χ²₄`; under the null the
//! slope and the residual variance are independent), and the Benjamini–Hochberg procedure
//! flags judges at false-discovery rate [`FALSE_DISCOVERY_RATE`]: with no bad judge on the
//! panel, the chance of any flag at all is at most that rate (as far as the null model
//! holds: measured, at most 2 honest judges per 1,000 flagged on every panel shape of
//! `coverage.rs`).
//!
//! **Constant.** A judge whose usable scores are all equal is flagged `constant` only when
//! an honest judge of the same projects would give `n` equal scores with probability below
//! [`CONSTANT_ALPHA`]: at most `(Δ / (s √(2π)))ⁿ · exp(−Σ (c − c̄)² / 2s²)` with `Δ` the
//! panel's smallest gap between two distinct scores (the rubric's step), `s` the pooled
//! noise and `c` the projects' consensus. Four equal totals on four similar projects are
//! not evidence; ten on projects the others tell apart are.

use statrs::distribution::{ChiSquared, ContinuousCDF, Normal};

use super::diagnostics::{MainFit, consensus};
use super::stats::{log_variance, random_effects};

/// False-discovery rate at which judges are flagged `discordant`.
pub(crate) const FALSE_DISCOVERY_RATE: f64 = 0.02;
/// Probability below which equal scores are too improbable for an honest judge.
pub(crate) const CONSTANT_ALPHA: f64 = 1e-3;
/// Fewest reviews with a consensus for the agreement test.
const MIN_PAIRS: usize = 3;

/// Slope of the judge's scores on the consensus and its sampling variance.
fn agreement(m: &MainFit, lj: usize, reviews: &[usize]) -> Option<(f64, f64)> {
    let pairs: Vec<(f64, f64, f64)> = reviews
        .iter()
        .filter_map(|&i| consensus(m, i).map(|(c, v)| (c, m.design.y[i], v)))
        .collect();
    if pairs.len() < MIN_PAIRS {
        return None;
    }
    let n = pairs.len() as f64;
    let mx = pairs.iter().map(|p| p.0).sum::<f64>() / n;
    let my = pairs.iter().map(|p| p.1).sum::<f64>() / n;
    let mv = pairs.iter().map(|p| p.2).sum::<f64>() / n;
    let sxx: f64 = pairs.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = pairs.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    if sxx <= 1e-12 {
        return None;
    }
    // Residual variance around the line: the judge's noise and the consensus's.
    let var = m.fit.sig2[lj] + mv * m.fit.pooled;
    Some((sxy / sxx, var / sxx))
}

/// `X = Σ r² / (1 − h) / σ̄²` and its degrees of freedom.
fn noise(m: &MainFit, reviews: &[usize]) -> Option<(f64, usize)> {
    let f = m.fit;
    let used: Vec<usize> = reviews
        .iter()
        .copied()
        .filter(|&i| 1.0 - f.lev[i] > 1e-6)
        .collect();
    if used.len() < 2 || f.pooled <= 0.0 {
        return None;
    }
    let x = used
        .iter()
        .map(|&i| f.resid[i] * f.resid[i] / (1.0 - f.lev[i]))
        .sum::<f64>()
        / f.pooled;
    Some((x, used.len()))
}

/// Upper-tail probability of `X` when `X = g · χ²_n` and `ln g ~ N(centre, spread²)`.
fn noise_p(x: f64, n: usize, centre: f64, spread: f64) -> f64 {
    let Ok(chi) = ChiSquared::new(n as f64) else {
        return 1.0;
    };
    if spread <= 1e-9 {
        return chi.sf(x / centre.exp());
    }
    // Midpoint rule on ±6 sd: plenty for a smooth integrand.
    const STEPS: usize = 96;
    let h = 12.0 / STEPS as f64;
    let (mut total, mut weight) = (0.0, 0.0);
    for s in 0..STEPS {
        let t = -6.0 + (s as f64 + 0.5) * h;
        let phi = (-0.5 * t * t).exp();
        total += phi * chi.sf(x / (centre + spread * t).exp());
        weight += phi;
    }
    total / weight
}

/// Per local judge of the fit: `true` when flagged `discordant`. `by_judge[lj]` lists the
/// judge's reviews; judges with `tested[lj] == false` are neither tested nor counted.
pub(crate) fn discordant(m: &MainFit, by_judge: &[Vec<usize>], tested: &[bool]) -> Vec<bool> {
    let p = discordant_p_values(m, by_judge, tested);
    let nj = by_judge.len();

    // Benjamini–Hochberg over the judges that were tested.
    let mut order: Vec<(f64, usize)> = p
        .iter()
        .enumerate()
        .filter_map(|(lj, p)| p.map(|p| (p, lj)))
        .collect();
    order.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let tests = order.len() as f64;
    let cut = order
        .iter()
        .enumerate()
        .filter(|(k, (p, _))| *p <= (*k as f64 + 1.0) / tests * FALSE_DISCOVERY_RATE)
        .map(|(k, _)| k + 1)
        .max()
        .unwrap_or(0);
    let mut flagged = vec![false; nj];
    for &(_, lj) in &order[..cut] {
        flagged[lj] = true;
    }
    flagged
}

/// Per local judge of the fit: the p-value of the agreement and noise tests combined
/// (`None` when not tested), before any false-discovery control.
pub(crate) fn discordant_p_values(
    m: &MainFit,
    by_judge: &[Vec<usize>],
    tested: &[bool],
) -> Vec<Option<f64>> {
    let nj = by_judge.len();
    let slopes: Vec<Option<(f64, f64)>> = (0..nj)
        .map(|lj| {
            tested[lj]
                .then(|| agreement(m, lj, &by_judge[lj]))
                .flatten()
        })
        .collect();
    let noises: Vec<Option<(f64, usize)>> = (0..nj)
        .map(|lj| tested[lj].then(|| noise(m, &by_judge[lj])).flatten())
        .collect();

    // The honest population, estimated from everyone.
    let slope_obs: Vec<(f64, f64)> = slopes.iter().flatten().copied().collect();
    let slope_null = random_effects(&slope_obs);
    let noise_obs: Vec<(f64, f64)> = noises
        .iter()
        .flatten()
        .filter_map(|&(x, n)| log_variance(x, n as f64))
        .collect();
    let noise_null = random_effects(&noise_obs).map(|(m, t2)| (m, t2.sqrt()));

    let std_normal = Normal::standard();
    let fisher = ChiSquared::new(4.0).ok();
    (0..nj)
        .map(|lj| {
            let pa = slopes[lj].zip(slope_null).map(|((s, se2), (c, omega2))| {
                let sd = (se2 + omega2).sqrt();
                if sd > 0.0 {
                    std_normal.cdf((s - c) / sd)
                } else {
                    0.5
                }
            });
            let pn = noises[lj]
                .zip(noise_null)
                .map(|((x, n), (c, spread))| noise_p(x, n, c, spread));
            match (pa, pn) {
                (Some(a), Some(b)) => {
                    let stat = -2.0 * (a.max(1e-300).ln() + b.max(1e-300).ln());
                    fisher.as_ref().map(|f| f.sf(stat))
                }
                (a, b) => a.or(b),
            }
        })
        .collect()
}

/// Whether `n` equal scores by this judge are too improbable for an honest judge
/// (see the module doc). `step` is the panel's smallest gap between distinct scores.
pub(crate) fn improbably_constant(m: &MainFit, reviews: &[usize], step: f64) -> bool {
    let f = m.fit;
    let s2 = f.pooled;
    if s2 <= 0.0 || reviews.is_empty() {
        return true;
    }
    let c: Vec<f64> = reviews
        .iter()
        .map(|&i| consensus(m, i).map_or(f.q[m.design.p[i]], |x| x.0))
        .collect();
    let n = c.len() as f64;
    let mean = c.iter().sum::<f64>() / n;
    let spread: f64 = c.iter().map(|x| (x - mean).powi(2)).sum();
    let bin = (step / (s2.sqrt() * std::f64::consts::TAU.sqrt())).min(1.0);
    n * bin.ln() - spread / (2.0 * s2) < CONSTANT_ALPHA.ln()
}

/// Smallest positive gap between two distinct scores (1 if there are fewer than two).
pub(crate) fn score_step(scores: impl Iterator<Item = f64>) -> f64 {
    let mut v: Vec<f64> = scores.collect();
    v.sort_by(f64::total_cmp);
    v.dedup();
    v.windows(2)
        .map(|w| w[1] - w[0])
        .filter(|g| *g > 1e-12)
        .min_by(f64::total_cmp)
        .unwrap_or(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_noise_mixture_reduces_to_chi_squared_without_spread() {
        let chi = ChiSquared::new(5.0).unwrap();
        assert!((noise_p(9.0, 5, 0.0, 0.0) - chi.sf(9.0)).abs() < 1e-15);
        // Spread makes a large X less surprising.
        assert!(noise_p(20.0, 5, 0.0, 0.5) > chi.sf(20.0));
    }
}
