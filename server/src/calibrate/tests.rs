//! Engine tests against synthetic panels with known truth.

use nalgebra::{DMatrix, DVector};

use super::model::{self, Design, Engine};
use super::rng::Rng;
use super::synth::{JudgeKind, judge_id, score_against_truth};
use super::*;

fn params(seed: u64, bootstrap: u32) -> Params {
    Params {
        bootstrap,
        ..Params::default_for(seed)
    }
}

fn review(judge: &str, project: &str, score: f64) -> ReviewIn {
    ReviewIn {
        judge: judge.into(),
        project: project.into(),
        score,
    }
}

fn input(projects: &[&str], judges: &[&str], reviews: Vec<ReviewIn>) -> CalibrationInput {
    CalibrationInput {
        projects: projects
            .iter()
            .map(|id| ProjectIn {
                id: (*id).into(),
                excluded: None,
            })
            .collect(),
        judges: judges
            .iter()
            .map(|id| JudgeIn { id: (*id).into() })
            .collect(),
        reviews,
    }
}

/// Structural invariants every result must satisfy.
fn check_invariants(r: &CalibrationResult, inp: &CalibrationInput) {
    let ranked: Vec<&ProjectOut> = r.projects.iter().filter(|p| p.rank.is_some()).collect();
    for p in &r.projects {
        assert_eq!(p.rank.is_some(), p.excluded.is_none(), "{p:?}");
        assert_eq!(p.quality.is_some(), p.rank.is_some());
        if let (Some(lo), Some(hi), Some(rk)) = (p.rank_low, p.rank_high, p.rank) {
            assert!(
                lo <= rk && rk <= hi && lo >= 1 && hi as usize <= ranked.len(),
                "{p:?}"
            );
        }
        for x in [p.raw_mean, p.quality, p.std_error].into_iter().flatten() {
            assert!(x.is_finite());
        }
    }
    // Ranked first, in rank order.
    let first_unranked = r
        .projects
        .iter()
        .position(|p| p.rank.is_none())
        .unwrap_or(r.projects.len());
    assert!(
        r.projects[first_unranked..]
            .iter()
            .all(|p| p.rank.is_none())
    );
    assert!(ranked.windows(2).all(|w| w[0].rank <= w[1].rank));
    for j in &r.judges {
        for x in [j.offset, j.scale, j.noise].into_iter().flatten() {
            assert!(x.is_finite());
        }
    }
    let json = canonical_json(r);
    assert!(
        serde_json::from_str::<serde_json::Value>(&json).is_ok(),
        "{json}"
    );
    assert_eq!(r.input_hash, inputs_hash(inp));
    assert_eq!(result_hash(r).len(), 64);
}

// 1. Calibration beats the raw mean on realistic panels.
#[test]
fn calibrated_ranking_beats_raw_mean() {
    for (np, nj, k) in [(60, 24, 4), (200, 40, 5)] {
        let seeds: Vec<u64> = (11..19).collect();
        let (mut raw, mut cal, mut wins) = (0.0, 0.0, 0);
        for &seed in &seeds {
            let panel = Panel::generate(SynthParams::realistic(np, nj, k, seed));
            let r = calibrate(&panel.input, &params(seed, 0));
            check_invariants(&r, &panel.input);
            assert!(r.connected);
            let (tr, tc, _) = score_against_truth(&panel, &r);
            raw += tr;
            cal += tc;
            wins += usize::from(tc > tr);
        }
        let n = seeds.len() as f64;
        let (raw, cal) = (raw / n, cal / n);
        assert!(
            cal > raw + 0.02,
            "{np}x{nj}: tau calibrated {cal:.4} vs raw {raw:.4}"
        );
        assert!(
            wins * 4 >= seeds.len() * 3,
            "{np}x{nj}: won on only {wins}/{}",
            seeds.len()
        );
    }
}

// 2. 90% rank intervals cover the true rank about 90% of the time.
#[test]
fn rank_intervals_have_honest_coverage() {
    let mut covered = 0.0;
    let mut total = 0.0;
    let cases = (21..31)
        .map(|s| SynthParams::realistic(60, 24, 4, s))
        .chain((31..35).map(|s| SynthParams::realistic(200, 40, 5, s)));
    for sp in cases {
        let panel = Panel::generate(sp);
        let r = calibrate(&panel.input, &params(sp.seed, 200));
        let (_, _, coverage) = score_against_truth(&panel, &r);
        let n = r.projects.iter().filter(|p| p.rank.is_some()).count() as f64;
        covered += coverage * n;
        total += n;
    }
    let coverage = covered / total;
    assert!((0.85..=0.95).contains(&coverage), "coverage {coverage:.3}");
}

// 3. Pathological judges are flagged.
#[test]
fn constant_and_discordant_judges_are_flagged() {
    let mut false_discordant = 0;
    let seeds = 41..47;
    for seed in seeds.clone() {
        let panel = Panel::generate(SynthParams {
            discordant: 1,
            constant: 1,
            ..SynthParams::realistic(60, 24, 4, seed)
        });
        let r = calibrate(&panel.input, &params(seed, 0));
        check_invariants(&r, &panel.input);
        for (j, kind) in panel.kind.iter().enumerate() {
            let out = r
                .judges
                .iter()
                .find(|o| o.id == judge_id(j))
                .expect("judge in output");
            match kind {
                JudgeKind::Constant => assert_eq!(out.flag, FLAG_CONSTANT, "seed {seed}"),
                JudgeKind::Discordant => {
                    assert_eq!(out.flag, FLAG_DISCORDANT, "seed {seed} {out:?}");
                    assert!(out.scale.is_some_and(|s| s < 0.0), "{out:?}");
                }
                JudgeKind::Normal => false_discordant += usize::from(out.flag == FLAG_DISCORDANT),
                JudgeKind::Random => unreachable!("no random judges in this panel"),
            }
        }
    }
    // Honest judges are rarely accused (22 honest judges per panel).
    assert!(
        false_discordant <= 1,
        "{false_discordant} honest judges flagged"
    );
}

#[test]
fn single_review_and_identical_judges_are_reported() {
    let mut reviews = Vec::new();
    for (p, s) in [("a", 0.2), ("b", 0.5), ("c", 0.8), ("d", 0.4)] {
        reviews.push(review("j1", p, s));
        reviews.push(review("j2", p, s)); // copy of j1
        reviews.push(review("j3", p, 1.0 - s));
    }
    reviews.push(review("j4", "a", 0.3));
    let inp = input(
        &["a", "b", "c", "d"],
        &["j1", "j2", "j3", "j4", "j5"],
        reviews,
    );
    let r = calibrate(&inp, &params(1, 50));
    check_invariants(&r, &inp);
    let flag = |id: &str| r.judges.iter().find(|j| j.id == id).map(|j| j.flag.clone());
    assert_eq!(flag("j4").as_deref(), Some(FLAG_SINGLE_REVIEW));
    assert_eq!(flag("j5").as_deref(), Some(FLAG_NO_REVIEWS));
    assert_eq!(
        r.diagnostics.identical_judges,
        vec![IdenticalJudges {
            judge_a: "j1".into(),
            judge_b: "j2".into(),
            shared: 4
        }]
    );
}

// 4. Determinism and order independence.
#[test]
fn deterministic_and_order_independent() {
    let mut panel = Panel::generate(SynthParams {
        discordant: 1,
        ..SynthParams::realistic(40, 12, 4, 7)
    });
    panel.input.projects[3].excluded = Some("duplicate".into());
    let p = params(99, 100);
    let a = canonical_json(&calibrate(&panel.input, &p));
    let b = canonical_json(&calibrate(&panel.input, &p));
    assert_eq!(a, b);

    let mut shuffled = panel.input.clone();
    let mut rng = Rng::stream(5, 5);
    rng.shuffle(&mut shuffled.projects);
    rng.shuffle(&mut shuffled.judges);
    rng.shuffle(&mut shuffled.reviews);
    assert_eq!(
        canonical_inputs_json(&panel.input),
        canonical_inputs_json(&shuffled)
    );
    let c = calibrate(&shuffled, &p);
    assert_eq!(a, canonical_json(&c));
    assert_eq!(result_hash(&calibrate(&panel.input, &p)), result_hash(&c));

    // A different seed changes the random parts (intervals, folds).
    let d = canonical_json(&calibrate(&panel.input, &params(100, 100)));
    assert_ne!(a, d);
    // The excluded project stays excluded and unranked.
    let ex = c
        .projects
        .iter()
        .find(|q| q.id == panel.input.projects[3].id)
        .expect("present");
    assert_eq!(ex.excluded.as_deref(), Some("duplicate"));
    assert!(ex.rank.is_none());
}

// 5. Disconnected review graph.
#[test]
fn disconnected_graph_ranks_largest_component_only() {
    let big = Panel::generate(SynthParams::realistic(30, 8, 3, 1));
    let small = Panel::generate(SynthParams::realistic(10, 4, 2, 2));
    let mut inp = big.input.clone();
    let tag = |s: &str| format!("z{s}");
    inp.projects
        .extend(small.input.projects.iter().map(|p| ProjectIn {
            id: tag(&p.id),
            excluded: None,
        }));
    inp.judges.extend(
        small
            .input
            .judges
            .iter()
            .map(|j| JudgeIn { id: tag(&j.id) }),
    );
    inp.reviews.extend(
        small
            .input
            .reviews
            .iter()
            .map(|r| review(&tag(&r.judge), &tag(&r.project), r.score)),
    );
    let r = calibrate(&inp, &params(3, 50));
    check_invariants(&r, &inp);
    assert!(!r.connected);
    assert_eq!(r.components, 2);
    for p in &r.projects {
        if p.id.starts_with('z') {
            assert_eq!(p.excluded.as_deref(), Some(EXCLUDED_NOT_COMPARABLE));
        } else {
            assert!(p.rank.is_some());
        }
    }
    assert!(
        r.judges
            .iter()
            .filter(|j| j.id.starts_with('z'))
            .all(|j| j.flag == FLAG_NOT_COMPARABLE && j.offset.is_none())
    );
    assert_eq!(r.projects.iter().filter(|p| p.rank.is_some()).count(), 30);
}

// 6. Edge cases do not panic and give sensible shapes.
#[test]
fn edge_cases_do_not_panic() {
    let p = params(1, 20);
    // Nothing at all.
    let empty = input(&[], &[], vec![]);
    let r = calibrate(&empty, &p);
    check_invariants(&r, &empty);
    assert_eq!((r.components, r.connected, r.lambda), (0, true, None));

    // Projects and judges but no reviews.
    let none = input(&["a", "b"], &["j"], vec![]);
    let r = calibrate(&none, &p);
    check_invariants(&r, &none);
    assert!(
        r.projects
            .iter()
            .all(|x| x.excluded.as_deref() == Some(EXCLUDED_NO_USABLE_REVIEWS))
    );

    // One review.
    let one = input(&["a"], &["j"], vec![review("j", "a", 0.7)]);
    let r = calibrate(&one, &p);
    check_invariants(&r, &one);
    assert_eq!(r.projects[0].rank, Some(1));
    assert!((r.projects[0].quality.unwrap_or(0.0) - 0.7).abs() < 1e-12);
    assert_eq!(r.judges[0].flag, FLAG_SINGLE_REVIEW);

    // One judge, several projects: calibration cannot change the order.
    let reviews = vec![
        review("j", "a", 0.2),
        review("j", "b", 0.9),
        review("j", "c", 0.5),
    ];
    let solo = input(&["a", "b", "c"], &["j"], reviews);
    let r = calibrate(&solo, &p);
    check_invariants(&r, &solo);
    let order: Vec<&str> = r.projects.iter().map(|x| x.id.as_str()).collect();
    assert_eq!(order, ["b", "c", "a"]);

    // One project, several judges.
    let reviews = vec![
        review("x", "a", 0.2),
        review("y", "a", 0.9),
        review("z", "a", 0.5),
    ];
    let lone = input(&["a"], &["x", "y", "z"], reviews);
    let r = calibrate(&lone, &p);
    check_invariants(&r, &lone);
    assert_eq!(r.projects[0].rank, Some(1));

    // All scores identical: everyone ties, judges are "constant".
    let mut reviews = Vec::new();
    for pr in ["a", "b", "c", "d"] {
        for j in ["x", "y"] {
            reviews.push(review(j, pr, 0.5));
        }
    }
    let flat = input(&["a", "b", "c", "d"], &["x", "y"], reviews);
    let r = calibrate(&flat, &p);
    check_invariants(&r, &flat);
    assert!(
        r.projects
            .iter()
            .all(|x| x.rank == Some(1) && x.rank_high == Some(1))
    );
    assert!(r.judges.iter().all(|j| j.flag == FLAG_CONSTANT));

    // Garbage: unknown ids, non-finite scores, duplicates, silly params.
    let reviews = vec![
        review("x", "a", f64::NAN),
        review("x", "a", f64::INFINITY),
        review("x", "a", 1e300),
        review("ghost", "a", 0.5),
        review("x", "ghost", 0.5),
        review("x", "a", 0.4),
        review("x", "a", 0.4),
        review("y", "b", 0.6),
    ];
    let mut junk = input(&["a", "a", "b", "c"], &["x", "x", "y"], reviews);
    junk.projects[1].excluded = Some("duplicate".into());
    let silly = Params {
        seed: u64::MAX,
        bootstrap: 3,
        lambda_grid: vec![f64::NAN, -1.0, 0.0],
        folds: 0,
    };
    let r = calibrate(&junk, &silly);
    check_invariants(&r, &junk);
    assert_eq!(r.diagnostics.ignored_reviews, 5);
    assert_eq!((r.params.folds, r.params.bootstrap), (2, 3));
    assert_eq!(r.components, 2);
    assert_eq!(r.params.lambda_grid, Params::default_for(0).lambda_grid);
    let c = r.projects.iter().find(|x| x.id == "c").expect("c");
    assert_eq!(c.excluded.as_deref(), Some(EXCLUDED_NO_USABLE_REVIEWS));
}

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

#[test]
fn calibration_removes_a_pure_offset() {
    // Two judges, one 0.2 harsher, each sees half the projects plus an
    // overlap: calibrated order must follow the truth exactly.
    let truth = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4];
    let ids = ["a", "b", "c", "d", "e", "f"];
    let mut reviews = Vec::new();
    for (i, (&q, id)) in truth.iter().zip(ids).enumerate() {
        if i % 2 == 0 || i == 1 {
            reviews.push(review("harsh", id, q - 0.2));
        }
        if i % 2 == 1 || i == 0 {
            reviews.push(review("kind", id, q));
        }
    }
    let inp = input(&ids, &["harsh", "kind"], reviews);
    let r = calibrate(&inp, &params(1, 0));
    let order: Vec<&str> = r.projects.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(order, ids);
    let off = |id: &str| {
        r.judges
            .iter()
            .find(|j| j.id == id)
            .and_then(|j| j.offset)
            .unwrap_or(0.0)
    };
    assert!(off("kind") - off("harsh") > 0.15);
}

/// The size target: 2000 projects, 300 judges, k = 5, 200 bootstrap
/// replicates in well under 1.5 s (release). Run with
/// `cargo test --release --lib bench_large_event -- --ignored --nocapture`.
#[test]
#[ignore]
fn bench_large_event() {
    for seed in 1..=3 {
        let report = bench(2000, 300, 5, 200, seed);
        println!("seed {seed}: {report:?}");
        assert!(report.kendall_tau_calibrated > report.kendall_tau_raw);
        assert!(report.seconds < 1.5, "{report:?}");
    }
}

#[test]
fn random_small_inputs_satisfy_invariants() {
    let mut rng = Rng::stream(2024, 9);
    for case in 0..300 {
        let np = rng.index(7);
        let nj = rng.index(5);
        let pid = |i: usize| format!("p{i}");
        let jid = |i: usize| format!("j{i}");
        let mut inp = CalibrationInput {
            projects: (0..np)
                .map(|i| ProjectIn {
                    id: pid(i),
                    excluded: (rng.index(6) == 0).then(|| "not_submitted".to_string()),
                })
                .collect(),
            judges: (0..nj).map(|i| JudgeIn { id: jid(i) }).collect(),
            reviews: Vec::new(),
        };
        for _ in 0..rng.index(16) {
            // Occasionally reference unknown ids; scores on a coarse grid so
            // that ties and constant judges are common.
            let p = rng.index(np + 1);
            let j = rng.index(nj + 1);
            inp.reviews
                .push(review(&jid(j), &pid(p), rng.index(5) as f64 / 4.0));
        }
        let p = Params {
            bootstrap: rng.index(30) as u32,
            folds: rng.index(8) as u32,
            ..Params::default_for(case)
        };
        let r = calibrate(&inp, &p);
        check_invariants(&r, &inp);
        assert_eq!(r.projects.len(), np);
        assert_eq!(r.judges.len(), nj);
    }
}

#[test]
fn complete_design_everyone_reviews_everything() {
    let mut panel = Panel::generate(SynthParams::realistic(40, 10, 10, 3));
    panel.input.projects[0].excluded = Some("duplicate".into());
    let r = calibrate(&panel.input, &params(3, 50));
    check_invariants(&r, &panel.input);
    assert_eq!(r.projects.iter().filter(|p| p.rank.is_some()).count(), 39);
    assert!(r.judges.iter().all(|j| j.reviews == 39));
    let (raw, cal, _) = score_against_truth(&panel, &r);
    // With a complete design the offsets cancel out of the raw mean too.
    assert!((raw - cal).abs() < 0.1, "{raw} {cal}");
}

/// A fixed panel built with integer arithmetic only (no transcendental
/// functions, so it is identical on every platform).
fn golden_input() -> CalibrationInput {
    let (np, nj, k) = (24usize, 8usize, 3usize);
    let pid = |i: usize| format!("proj-{i:02}");
    let jid = |i: usize| format!("judge-{i}");
    let mut reviews = Vec::new();
    for p in 0..np {
        for t in 0..k {
            let j = (p * 5 + t * 3) % nj;
            // Quality ramp, judge severity, pseudo-noise; quantised to 1/12.
            let steps =
                (p * 7 % 13) as i64 + (j as i64 % 3) - 1 + ((p * 31 + j * 17) % 5) as i64 - 2;
            reviews.push(review(&jid(j), &pid(p), steps.clamp(0, 12) as f64 / 12.0));
        }
    }
    CalibrationInput {
        projects: (0..np)
            .map(|i| ProjectIn {
                id: pid(i),
                excluded: (i == 5).then(|| "not_submitted".to_string()),
            })
            .collect(),
        judges: (0..nj).map(|i| JudgeIn { id: jid(i) }).collect(),
        reviews,
    }
}

/// Guards against unintended output changes of the engine that published
/// results were computed with: `verdict-calibrate/1` must never change
/// (old bundles are re-run with it). If the current engine's hash changes
/// after a deliberate change, bump `ENGINE_VERSION` and add a golden hash.
#[test]
fn golden_result_hash() {
    let inp = golden_input();
    let v1 = calibrate_version(&inp, &params(42, 100), ENGINE_VERSION_1).expect("v1 is known");
    check_invariants(&v1, &inp);
    assert_eq!(v1.engine_version, "verdict-calibrate/1");
    assert_eq!(result_hash(&v1), GOLDEN_HASH_V1);

    let v2 = calibrate_version(&inp, &params(42, 100), ENGINE_VERSION_2).expect("v2 is known");
    check_invariants(&v2, &inp);
    assert_eq!(v2.engine_version, "verdict-calibrate/2");
    assert_eq!(result_hash(&v2), GOLDEN_HASH_V2);
    assert!(v2.certainty.is_none() && v2.diagnostics.summary.is_none());

    let v3 = calibrate_version(&inp, &params(42, 100), ENGINE_VERSION_3).expect("v3 is known");
    check_invariants(&v3, &inp);
    assert_eq!(v3.engine_version, "verdict-calibrate/3");
    assert_eq!(result_hash(&v3), GOLDEN_HASH_V3);

    let v4 = calibrate_version(&inp, &params(42, 100), ENGINE_VERSION_4).expect("v4 is known");
    check_invariants(&v4, &inp);
    assert_eq!(v4.engine_version, "verdict-calibrate/4");
    assert_eq!(result_hash(&v4), GOLDEN_HASH_V4);

    let v5 = calibrate(&inp, &params(42, 100));
    check_invariants(&v5, &inp);
    assert_eq!(v5.engine_version, "verdict-calibrate/5");
    assert_eq!(result_hash(&v5), GOLDEN_HASH_V5);
    assert_eq!(
        calibrate_version(&inp, &params(42, 100), ENGINE_VERSION),
        Some(v5)
    );
    assert_eq!(
        calibrate_version(&inp, &params(42, 100), "verdict-calibrate/0"),
        None
    );
}

const GOLDEN_HASH_V1: &str = "4d4ce3d9f9c1e36e86df0afb9b62fd26dd48cf27b014d23871a0a1ddc4af49e4";
/// The v2 factorisation is SIMD-dispatched: on a CPU whose kernels round
/// differently, a 9th rendered digit might move and this hash with it (the
/// bundle verifier tolerates that; this test pins the reference machine).
const GOLDEN_HASH_V2: &str = "c0d6b96a45cd611f2fdfc76fab6a9a5019bfd3901c4c22916d96fb6d451f658a";
/// v3 uses v2's factorisation, with the same caveat.
const GOLDEN_HASH_V3: &str = "b2662c10ee48d3e52e57ba1d6824d75c38f671c2324ccbfd1972200f9bd8c132";
/// v4 too.
const GOLDEN_HASH_V4: &str = "ce4acd834ebd8d4ebb7c3a602422b56049d583382d9ac9818f0b85775d5c78ab";
/// v5 is v4 with one more line in the report (and its own version in the result).
const GOLDEN_HASH_V5: &str = "7f9eadcedf141b9d985f2a69a77862d8f945d3b6b97acdb9acbc2a9f51d0d809";

/// Both engines solve the same equations: on a mid-sized panel every
/// estimate agrees to ~1e-9 and every rank, interval and flag is equal.
#[test]
fn engine_versions_agree_up_to_rounding() {
    let panel = Panel::generate(SynthParams {
        discordant: 1,
        constant: 1,
        ..SynthParams::realistic(200, 40, 5, 5)
    });
    let p = params(5, 100);
    let v1 = calibrate_version(&panel.input, &p, ENGINE_VERSION_1).expect("v1 is known");
    let v2 = calibrate_version(&panel.input, &p, ENGINE_VERSION_2).expect("v2 is known");
    let close = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) => (a - b).abs() <= 1e-9 * (1.0 + a.abs()),
        (a, b) => a == b,
    };
    assert!(close(v1.lambda, v2.lambda) && close(v1.cv_error, v2.cv_error));
    for (a, b) in v1.projects.iter().zip(&v2.projects) {
        assert_eq!(
            (&a.id, a.rank, a.rank_low, a.rank_high),
            (&b.id, b.rank, b.rank_low, b.rank_high)
        );
        assert!(
            close(a.quality, b.quality) && close(a.std_error, b.std_error),
            "{a:?} {b:?}"
        );
    }
    for (a, b) in v1.judges.iter().zip(&v2.judges) {
        assert_eq!((&a.id, &a.flag), (&b.id, &b.flag));
        assert!(close(a.offset, b.offset) && close(a.noise, b.noise) && close(a.scale, b.scale));
    }
    let (d1, d2) = (&v1.diagnostics, &v2.diagnostics);
    assert_eq!(d1.outlier_reviews.len(), d2.outlier_reviews.len());
    for (a, b) in d1.outlier_reviews.iter().zip(&d2.outlier_reviews) {
        assert_eq!((&a.judge, &a.project), (&b.judge, &b.project));
        assert!(close(Some(a.residual), Some(b.residual)));
    }
    assert_eq!(d1.identical_judges, d2.identical_judges);
    // Apart from the version tag, the bundle verifier's comparison accepts
    // the v1 text for the v2 result.
    let v1_text = canonical_json(&v1).replace(ENGINE_VERSION_1, ENGINE_VERSION_2);
    assert_ne!(compare_results(&v1_text, &v2), Reproduction::Differs);
}

/// A v2 result with one quality just above a 9-digit rounding boundary, and
/// the same result with that quality moved in the 12th decimal, just below.
fn boundary_pair() -> (CalibrationResult, CalibrationResult) {
    let inp = golden_input();
    let a = calibrate(&inp, &params(42, 20));
    let mut b = a.clone();
    let mut a = a;
    a.projects[0].quality = Some(0.123_456_788_501);
    b.projects[0].quality = Some(0.123_456_788_499);
    (a, b)
}

#[test]
fn rerun_tolerates_last_digit_noise_in_v2_only() {
    let (a, b) = boundary_pair();
    let published = canonical_json(&a);
    assert_ne!(
        published,
        canonical_json(&b),
        "the 9th rendered digit moves"
    );
    assert_eq!(compare_results(&published, &a), Reproduction::Exact);
    assert_eq!(
        compare_results(&published, &b),
        Reproduction::WithinTolerance
    );
    // v1 has no tolerance.
    let v1 = |r: &CalibrationResult| CalibrationResult {
        engine_version: ENGINE_VERSION_1.into(),
        ..r.clone()
    };
    let (a1, b1) = (v1(&a), v1(&b));
    assert_eq!(
        compare_results(&canonical_json(&a1), &a1),
        Reproduction::Exact
    );
    assert_eq!(
        compare_results(&canonical_json(&a1), &b1),
        Reproduction::Differs
    );
    // A re-formatted (non-canonical) published text is not forgiven.
    let spaced = published.replacen(',', ", ", 1);
    assert_eq!(compare_results(&spaced, &a), Reproduction::Differs);
}

#[test]
fn rerun_with_a_different_rank_fails() {
    let (a, _) = boundary_pair();
    let published = canonical_json(&a);
    let mut b = a.clone();
    b.projects[1].rank = b.projects[1].rank.map(|r| r + 1);
    assert_eq!(compare_results(&published, &b), Reproduction::Differs);
    // A float beyond the tolerance fails too.
    let mut c = a.clone();
    c.projects[0].quality = Some(0.123_457);
    assert_eq!(compare_results(&published, &c), Reproduction::Differs);
    // So does a missing value (a shape change).
    let mut d = a.clone();
    d.projects[0].std_error = None;
    assert_eq!(compare_results(&published, &d), Reproduction::Differs);
}

/// Engine v3 states the podium's certainty: a project every judge scores far above the
/// rest is first in (nearly) every posterior draw, two projects every judge scores alike
/// are a coin toss, and the summary says so in words.
#[test]
fn the_podium_states_how_certain_each_place_is() {
    let mut ids: Vec<String> = (0..13).map(|i| format!("p{i:02}")).collect();
    ids.extend(["star", "twin-a", "twin-b"].map(String::from));
    let judges: Vec<String> = (0..8).map(|j| format!("j{j}")).collect();
    let mut reviews = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        let base = match id.as_str() {
            "star" => 1.0,
            "twin-a" | "twin-b" => 0.75,
            _ => 0.2 + 0.03 * i as f64,
        };
        for t in 0..4 {
            let j = (i + 3 * t) % 8;
            let severity = (j % 3) as f64 * 0.03 - 0.03;
            let noise = ((i * 7 + j * 3) % 5) as f64 * 0.01 - 0.02;
            reviews.push(review(&judges[j], id, base + severity + noise));
        }
    }
    let inp = input(
        &ids.iter().map(String::as_str).collect::<Vec<_>>(),
        &judges.iter().map(String::as_str).collect::<Vec<_>>(),
        reviews,
    );
    let r = calibrate(&inp, &params(3, 400));
    check_invariants(&r, &inp);
    let c = r.certainty.as_ref().expect("v3 states its certainty");
    assert_eq!(c.draws, 400);
    assert_eq!(c.places.len(), CERTAINTY_PLACES);
    assert_eq!(c.pairs.len(), CERTAINTY_PLACES * (CERTAINTY_PLACES - 1) / 2);
    assert_eq!(c.places[0].project, "star");
    assert!(c.places[0].exact >= 0.95, "{:?}", c.places[0]);
    assert!(c.places.windows(2).all(|w| w[0].rank <= w[1].rank));
    for p in &c.places {
        assert!((0.0..=1.0).contains(&p.exact) && p.exact <= p.at_least && p.at_least <= 1.0);
    }
    let twins = c
        .pairs
        .iter()
        .find(|p| p.better.starts_with("twin") && p.worse.starts_with("twin"))
        .expect("both twins are in the top ten");
    assert!(
        (0.2..=0.8).contains(&twins.probability),
        "twins are a coin toss: {twins:?}"
    );
    let summary = r.diagnostics.summary.as_ref().expect("v3 writes a summary");
    assert!(
        summary
            .iter()
            .any(|l| l.starts_with("First place is clear: star")),
        "{summary:?}"
    );
    assert!(
        summary
            .iter()
            .any(|l| l.starts_with("Ranks 2 and 3 are not clearly ordered")),
        "{summary:?}"
    );
    let d = &r.diagnostics;
    assert!(d.convergence.as_ref().is_some_and(|c| c.passes == 3));
    let s = d.signal.as_ref().expect("v3 measures the signal");
    assert!(s.quality > 0.5 && s.quality_low <= s.quality && s.quality <= s.quality_high);
    assert!((s.quality + s.severity + s.noise - 1.0).abs() < 1e-9);
}

/// Engine v3 calls a judge `constant` only when equal scores are improbable for an
/// honest judge: ten equal totals on projects the others tell apart are; three equal
/// totals on three projects the others also find alike are not (rubric totals come in
/// steps of 1/12 here, as on a 3-criterion 1..5 rubric).
#[test]
fn equal_scores_are_constant_only_when_improbable() {
    let ids: Vec<String> = (0..12).map(|i| format!("p{i:02}")).collect();
    let step = |x: f64| (x * 12.0).round() / 12.0;
    let mut reviews = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        // The others spread the projects from 0.1 to 0.9, except three alike at 0.5.
        let quality = if (5..8).contains(&i) {
            0.5
        } else {
            0.1 + 0.07 * i as f64
        };
        for (t, j) in ["a", "b", "c"].into_iter().enumerate() {
            let noise = ((i * 5 + t * 3) % 5) as f64 * 0.04 - 0.08;
            reviews.push(review(j, id, step(quality + noise)));
        }
        if i < 10 {
            reviews.push(review("flat", id, 0.5));
        }
        if (5..8).contains(&i) {
            reviews.push(review("alike", id, 0.5));
        }
    }
    let inp = input(
        &ids.iter().map(String::as_str).collect::<Vec<_>>(),
        &["a", "b", "c", "flat", "alike"],
        reviews,
    );
    let r = calibrate(&inp, &params(1, 50));
    check_invariants(&r, &inp);
    let flag = |id: &str| r.judges.iter().find(|j| j.id == id).map(|j| j.flag.clone());
    assert_eq!(flag("flat").as_deref(), Some(FLAG_CONSTANT));
    assert_eq!(flag("alike").as_deref(), Some(FLAG_OK));
    // v2 called both constant.
    let v2 = calibrate_version(&inp, &params(1, 50), ENGINE_VERSION_2).expect("v2 is known");
    let flag2 = |id: &str| {
        v2.judges
            .iter()
            .find(|j| j.id == id)
            .map(|j| j.flag.clone())
    };
    assert_eq!(flag2("alike").as_deref(), Some(FLAG_CONSTANT));
}

/// Engine v5 tells the organizer when judges have too few reviews for the flags to vouch
/// for them (a random scorer with ten reviews is caught about four times in ten), and says
/// nothing of the kind where they have enough; v4's report stays as it was.
#[test]
fn a_panel_too_thin_to_check_its_judges_says_so() {
    let says = |r: &CalibrationResult| {
        r.diagnostics
            .summary
            .as_ref()
            .expect("a report")
            .iter()
            .any(|l| l.contains("too few for the flags"))
    };
    let small = Panel::generate(SynthParams::realistic(40, 12, 3, 5));
    let p = params(5, 20);
    let v5 = calibrate(&small.input, &p);
    assert!(says(&v5), "{:?}", v5.diagnostics.summary);
    let line = v5
        .diagnostics
        .summary
        .as_ref()
        .unwrap()
        .iter()
        .find(|l| l.contains("too few"))
        .unwrap()
        .clone();
    assert!(
        line.starts_with("Judges have 10 reviews each (median)"),
        "{line}"
    );
    let v4 = calibrate_version(&small.input, &p, ENGINE_VERSION_4).expect("v4 is known");
    assert!(!says(&v4), "{:?}", v4.diagnostics.summary);

    let large = Panel::generate(SynthParams::realistic(150, 40, 6, 5));
    let r = calibrate(&large.input, &p);
    assert!(!says(&r), "{:?}", r.diagnostics.summary);
}
