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
//! | `publication.json` | the publication (version, final, time) and its signature |
//! | `public-key.pem` | the deployment's Ed25519 public key |
//! | `checkpoint.json` | a signed audit checkpoint at or above the run's audit entry |
//! | `audit.json` | the audit rows from the run's entry up to the checkpoint |
//!
//! Verification re-runs the estimator from `inputs.json` and `params.json`, compares the
//! canonical result byte for byte, checks both signatures, and recomputes the audit rows
//! from the run's entry to the signed checkpoint head.

use std::path::Path;

use entity::{audit_event, calibration_run, event, result_publication};
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder};
use serde::{Deserialize, Serialize};

use crate::audit::{self, Checkpoint};
use crate::calibrate::{self, CalibrationInput, Params};
use crate::crypto::sha256_hex;
use crate::crypto::signing::{PUBLICATION_TAG, PublicKey, RUN_TAG, Signer25519};
use crate::domain::results::{publication_fields, run_fields};
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
    let rows = audit_event::Entity::find()
        .filter(audit_event::Column::Seq.gte(run.audit_seq))
        .filter(audit_event::Column::Seq.lte(checkpoint.seq))
        .order_by_asc(audit_event::Column::Seq)
        .all(db)
        .await?;
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

fn read(dir: &Path, name: &str, report: &mut Report) -> Option<String> {
    match std::fs::read_to_string(dir.join(name)) {
        Ok(t) => Some(t),
        Err(e) => {
            report.failed.push(format!("{name}: cannot read ({e})"));
            None
        }
    }
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

/// Verifies a bundle offline. Never touches a database or the network.
pub fn verify(dir: &Path) -> Report {
    let mut r = Report::default();
    let files = [
        "inputs.json",
        "params.json",
        "result.json",
        "run.json",
        "publication.json",
        "public-key.pem",
        "checkpoint.json",
        "audit.json",
    ];
    let texts: Vec<Option<String>> = files.iter().map(|f| read(dir, f, &mut r)).collect();
    let [
        Some(inputs),
        Some(params),
        Some(result),
        Some(run),
        Some(publication),
        Some(pem),
        Some(checkpoint),
        Some(audit_rows),
    ] = <[Option<String>; 8]>::try_from(texts).unwrap_or_default()
    else {
        return r;
    };
    let key = match PublicKey::from_pem(&pem) {
        Ok(k) => k,
        Err(_) => {
            r.failed
                .push("public-key.pem: not an Ed25519 public key".into());
            return r;
        }
    };
    let (Some(run), Some(publication), Some(checkpoint), Some(rows)) = (
        parse::<RunFile>("run.json", &run, &mut r),
        parse::<PublicationFile>("publication.json", &publication, &mut r),
        parse::<Checkpoint>("checkpoint.json", &checkpoint, &mut r),
        parse::<Vec<audit_event::Model>>("audit.json", &audit_rows, &mut r),
    ) else {
        return r;
    };

    let fingerprint = key.fingerprint();
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
        run.engine_version == calibrate::ENGINE_VERSION,
        "engine version matches this verifier",
    );

    // Re-run the estimator from the pinned inputs.
    match (
        serde_json::from_str::<CalibrationInput>(&inputs),
        serde_json::from_str::<Params>(&params),
    ) {
        (Ok(input), Ok(p)) => {
            let recomputed = calibrate::canonical_json(&calibrate::calibrate(&input, &p));
            r.check(
                recomputed == result,
                "re-running the estimator reproduces result.json byte for byte",
            );
            let canonical_params = crate::domain::results::params_json(&p);
            r.check(canonical_params == params, "params.json is canonical");
        }
        _ => r
            .failed
            .push("inputs.json or params.json does not parse".into()),
    }

    r.check(
        key.verify(
            RUN_TAG,
            &run_fields(
                &run.event,
                &run.run,
                &run.created_at,
                &run.engine_version,
                &params,
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
    r.check(
        key.verify(
            PUBLICATION_TAG,
            &publication_fields(
                &publication.event,
                &publication.version.to_string(),
                publication.is_final,
                &publication.run,
                &publication.result_hash,
                &publication.published_at,
            ),
            &publication.signature,
        ),
        "publication signature (verdict.publication.v1)",
    );
    r.check(
        checkpoint.signature_ok(&key),
        "checkpoint signature (verdict.checkpoint.v1)",
    );
    r.check(
        run.audit_seq <= checkpoint.seq,
        "the run's audit entry is at or below the checkpoint",
    );

    // The audit rows link the run's entry to the signed head.
    let mut chain_ok = !rows.is_empty() && rows[0].seq == run.audit_seq;
    if chain_ok {
        let mut prev = rows[0].prev_hash.clone();
        for (i, row) in rows.iter().enumerate() {
            if audit::check_row(row, &prev, run.audit_seq + i as i64).is_some() {
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
    if publication.audit_seq <= checkpoint.seq {
        let pub_row = rows
            .iter()
            .find(|row| row.seq == publication.audit_seq)
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
            }),
            "the publication's audit entry records this publication",
        );
    }
    r
}
