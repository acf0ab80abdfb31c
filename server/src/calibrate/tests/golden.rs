//! The pinned outputs: a golden hash per engine version, the versions' agreement, and the
//! re-run's tolerance of last-digit noise.

use super::*;

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
        comparisons: vec![],
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
