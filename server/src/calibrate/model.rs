//! The additive ridge model `y = q_project + b_judge + e` and its solver.
//!
//! Weighted objective (weights `w` are 1 in the plain model and
//! `pooled σ² / σ_j²` with noise weighting):
//!
//! ```text
//!   min  Σ_r w_r (y_r - q_p(r) - b_j(r))²  +  λ Σ_j b_j²
//! ```
//!
//! Normal equations, with `D_p = diag(W_p)` (total weight per project),
//! `C[p][j]` the weight of reviews of `p` by `j`, `D_j = diag(W_j)`:
//!
//! ```text
//!   [ D_p   C       ] [q]   [Py]
//!   [ Cᵀ    D_j + λI] [b] = [Jy]
//! ```
//!
//! `D_p` is diagonal, so `q = D_p⁻¹ (Py - C b)` and `b` solves the
//! judge-sized Schur complement `S b = Jy - Cᵀ D_p⁻¹ Py` with
//! `S = D_j + λI - Cᵀ D_p⁻¹ C`. `D_j - Cᵀ D_p⁻¹ C` is a weighted graph
//! Laplacian (positive semi-definite), so `S ⪰ λI` is SPD and Cholesky
//! applies. Building `S` costs `O(Σ_p k_p²)`, factoring it `O(J³/3)`, so the
//! number of projects only enters linearly.

use nalgebra::{Cholesky, DMatrix, DVector, Dyn};

use super::rng::{Rng, STREAM_FOLDS};

/// Reviews of the ranked component in local index space, grouped by project.
#[derive(Clone, Debug)]
pub(crate) struct Design {
    pub np: usize,
    pub nj: usize,
    pub p: Vec<usize>,
    pub j: Vec<usize>,
    pub y: Vec<f64>,
    /// `start[p]..start[p + 1]` are the reviews of project `p`.
    pub start: Vec<usize>,
}

impl Design {
    /// `reviews` must be sorted by project; indices must be `< np`, `< nj`.
    pub fn new(np: usize, nj: usize, reviews: &[(usize, usize, f64)]) -> Self {
        let mut start = vec![0usize; np + 1];
        for &(p, _, _) in reviews {
            start[p + 1] += 1;
        }
        for p in 0..np {
            start[p + 1] += start[p];
        }
        Design {
            np,
            nj,
            p: reviews.iter().map(|r| r.0).collect(),
            j: reviews.iter().map(|r| r.1).collect(),
            y: reviews.iter().map(|r| r.2).collect(),
            start,
        }
    }

    pub fn len(&self) -> usize {
        self.y.len()
    }
}

pub(crate) type Chol = Cholesky<f64, Dyn>;

/// The λ-independent parts of the reduced normal equations.
pub(crate) struct Normal {
    /// `D_j - Cᵀ D_p⁻¹ C` (λ not yet added to the diagonal).
    pub s0: DMatrix<f64>,
    /// `Jy - Cᵀ D_p⁻¹ Py`.
    pub rhs: DVector<f64>,
    /// Total weight per project (0 when it has no (training) review).
    pub wp: Vec<f64>,
    /// Weighted score sum per project.
    pub pyp: Vec<f64>,
}

impl Normal {
    /// Assemble with weights `w`, using only reviews with `mask[i] == true`
    /// (all when `mask` is `None`).
    pub fn build(d: &Design, w: &[f64], y: &[f64], mask: Option<&[bool]>) -> Self {
        let use_i = |i: usize| mask.is_none_or(|m| m[i]);
        let mut s0 = DMatrix::<f64>::zeros(d.nj, d.nj);
        let mut rhs = DVector::<f64>::zeros(d.nj);
        let mut wp = vec![0.0; d.np];
        let mut pyp = vec![0.0; d.np];
        for p in 0..d.np {
            let range = d.start[p]..d.start[p + 1];
            let (mut tw, mut ty) = (0.0, 0.0);
            for i in range.clone().filter(|&i| use_i(i)) {
                tw += w[i];
                ty += w[i] * y[i];
            }
            wp[p] = tw;
            pyp[p] = ty;
            if tw <= 0.0 {
                continue;
            }
            let mean = ty / tw;
            for a in range.clone().filter(|&i| use_i(i)) {
                let (ja, wa) = (d.j[a], w[a]);
                s0[(ja, ja)] += wa;
                rhs[ja] += wa * (y[a] - mean);
                let fa = wa / tw;
                for b in range.clone().filter(|&i| use_i(i)) {
                    s0[(ja, d.j[b])] -= fa * w[b];
                }
            }
        }
        Normal { s0, rhs, wp, pyp }
    }

    /// Cholesky factor of `S(λ) = s0 + λI`. Returns `None` only if the
    /// matrix is numerically not positive definite (cannot happen for
    /// λ > 0 and finite weights, but the caller degrades gracefully).
    pub fn factor(&self, lambda: f64) -> Option<Chol> {
        let mut s = self.s0.clone();
        for k in 0..s.nrows() {
            s[(k, k)] += lambda;
        }
        Cholesky::new(s)
    }

    /// Judge offsets for a factorisation of `S(λ)`.
    pub fn offsets(&self, chol: &Chol) -> Vec<f64> {
        chol.solve(&self.rhs).iter().copied().collect()
    }

    /// Back-substitute project qualities `q = D_p⁻¹ (Py - C b)`; projects
    /// without (training) reviews get `NaN`-free 0 and must not be used.
    pub fn qualities(&self, d: &Design, w: &[f64], mask: Option<&[bool]>, b: &[f64]) -> Vec<f64> {
        let mut q = vec![0.0; d.np];
        for (p, qp) in q.iter_mut().enumerate() {
            if self.wp[p] <= 0.0 {
                continue;
            }
            let mut cb = 0.0;
            for i in d.start[p]..d.start[p + 1] {
                if mask.is_none_or(|m| m[i]) {
                    cb += w[i] * b[d.j[i]];
                }
            }
            *qp = (self.pyp[p] - cb) / self.wp[p];
        }
        q
    }
}

/// A fitted model at one λ with fixed weights.
pub(crate) struct Solved {
    pub q: Vec<f64>,
    pub b: Vec<f64>,
    pub normal: Normal,
    /// `None` if the factorisation failed; then `b = 0` (uncalibrated means).
    pub chol: Option<Chol>,
}

pub(crate) fn solve(d: &Design, w: &[f64], lambda: f64) -> Solved {
    let normal = Normal::build(d, w, &d.y, None);
    let chol = normal.factor(lambda);
    let b = match &chol {
        Some(c) => normal.offsets(c),
        None => vec![0.0; d.nj],
    };
    let q = normal.qualities(d, w, None, &b);
    Solved { q, b, normal, chol }
}

/// Cross-validated choice of λ over `grid` (sorted, positive). Returns the
/// best λ and its CV error (weighted mean squared prediction error of the
/// held-out reviews whose project kept at least one training review), or
/// `None` for the error when nothing could be predicted.
pub(crate) fn cross_validate(
    d: &Design,
    w: &[f64],
    grid: &[f64],
    folds: usize,
    seed: u64,
    fallback: f64,
) -> (f64, Option<f64>) {
    let n = d.len();
    let k = folds.clamp(2, 20).min(n);
    if k < 2 || grid.is_empty() {
        return (fallback, None);
    }
    // Seeded shuffle, then deal reviews round-robin into folds so fold sizes
    // differ by at most one.
    let mut order: Vec<usize> = (0..n).collect();
    Rng::stream(seed, STREAM_FOLDS).shuffle(&mut order);
    let mut fold = vec![0usize; n];
    for (t, &i) in order.iter().enumerate() {
        fold[i] = t % k;
    }
    let mut err = vec![0.0; grid.len()];
    let mut wsum = 0.0;
    let mut mask = vec![true; n];
    for f in 0..k {
        for i in 0..n {
            mask[i] = fold[i] != f;
        }
        let normal = Normal::build(d, w, &d.y, Some(&mask));
        let held: Vec<usize> = (0..n)
            .filter(|&i| !mask[i] && normal.wp[d.p[i]] > 0.0)
            .collect();
        wsum += held.iter().map(|&i| w[i]).sum::<f64>();
        for (g, &lambda) in grid.iter().enumerate() {
            let b = match normal.factor(lambda) {
                Some(c) => normal.offsets(&c),
                None => vec![0.0; d.nj],
            };
            let q = normal.qualities(d, w, Some(&mask), &b);
            for &i in &held {
                let e = d.y[i] - q[d.p[i]] - b[d.j[i]];
                err[g] += w[i] * e * e;
            }
        }
    }
    if wsum <= 0.0 {
        return (fallback, None);
    }
    let mut best = 0;
    for g in 1..grid.len() {
        if err[g] < err[best] {
            best = g;
        }
    }
    (grid[best], Some(err[best] / wsum))
}

/// Diagonal of the hat matrix and the posterior variance factor of each
/// project quality, from `S⁻¹`.
///
/// With `x_r = e_p + e_j` and `M` the full normal matrix,
/// `h_r = w_r x_rᵀ M⁻¹ x_r = w_r (1/W_p + (u_p - e_j)ᵀ S⁻¹ (u_p - e_j))`
/// where `u_p = Cᵀ D_p⁻¹ e_p` (entries `w_a / W_p` at the judges of `p`),
/// and `(M⁻¹)_pp = 1/W_p + u_pᵀ S⁻¹ u_p`.
pub(crate) fn leverage(
    d: &Design,
    w: &[f64],
    normal: &Normal,
    sinv: &DMatrix<f64>,
) -> (Vec<f64>, Vec<f64>) {
    let mut h = vec![0.0; d.len()];
    let mut vq = vec![0.0; d.np];
    // Per project, with c_a = w_a / W_p and v = S⁻¹ u_p (only needed at the
    // project's own judges): uᵀS⁻¹u = Σ_a c_a v_{j_a} and
    // (u - e_j)ᵀ S⁻¹ (u - e_j) = uᵀS⁻¹u - 2 v_j + S⁻¹_jj. O(k²) per project.
    let mut v: Vec<f64> = Vec::new();
    for (p, vqp) in vq.iter_mut().enumerate() {
        let tw = normal.wp[p];
        if tw <= 0.0 {
            continue;
        }
        let range = d.start[p]..d.start[p + 1];
        v.clear();
        v.extend(range.clone().map(|a| {
            range
                .clone()
                .map(|b| w[b] / tw * sinv[(d.j[a], d.j[b])])
                .sum::<f64>()
        }));
        let usu: f64 = range.clone().zip(&v).map(|(a, va)| w[a] / tw * va).sum();
        *vqp = 1.0 / tw + usu;
        for (i, vi) in range.zip(&v) {
            let ji = d.j[i];
            h[i] = (w[i] * (1.0 / tw + usu - 2.0 * vi + sinv[(ji, ji)])).clamp(0.0, 1.0);
        }
    }
    (h, vq)
}
