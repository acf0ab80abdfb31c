//! The solves against dense references: Schur complement, conjugate gradients, leverage.

use super::*;

/// Test-only naive solver: assemble the full (P + J) normal equations and
/// solve them densely with LU.
fn naive_solve(d: &Design, w: &[f64], lambda: f64) -> (Vec<f64>, Vec<f64>) {
    let n = d.np + d.nj;
    let mut m = DMatrix::<f64>::zeros(n, n);
    let mut rhs = DVector::<f64>::zeros(n);
    for (i, &wi) in w.iter().enumerate() {
        let (p, j) = (d.p[i], d.np + d.j[i]);
        for (a, b) in [(p, p), (p, j), (j, p), (j, j)] {
            m[(a, b)] += wi;
        }
        rhs[p] += wi * d.y[i];
        rhs[j] += wi * d.y[i];
    }
    for j in 0..d.nj {
        m[(d.np + j, d.np + j)] += lambda;
    }
    let x = m.lu().solve(&rhs).expect("naive system is regular");
    (
        x.rows(0, d.np).iter().copied().collect(),
        x.rows(d.np, d.nj).iter().copied().collect(),
    )
}

// 7. The Schur-complement solve equals the naive dense solve.
#[test]
fn schur_solve_matches_naive_dense_solve() {
    let mut rng = Rng::stream(17, 0);
    let (np, nj) = (15, 6);
    let mut revs = Vec::new();
    for p in 0..np {
        let mut js: Vec<usize> = (0..nj).collect();
        rng.shuffle(&mut js);
        for &j in js.iter().take(2 + p % 3) {
            revs.push((p, j, rng.unit()));
        }
    }
    revs.sort_by_key(|r| (r.0, r.1));
    let d = Design::new(np, nj, &revs);
    let w: Vec<f64> = (0..d.len()).map(|_| 0.2 + 2.0 * rng.unit()).collect();
    for engine in [Engine::V1, Engine::V2] {
        for lambda in [0.01, 0.3, 10.0] {
            let s = model::solve(&d, &w, lambda, engine);
            assert!(s.chol.is_some());
            let (q, b) = naive_solve(&d, &w, lambda);
            for (x, y) in s.q.iter().zip(&q).chain(s.b.iter().zip(&b)) {
                assert!(
                    (x - y).abs() < 1e-9,
                    "{engine:?} lambda {lambda}: {x} vs {y}"
                );
            }
        }
    }
}

// 7b. The cross-validation's iterative solve equals the factorisation.
#[test]
fn conjugate_gradients_match_cholesky() {
    let panel = Panel::generate(SynthParams::realistic(120, 30, 4, 9));
    let pid = |id: &str| id[1..].parse::<usize>().expect("synthetic id");
    let mut revs: Vec<(usize, usize, f64)> = panel
        .input
        .reviews
        .iter()
        .map(|r| (pid(&r.project), pid(&r.judge), r.score))
        .collect();
    revs.sort_by_key(|r| (r.0, r.1));
    let d = Design::new(120, 30, &revs);
    let mut rng = Rng::stream(3, 0);
    let w: Vec<f64> = (0..d.len()).map(|_| 0.2 + 2.0 * rng.unit()).collect();
    let mask: Vec<bool> = (0..d.len()).map(|_| rng.unit() < 0.8).collect();
    for mask in [None, Some(&mask[..])] {
        let normal = model::Normal::build(&d, &w, &d.y, mask);
        for lambda in [0.01, 0.3, 10.0] {
            let cg = normal.offsets_cg(&d, &w, mask, lambda).expect("converges");
            let chol = normal.factor(lambda, Engine::V2).expect("spd");
            for (x, y) in cg.iter().zip(normal.offsets(&chol)) {
                assert!((x - y).abs() < 1e-10, "lambda {lambda}: {x} vs {y}");
            }
        }
    }
}

#[test]
fn leverage_matches_dense_hat_matrix() {
    let mut rng = Rng::stream(23, 0);
    let (np, nj) = (8, 4);
    let mut revs = Vec::new();
    for p in 0..np {
        for j in 0..nj {
            if rng.unit() < 0.6 || j == p % nj {
                revs.push((p, j, rng.unit()));
            }
        }
    }
    let d = Design::new(np, nj, &revs);
    let w: Vec<f64> = (0..d.len()).map(|_| 0.5 + rng.unit()).collect();
    let lambda = 0.7;
    // Dense M⁻¹.
    let n = np + nj;
    let mut m = DMatrix::<f64>::zeros(n, n);
    for (i, &wi) in w.iter().enumerate() {
        let (p, j) = (d.p[i], np + d.j[i]);
        for (a, b) in [(p, p), (p, j), (j, p), (j, j)] {
            m[(a, b)] += wi;
        }
    }
    for j in 0..nj {
        m[(np + j, np + j)] += lambda;
    }
    let minv = m.try_inverse().expect("regular");
    for engine in [Engine::V1, Engine::V2] {
        let s = model::solve(&d, &w, lambda, engine);
        let sinv = s.chol.as_ref().expect("spd").inverse();
        let (h, vq) = model::leverage(&d, &w, &s.normal, &sinv);
        for i in 0..d.len() {
            let (p, j) = (d.p[i], np + d.j[i]);
            let dense = w[i] * (minv[(p, p)] + 2.0 * minv[(p, j)] + minv[(j, j)]);
            assert!(
                (h[i] - dense).abs() < 1e-9,
                "{engine:?}: {} vs {dense}",
                h[i]
            );
        }
        for p in 0..np {
            assert!((vq[p] - minv[(p, p)]).abs() < 1e-9, "{engine:?}");
        }
    }
}
