//! What calibration gets right on panels with known truth: a better ranking than the raw
//! mean, honest intervals, and the judges it flags.

use super::*;

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
