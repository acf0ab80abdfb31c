//! `verdict event`: signed event bundles, exported from one deployment and imported into
//! another.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
use verdict::config::StoreConfig;
use verdict::crypto::signing::PublicKey;
use verdict::error::{AppError, AppResult};
use verdict::event_bundle;

use super::{Commit, open, signing_key, write_in};

#[derive(Subcommand)]
pub(super) enum EventCmd {
    /// Write the event as one signed JSON document (verdict.event-bundle.v1): settings,
    /// tracks, rubric, people, roles, teams, projects, prizes, the vote's configuration;
    /// no reviews, scores, results, audit chain or passwords. Never overwrites FILE.
    Export {
        /// The event's slug.
        #[arg(long)]
        event: String,
        /// The file to write.
        file: PathBuf,
    },
    /// Verify a bundle's signature, then import it as a new event (invite-only, nothing
    /// published, no passwords). An existing external id or slug is refused (CONFLICT) and
    /// nothing is written.
    Import {
        /// The bundle written by `event export`.
        file: PathBuf,
        /// Trust the key with this SHA-256 fingerprint (a bundle from another deployment).
        /// Without --key or --public-key, only this deployment's key is trusted.
        #[arg(long, value_name = "FINGERPRINT", conflicts_with = "public_key")]
        key: Option<String>,
        /// Trust this Ed25519 public key (PEM file).
        #[arg(long, value_name = "FILE")]
        public_key: Option<PathBuf>,
        /// Import under this slug instead of the bundle's.
        #[arg(long)]
        slug: Option<String>,
        /// Import under this external id instead of the bundle's.
        #[arg(long)]
        external_id: Option<String>,
    },
}

pub(super) async fn run(store: &StoreConfig, cmd: EventCmd) -> AppResult<ExitCode> {
    match cmd {
        EventCmd::Export { event, file } => {
            let db = open(store).await?;
            let signer = signing_key(&db, store).await?;
            let text = event_bundle::export(&db.conn, &signer, &event).await?;
            let mut out = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&file)
                .map_err(|e| AppError::bad_input("FILE", format!("{}: {e}", file.display())))?;
            std::io::Write::write_all(&mut out, text.as_bytes())
                .map_err(|e| AppError::Internal(format!("cannot write {}: {e}", file.display())))?;
            println!("event bundle written to {}", file.display());
        }
        EventCmd::Import {
            file,
            key,
            public_key,
            slug,
            external_id,
        } => {
            let text = std::fs::read(&file)
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .ok_or_else(|| {
                    AppError::bad_input("file", format!("cannot read {} as text", file.display()))
                })?;
            let db = open(store).await?;
            let trusted: PublicKey = match (key, public_key) {
                (Some(f), _) => event_bundle::embedded_key(&text)
                    .filter(|k| f.trim().eq_ignore_ascii_case(&k.fingerprint()))
                    .ok_or_else(|| {
                        AppError::bad_input("key", "the bundle is not signed by the pinned key")
                    })?,
                (None, Some(path)) => {
                    let pem = std::fs::read_to_string(&path).map_err(|e| {
                        AppError::bad_input("public-key", format!("{}: {e}", path.display()))
                    })?;
                    PublicKey::from_pem(&pem)?
                }
                (None, None) => signing_key(&db, store).await?.public(),
            };
            // Verified before the write begins: a refused bundle writes nothing.
            let contents = event_bundle::verify(&text, &trusted)?;
            let (event, counts) = write_in(&db, Commit::Yes, async |w| {
                event_bundle::import(w, &contents, slug.as_deref(), external_id.as_deref()).await
            })
            .await?;
            println!(
                "imported {} ({}) from a bundle signed by {}: {} rows inserted {}",
                event.slug,
                event.external_id,
                trusted.fingerprint(),
                counts.total(),
                serde_json::to_string(&counts).unwrap_or_default()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
