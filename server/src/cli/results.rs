//! `verdict results`: export the published run as a signed bundle; verify one offline;
//! prove one project's entry and check the proof offline; compare two publications.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
use verdict::bundle::{self, Pin};
use verdict::config::StoreConfig;
use verdict::domain::proofs;
use verdict::error::{AppError, AppResult};

use super::{open, signing_key};

#[derive(Subcommand)]
pub(super) enum ResultsCmd {
    /// Write the event's published run as a signed, self-contained bundle.
    Export {
        /// The event's slug.
        #[arg(long)]
        event: String,
        /// The directory to write the bundle into.
        dir: PathBuf,
    },
    /// Offline: re-run the estimator from a bundle's pinned inputs and check its hashes and
    /// signatures. Exit 0 on PASS, 1 naming what failed.
    Verify {
        /// The bundle directory written by `results export`.
        dir: PathBuf,
        /// Trust only the key with this SHA-256 fingerprint (hex; the deployment publishes
        /// it at /.well-known/verdict-signing-key). Without --key or --public-key the key
        /// inside the bundle is trusted, and the verifier says so.
        #[arg(long, value_name = "FINGERPRINT", conflicts_with = "public_key")]
        key: Option<String>,
        /// Trust only this Ed25519 public key (PEM file).
        #[arg(long, value_name = "FILE")]
        public_key: Option<PathBuf>,
    },
    /// Print one project's Merkle inclusion proof under the event's signed publication, as
    /// a JSON file that `results verify-proof` checks offline.
    Prove {
        /// The event's slug.
        #[arg(long)]
        event: String,
        /// The project's id or external id.
        #[arg(long)]
        project: String,
        /// The publication version (default: the latest).
        #[arg(long)]
        version: Option<i32>,
        /// Write the proof to this file instead of stdout.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Offline: check an inclusion proof file against the signed root, one line per check,
    /// then PASS (exit 0) or FAIL (exit 1).
    VerifyProof {
        /// The proof file written by `results prove`.
        file: PathBuf,
        /// Trust only the key with this SHA-256 fingerprint (hex; the deployment publishes
        /// it at /.well-known/verdict-signing-key).
        #[arg(long, value_name = "FINGERPRINT")]
        key: String,
    },
    /// Compare two publications of an event entry by entry: whether the later one kept
    /// every entry of the earlier one byte for byte, and which changed. Exit 0 when it did,
    /// 1 when an entry changed or went, or a signed root does not match its run.
    Consistency {
        /// The event's slug.
        #[arg(long)]
        event: String,
        /// The earlier version (default: the one before `--to`).
        #[arg(long)]
        from: Option<i32>,
        /// The later version (default: the latest).
        #[arg(long)]
        to: Option<i32>,
    },
}

pub(super) async fn run(store: &StoreConfig, cmd: ResultsCmd) -> AppResult<ExitCode> {
    match cmd {
        ResultsCmd::Export { event, dir } => {
            let db = open(store).await?;
            let signer = signing_key(&db, store).await?;
            bundle::export(&db.conn, &signer, &event, &dir).await?;
            println!("bundle written to {}", dir.display());
            Ok(ExitCode::SUCCESS)
        }
        ResultsCmd::Verify {
            dir,
            key,
            public_key,
        } => Ok(verify(&dir, key, public_key)),
        ResultsCmd::Prove {
            event,
            project,
            version,
            out,
        } => {
            let db = open(store).await?;
            let key = signing_key(&db, store).await?.public();
            let file = proofs::prove(&db.conn, &event, &project, version, &key)
                .await?
                .to_file();
            match out {
                Some(path) => {
                    std::fs::write(&path, file).map_err(|e| {
                        AppError::Internal(format!("cannot write {}: {e}", path.display()))
                    })?;
                    eprintln!("proof written to {}", path.display());
                }
                None => print!("{file}"),
            }
            Ok(ExitCode::SUCCESS)
        }
        ResultsCmd::VerifyProof { file, key } => {
            let text = match std::fs::read_to_string(&file) {
                Ok(t) => t,
                Err(e) => {
                    println!("FAIL  cannot read {}: {e}", file.display());
                    println!("FAIL");
                    return Ok(ExitCode::FAILURE);
                }
            };
            let checks = proofs::verify(&text, &key);
            Ok(report(&checks.passed, &checks.failed))
        }
        ResultsCmd::Consistency { event, from, to } => {
            let db = open(store).await?;
            let later = proofs::published(&db.conn, &event, to).await?;
            let from = match from {
                Some(v) => v,
                None if later.publication.version > 1 => later.publication.version - 1,
                None => {
                    return Err(AppError::bad_input(
                        "from",
                        "the event has one publication: nothing to compare it with",
                    ));
                }
            };
            let earlier = proofs::published(&db.conn, &event, Some(from)).await?;
            let (a, b) = (earlier.publication.version, later.publication.version);
            let mut passed = vec![];
            let mut failed = vec![];
            for p in [&earlier, &later] {
                let v = p.publication.version;
                match &p.publication.merkle_root {
                    None => passed.push(format!(
                        "version {v} is a verdict.publication.v1 document (no root): its \
                         entries are rebuilt from its run, unsigned"
                    )),
                    Some(root) if p.root_matches() => passed.push(format!(
                        "version {v}: {} entries rebuild its signed root {root}",
                        p.tree.size()
                    )),
                    Some(root) => failed.push(format!(
                        "version {v}: the entries rebuilt from its run do not give its signed \
                         root {root}"
                    )),
                }
            }
            // Compared as the later version spells reviews (v1 commits to no spelling; a v2
            // one spelt them as plain hashes).
            let format = later.format();
            if earlier.publication.merkle_root.is_some() && earlier.format() != format {
                passed.push(format!(
                    "version {a}'s entries, rebuilt from its run, are compared with review \
                     commitments as version {b} spells them"
                ));
            }
            let c = proofs::compare(&earlier.entries_in(format)?, &later.tree.entries);
            for id in &c.changed {
                failed.push(format!("{id}: entry changed from version {a} to {b}"));
            }
            for id in &c.removed {
                failed.push(format!("{id}: in version {a}, not in version {b}"));
            }
            for id in &c.added {
                passed.push(format!("{id}: new in version {b}"));
            }
            if c.consistent() {
                passed.push(format!(
                    "version {b} keeps all {} entries of version {a} byte for byte",
                    c.kept
                ));
            } else {
                failed.push(format!(
                    "version {b} keeps {} of the {} entries of version {a} byte for byte",
                    c.kept,
                    earlier.tree.size()
                ));
            }
            Ok(report(&passed, &failed))
        }
    }
}

/// One line per check, then PASS (exit 0) or FAIL (exit 1).
fn report(passed: &[String], failed: &[String]) -> ExitCode {
    for p in passed {
        println!("ok    {p}");
    }
    for f in failed {
        println!("FAIL  {f}");
    }
    if failed.is_empty() && !passed.is_empty() {
        println!("PASS");
        ExitCode::SUCCESS
    } else {
        println!("FAIL");
        ExitCode::FAILURE
    }
}

/// `verdict results verify`: offline, one line per check, then PASS or FAIL.
fn verify(dir: &std::path::Path, key: Option<String>, public_key: Option<PathBuf>) -> ExitCode {
    let pin = match (key, public_key) {
        (Some(f), _) => Some(Pin::Fingerprint(f)),
        (None, Some(path)) => match std::fs::read_to_string(&path) {
            Ok(pem) => Some(Pin::PublicKeyPem(pem)),
            Err(e) => {
                eprintln!("cannot read {}: {e}", path.display());
                return ExitCode::FAILURE;
            }
        },
        (None, None) => None,
    };
    let report = bundle::verify(dir, pin.as_ref());
    match (&report.trusted_key, report.pinned) {
        (Some(f), true) => println!("key   pinned: {f}"),
        (Some(f), false) => {
            println!("key   {f} (taken from the bundle: pin it with --key {f})")
        }
        (None, _) => {}
    }
    self::report(&report.passed, &report.failed)
}
