//! Which comparison teaches the ranking most (issue 26): a quick estimate of every project
//! from the comparisons made so far, and how much one more comparison would tell. The
//! judges' routes (`crate::domain::judging::route`) use it to choose the next project among
//! the few ahead of the judge; `pairing_study.rs` measures that against walking the floor
//! table by table and against random pairs.
//!
//! **Estimate.** Bradley–Terry with a `N(0, PRIOR_VARIANCE)` prior on the log-odds scale,
//! every judge taken at their word (no reliabilities: the published ranking is v6's,
//! `joint.rs`; this only chooses pairs). [`SWEEPS`] Gauss–Seidel sweeps over the
//! projects, each a Newton step on one project's quality with the curvature bounded by
//! `1/PRIOR_VARIANCE + n_p/4` (`n_p` its comparisons; a logistic term's curvature is at most
//! ¼), so that every step lowers the objective. A project's variance is the inverse of its
//! prior precision plus its comparisons' Fisher information at the estimate (the diagonal
//! only). Cost: `O(SWEEPS × comparisons)`, no matrix.
//!
//! **Information.** Comparing `a` and `b` is a coin with `p = σ(μ_a − μ_b)` (moderated by
//! their variance); what it tells about their difference is its Fisher information `p(1 −
//! p)` times the difference's variance `v_a + v_b` (the mutual information of a Gaussian
//! approximation, `½ ln(1 + p(1 − p)(v_a + v_b))`, grows with it). It is largest for two
//! projects that look close and are little known: a pair the others have compared again
//! and again, or a clear mismatch, tells little.

use super::stats::sigmoid;
use std::f64::consts::PI;

/// Prior variance of a quality on the log-odds scale: a project one prior sd better than
/// another wins about 4 comparisons in 5.
pub const PRIOR_VARIANCE: f64 = 2.0;
/// Gauss–Seidel sweeps of [`Estimate::fit`].
pub const SWEEPS: usize = 30;

/// Every project's quality (log-odds scale) and its variance, from comparisons.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    pub mean: Vec<f64>,
    pub var: Vec<f64>,
}

impl Estimate {
    /// The estimate of projects `0..n` from `comparisons` (`(better, worse)`; a pair out of
    /// range or of one project twice is ignored). Deterministic: the same comparisons in the
    /// same order give the same estimate.
    pub fn fit(n: usize, comparisons: &[(usize, usize)]) -> Estimate {
        // Each project's opponents, with +1 where it won and −1 where it lost.
        let mut games: Vec<Vec<(usize, f64)>> = vec![Vec::new(); n];
        for &(b, w) in comparisons {
            if b < n && w < n && b != w {
                games[b].push((w, 1.0));
                games[w].push((b, -1.0));
            }
        }
        let mut mean = vec![0.0; n];
        for _ in 0..SWEEPS {
            for p in 0..n {
                if games[p].is_empty() {
                    continue;
                }
                // Gradient of q²/(2s²) − Σ ln σ(±(q_p − q_o)) in q_p.
                let mut g = mean[p] / PRIOR_VARIANCE;
                for &(o, won) in &games[p] {
                    g -= won * sigmoid(-won * (mean[p] - mean[o]));
                }
                mean[p] -= g / (1.0 / PRIOR_VARIANCE + games[p].len() as f64 / 4.0);
            }
        }
        let var = (0..n)
            .map(|p| {
                let information: f64 = games[p]
                    .iter()
                    .map(|&(o, _)| {
                        let s = sigmoid(mean[p] - mean[o]);
                        s * (1.0 - s)
                    })
                    .sum();
                1.0 / (1.0 / PRIOR_VARIANCE + information)
            })
            .collect();
        Estimate { mean, var }
    }

    /// What comparing `a` and `b` would tell about their difference (see the module doc).
    pub fn information(&self, a: usize, b: usize) -> f64 {
        let v = self.var[a] + self.var[b];
        let p = sigmoid((self.mean[a] - self.mean[b]) / (1.0 + PI * v / 8.0).sqrt());
        p * (1.0 - p) * v
    }

    /// The candidate whose comparison with `previous` tells most; the first of equals.
    pub fn most_informative(&self, previous: usize, candidates: &[usize]) -> Option<usize> {
        let mut best: Option<(usize, f64)> = None;
        for &c in candidates {
            let i = self.information(previous, c);
            if best.is_none_or(|(_, b)| i > b) {
                best = Some((c, i));
            }
        }
        best.map(|(c, _)| c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn winners_rank_above_losers_and_the_compared_are_better_known() {
        // 0 beat 1 twice, 1 beat 2 twice; 3 was never compared.
        let e = Estimate::fit(4, &[(0, 1), (0, 1), (1, 2), (1, 2)]);
        assert!(e.mean[0] > e.mean[1] && e.mean[1] > e.mean[2], "{e:?}");
        assert_eq!(e.mean[3], 0.0);
        assert_eq!(e.var[3], PRIOR_VARIANCE);
        assert!(e.var[1] < e.var[0] && e.var[0] < PRIOR_VARIANCE, "{e:?}");
    }

    #[test]
    fn the_estimate_is_the_maximum_of_the_posterior() {
        let cmps = [(0, 1), (1, 2), (2, 0), (0, 2), (3, 1), (0, 3)];
        let e = Estimate::fit(4, &cmps);
        // The gradient of the log-posterior vanishes at the estimate.
        for p in 0..4 {
            let mut g = -e.mean[p] / PRIOR_VARIANCE;
            for &(b, w) in &cmps {
                let s = sigmoid(-(e.mean[b] - e.mean[w]));
                if b == p {
                    g += s;
                } else if w == p {
                    g -= s;
                }
            }
            assert!(g.abs() < 1e-9, "project {p}: gradient {g}");
        }
    }

    #[test]
    fn a_close_little_known_pair_tells_more_than_a_mismatch_or_a_pair_compared_often() {
        // 0 and 1 compared six times (3–3); 2 beat 3 five times; 4 and 5 unknown.
        let mut cmps = vec![(0, 1), (1, 0), (0, 1), (1, 0), (0, 1), (1, 0)];
        cmps.extend([(2, 3); 5]);
        let e = Estimate::fit(6, &cmps);
        assert!(e.information(4, 5) > e.information(0, 1));
        assert!(e.information(0, 4) > e.information(2, 3));
        assert_eq!(e.most_informative(0, &[1, 2, 3, 4]), Some(4));
        // Equals: the first.
        assert_eq!(e.most_informative(2, &[5, 4]), Some(5));
        assert_eq!(e.most_informative(0, &[]), None);
    }
}
