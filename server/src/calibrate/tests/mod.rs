//! Engine tests against synthetic panels with known truth, by topic: what a panel's
//! ranking gets right (`ranking.rs`), what every result satisfies whatever the input
//! (`invariants.rs`), the linear algebra against dense references (`solver.rs`), the
//! pinned outputs of every engine version (`golden.rs`), and the organizer's report
//! (`report.rs`). The panels' helpers are here.

mod golden;
mod invariants;
mod joint;
mod ranking;
mod report;
mod solver;

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
        comparisons: vec![],
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
