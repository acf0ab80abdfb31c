//! `verdict audit`: verify the chain, print a signed checkpoint. Reads only.

use std::process::ExitCode;

use clap::Subcommand;
use verdict::audit::{self, Verification};
use verdict::config::StoreConfig;
use verdict::error::AppResult;

use super::{open, signing_key};

#[derive(Subcommand)]
pub(super) enum AuditCmd {
    /// Recompute the hash chain; exit 1 naming the first seq that does not fit.
    Verify,
    /// Print a signed checkpoint (seq, head hash, time) as JSON.
    Checkpoint,
}

pub(super) async fn run(store: &StoreConfig, cmd: AuditCmd) -> AppResult<ExitCode> {
    let db = open(store).await?;
    match cmd {
        AuditCmd::Verify => match audit::verify_snapshot(&db).await? {
            Verification::Intact {
                seq,
                hash,
                redacted,
                pending,
            } => {
                let erased = match redacted {
                    0 => String::new(),
                    n => format!(
                        "; {n} payloads redacted by erasures, each as its erasure entry recorded"
                    ),
                };
                let waiting = match pending {
                    0 => String::new(),
                    n => format!(
                        "; {n} entries committed and not yet on the chain (a running server \
                         appends them within a second)"
                    ),
                };
                println!("audit chain intact: head seq {seq} hash {hash}{erased}{waiting}")
            }
            Verification::Broken { seq, reason } => {
                println!("audit chain broken at seq {seq}: {reason}");
                return Ok(ExitCode::FAILURE);
            }
        },
        AuditCmd::Checkpoint => {
            let signer = signing_key(&db, store).await?;
            let c = audit::checkpoint(&db.conn, &signer).await?;
            println!("{}", serde_json::to_string_pretty(&c).unwrap_or_default());
        }
    }
    Ok(ExitCode::SUCCESS)
}
