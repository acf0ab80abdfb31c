//! Small statistics shared by the engine: the between-judge spread of a judge statistic,
//! and the log of a chi-squared variance estimate.

use statrs::function::gamma::digamma;

/// Trigamma function `ψ₁(x)` for `x > 0`: recurrence up to 6, then the asymptotic series.
pub(crate) fn trigamma(mut x: f64) -> f64 {
    let mut acc = 0.0;
    while x < 6.0 {
        acc += 1.0 / (x * x);
        x += 1.0;
    }
    let (r, r2) = (1.0 / x, 1.0 / (x * x));
    acc + r + r2 / 2.0 + r * r2 * (1.0 / 6.0 - r2 * (1.0 / 30.0 - r2 * (1.0 / 42.0 - r2 / 30.0)))
}

/// Centre `m` and between-judge variance `ω²` of a judge statistic observed as
/// `x_j ~ N(m, ω² + v_j)` with known sampling variances `v_j`: restricted maximum
/// likelihood over a grid of `ω²`, then once more without the judges more than 3 sd from
/// that fit (so that the bad judges being looked for do not widen the honest population).
pub(crate) fn random_effects(obs: &[(f64, f64)]) -> Option<(f64, f64)> {
    let fit = |obs: &[(f64, f64)]| -> Option<(f64, f64)> {
        if obs.len() < 2 {
            return None;
        }
        let n = obs.len() as f64;
        let mean = obs.iter().map(|o| o.0).sum::<f64>() / n;
        let var = obs.iter().map(|o| (o.0 - mean).powi(2)).sum::<f64>() / (n - 1.0);
        let centre = |t2: f64| {
            let (mut sw, mut swx) = (0.0, 0.0);
            for &(x, v) in obs {
                let w = 1.0 / (t2 + v).max(1e-300);
                sw += w;
                swx += w * x;
            }
            (swx / sw, sw)
        };
        let reml = |t2: f64| {
            let (m, sw) = centre(t2);
            let mut ll = -0.5 * sw.ln();
            for &(x, v) in obs {
                let s = (t2 + v).max(1e-300);
                ll -= 0.5 * (s.ln() + (x - m).powi(2) / s);
            }
            ll
        };
        const GRID: usize = 200;
        let top = 2.0 * var.max(1e-12);
        let best = (0..=GRID)
            .map(|k| top * (k as f64 / GRID as f64).powi(2))
            .map(|t2| (t2, reml(t2)))
            .max_by(|a, b| a.1.total_cmp(&b.1))?
            .0;
        Some((centre(best).0, best))
    };
    let (m, t2) = fit(obs)?;
    let kept: Vec<(f64, f64)> = obs
        .iter()
        .copied()
        .filter(|&(x, v)| (x - m).abs() <= 3.0 * (t2 + v).sqrt())
        .collect();
    fit(&kept).or(Some((m, t2)))
}

/// `ln(ss / df)` corrected for the bias of the log of a chi-squared variance estimate on
/// `df` degrees of freedom, with its sampling variance `ψ₁(df/2)`: the observation of one
/// judge's log-variance that [`random_effects`] takes. `None` without a positive estimate.
pub(crate) fn log_variance(ss_over_scale: f64, df: f64) -> Option<(f64, f64)> {
    if !(ss_over_scale > 0.0 && df >= 1.0) {
        return None;
    }
    let half = df / 2.0;
    Some((
        (ss_over_scale / df).ln() - (digamma(half) - half.ln()),
        trigamma(half),
    ))
}

/// The logistic function 1 / (1 + e^-x), without overflow at either end (the comparison
/// likelihood of engine v6 and the pairing estimate).
pub(crate) fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trigamma_matches_known_values() {
        // ψ₁(1) = π²/6, ψ₁(1/2) = π²/2, ψ₁(x+1) = ψ₁(x) − 1/x².
        let pi2 = std::f64::consts::PI.powi(2);
        assert!((trigamma(1.0) - pi2 / 6.0).abs() < 1e-9);
        assert!((trigamma(0.5) - pi2 / 2.0).abs() < 1e-9);
        assert!((trigamma(7.5) - (trigamma(6.5) - 1.0 / 42.25)).abs() < 1e-9);
    }

    #[test]
    fn random_effects_recovers_a_spread_beyond_sampling() {
        // x_j = m + ω z_j + noise of variance v: ω² = 0.25 around m = 1.
        let mut rng = super::super::rng::Rng::stream(7, 0);
        let obs: Vec<(f64, f64)> = (0..400)
            .map(|_| (1.0 + 0.5 * rng.normal() + 0.3 * rng.normal(), 0.09))
            .collect();
        let (m, t2) = random_effects(&obs).expect("enough judges");
        assert!((m - 1.0).abs() < 0.1, "{m}");
        assert!((t2 - 0.25).abs() < 0.08, "{t2}");
    }
}
