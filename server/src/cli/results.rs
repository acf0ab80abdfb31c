//! `verdict results`: export the published run as a signed bundle; verify one offline.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
use verdict::bundle::{self, Pin};
use verdict::config::StoreConfig;
use verdict::error::AppResult;

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
    for p in &report.passed {
        println!("ok    {p}");
    }
    for f in &report.failed {
        println!("FAIL  {f}");
    }
    if report.ok() {
        println!("PASS");
        ExitCode::SUCCESS
    } else {
        println!("FAIL");
        ExitCode::FAILURE
    }
}
