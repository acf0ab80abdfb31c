//! The `verdict` command line: the commands and their flags ([`Cli`]), one file per group
//! of commands, each an `async fn run` that [`run`] dispatches to.
//!
//! A command that writes does it as a mutation does: one [`Write`] (begun, the domain
//! function, its one audit entry, committed), on behalf of no one (the operator at the
//! machine is the system): [`write`] opens the database and runs it.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use verdict::config::{LogConfig, StoreConfig};
use verdict::crypto::signing::Signer25519;
use verdict::db::Db;
use verdict::domain::Write;
use verdict::error::{AppError, AppResult};

mod accounts;
mod audit;
mod backup;
mod bench;
mod event;
mod import;
mod mail;
mod record;
mod results;
mod serve;

#[derive(Parser)]
#[command(
    name = "verdict",
    version,
    about = "Hackathon submissions and calibrated, verifiable judging"
)]
pub struct Cli {
    #[command(flatten)]
    store: StoreConfig,
    #[command(flatten)]
    log: LogConfig,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Migrate, then serve the API, the playground and the web client.
    Serve(verdict::config::ServeConfig),
    /// Apply migrations and exit.
    Migrate,
    /// Import an event fixture (verdict.event.v1); idempotent by external id. With
    /// `--devpost FILE --event SLUG`: a Devpost submissions export (CSV) into an event.
    Import(import::Import),
    /// Personal API tokens.
    #[command(subcommand)]
    Token(accounts::TokenCmd),
    /// Site administration.
    #[command(subcommand)]
    Admin(accounts::AdminCmd),
    /// Accounts, for the operator.
    #[command(subcommand)]
    User(accounts::UserCmd),
    /// The audit chain.
    #[command(subcommand)]
    Audit(audit::AuditCmd),
    /// Print the GraphQL SDL (the same text as schema.graphql).
    Schema,
    /// Published results: export and offline verification.
    #[command(subcommand)]
    Results(results::ResultsCmd),
    /// Signed event bundles: an event's structure and people, for another deployment.
    #[command(subcommand)]
    Event(event::EventCmd),
    /// Participation records: offline verification.
    #[command(subcommand)]
    Record(record::RecordCmd),
    /// Benchmarks.
    #[command(subcommand)]
    Bench(bench::BenchCmd),
    /// Invite everyone an import brought in who cannot sign in yet (no password), to the
    /// roles they hold, and print one line per invitation: email, role, link. The messages
    /// go to the outbox like any invitation (a server with `--smtp-url` delivers them).
    Invite(mail::Invite),
    /// The outbox, for the operator on the server machine.
    #[command(subcommand)]
    Mail(mail::MailCmd),
    /// Write an online, consistent copy of the database to FILE, which must not exist:
    /// SQLite through `VACUUM INTO`, PostgreSQL through `pg_dump --format=custom`. Prints
    /// its size and the copy's audit head. The signing key is not in it: keep the key file
    /// apart.
    Backup {
        /// The file to write (never overwritten).
        file: std::path::PathBuf,
    },
    /// Restore a backup into an empty database (a SQLite file that does not exist yet or
    /// holds no tables; an empty PostgreSQL database), after checking that FILE is a
    /// Verdict database no newer than this binary and that its audit chain verifies; then
    /// apply pending migrations. Refused (exit 1) with nothing changed otherwise.
    Restore {
        /// The backup written by `verdict backup`.
        file: std::path::PathBuf,
    },
}

/// Starts the logs and the runtime, runs the command; an error is one line on stderr and
/// exit 1.
pub fn main(cli: Cli) -> ExitCode {
    init_logs(&cli.log);
    let rt = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("verdict: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match rt.block_on(run(cli)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("verdict: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Logs go to stderr, filtered by `RUST_LOG` (default `info`): text, or JSON lines with
/// `--log-json` (each line one object, the request's span fields under `span`).
fn init_logs(log: &LogConfig) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    if log.log_json {
        logs.json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .init();
    } else {
        // Colour only for a person at a terminal, never into log files.
        logs.with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .init();
    }
}

/// Runs one command: what it prints is its output, its exit code the answer.
pub async fn run(cli: Cli) -> AppResult<ExitCode> {
    let store = &cli.store;
    match cli.command {
        Command::Schema => {
            print!("{}", verdict::graphql::sdl());
            Ok(ExitCode::SUCCESS)
        }
        Command::Migrate => {
            open(store).await?;
            println!("migrations applied");
            Ok(ExitCode::SUCCESS)
        }
        Command::Serve(cfg) => serve::run(store, cfg).await,
        Command::Import(cmd) => import::run(store, cmd).await,
        Command::Token(cmd) => accounts::token(store, cmd).await,
        Command::Admin(cmd) => accounts::admin(store, cmd).await,
        Command::User(cmd) => accounts::user(store, cmd).await,
        Command::Audit(cmd) => audit::run(store, cmd).await,
        Command::Results(cmd) => results::run(store, cmd).await,
        Command::Event(cmd) => event::run(store, cmd).await,
        Command::Record(cmd) => Ok(record::run(cmd)),
        Command::Bench(cmd) => Ok(bench::run(cmd)),
        Command::Invite(cmd) => mail::invite(store, cmd).await,
        Command::Mail(cmd) => mail::run(store, cmd).await,
        Command::Backup { file } => backup::backup(store, &file).await,
        Command::Restore { file } => backup::restore(store, &file).await,
    }
}

/// Connects to the configured database and applies pending migrations.
async fn open(store: &StoreConfig) -> AppResult<Db> {
    let db = Db::connect(&store.database_url).await?;
    db.migrate().await?;
    Ok(db)
}

/// This deployment's signing key (made on first use with `--new-key`, see
/// [`verdict::domain::results::signing_key`]).
async fn signing_key(db: &Db, store: &StoreConfig) -> AppResult<Signer25519> {
    verdict::domain::results::signing_key(&db.conn, &store.key_file, store.new_key).await
}

/// Opens the database and runs `f` as one write on behalf of the system (no actor), then
/// commits it; see [`write_in`].
async fn write<T>(
    store: &StoreConfig,
    f: impl AsyncFnOnce(&Write) -> AppResult<T>,
) -> AppResult<T> {
    write_in(&open(store).await?, Commit::Yes, f).await
}

/// Whether [`write_in`] keeps what the write did.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Commit {
    Yes,
    /// A preview (`--dry-run`): the write runs whole, then rolls back.
    No,
}

/// Runs `f` as one write in `db` on behalf of the system: begun, `f` (a domain function,
/// which appends the write's one audit entry), committed (or rolled back for a preview).
/// A refusal rolls back and writes nothing.
async fn write_in<T>(
    db: &Db,
    commit: Commit,
    f: impl AsyncFnOnce(&Write) -> AppResult<T>,
) -> AppResult<T> {
    let w = Write::begin(db, None).await?;
    match f(&w).await {
        Ok(out) => {
            match commit {
                Commit::Yes => w.commit().await?,
                Commit::No => w.rollback().await,
            }
            Ok(out)
        }
        Err(e) => {
            w.rollback().await;
            Err(e)
        }
    }
}

/// Reads `path` as UTF-8 text; BAD_USER_INPUT on `field` naming the file otherwise.
fn read_text(field: &str, path: &std::path::Path) -> AppResult<String> {
    std::fs::read_to_string(path)
        .map_err(|e| AppError::bad_input(field, format!("{}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use crate::cli::Cli;

    /// Every argument and subcommand, at every level, says what it is in `--help`.
    #[test]
    fn every_cli_argument_and_subcommand_has_help() {
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for arg in cmd.get_arguments() {
                if arg.get_help().is_none() && arg.get_long_help().is_none() {
                    missing.push(format!("{path} {}", arg.get_id()));
                }
            }
            for sub in cmd.get_subcommands() {
                let path = format!("{path} {}", sub.get_name());
                if sub.get_about().is_none() && sub.get_long_about().is_none() {
                    missing.push(path.clone());
                }
                walk(sub, &path, missing);
            }
        }
        Cli::command().debug_assert();
        let mut cmd = Cli::command();
        cmd.build();
        let mut missing = vec![];
        walk(&cmd, "verdict", &mut missing);
        assert!(missing.is_empty(), "without help text: {missing:?}");
    }
}
