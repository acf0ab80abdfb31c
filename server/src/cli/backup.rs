//! `verdict backup` and `verdict restore`: whole-database copies (see
//! [`verdict::backup`]). Neither migrates first: a backup before an upgrade must be of the
//! old schema, and a restore migrates what it restored.

use std::path::Path;
use std::process::ExitCode;

use verdict::audit::Verification;
use verdict::config::StoreConfig;
use verdict::error::AppResult;

/// `verdict backup FILE`: exit 1 when the copy's audit chain is broken (it is written all
/// the same, and `verdict restore` will refuse it).
pub(super) async fn backup(store: &StoreConfig, file: &Path) -> AppResult<ExitCode> {
    let b = verdict::backup::backup(&store.database_url, file).await?;
    match b.chain {
        Verification::Intact {
            seq, hash, pending, ..
        } => println!(
            "backup written to {}: {} bytes, audit chain intact at head seq {seq} hash {hash}{}",
            b.file.display(),
            b.bytes,
            match pending {
                0 => String::new(),
                n => format!(
                    "; {n} entries of committed writes wait for their place (a server started \
                     on the restored database appends them)"
                ),
            }
        ),
        Verification::Broken { seq, reason } => {
            println!(
                "backup written to {} ({} bytes), but its audit chain is broken at seq {seq}: {reason}; `verdict restore` will refuse it",
                b.file.display(),
                b.bytes
            );
            return Ok(ExitCode::FAILURE);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `verdict restore FILE`: into an empty database only.
pub(super) async fn restore(store: &StoreConfig, file: &Path) -> AppResult<ExitCode> {
    let r = verdict::backup::restore(&store.database_url, file).await?;
    println!(
        "restored {} into {}: {} bytes, audit chain intact at head seq {} hash {}, {} pending migrations applied",
        file.display(),
        r.target,
        r.bytes,
        r.seq,
        r.hash,
        r.migrated
    );
    Ok(ExitCode::SUCCESS)
}
