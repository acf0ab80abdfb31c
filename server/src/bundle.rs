//! Self-contained result bundles: `verdict results export` writes one, and
//! `verdict results verify` checks it on a machine that never saw the deployment.
//!
//! A bundle is a directory of plain files:
//!
//! | file | what |
//! | --- | --- |
//! | `inputs.json` | the run's pinned canonical inputs, byte for byte |
//! | `params.json` | the run's canonical parameters |
//! | `result.json` | the run's canonical result |
//! | `run.json` | event, run id, creation time, engine version, hashes, signature |
//! | `publication.json` | the publication (version, final, time, and from `verdict.publication.v2` on the Merkle root of its entries and their number; from `.v3` on `entry_format` 2: the entries hold salted review commitments) and its signature |
//! | `public-key.pem` | the deployment's Ed25519 public key |
//! | `checkpoint.json` | a signed audit checkpoint at or above the run's audit entry |
//! | `audit.json` | the audit rows from the run's entry up to the checkpoint; rows of other events carry an empty `payload` (withheld) |
//!
//! Verification re-runs the estimator from `inputs.json` and `params.json` with the run's
//! engine version, rebuilds the Merkle tree of the entries (`domain::proofs`) and compares
//! its root with the signed one (a bundle of a v1 publication has no root and verifies as
//! before), compares the canonical result (byte for byte; from
//! `verdict-calibrate/2` on, floats may instead agree within a floating-point tolerance,
//! see [`calibrate::compare_results`]), checks both signatures, and recomputes the audit
//! rows from the run's entry to the signed checkpoint head. Runs of events with pairwise
//! comparisons (`verdict-calibrate/6` to `/8`: `inputs.json` then carries them) re-run the same
//! way, with that engine.
//!
//! Every byte counts: each file must be exactly what export writes (the JSON files are
//! re-serialized and compared byte for byte, the key re-encoded), so a bundle that differs
//! from a valid one in any byte fails. The pointers that are not signed themselves
//! (`run.json`'s and `publication.json`'s `audit_seq`) are checked against the audit rows,
//! which the signed checkpoint covers.
//!
//! Other events' audit rows are in the bundle only because the chain runs through them.
//! Their payloads (titles, names, scores of another event) are withheld; the row hash
//! commits to a payload only through `payload_hash`, so the chain still recomputes. A
//! verifier should pin the deployment's key (`--key FINGERPRINT` or `--public-key FILE`);
//! without a pin it trusts the key inside the bundle and says so.

use std::path::Path;

use entity::{audit_event, calibration_run, event, result_publication};
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder};
use serde::{Deserialize, Serialize};

use crate::audit::{self, Checkpoint};
use crate::calibrate::{
    self, CalibrationInput, FLOAT_ABS_TOLERANCE, FLOAT_REL_TOLERANCE, Params, Reproduction,
};
use crate::crypto::sha256_hex;
use crate::crypto::signing::{PublicKey, RUN_TAG, Signer25519};
use crate::domain::proofs::{EntryFormat, ResultTree};
use crate::domain::results::{PublicationDocument, run_fields};
use crate::error::{AppError, AppResult};

#[derive(Debug, Serialize, Deserialize, PartialEq)]
pub struct RunFile {
    pub event: String,
    pub run: String,
    pub created_at: String,
    pub engine_version: String,
    pub inputs_hash: String,
    pub result_hash: String,
    pub signature: String,
    pub key_fingerprint: String,
    pub audit_seq: i64,
}

#[derive(Debug, Serialize, Deserialize, PartialEq)]
pub struct PublicationFile {
    pub event: String,
    pub version: i32,
    #[serde(rename = "final")]
    pub is_final: bool,
    pub run: String,
    pub result_hash: String,
    pub published_at: String,
    pub signature: String,
    pub audit_seq: i64,
    /// The Merkle root over the run's entries (`domain::proofs`), signed with the
    /// publication (`verdict.publication.v2`); absent in a bundle of a v1 publication,
    /// whose file is exactly as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merkle_root: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree_size: Option<u64>,
    /// 2 when the entries hold salted review commitments (`verdict.publication.v3`);
    /// absent before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry_format: Option<i32>,
}

impl PublicationFile {
    fn document(&self) -> PublicationDocument {
        PublicationDocument {
            event: self.event.clone(),
            version: self.version,
            is_final: self.is_final,
            run: self.run.clone(),
            result_hash: self.result_hash.clone(),
            published_at: self.published_at.clone(),
            merkle_root: self.merkle_root.clone(),
            tree_size: self.tree_size,
            entry_format: self.entry_format,
        }
    }
}

fn write(dir: &Path, name: &str, text: &str) -> AppResult<()> {
    std::fs::write(dir.join(name), text)
        .map_err(|e| AppError::Internal(format!("cannot write {name}: {e}")))
}

fn pretty<T: Serialize>(v: &T) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default() + "\n"
}

/// Writes the bundle of the event's latest publication into `dir` (created; must be empty).
pub async fn export<C: ConnectionTrait>(
    db: &C,
    signer: &Signer25519,
    slug: &str,
    dir: &Path,
) -> AppResult<()> {
    let e: event::Model = crate::domain::event_by_slug(db, slug).await?;
    let publication = result_publication::Entity::find()
        .filter(result_publication::Column::EventId.eq(e.id))
        .order_by_desc(result_publication::Column::Version)
        .one(db)
        .await?
        .ok_or_else(|| AppError::conflict("this event has no published results yet"))?;
    let run = calibration_run::Entity::find_by_id(publication.run_id)
        .one(db)
        .await?
        .ok_or(AppError::NotFound("calibration run"))?;
    let checkpoint = audit::checkpoint(db, signer).await?;
    let rows: Vec<audit_event::Model> = audit_event::Entity::find()
        .filter(audit_event::Column::Seq.gte(run.audit_seq))
        .filter(audit_event::Column::Seq.lte(checkpoint.seq))
        .order_by_asc(audit_event::Column::Seq)
        .all(db)
        .await?
        .into_iter()
        .map(|mut row| {
            if row.event != e.external_id {
                row.payload = String::new();
            }
            row
        })
        .collect();
    if dir.exists()
        && std::fs::read_dir(dir)
            .map(|mut d| d.next().is_some())
            .unwrap_or(true)
    {
        return Err(AppError::bad_input(
            "DIR",
            format!("{} exists and is not empty", dir.display()),
        ));
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| AppError::Internal(format!("cannot create {}: {e}", dir.display())))?;
    write(dir, "inputs.json", &run.inputs)?;
    write(dir, "params.json", &run.params)?;
    write(dir, "result.json", &run.result)?;
    write(
        dir,
        "run.json",
        &pretty(&RunFile {
            event: e.external_id.clone(),
            run: run.public_id.clone(),
            created_at: crate::domain::results::run_created(&run),
            engine_version: run.engine_version.clone(),
            inputs_hash: run.inputs_hash.clone(),
            result_hash: run.result_hash.clone(),
            signature: run.signature.clone(),
            key_fingerprint: run.key_fingerprint.clone(),
            audit_seq: run.audit_seq,
        }),
    )?;
    write(
        dir,
        "publication.json",
        &pretty(&PublicationFile {
            event: e.external_id.clone(),
            version: publication.version,
            is_final: publication.is_final,
            run: run.public_id.clone(),
            result_hash: run.result_hash.clone(),
            published_at: crate::domain::results::published_at_text(publication.published_at),
            signature: publication.signature.clone(),
            audit_seq: publication.audit_seq,
            merkle_root: publication.merkle_root.clone(),
            tree_size: publication.merkle_size.map(|n| n.max(0) as u64),
            entry_format: publication.entry_format,
        }),
    )?;
    write(dir, "public-key.pem", &signer.public().to_pem())?;
    write(dir, "checkpoint.json", &pretty(&checkpoint))?;
    write(dir, "audit.json", &pretty(&rows))?;
    Ok(())
}

/// The outcome of verifying a bundle: every check that failed, by name.
#[derive(Debug, Default)]
pub struct Report {
    pub passed: Vec<String>,
    pub failed: Vec<String>,
    /// The fingerprint of the key the signatures were checked with.
    pub trusted_key: Option<String>,
    /// Whether that key was pinned by the caller (rather than taken from the bundle).
    pub pinned: bool,
}

impl Report {
    fn check(&mut self, ok: bool, what: &str) {
        if ok {
            self.passed.push(what.to_owned());
        } else {
            self.failed.push(what.to_owned());
        }
    }
    pub fn ok(&self) -> bool {
        self.failed.is_empty() && !self.passed.is_empty()
    }
}

/// The key a verifier trusts, named by the person verifying.
#[derive(Debug, Clone)]
pub enum Pin {
    /// The key's SHA-256 fingerprint (hex, as `/.well-known/verdict-signing-key` gives it).
    Fingerprint(String),
    /// The key itself, as PEM.
    PublicKeyPem(String),
}

/// The files of a bundle, in the order export writes them.
pub const FILES: [&str; 8] = [
    "inputs.json",
    "params.json",
    "result.json",
    "run.json",
    "publication.json",
    "public-key.pem",
    "checkpoint.json",
    "audit.json",
];

/// Verifies a bundle directory offline. Never touches a database or the network.
pub fn verify(dir: &Path, pin: Option<&Pin>) -> Report {
    let mut failed = vec![];
    let files: Vec<Vec<u8>> = FILES
        .iter()
        .map(|f| match std::fs::read(dir.join(f)) {
            Ok(b) => b,
            Err(e) => {
                failed.push(format!("{f}: cannot read ({e})"));
                vec![]
            }
        })
        .collect();
    if !failed.is_empty() {
        return Report {
            failed,
            ..Default::default()
        };
    }
    verify_files(&files, pin)
}

fn parse<T: for<'de> Deserialize<'de>>(name: &str, text: &str, report: &mut Report) -> Option<T> {
    match serde_json::from_str(text) {
        Ok(v) => Some(v),
        Err(e) => {
            report.failed.push(format!("{name}: not valid ({e})"));
            None
        }
    }
}

/// Verifies a bundle's files (their bytes, in the order of [`FILES`]).
pub fn verify_files(files: &[Vec<u8>], pin: Option<&Pin>) -> Report {
    let mut r = Report::default();
    let mut texts = Vec::with_capacity(FILES.len());
    for (name, bytes) in FILES.iter().zip(files) {
        match std::str::from_utf8(bytes) {
            Ok(t) => texts.push(t),
            Err(_) => r.failed.push(format!("{name}: not UTF-8")),
        }
    }
    let [
        inputs,
        params,
        result,
        run,
        publication,
        pem,
        checkpoint,
        audit_rows,
    ] = <[&str; 8]>::try_from(texts).unwrap_or_default();
    if !r.failed.is_empty() {
        return r;
    }
    let key = match PublicKey::from_pem(pem) {
        Ok(k) if k.to_pem() == pem => k,
        _ => {
            r.failed
                .push("public-key.pem: not an Ed25519 public key as export writes it".into());
            return r;
        }
    };
    let (Some(run_file), Some(publication_file), Some(checkpoint_file), Some(rows)) = (
        parse::<RunFile>("run.json", run, &mut r),
        parse::<PublicationFile>("publication.json", publication, &mut r),
        parse::<Checkpoint>("checkpoint.json", checkpoint, &mut r),
        parse::<Vec<audit_event::Model>>("audit.json", audit_rows, &mut r),
    ) else {
        return r;
    };
    r.check(
        pretty(&run_file) == run
            && pretty(&publication_file) == publication
            && pretty(&checkpoint_file) == checkpoint
            && pretty(&rows) == audit_rows,
        "run.json, publication.json, checkpoint.json and audit.json are byte for byte as exported",
    );
    let (run, publication, checkpoint) = (run_file, publication_file, checkpoint_file);

    let fingerprint = key.fingerprint();
    r.trusted_key = Some(fingerprint.clone());
    match pin {
        None => {}
        Some(Pin::Fingerprint(f)) => {
            r.pinned = true;
            r.check(
                f.trim().eq_ignore_ascii_case(&fingerprint),
                "the bundle's key is the pinned key",
            );
        }
        Some(Pin::PublicKeyPem(p)) => {
            r.pinned = true;
            r.check(
                PublicKey::from_pem(p).is_ok_and(|k| k.fingerprint() == fingerprint),
                "the bundle's key is the pinned key",
            );
        }
    }
    r.check(
        run.key_fingerprint == fingerprint && checkpoint.key_fingerprint == fingerprint,
        "key fingerprint matches run and checkpoint",
    );
    r.check(
        sha256_hex(inputs.as_bytes()) == run.inputs_hash,
        "inputs.json matches the run's inputs hash",
    );
    r.check(
        sha256_hex(result.as_bytes()) == run.result_hash,
        "result.json matches the run's result hash",
    );
    r.check(
        calibrate::ENGINE_VERSIONS.contains(&run.engine_version.as_str()),
        &format!(
            "engine version {:?} is one this verifier can re-run ({})",
            run.engine_version,
            calibrate::ENGINE_VERSIONS.join(", ")
        ),
    );
    r.check(
        key.verify(
            RUN_TAG,
            &run_fields(
                &run.event,
                &run.run,
                &run.created_at,
                &run.engine_version,
                params,
                &run.inputs_hash,
                &run.result_hash,
            ),
            &run.signature,
        ),
        "run signature (verdict.run.v1)",
    );
    r.check(
        publication.run == run.run
            && publication.result_hash == run.result_hash
            && publication.event == run.event,
        "publication names this run and result",
    );
    let document = publication.document();
    r.check(
        document.signature_ok(&key, &publication.signature),
        &format!("publication signature ({})", document.tag()),
    );

    r.check(
        checkpoint.signature_ok(&key),
        "checkpoint signature (verdict.checkpoint.v1)",
    );
    r.check(
        run.audit_seq <= checkpoint.seq && publication.audit_seq <= checkpoint.seq,
        "the run's and the publication's audit entries are at or below the checkpoint",
    );

    // The audit rows link the run's entry to the signed head. Rows of the run's event are
    // checked whole; other events' rows, whose payloads are withheld, by their link.
    let mut chain_ok = !rows.is_empty() && rows[0].seq == run.audit_seq;
    if chain_ok {
        let mut prev = rows[0].prev_hash.clone();
        for (i, row) in rows.iter().enumerate() {
            let seq = run.audit_seq + i as i64;
            let problem = if row.event == run.event {
                audit::check_row(row, &prev, seq)
            } else {
                audit::check_link(row, &prev, seq).or_else(|| {
                    (!row.payload.is_empty()).then_some("another event's payload is not withheld")
                })
            };
            if problem.is_some() {
                chain_ok = false;
                break;
            }
            prev = row.row_hash.clone();
        }
        chain_ok = chain_ok
            && rows
                .last()
                .is_some_and(|l| l.seq == checkpoint.seq && l.row_hash == checkpoint.head_hash);
    }
    r.check(
        chain_ok,
        "audit rows recompute from the run's entry to the checkpoint head",
    );
    let run_row = rows
        .first()
        .and_then(|row| serde_json::from_str::<serde_json::Value>(&row.payload).ok());
    r.check(
        run_row.is_some_and(|p| {
            p["run"] == run.run.as_str()
                && p["result_hash"] == run.result_hash.as_str()
                && p["inputs_hash"] == run.inputs_hash.as_str()
        }) && rows
            .first()
            .is_some_and(|row| row.action == "calibration.ran" && row.event == run.event),
        "the run's audit entry records this run and its hashes",
    );
    let pub_row = rows
        .iter()
        .find(|row| row.seq == publication.audit_seq)
        .filter(|row| row.event == publication.event)
        .and_then(|row| {
            serde_json::from_str::<serde_json::Value>(&row.payload)
                .ok()
                .map(|p| (row.action.clone(), p))
        });
    r.check(
        pub_row.is_some_and(|(action, p)| {
            action == "results.published"
                && p["version"] == publication.version
                && p["final"] == publication.is_final
                && p["run"] == publication.run.as_str()
                && p["published_at"] == publication.published_at.as_str()
                && p.get("merkle_root").and_then(|v| v.as_str())
                    == publication.merkle_root.as_deref()
                && p.get("entry_format").and_then(|v| v.as_i64())
                    == publication.entry_format.map(i64::from)
        }),
        "the publication's audit entry records this publication",
    );

    // Re-run the estimator last, and only for a bundle that passed everything else: it is
    // the one expensive check.
    if !r.failed.is_empty() {
        r.failed
            .push("the estimator was not re-run: earlier checks failed".into());
        return r;
    }
    // From v2 on the signed root must be the root of the bundle's own entries (rebuilt,
    // like the estimator, only for a bundle that passed the cheap checks); a v1
    // publication has none and verifies as before.
    if let Some(root) = &publication.merkle_root {
        let rebuilt = serde_json::from_str::<calibrate::CalibrationResult>(result)
            .ok()
            .and_then(|parsed| {
                ResultTree::of(inputs, &parsed, EntryFormat::of(publication.entry_format)).ok()
            });
        r.check(
            rebuilt.is_some_and(|t| {
                &t.root_hex() == root && Some(t.size() as u64) == publication.tree_size
            }),
            "the publication's Merkle root is the root of the entries of inputs.json and \
             result.json",
        );
    }
    match (
        serde_json::from_str::<CalibrationInput>(inputs),
        serde_json::from_str::<Params>(params),
    ) {
        (Ok(input), Ok(p)) => {
            let canonical_params = crate::domain::results::params_json(&p);
            r.check(canonical_params == params, "params.json is canonical");
            // Re-run with the engine that computed the result, however old.
            let rerun = format!("re-running the estimator ({})", run.engine_version);
            match calibrate::calibrate_version(&input, &p, &run.engine_version)
                .map(|recomputed| calibrate::compare_results(result, &recomputed))
            {
                None => r.failed.push(format!(
                    "the estimator was not re-run: unknown engine version {:?}",
                    run.engine_version
                )),
                Some(Reproduction::Exact) => r
                    .passed
                    .push(format!("{rerun} reproduces result.json byte for byte")),
                Some(Reproduction::WithinTolerance) => r.passed.push(format!(
                    "{rerun} reproduces result.json within floating-point tolerance \
                     (floats within {FLOAT_REL_TOLERANCE:e} relative or \
                     {FLOAT_ABS_TOLERANCE:e} absolute, everything else equal)"
                )),
                Some(Reproduction::Differs) => {
                    r.failed.push(format!("{rerun} reproduces result.json"))
                }
            }
        }
        _ => r
            .failed
            .push("inputs.json or params.json does not parse".into()),
    }
    r
}
