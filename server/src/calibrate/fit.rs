//! Model selection and fitting: λ by cross-validation, optional per-judge
//! noise weights (iteratively reweighted, MacKay et al. 2017 style) and an
//! optional Huber down-weighting of individual reviews.

use faer::Mat;

use super::model::{self, Chol, Design, Engine, Normal};
use super::progress::{Progress, Stage};
use super::stats::{log_variance, random_effects};

/// Internal switches for the model variants that were benchmarked (see the
/// doc comment of the module root). Production uses [`ModelOptions::CHOSEN`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct ModelOptions {
    /// Weight reviews by `pooled σ² / σ_j²`.
    pub noise_weights: bool,
    /// Huber tuning constant on standardised residuals (None = plain LS).
    pub huber: Option<f64>,
    /// Reweighting iterations before and after the λ search.
    pub irls_iters: usize,
    /// Pseudo degrees of freedom of the pooled variance in each judge's
    /// variance estimate (shrinkage strength).
    pub prior_df: f64,
}

impl ModelOptions {
    #[cfg(test)]
    pub const PLAIN: ModelOptions = ModelOptions {
        noise_weights: false,
        huber: None,
        irls_iters: 0,
        prior_df: 4.0,
    };
    pub const NOISE: ModelOptions = ModelOptions {
        noise_weights: true,
        huber: None,
        irls_iters: 3,
        prior_df: 8.0,
    };
    pub const CHOSEN: ModelOptions = Self::NOISE;

    pub fn name(&self) -> String {
        let mut s = String::from("additive-ridge");
        if self.noise_weights {
            s.push_str(&format!("+noise-weights(df{})", self.prior_df));
        }
        if let Some(c) = self.huber {
            s.push_str(&format!("+huber({c})"));
        }
        s
    }

    fn reweights(&self) -> bool {
        (self.noise_weights || self.huber.is_some()) && self.irls_iters > 0
    }
}

pub(crate) struct ModelFit {
    pub lambda: f64,
    pub cv_error: Option<f64>,
    pub q: Vec<f64>,
    pub b: Vec<f64>,
    /// Final review weights.
    pub w: Vec<f64>,
    /// Residuals `y - q - b`.
    pub resid: Vec<f64>,
    /// Hat-matrix diagonal.
    pub lev: Vec<f64>,
    /// Posterior variance of each project quality.
    pub var_q: Vec<f64>,
    /// Shrunk residual variance per judge (0 for judges without reviews).
    pub sig2: Vec<f64>,
    /// Pooled residual variance.
    pub pooled: f64,
    /// Residual degrees of freedom `Σ (1 - h)`.
    pub resid_df: f64,
    pub normal: Normal,
    pub chol: Option<Chol>,
    /// Reweighting passes at the chosen λ, and the largest relative change of a review
    /// weight in the last of them (0 without reweighting).
    pub passes: u32,
    pub weight_change: f64,
}

/// Everything derived from one weighted solve at a fixed λ.
struct Pass {
    solved: model::Solved,
    resid: Vec<f64>,
    lev: Vec<f64>,
    var_factor: Vec<f64>,
    sig2: Vec<f64>,
    pooled: f64,
    resid_df: f64,
}

fn pass(d: &Design, w: &[f64], lambda: f64, prior_df: f64, engine: Engine) -> Pass {
    let solved = model::solve(d, w, lambda, engine);
    // Without a factorisation the offsets are 0 and S⁻¹ is taken as 0,
    // which makes the leverages those of per-project means.
    let sinv = match &solved.chol {
        Some(c) => c.inverse(),
        None => Mat::zeros(d.nj, d.nj),
    };
    let (lev, var_factor) = model::leverage(d, w, &solved.normal, &sinv);
    let resid: Vec<f64> = (0..d.len())
        .map(|i| d.y[i] - solved.q[d.p[i]] - solved.b[d.j[i]])
        .collect();
    let mut ss = vec![0.0; d.nj];
    let mut df = vec![0.0; d.nj];
    for i in 0..d.len() {
        ss[d.j[i]] += resid[i] * resid[i];
        df[d.j[i]] += 1.0 - lev[i];
    }
    let resid_df: f64 = df.iter().sum();
    let pooled = if resid_df > 1e-9 {
        ss.iter().sum::<f64>() / resid_df
    } else {
        0.0
    };
    // Conjugate-style shrinkage of each judge's variance towards the pooled
    // one: judges with few reviews get essentially the pooled noise. From
    // engine v3 on, towards the typical judge's instead: one wild judge on a
    // small panel inflates the pooled variance of everyone (one random scorer
    // in twelve judges makes it ~1.7x an honest judge's) and with it every
    // interval.
    let target = if engine.posterior() {
        typical_variance(&ss, &df).unwrap_or(pooled)
    } else {
        pooled
    };
    let sig2 = (0..d.nj)
        .map(|j| (prior_df * target + ss[j]) / (prior_df + df[j]))
        .collect();
    Pass {
        solved,
        resid,
        lev,
        var_factor,
        sig2,
        pooled,
        resid_df,
    }
}

/// The mean variance of the honest population of judges: judges' log-variances modelled
/// as normal around a centre with a spread beyond their sampling noise
/// ([`random_effects`], which sets wild judges aside), `exp(m + ω²/2)`.
fn typical_variance(ss: &[f64], df: &[f64]) -> Option<f64> {
    let obs: Vec<(f64, f64)> = ss
        .iter()
        .zip(df)
        .filter_map(|(&s, &d)| log_variance(s, d))
        .collect();
    let (m, t2) = random_effects(&obs)?;
    let v = (m + t2 / 2.0).exp();
    (v.is_finite() && v > 0.0).then_some(v)
}

fn update_weights(d: &Design, p: &Pass, opts: &ModelOptions) -> Vec<f64> {
    // A perfect fit (e.g. a single review, or all scores identical) leaves
    // nothing to estimate noise from: keep unit weights.
    if p.pooled <= 1e-12 {
        return vec![1.0; d.len()];
    }
    (0..d.len())
        .map(|i| {
            let s2 = p.sig2[d.j[i]].max(1e-12);
            let mut w = if opts.noise_weights {
                (p.pooled / s2).clamp(1e-3, 1e3)
            } else {
                1.0
            };
            if let Some(c) = opts.huber {
                let u = p.resid[i] / (s2 * (1.0 - p.lev[i]).max(1e-6)).sqrt();
                if u.abs() > c {
                    w *= c / u.abs();
                }
            }
            w
        })
        .collect()
}

/// Fit the model on `d` with λ chosen from `grid` (sorted, positive,
/// non-empty) by `folds`-fold cross-validation.
pub(crate) fn fit_model(
    d: &Design,
    grid: &[f64],
    folds: usize,
    seed: u64,
    opts: &ModelOptions,
    engine: Engine,
    progress: &Progress,
) -> ModelFit {
    // Pilot λ: the middle of the grid, used while the weights are settling.
    let pilot = grid.get(grid.len() / 2).copied().unwrap_or(1.0);
    let mut w = vec![1.0; d.len()];
    if opts.reweights() {
        for i in 0..opts.irls_iters {
            progress.step(Stage::Weighting, i, opts.irls_iters);
            let p = pass(d, &w, pilot, opts.prior_df, engine);
            w = update_weights(d, &p, opts);
        }
    }
    let (lambda, cv_error) =
        model::cross_validate(d, &w, grid, folds, seed, pilot, engine, progress);
    progress.step(Stage::Fitting, 0, opts.irls_iters + 1);
    let mut p = pass(d, &w, lambda, opts.prior_df, engine);
    let mut weight_change = 0.0;
    if opts.reweights() {
        for i in 0..opts.irls_iters {
            progress.step(Stage::Fitting, i + 1, opts.irls_iters + 1);
            let next = update_weights(d, &p, opts);
            weight_change = w
                .iter()
                .zip(&next)
                .map(|(a, b)| (b - a).abs() / a.abs().max(1e-12))
                .fold(0.0, f64::max);
            w = next;
            p = pass(d, &w, lambda, opts.prior_df, engine);
        }
    }
    let var_q = p.var_factor.iter().map(|v| v * p.pooled).collect();
    ModelFit {
        lambda,
        cv_error,
        q: p.solved.q,
        b: p.solved.b,
        w,
        resid: p.resid,
        lev: p.lev,
        var_q,
        sig2: p.sig2,
        pooled: p.pooled,
        resid_df: p.resid_df,
        normal: p.solved.normal,
        chol: p.solved.chol,
        passes: if opts.reweights() {
            opts.irls_iters as u32
        } else {
            0
        },
        weight_change,
    }
}
