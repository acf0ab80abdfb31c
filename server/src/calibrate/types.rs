//! Public input/output types of the calibration engine.

use serde::{Deserialize, Serialize};

/// A project as known upstream. `excluded` carries an upstream exclusion
/// reason (e.g. `"duplicate"`, `"not_submitted"`); excluded projects are
/// reported but never fitted nor ranked, and their reviews are ignored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProjectIn {
    pub id: String,
    pub excluded: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JudgeIn {
    pub id: String,
}

/// One review: the weighted rubric total, already scaled to 0..1.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReviewIn {
    pub judge: String,
    pub project: String,
    pub score: f64,
}

/// One pairwise comparison (pairwise judging, issue 26): `judge` found `better` better
/// than `worse`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ComparisonIn {
    pub judge: String,
    pub better: String,
    pub worse: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CalibrationInput {
    pub projects: Vec<ProjectIn>,
    pub judges: Vec<JudgeIn>,
    pub reviews: Vec<ReviewIn>,
    /// Pairwise comparisons; absent from the serialized and canonical forms when empty, so
    /// inputs without them keep their bytes and hashes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub comparisons: Vec<ComparisonIn>,
}

/// Engine parameters. Everything random is derived from `seed`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Params {
    #[serde(with = "seed_text")]
    pub seed: u64,
    /// Number of bootstrap replicates for rank intervals (0 disables them;
    /// at most 10 000 are used).
    pub bootstrap: u32,
    /// Candidate ridge strengths for the judge offsets, in units of
    /// "pseudo-reviews at offset 0" (weights are normalised to mean 1).
    /// Non-finite or non-positive values are ignored, the rest clamped to
    /// [1e-6, 1e6].
    pub lambda_grid: Vec<f64>,
    /// Number of cross-validation folds (clamped to 2..=20).
    pub folds: u32,
}

impl Params {
    /// The fixed default grid/folds/bootstrap used in production.
    pub fn default_for(seed: u64) -> Self {
        Params {
            seed,
            bootstrap: 200,
            lambda_grid: vec![0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0],
            folds: 5,
        }
    }
}

/// Exclusion reasons produced by the engine itself (upstream reasons are
/// passed through verbatim).
pub const EXCLUDED_NO_USABLE_REVIEWS: &str = "no_usable_reviews";
pub const EXCLUDED_NOT_COMPARABLE: &str = "not_comparable";

/// Judge flags.
pub const FLAG_OK: &str = "ok";
pub const FLAG_CONSTANT: &str = "constant";
pub const FLAG_SINGLE_REVIEW: &str = "single_review";
pub const FLAG_DISCORDANT: &str = "discordant";
pub const FLAG_NO_REVIEWS: &str = "no_reviews";
pub const FLAG_NOT_COMPARABLE: &str = "not_comparable";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProjectOut {
    pub id: String,
    /// Usable reviews (known judge, finite score within ±1000).
    pub reviews: u32,
    /// Plain mean of the usable reviews.
    pub raw_mean: Option<f64>,
    /// Rank of `raw_mean` among the ranked projects (competition ranking,
    /// ties share the best rank), for comparison with `rank`.
    pub raw_rank: Option<u32>,
    /// Calibrated quality, on the 0..1 score scale of an average judge.
    pub quality: Option<f64>,
    /// Standard error of `quality` (posterior sd of the ridge model).
    pub std_error: Option<f64>,
    /// Calibrated rank, 1 = best (competition ranking).
    pub rank: Option<u32>,
    /// 90% bootstrap interval for `rank`.
    pub rank_low: Option<u32>,
    pub rank_high: Option<u32>,
    pub excluded: Option<String>,
    /// Usable comparisons involving the project (engine v6 with comparisons; absent
    /// otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comparisons: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JudgeOut {
    pub id: String,
    /// Usable reviews on non-excluded projects.
    pub reviews: u32,
    /// Additive severity offset b_j (positive = generous).
    pub offset: Option<f64>,
    /// Diagnostic slope of the judge's scores on the leave-this-judge-out
    /// consensus (1 = typical spread, <0 = reversed). Not used in the fit.
    pub scale: Option<f64>,
    /// Estimated residual sd of the judge (shrunk towards the pooled sd).
    pub noise: Option<f64>,
    pub flag: String,
    /// Usable comparisons by the judge (engine v6 with comparisons; absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comparisons: Option<u32>,
    /// CrowdBT reliability of the judge's comparisons: the estimated probability that a
    /// comparison follows the model rather than a coin (0.5..1; engine v6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reliability: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OutlierReview {
    pub judge: String,
    pub project: String,
    pub residual: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IdenticalJudges {
    pub judge_a: String,
    pub judge_b: String,
    pub shared: u32,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Diagnostics {
    /// Reviews whose standardised residual exceeds the outlier threshold.
    pub outlier_reviews: Vec<OutlierReview>,
    /// Judge pairs with identical scores on all of >= 3 shared projects.
    pub identical_judges: Vec<IdenticalJudges>,
    /// Reviews dropped before fitting: unknown judge/project, or a score
    /// that is non-finite or beyond ±1000.
    pub ignored_reviews: u32,
    /// Comparisons dropped before fitting: unknown judge or project, a project compared
    /// with itself (engine v6 with comparisons; absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignored_comparisons: Option<u32>,
    /// Whether the reweighting settled (engine v3 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub convergence: Option<Convergence>,
    /// How much of the score variance is project quality (engine v3 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<Signal>,
    /// What an organizer may want to do about this run, in plain words (engine v3 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<Vec<String>>,
}

/// The noise reweighting of the fit: passes made at the chosen λ and the largest relative
/// change of a review weight in the last one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Convergence {
    pub passes: u32,
    pub final_change: f64,
    /// `final_change` below [`CONVERGED_CHANGE`].
    pub converged: bool,
}

/// Relative weight change under which the reweighting counts as settled.
pub const CONVERGED_CHANGE: f64 = 0.01;

/// Shares of the score variance (they sum to 1): the true spread of project quality (the
/// spread of the estimates less their estimation noise), judge severity (the spread of
/// the offsets) and review noise (the pooled residual variance); `quality_low` and
/// `quality_high` bound the quality share at 90 %.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Signal {
    pub quality: f64,
    pub quality_low: f64,
    pub quality_high: f64,
    pub severity: f64,
    pub noise: f64,
}

/// How certain the top of the ranking is, from the posterior draws (engine v3 on; public:
/// no judge data).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Certainty {
    /// Posterior draws behind the probabilities.
    pub draws: u32,
    /// The first [`CERTAINTY_PLACES`] ranked projects in published order.
    pub places: Vec<PlaceOdds>,
    /// Every pair among `places`, the better-ranked first.
    pub pairs: Vec<PairOdds>,
}

/// How many of the top ranked projects [`Certainty`] describes.
pub const CERTAINTY_PLACES: usize = 10;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlaceOdds {
    pub project: String,
    /// The published rank.
    pub rank: u32,
    /// Probability that the project's true rank is exactly `rank`.
    pub exact: f64,
    /// Probability that its true rank is `rank` or better.
    pub at_least: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairOdds {
    pub better: String,
    pub worse: String,
    /// Probability that `better` is truly better than `worse`.
    pub probability: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CalibrationResult {
    pub engine_version: String,
    /// SHA-256 of `canonical_inputs_json` of the input (the params are
    /// recorded separately below and covered by the result hash).
    pub input_hash: String,
    pub params: Params,
    /// Human-readable name of the fitted model variant.
    pub model: String,
    pub lambda: Option<f64>,
    pub cv_error: Option<f64>,
    /// Connected components of the judge–project review graph (only nodes
    /// with at least one usable review count).
    pub components: u32,
    pub connected: bool,
    pub projects: Vec<ProjectOut>,
    pub judges: Vec<JudgeOut>,
    pub diagnostics: Diagnostics,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certainty: Option<Certainty>,
}

/// Seeds are full u64 and travel as JSON strings (JavaScript numbers lose precision past
/// 2^53); a plain number is accepted too.
mod seed_text {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(seed: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&seed.to_string())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Seed {
            Text(String),
            Number(u64),
        }
        match Seed::deserialize(d)? {
            Seed::Number(n) => Ok(n),
            Seed::Text(t) => t.parse().map_err(serde::de::Error::custom),
        }
    }
}
