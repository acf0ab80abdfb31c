//! Calibration runs and result publication.
//!
//! A run pins its inputs exactly as read (canonical JSON, hashed), computes with the pure
//! engine in [`crate::calibrate`], and stores the canonical result with its hash and an
//! Ed25519 signature over the domain-tagged pre-image ([`run_fields`]). Runs are never
//! updated. A publication points at one run, numbered per event, provisional or final.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use entity::assignment::AssignmentStatus;
use entity::project::ProjectStatus;
use entity::{
    assignment, calibration_run, comparison, criterion, event, project, recusal,
    result_publication, review,
};
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter,
    QueryOrder,
};
use serde_json::json;

use super::judges::{judge_key, judges_of_event, rubric};
use super::{Actor, Organizer, Write};
use crate::audit::{self, Entry, canonical_time};
use crate::calibrate::{
    self, CalibrationInput, CalibrationResult, ComparisonIn, JudgeIn, Params, ProjectIn, ReviewIn,
};
use crate::crypto::signing::{
    PUBLICATION_TAG, PUBLICATION_V2_TAG, PUBLICATION_V3_TAG, PublicKey, RUN_TAG, Signer25519,
};
use crate::crypto::{canonical_json, sha256_hex};
use crate::error::{AppError, AppResult};
use crate::memo::Memo;

pub const MAX_BOOTSTRAP: u32 = 2_000;

/// The weighted rubric total of one review, scaled to 0..1.
pub fn weighted_total(rubric: &[criterion::Model], scores: &HashMap<String, i64>) -> Option<f64> {
    let (mut sum, mut weights) = (0.0, 0.0);
    for c in rubric {
        let v = *scores.get(&c.key)? as f64;
        sum += c.weight * (v - c.min_score as f64) / (c.max_score - c.min_score) as f64;
        weights += c.weight;
    }
    (weights > 0.0).then(|| sum / weights)
}

/// Reads the event's current calibration inputs: every project (duplicates and unsubmitted
/// ones marked excluded), every judge, every submitted, non-recused review, and every
/// comparison (pairwise judging, issue 26) whose judge is not recused from either team.
/// An event without comparisons gets an input without them, which hashes as before and is
/// calibrated by the same engine as before; with comparisons the engine is
/// `verdict-calibrate/8` (before it, `/7` and `/6`), scores and comparisons in one model.
pub async fn collect<C: ConnectionTrait>(db: &C, e: &event::Model) -> AppResult<CalibrationInput> {
    let rubric = rubric(db, e.id).await?;
    let projects = project::Entity::find()
        .filter(project::Column::EventId.eq(e.id))
        .all(db)
        .await?;
    let judges = judges_of_event(db, e.id).await?;
    let recused: std::collections::HashSet<i64> = assignment::Entity::find()
        .filter(assignment::Column::EventId.eq(e.id))
        .filter(assignment::Column::Status.eq(AssignmentStatus::Recused))
        .all(db)
        .await?
        .into_iter()
        .map(|a| a.id)
        .collect();
    let reviews = review::Entity::find()
        .filter(review::Column::EventId.eq(e.id))
        .filter(review::Column::Submitted.eq(true))
        .order_by_asc(review::Column::Id)
        .all(db)
        .await?;
    let project_ids: HashMap<i64, &str> = projects
        .iter()
        .map(|p| (p.id, p.external_id.as_str()))
        .collect();
    let judge_ids: HashMap<i64, String> = judges.iter().map(|j| (j.id, judge_key(j))).collect();
    let mut out = CalibrationInput {
        projects: projects
            .iter()
            .map(|p| ProjectIn {
                id: p.external_id.clone(),
                excluded: if p.duplicate_of.is_some() {
                    Some("duplicate".into())
                } else if let Some(reason) = &p.disqualified_reason {
                    Some(format!("disqualified: {reason}"))
                } else if p.hidden_reason.is_some() {
                    Some("hidden".into())
                } else if p.status != ProjectStatus::Submitted {
                    Some("not_submitted".into())
                } else {
                    None
                },
            })
            .collect(),
        judges: judge_ids
            .values()
            .map(|id| JudgeIn { id: id.clone() })
            .collect(),
        reviews: vec![],
        comparisons: vec![],
    };
    for r in reviews
        .iter()
        .filter(|r| !recused.contains(&r.assignment_id))
    {
        let scores: HashMap<String, i64> = serde_json::from_str(&r.scores).unwrap_or_default();
        let (Some(judge), Some(project), Some(score)) = (
            judge_ids.get(&r.judge_id),
            project_ids.get(&r.project_id),
            weighted_total(&rubric, &scores),
        ) else {
            continue;
        };
        out.reviews.push(ReviewIn {
            judge: judge.clone(),
            project: (*project).to_owned(),
            score,
        });
    }
    let comparisons = comparison::Entity::find()
        .filter(comparison::Column::EventId.eq(e.id))
        .order_by_asc(comparison::Column::Id)
        .all(db)
        .await?;
    if !comparisons.is_empty() {
        let recusals: std::collections::HashSet<(i64, i64)> = recusal::Entity::find()
            .filter(recusal::Column::EventId.eq(e.id))
            .all(db)
            .await?
            .into_iter()
            .map(|r| (r.judge_id, r.team_id))
            .collect();
        let team_of: HashMap<i64, i64> = projects.iter().map(|p| (p.id, p.team_id)).collect();
        let recused_from = |judge: i64, project: i64| {
            team_of
                .get(&project)
                .is_some_and(|t| recusals.contains(&(judge, *t)))
        };
        for c in comparisons {
            if recused_from(c.judge_id, c.better_id) || recused_from(c.judge_id, c.worse_id) {
                continue;
            }
            let (Some(judge), Some(better), Some(worse)) = (
                judge_ids.get(&c.judge_id),
                project_ids.get(&c.better_id),
                project_ids.get(&c.worse_id),
            ) else {
                continue;
            };
            out.comparisons.push(ComparisonIn {
                judge: judge.clone(),
                better: (*better).to_owned(),
                worse: (*worse).to_owned(),
            });
        }
    }
    Ok(out)
}

/// Pins inputs: the canonical JSON is what is stored and hashed, and the engine computes on
/// the values parsed back from it, so that an offline re-run from the pinned file computes
/// on exactly the same numbers.
pub fn pin(input: &CalibrationInput) -> AppResult<(CalibrationInput, String)> {
    let text = calibrate::canonical_inputs_json(input);
    let parsed = serde_json::from_str(&text)
        .map_err(|e| AppError::Internal(format!("canonical inputs do not parse: {e}")))?;
    Ok((parsed, text))
}

/// Computes off the async runtime (it is CPU-bound).
/// `progress` records how far it has come (for a background job to report).
pub async fn compute(
    input: CalibrationInput,
    params: Params,
    progress: std::sync::Arc<calibrate::Progress>,
) -> AppResult<CalibrationResult> {
    tokio::task::spawn_blocking(move || calibrate::calibrate_observed(&input, &params, &progress))
        .await
        .map_err(|e| AppError::Internal(format!("calibration failed: {e}")))
}

/// The live, unsigned preview of the event's current ranking (the organizers' leaderboard):
/// the same pinned computation as a run, with a lighter bootstrap, nothing stored.
pub async fn preview<C: ConnectionTrait>(db: &C, e: &event::Model) -> AppResult<CalibrationResult> {
    let (pinned, _) = pin(&collect(db, e).await?)?;
    compute(
        pinned,
        Params {
            bootstrap: 100,
            ..Params::default_for(1)
        },
        std::sync::Arc::default(),
    )
    .await
}

/// One computed preview of an event's ranking (the organizers' leaderboard) and when it was
/// computed.
pub type Preview = (std::sync::Arc<CalibrationResult>, DateTime<Utc>);

/// The fields a run signature covers, in order.
pub fn run_fields<'a>(
    event: &'a str,
    run: &'a str,
    created_at: &'a str,
    engine_version: &'a str,
    params: &'a str,
    inputs_hash: &'a str,
    result_hash: &'a str,
) -> [&'a [u8]; 7] {
    [
        event.as_bytes(),
        run.as_bytes(),
        created_at.as_bytes(),
        engine_version.as_bytes(),
        params.as_bytes(),
        inputs_hash.as_bytes(),
        result_hash.as_bytes(),
    ]
}

pub fn params_json(p: &Params) -> String {
    canonical_json(&serde_json::to_value(p).unwrap_or_default())
}

/// How many times [`run_calibration`] computes before it gives up on an event whose inputs
/// keep changing while it computes.
pub const RUN_ATTEMPTS: usize = 3;

/// A run about to be computed: its parameters and the event's inputs, pinned, as one
/// read-only snapshot saw them ([`plan_run`]).
pub struct PlannedRun {
    seed: i64,
    bootstrap: i32,
    params: Params,
    input: CalibrationInput,
    inputs_json: String,
    inputs_hash: String,
}

/// A computed run, not yet stored ([`compute_run`]).
pub struct ComputedRun {
    plan: PlannedRun,
    result: CalibrationResult,
}

/// Checks the caller and the parameters, and reads the event's calibration inputs. `db`
/// should be a read-only snapshot ([`crate::db::Db::read`]): no write lock is held while
/// the run then computes.
pub async fn plan_run<C: ConnectionTrait>(
    db: &C,
    actor: &Actor,
    e: &event::Model,
    seed: Option<i64>,
    bootstrap: Option<i32>,
) -> AppResult<PlannedRun> {
    // A read (a snapshot, not a write): checked here; the write that stores the run takes
    // the organizer's proof ([`store_run`]).
    if !super::is_organizer(db, actor, e).await? {
        return Err(AppError::forbidden(
            "only the event's organizers may do this",
        ));
    }
    let (seed, bootstrap) = run_params(seed, bootstrap)?;
    let params = Params {
        bootstrap: bootstrap as u32,
        ..Params::default_for(seed as u64)
    };
    let (input, inputs_json) = pin(&collect(db, e).await?)?;
    Ok(PlannedRun {
        seed,
        bootstrap,
        params,
        input,
        inputs_hash: sha256_hex(inputs_json.as_bytes()),
        inputs_json,
    })
}

/// A run's seed and bootstrap replicates, defaulted and checked (BAD_USER_INPUT naming
/// the argument).
pub fn run_params(seed: Option<i64>, bootstrap: Option<i32>) -> AppResult<(i64, i32)> {
    let seed = seed.unwrap_or(1);
    if seed < 0 {
        return Err(AppError::bad_input("seed", "must not be negative"));
    }
    let bootstrap = bootstrap.unwrap_or(200);
    if !(0..=MAX_BOOTSTRAP as i32).contains(&bootstrap) {
        return Err(AppError::bad_input(
            "bootstrap",
            format!("must be between 0 and {MAX_BOOTSTRAP}"),
        ));
    }
    Ok((seed, bootstrap))
}

/// Computes a planned run, outside any transaction (on the blocking pool: it is the
/// expensive part, seconds on a large event).
pub async fn compute_run(plan: PlannedRun) -> AppResult<ComputedRun> {
    compute_observed(plan, std::sync::Arc::default()).await
}

/// [`compute_run`], recording in `progress` how far it has come.
pub async fn compute_observed(
    plan: PlannedRun,
    progress: std::sync::Arc<calibrate::Progress>,
) -> AppResult<ComputedRun> {
    let started = std::time::Instant::now();
    let result = compute(plan.input.clone(), plan.params.clone(), progress).await?;
    crate::metrics::calibration_run(started.elapsed());
    Ok(ComputedRun { plan, result })
}

/// The refusal when an event's inputs changed during every one of [`RUN_ATTEMPTS`]
/// computations.
pub fn inputs_kept_changing() -> AppError {
    AppError::conflict(format!(
        "the event's reviews, assignments or projects changed while the calibration was \
         computing, {RUN_ATTEMPTS} times in a row; run it again when judging is quieter"
    ))
}

/// Stores a computed run inside the write transaction `txn`, signed, with its one audit
/// entry, if the event's inputs are still exactly those it was computed from; `None`
/// (nothing written) when they changed since [`plan_run`] read them, so that a run never
/// claims inputs that were no longer current when it was committed. Re-reading and hashing
/// the inputs is cheap next to computing.
pub async fn store_run(
    w: &Write,
    org: Organizer<'_>,
    signer: &Signer25519,
    computed: &ComputedRun,
) -> AppResult<Option<calibration_run::Model>> {
    let (txn, actor, e) = (w.txn(), org.actor(), org.event());
    // No other write commits before this one from here on, so the inputs read next are
    // the inputs at commit.
    audit::lock_head(txn).await?;
    let (_, inputs_now) = pin(&collect(txn, e).await?)?;
    let plan = &computed.plan;
    if sha256_hex(inputs_now.as_bytes()) != plan.inputs_hash {
        return Ok(None);
    }
    let result = &computed.result;
    let result_json = calibrate::canonical_json(result);
    let result_hash = sha256_hex(result_json.as_bytes());
    let params_text = params_json(&plan.params);
    let public = crate::crypto::public_id("run");
    let created_at = w.now();
    let created = canonical_time(created_at);
    let seq = w
        .append_in_place(
            Entry::new("calibration.ran", "calibration_run", &public)
                .by(actor.public_id())
                .in_event(&e.external_id)
                .with(json!({
                    "run": public,
                    "inputs_hash": plan.inputs_hash,
                    "result_hash": result_hash,
                    "engine_version": result.engine_version,
                    "created_at": created,
                })),
        )
        .await?;
    let signature = signer.sign(
        RUN_TAG,
        &run_fields(
            &e.external_id,
            &public,
            &created,
            &result.engine_version,
            &params_text,
            &plan.inputs_hash,
            &result_hash,
        ),
    );
    let run = calibration_run::ActiveModel {
        public_id: Set(public),
        event_id: Set(e.id),
        created_at: Set(created_at),
        created_by: Set(actor.public_id().to_owned()),
        seed: Set(plan.seed),
        bootstrap: Set(plan.bootstrap),
        lambda: Set(result.lambda.unwrap_or(0.0)),
        engine_version: Set(result.engine_version.clone()),
        params: Set(params_text),
        inputs: Set(plan.inputs_json.clone()),
        inputs_hash: Set(plan.inputs_hash.clone()),
        result: Set(result_json),
        result_hash: Set(result_hash),
        connected: Set(result.connected),
        signature: Set(signature),
        key_fingerprint: Set(signer.fingerprint()),
        audit_seq: Set(seq),
        ..Default::default()
    }
    .insert(txn)
    .await?;
    Ok(Some(run))
}

/// Runs the calibration on the event's current reviews and stores the signed run: reads
/// the inputs in a read-only snapshot, computes with no transaction open, and stores the
/// run in a short write transaction that checks the inputs did not change meanwhile
/// (computing again, up to [`RUN_ATTEMPTS`] times in all, when they did). For callers
/// without an idempotency key (the demo, tests); `runCalibration` takes the same steps
/// around its key.
pub async fn run_calibration(
    db: &crate::db::Db,
    actor: &Actor,
    e: &event::Model,
    signer: &Signer25519,
    seed: Option<i64>,
    bootstrap: Option<i32>,
) -> AppResult<calibration_run::Model> {
    for _ in 0..RUN_ATTEMPTS {
        let snapshot = db.read().await?;
        let plan = plan_run(&snapshot, actor, e, seed, bootstrap).await?;
        snapshot.rollback().await?;
        let computed = compute_run(plan).await?;
        let w = Write::begin(db, Some(actor.clone())).await?;
        let e = w.event_by_id(e.id).await?;
        if let Some(run) = store_run(&w, w.organizer(&e).await?, signer, &computed).await? {
            w.commit().await?;
            return Ok(run);
        }
    }
    Err(inputs_kept_changing())
}

/// The canonical creation time of a run, exactly as signed.
pub fn run_created(run: &calibration_run::Model) -> String {
    canonical_time(run.created_at)
}

/// Parses a stored run's canonical result.
pub fn parse_result(run: &calibration_run::Model) -> AppResult<CalibrationResult> {
    serde_json::from_str(&run.result)
        .map_err(|e| AppError::Internal(format!("stored result does not parse: {e}")))
}

/// Stored runs and their parsed results, shared by every request. A run row never changes
/// once written, and its canonical result is named by its SHA-256 (`result_hash`), so
/// neither copy goes stale, even across a restore. Published results are read from here:
/// a crowd refreshing the results costs one small query per request (which publication is
/// the latest), not the run's megabyte of JSON and its parse.
pub struct ParsedRuns {
    rows: Memo<i64, std::sync::Arc<calibration_run::Model>>,
    parsed: Memo<String, std::sync::Arc<CalibrationResult>>,
    trees: Memo<
        (String, String, super::proofs::EntryFormat),
        std::sync::Arc<super::proofs::ResultTree>,
    >,
    parses: std::sync::atomic::AtomicU64,
}

impl ParsedRuns {
    /// How many runs are kept: the runs people look at are the few latest of the events
    /// being judged or published; a large one is a megabyte or two.
    pub const CAPACITY: usize = 32;

    /// The row of run `id` (None if there is none), read from the database on first use.
    pub async fn row<C: ConnectionTrait>(
        &self,
        db: &C,
        id: i64,
    ) -> AppResult<Option<std::sync::Arc<calibration_run::Model>>> {
        if let Some(r) = self.rows.get(&id) {
            return Ok(Some(r));
        }
        let Some(row) = calibration_run::Entity::find_by_id(id).one(db).await? else {
            return Ok(None);
        };
        Ok(Some(self.rows.insert(id, std::sync::Arc::new(row))))
    }

    /// The parsed result of `run`, parsed on first use.
    pub fn get(
        &self,
        run: &calibration_run::Model,
    ) -> AppResult<std::sync::Arc<CalibrationResult>> {
        if let Some(r) = self.parsed.get(run.result_hash.as_str()) {
            return Ok(r);
        }
        // Parsed outside the lock; two requests racing on a new run may both parse it.
        let parsed = std::sync::Arc::new(parse_result(run)?);
        self.parses
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(self.parsed.insert(run.result_hash.clone(), parsed))
    }

    /// The Merkle tree over the entries of `run` (`super::proofs`) in `format`, built on
    /// first use; named by the hashes of the inputs and the result it is a function of,
    /// and the format.
    pub fn tree(
        &self,
        run: &calibration_run::Model,
        format: super::proofs::EntryFormat,
    ) -> AppResult<std::sync::Arc<super::proofs::ResultTree>> {
        let key = (run.inputs_hash.clone(), run.result_hash.clone(), format);
        if let Some(t) = self.trees.get(&key) {
            return Ok(t);
        }
        let result = self.get(run)?;
        let tree = std::sync::Arc::new(super::proofs::ResultTree::of_run(run, &result, format)?);
        Ok(self.trees.insert(key, tree))
    }

    /// Stored results parsed so far (for the tests: a result is parsed once, not per field).
    pub fn parses(&self) -> u64 {
        self.parses.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl Default for ParsedRuns {
    fn default() -> Self {
        ParsedRuns {
            rows: Memo::new(Self::CAPACITY),
            parsed: Memo::new(Self::CAPACITY),
            trees: Memo::new(Self::CAPACITY),
            parses: std::sync::atomic::AtomicU64::new(0),
        }
    }
}

/// The fields a publication signature covers, in order.
pub fn publication_fields<'a>(
    event: &'a str,
    version: &'a str,
    is_final: bool,
    run: &'a str,
    result_hash: &'a str,
    published_at: &'a str,
) -> [&'a [u8]; 6] {
    [
        event.as_bytes(),
        version.as_bytes(),
        if is_final { b"final" } else { b"provisional" },
        run.as_bytes(),
        result_hash.as_bytes(),
        published_at.as_bytes(),
    ]
}

/// A publication's signed document: the fields [`publication_fields`] lists, and from
/// `verdict.publication.v2` on the Merkle root over the run's entries and the tree size
/// (`domain::proofs`). A publication without a root is a v1 document and verifies as one;
/// one with `entry_format` 2 (salted review commitments) is a v3 document, signed over the
/// same fields under its own tag, so that it cannot pass for a v2 one or the reverse.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PublicationDocument {
    pub event: String,
    pub version: i32,
    #[serde(rename = "final")]
    pub is_final: bool,
    pub run: String,
    pub result_hash: String,
    pub published_at: String,
    /// Lower-case hex; absent on a v1 document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merkle_root: Option<String>,
    /// Absent on a v1 document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree_size: Option<u64>,
    /// 2 on a v3 document (`proofs::EntryFormat::Salted`); absent on v1 and v2 ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry_format: Option<i32>,
}

impl PublicationDocument {
    /// The document of a stored publication of `run` in event `event` (its external id).
    pub fn of(
        event: &str,
        p: &result_publication::Model,
        run: &calibration_run::Model,
    ) -> PublicationDocument {
        PublicationDocument {
            event: event.to_owned(),
            version: p.version,
            is_final: p.is_final,
            run: run.public_id.clone(),
            result_hash: run.result_hash.clone(),
            published_at: canonical_time(p.published_at),
            merkle_root: p.merkle_root.clone(),
            tree_size: p.merkle_size.map(|n| n.max(0) as u64),
            entry_format: p.entry_format,
        }
    }

    /// The signature's domain tag: v3 with a root over salted entries, v2 with a root over
    /// plain ones, v1 without.
    pub fn tag(&self) -> &'static str {
        match (&self.merkle_root, self.entry_format) {
            (Some(_), Some(_)) => PUBLICATION_V3_TAG,
            (Some(_), None) => PUBLICATION_V2_TAG,
            (None, _) => PUBLICATION_TAG,
        }
    }

    /// How the entries under the root spell their reviews.
    pub fn entry_format(&self) -> super::proofs::EntryFormat {
        super::proofs::EntryFormat::of(self.entry_format)
    }

    fn signed<T>(&self, with: impl FnOnce(&'static str, &[&[u8]]) -> T) -> T {
        let version = self.version.to_string();
        let v1 = publication_fields(
            &self.event,
            &version,
            self.is_final,
            &self.run,
            &self.result_hash,
            &self.published_at,
        );
        match (&self.merkle_root, self.tree_size) {
            (Some(root), size) => {
                let size = size.map(|n| n.to_string()).unwrap_or_default();
                let mut fields = v1.to_vec();
                fields.extend([root.as_bytes(), size.as_bytes()]);
                with(self.tag(), &fields)
            }
            (None, _) => with(PUBLICATION_TAG, &v1),
        }
    }

    pub fn sign(&self, signer: &Signer25519) -> String {
        self.signed(|tag, fields| signer.sign(tag, fields))
    }

    /// Whether `signature` (hex) signs this document with `key`. A v1 document (no root)
    /// with a tree size or an entry format, a v2 or v3 one without a size, or an entry
    /// format other than 2, is not a document anyone signed.
    pub fn signature_ok(&self, key: &PublicKey, signature: &str) -> bool {
        self.merkle_root.is_some() == self.tree_size.is_some()
            && match self.entry_format {
                None => true,
                Some(f) => f == super::proofs::EntryFormat::SALTED && self.merkle_root.is_some(),
            }
            && self.signed(|tag, fields| key.verify(tag, fields, signature))
    }
}

/// Publishes a run as the event's next result version. After a final publication, nothing
/// more is published.
pub async fn publish(
    w: &Write,
    org: Organizer<'_>,
    signer: &Signer25519,
    run_id: &str,
    is_final: bool,
) -> AppResult<(result_publication::Model, calibration_run::Model)> {
    let (txn, actor, e) = (w.txn(), org.actor(), org.event());
    let run = calibration_run::Entity::find()
        .filter(calibration_run::Column::PublicId.eq(run_id))
        .filter(calibration_run::Column::EventId.eq(e.id))
        .one(txn)
        .await?
        .ok_or_else(|| AppError::bad_input("run", "no such calibration run in this event"))?;
    let last = latest_publication(txn, e.id).await?;
    if last.as_ref().is_some_and(|p| p.is_final) {
        return Err(AppError::conflict("final results are already published"));
    }
    let version = last.map(|p| p.version + 1).unwrap_or(1);
    let public = crate::crypto::public_id("pub");
    let at = w.now();
    let at_text = canonical_time(at);
    let format = super::proofs::EntryFormat::Salted;
    let tree = super::proofs::ResultTree::of_run(&run, &parse_result(&run)?, format)?;
    let document = PublicationDocument {
        event: e.external_id.clone(),
        version,
        is_final,
        run: run.public_id.clone(),
        result_hash: run.result_hash.clone(),
        published_at: at_text.clone(),
        merkle_root: Some(tree.root_hex()),
        tree_size: Some(tree.size() as u64),
        entry_format: format.stored(),
    };
    let seq = w
        .append_in_place(
            Entry::new("results.published", "result_publication", &public)
                .by(actor.public_id())
                .in_event(&e.external_id)
                .with(json!({
                    "version": version,
                    "final": is_final,
                    "run": run.public_id,
                    "result_hash": run.result_hash,
                    "published_at": at_text,
                    "merkle_root": document.merkle_root,
                    "tree_size": document.tree_size,
                    "entry_format": document.entry_format,
                })),
        )
        .await?;
    let signature = document.sign(signer);
    let p = result_publication::ActiveModel {
        public_id: Set(public),
        event_id: Set(e.id),
        run_id: Set(run.id),
        version: Set(version),
        is_final: Set(is_final),
        published_at: Set(at),
        published_by: Set(actor.public_id().to_owned()),
        signature: Set(signature),
        audit_seq: Set(seq),
        merkle_root: Set(document.merkle_root),
        merkle_size: Set(Some(tree.size() as i64)),
        entry_format: Set(document.entry_format),
        ..Default::default()
    }
    .insert(txn)
    .await?;
    Ok((p, run))
}

pub async fn latest_publication<C: ConnectionTrait>(
    db: &C,
    event_id: i64,
) -> AppResult<Option<result_publication::Model>> {
    Ok(result_publication::Entity::find()
        .filter(result_publication::Column::EventId.eq(event_id))
        .order_by_desc(result_publication::Column::Version)
        .one(db)
        .await?)
}

/// Checks a stored run's signature with `key` (used by the offline verifier too).
pub fn run_signature_ok(key: &PublicKey, event: &str, run: &calibration_run::Model) -> bool {
    key.verify(
        RUN_TAG,
        &run_fields(
            event,
            &run.public_id,
            &run_created(run),
            &run.engine_version,
            &run.params,
            &run.inputs_hash,
            &run.result_hash,
        ),
        &run.signature,
    )
}

pub fn published_at_text(t: DateTime<Utc>) -> String {
    canonical_time(t)
}

/// The deployment's signing key for a command that signs (serve, checkpoints, exports):
/// the key file when it exists, else a new key, but never silently. When the key file is
/// missing and the database already holds calibration runs signed by another key, every
/// bundle exported afterwards would fail verification: refused unless `new_key` (the
/// operator's `--new-key`) says the old key is gone for good.
pub async fn signing_key<C: ConnectionTrait>(
    db: &C,
    path: &std::path::Path,
    new_key: bool,
) -> AppResult<Signer25519> {
    if let Some(signer) = Signer25519::load(path)? {
        return Ok(signer);
    }
    let signed_by = calibration_run::Entity::find()
        .order_by_desc(calibration_run::Column::Id)
        .one(db)
        .await?
        .map(|r| r.key_fingerprint);
    if let (Some(fingerprint), false) = (&signed_by, new_key) {
        return Err(AppError::conflict(format!(
            "the signing key file {} does not exist, but this database holds results signed by \
             the key with fingerprint {fingerprint}. Restore that key file (or point --key-file \
             at it); or, if it is lost for good, start once with --new-key to sign from now on \
             with a new key (bundles exported earlier keep verifying against the old fingerprint)",
            path.display()
        )));
    }
    let signer = Signer25519::load_or_create(path)?;
    match signed_by {
        Some(old) => tracing::warn!(
            path = %path.display(),
            old = %old,
            new = %signer.fingerprint(),
            "created a new signing key (--new-key): earlier results stay signed by the old one"
        ),
        None => tracing::info!(
            path = %path.display(),
            fingerprint = %signer.fingerprint(),
            "created the deployment's signing key"
        ),
    }
    Ok(signer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::synth::{Panel, SynthParams};

    #[test]
    fn pinned_inputs_and_results_round_trip_exactly() {
        let panel = Panel::generate(SynthParams::realistic(30, 10, 3, 7));
        let (pinned, text) = pin(&panel.input).unwrap();
        let (again, text2) = pin(&pinned).unwrap();
        assert_eq!(text, text2);
        assert_eq!(pinned, again);
        let params = Params {
            bootstrap: 20,
            ..Params::default_for(3)
        };
        let r = calibrate::calibrate(&pinned, &params);
        let json = calibrate::canonical_json(&r);
        let parsed: CalibrationResult = serde_json::from_str(&json).unwrap();
        assert_eq!(calibrate::canonical_json(&parsed), json);
        // Re-running from the pinned text gives the same bytes.
        let from_file: CalibrationInput = serde_json::from_str(&text).unwrap();
        assert_eq!(
            calibrate::canonical_json(&calibrate::calibrate(&from_file, &params)),
            json
        );
    }

    #[test]
    fn weighted_total_scales_to_unit_interval() {
        let c = |key: &str, w: f64| criterion::Model {
            id: 1,
            public_id: String::new(),
            event_id: 1,
            key: key.into(),
            name: key.into(),
            weight: w,
            min_score: 1,
            max_score: 5,
            position: 1,
            description: String::new(),
        };
        let rubric = vec![c("a", 1.0), c("b", 3.0)];
        let s = |a, b| HashMap::from([("a".to_string(), a), ("b".to_string(), b)]);
        assert_eq!(weighted_total(&rubric, &s(1, 1)), Some(0.0));
        assert_eq!(weighted_total(&rubric, &s(5, 5)), Some(1.0));
        assert_eq!(weighted_total(&rubric, &s(5, 1)), Some(0.25));
        assert_eq!(weighted_total(&rubric, &HashMap::new()), None);
    }
}
