//! `verdict import`: an event fixture, or a Devpost export into an event.

use std::path::PathBuf;
use std::process::ExitCode;

use verdict::config::StoreConfig;
use verdict::domain::{devpost, import};
use verdict::error::{AppError, AppResult};

use super::{Commit, open, read_text, write_in};

// No doc comment: the command's help is the `Import` variant's.
#[derive(clap::Args)]
pub(super) struct Import {
    /// The fixture file (JSON).
    #[arg(required_unless_present = "devpost", conflicts_with = "devpost")]
    file: Option<PathBuf>,
    /// A Devpost submissions export (CSV): projects, teams, members, table numbers.
    #[arg(long, value_name = "FILE", requires = "event")]
    devpost: Option<PathBuf>,
    /// The event (slug) a Devpost export goes into.
    #[arg(long, value_name = "SLUG", requires = "devpost")]
    event: Option<String>,
    /// Print what a Devpost import would do; write nothing.
    #[arg(long, requires = "devpost")]
    dry_run: bool,
}

pub(super) async fn run(store: &StoreConfig, cmd: Import) -> AppResult<ExitCode> {
    match cmd {
        Import {
            devpost: Some(path),
            event: Some(slug),
            dry_run,
            ..
        } => {
            let db = open(store).await?;
            let text = read_text("devpost", &path)?;
            let commit = if dry_run { Commit::No } else { Commit::Yes };
            let report = write_in(&db, commit, async |w| {
                let e = w.event(&slug).await?;
                devpost::import_as(w, &e, &text).await
            })
            .await?;
            print!("{}", report.summary(dry_run));
        }
        Import { file: None, .. } => {
            return Err(AppError::bad_input(
                "file",
                "name a fixture file or --devpost FILE",
            ));
        }
        Import {
            file: Some(file), ..
        } => {
            let db = open(store).await?;
            let text = read_text("file", &file)?;
            let value = serde_json::from_str(&text)
                .map_err(|e| AppError::bad_input("file", format!("not JSON: {e}")))?;
            let fixture = import::parse(value)?;
            let (event, counts) = write_in(&db, Commit::Yes, async |w| {
                import::import(w, &fixture).await
            })
            .await?;
            println!(
                "imported {} ({}): {} rows inserted {}",
                event.slug,
                event.external_id,
                counts.total(),
                serde_json::to_string(&counts).unwrap_or_default()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
