//! The `verdict` command line.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use sea_orm::ActiveEnum;
use verdict::config::{LogConfig, MailConfig, ServeConfig, StoreConfig};
use verdict::crypto::signing::Signer25519;
use verdict::db::Db;
use verdict::demo;
use verdict::domain::outbox::Links;
use verdict::domain::{Write, accounts, import, invitations};
use verdict::error::AppError;
use verdict::graphql::{self, Services, bus::Bus};
use verdict::{audit, http};

/// mimalloc instead of the system allocator (see the workspace `Cargo.toml`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "verdict",
    version,
    about = "Hackathon submissions and calibrated, verifiable judging"
)]
struct Cli {
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
    Serve(ServeConfig),
    /// Apply migrations and exit.
    Migrate,
    /// Import an event fixture (verdict.event.v1); idempotent by external id. With
    /// `--devpost FILE --event SLUG`: a Devpost submissions export (CSV) into an event.
    Import {
        /// The fixture file (JSON).
        #[arg(required_unless_present = "devpost", conflicts_with = "devpost")]
        file: Option<std::path::PathBuf>,
        /// A Devpost submissions export (CSV): projects, teams, members, table numbers.
        #[arg(long, value_name = "FILE", requires = "event")]
        devpost: Option<std::path::PathBuf>,
        /// The event (slug) a Devpost export goes into.
        #[arg(long, value_name = "SLUG", requires = "devpost")]
        event: Option<String>,
        /// Print what a Devpost import would do; write nothing.
        #[arg(long, requires = "devpost")]
        dry_run: bool,
    },
    /// Personal API tokens.
    #[command(subcommand)]
    Token(TokenCmd),
    /// Site administration.
    #[command(subcommand)]
    Admin(AdminCmd),
    /// Accounts, for the operator.
    #[command(subcommand)]
    User(UserCmd),
    /// The audit chain.
    #[command(subcommand)]
    Audit(AuditCmd),
    /// Print the GraphQL SDL (the same text as schema.graphql).
    Schema,
    /// Published results: export and offline verification.
    #[command(subcommand)]
    Results(ResultsCmd),
    /// Signed event bundles: an event's structure and people, for another deployment.
    #[command(subcommand)]
    Event(EventCmd),
    /// Participation records: offline verification.
    #[command(subcommand)]
    Record(RecordCmd),
    /// Benchmarks.
    #[command(subcommand)]
    Bench(BenchCmd),
    /// Invite everyone an import brought in who cannot sign in yet (no password), to the
    /// roles they hold, and print one line per invitation: email, role, link. The messages
    /// go to the outbox like any invitation (a server with `--smtp-url` delivers them).
    Invite {
        /// The event, by slug.
        #[arg(long)]
        event: String,
        /// Also deliver the messages now, from this process, over `--smtp-url`.
        #[arg(long)]
        send: bool,
        #[command(flatten)]
        mail: MailConfig,
    },
    /// The outbox, for the operator on the server machine.
    #[command(subcommand)]
    Mail(MailCmd),
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

#[derive(Subcommand)]
enum MailCmd {
    /// Print the messages not sent yet (all of them with `--all`), including those that
    /// carry someone's secret (password resets), which the API never shows.
    List {
        /// Every message, sent, failed and cancelled ones too.
        #[arg(long)]
        all: bool,
    },
}

#[derive(Subcommand)]
enum UserCmd {
    /// Set a generated one-time password for an account and print it once; every session
    /// of the account is revoked. Makes nobody a site admin.
    ResetPassword {
        /// The account's email address.
        #[arg(long)]
        email: String,
    },
}

#[derive(Subcommand)]
enum BenchCmd {
    /// Generate a synthetic panel with known truth and time a full calibration run
    /// (cross-validation + bootstrap); prints the time and the accuracy against the truth.
    Calibrate {
        /// Projects in the synthetic panel.
        #[arg(long, default_value_t = 2000)]
        projects: usize,
        /// Judges in the synthetic panel.
        #[arg(long, default_value_t = 300)]
        judges: usize,
        /// Reviews per project.
        #[arg(long, default_value_t = 5)]
        k: usize,
        /// Bootstrap rounds for the rank intervals.
        #[arg(long, default_value_t = 200)]
        bootstrap: u32,
        /// Random seed of the panel and the bootstrap.
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
}

#[derive(Subcommand)]
enum TokenCmd {
    /// Mint a token for an existing user; prints the raw token once.
    Mint {
        /// The user's email address.
        #[arg(long)]
        email: String,
        /// A label for the token (shown in the user's token list).
        #[arg(long)]
        name: String,
        /// `read` (queries and subscriptions only, for dashboards) or `write`.
        #[arg(long, default_value = "write", value_parser = ["read", "write"])]
        scope: String,
        /// Days until the token stops working; never when omitted.
        #[arg(long)]
        expires_days: Option<u32>,
    },
}

#[derive(Subcommand)]
enum AdminCmd {
    /// Create or promote a site administrator; prints a generated password once.
    Create {
        /// The account's email address (created if it does not exist).
        #[arg(long)]
        email: String,
    },
}

#[derive(Subcommand)]
enum AuditCmd {
    /// Recompute the hash chain; exit 1 naming the first seq that does not fit.
    Verify,
    /// Print a signed checkpoint (seq, head hash, time) as JSON.
    Checkpoint,
}

#[derive(Subcommand)]
enum ResultsCmd {
    /// Write the event's published run as a signed, self-contained bundle.
    Export {
        /// The event's slug.
        #[arg(long)]
        event: String,
        /// The directory to write the bundle into.
        dir: std::path::PathBuf,
    },
    /// Offline: re-run the estimator from a bundle's pinned inputs and check its hashes and
    /// signatures. Exit 0 on PASS, 1 naming what failed.
    Verify {
        /// The bundle directory written by `results export`.
        dir: std::path::PathBuf,
        /// Trust only the key with this SHA-256 fingerprint (hex; the deployment publishes
        /// it at /.well-known/verdict-signing-key). Without --key or --public-key the key
        /// inside the bundle is trusted, and the verifier says so.
        #[arg(long, value_name = "FINGERPRINT", conflicts_with = "public_key")]
        key: Option<String>,
        /// Trust only this Ed25519 public key (PEM file).
        #[arg(long, value_name = "FILE")]
        public_key: Option<std::path::PathBuf>,
    },
}

#[derive(Subcommand)]
enum EventCmd {
    /// Write the event as one signed JSON document (verdict.event-bundle.v1): settings,
    /// tracks, rubric, people, roles, teams, projects, prizes, the vote's configuration;
    /// no reviews, scores, results, audit chain or passwords. Never overwrites FILE.
    Export {
        /// The event's slug.
        #[arg(long)]
        event: String,
        /// The file to write.
        file: std::path::PathBuf,
    },
    /// Verify a bundle's signature, then import it as a new event (invite-only, nothing
    /// published, no passwords). An existing external id or slug is refused (CONFLICT) and
    /// nothing is written.
    Import {
        /// The bundle written by `event export`.
        file: std::path::PathBuf,
        /// Trust the key with this SHA-256 fingerprint (a bundle from another deployment).
        /// Without --key or --public-key, only this deployment's key is trusted.
        #[arg(long, value_name = "FINGERPRINT", conflicts_with = "public_key")]
        key: Option<String>,
        /// Trust this Ed25519 public key (PEM file).
        #[arg(long, value_name = "FILE")]
        public_key: Option<std::path::PathBuf>,
        /// Import under this slug instead of the bundle's.
        #[arg(long)]
        slug: Option<String>,
        /// Import under this external id instead of the bundle's.
        #[arg(long)]
        external_id: Option<String>,
    },
}

#[derive(Subcommand)]
enum RecordCmd {
    /// Offline: check a participation record (the text `participationRecord` returned,
    /// byte for byte) against a deployment's key, without the server. Exit 0 on PASS, 1
    /// saying what failed.
    Verify {
        /// The record document (JSON).
        file: std::path::PathBuf,
        /// Trust only the key with this SHA-256 fingerprint (hex; the deployment publishes
        /// it at /.well-known/verdict-signing-key). Without --key or --public-key the key
        /// inside the record is trusted, and the verifier says so.
        #[arg(long, value_name = "FINGERPRINT", conflicts_with = "public_key")]
        key: Option<String>,
        /// Trust only this Ed25519 public key (PEM file).
        #[arg(long, value_name = "FILE")]
        public_key: Option<std::path::PathBuf>,
    },
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

fn main() -> ExitCode {
    let cli = Cli::parse();
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

async fn open(store: &StoreConfig) -> Result<Db, AppError> {
    let db = Db::connect(&store.database_url).await?;
    db.migrate().await?;
    Ok(db)
}

/// SIGINT (Ctrl-C) or SIGTERM (`docker stop`, systemd): stop accepting, let in-flight
/// requests finish, close websockets with 1001, then exit 0.
async fn shutdown_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = interrupt => {}
        _ = terminate => {}
    }
    tracing::info!("shutting down: finishing in-flight requests");
}

async fn signing_key(db: &Db, store: &StoreConfig) -> Result<Signer25519, AppError> {
    verdict::domain::results::signing_key(&db.conn, &store.key_file, store.new_key).await
}

async fn run(cli: Cli) -> Result<ExitCode, AppError> {
    match cli.command {
        Command::Schema => {
            print!("{}", graphql::sdl());
        }
        Command::Migrate => {
            open(&cli.store).await?;
            println!("migrations applied");
        }
        Command::Import {
            devpost: Some(path),
            event: Some(slug),
            dry_run,
            ..
        } => {
            let db = open(&cli.store).await?;
            let text = std::fs::read_to_string(&path)
                .map_err(|e| AppError::bad_input("devpost", format!("{}: {e}", path.display())))?;
            let txn = db.write().await?;
            let e = verdict::domain::event_by_slug(&txn, &slug).await?;
            let report = verdict::domain::devpost::import_as(&txn, "", &e, &text).await?;
            if dry_run {
                txn.rollback().await?;
            } else {
                txn.commit().await?;
            }
            print!("{}", report.summary(dry_run));
        }
        Command::Import { file: None, .. } => {
            return Err(AppError::bad_input(
                "file",
                "name a fixture file or --devpost FILE",
            ));
        }
        Command::Import {
            file: Some(file), ..
        } => {
            let db = open(&cli.store).await?;
            let text = std::fs::read_to_string(&file)
                .map_err(|e| AppError::bad_input("file", format!("{}: {e}", file.display())))?;
            let value = serde_json::from_str(&text)
                .map_err(|e| AppError::bad_input("file", format!("not JSON: {e}")))?;
            let fixture = import::parse(value)?;
            let txn = db.write().await?;
            let (event, counts) = import::import(&txn, "", &fixture).await?;
            txn.commit().await?;
            println!(
                "imported {} ({}): {} rows inserted {}",
                event.slug,
                event.external_id,
                counts.total(),
                serde_json::to_string(&counts).unwrap_or_default()
            );
        }
        Command::Token(TokenCmd::Mint {
            email,
            name,
            scope,
            expires_days,
        }) => {
            let db = open(&cli.store).await?;
            let txn = db.write().await?;
            let scope = match scope.as_str() {
                "read" => entity::api_token::TokenScope::Read,
                _ => entity::api_token::TokenScope::Write,
            };
            let expires =
                expires_days.map(|d| chrono::Utc::now() + chrono::Duration::days(i64::from(d)));
            let token = accounts::mint_token(&txn, &email, &name, scope, expires).await?;
            txn.commit().await?;
            println!("{token}");
        }
        Command::Admin(AdminCmd::Create { email }) => {
            let db = open(&cli.store).await?;
            let txn = db.write().await?;
            let password = accounts::admin_create(&txn, &email).await?;
            txn.commit().await?;
            // Standard output stays the bare password, for scripts; the person reads this.
            eprintln!(
                "Site admin {email}: log in with the password below (shown once; \
                 `verdict user reset-password --email {email}` makes a new one)."
            );
            println!("{password}");
        }
        Command::User(UserCmd::ResetPassword { email }) => {
            let db = open(&cli.store).await?;
            let txn = db.write().await?;
            let password = accounts::operator_reset_password(&txn, &email).await?;
            txn.commit().await?;
            println!("{password}");
        }
        Command::Audit(AuditCmd::Verify) => {
            let db = open(&cli.store).await?;
            match audit::verify(&db.conn).await? {
                audit::Verification::Intact {
                    seq,
                    hash,
                    redacted,
                } => {
                    let erased = match redacted {
                        0 => String::new(),
                        n => format!(
                            "; {n} payloads redacted by erasures, each as its erasure entry recorded"
                        ),
                    };
                    println!("audit chain intact: head seq {seq} hash {hash}{erased}")
                }
                audit::Verification::Broken { seq, reason } => {
                    println!("audit chain broken at seq {seq}: {reason}");
                    return Ok(ExitCode::FAILURE);
                }
            }
        }
        Command::Audit(AuditCmd::Checkpoint) => {
            let db = open(&cli.store).await?;
            let signer = signing_key(&db, &cli.store).await?;
            let c = audit::checkpoint(&db.conn, &signer).await?;
            println!("{}", serde_json::to_string_pretty(&c).unwrap_or_default());
        }
        Command::Results(ResultsCmd::Export { event, dir }) => {
            let db = open(&cli.store).await?;
            let signer = signing_key(&db, &cli.store).await?;
            verdict::bundle::export(&db.conn, &signer, &event, &dir).await?;
            println!("bundle written to {}", dir.display());
        }
        Command::Results(ResultsCmd::Verify {
            dir,
            key,
            public_key,
        }) => {
            let pin = match (key, public_key) {
                (Some(f), _) => Some(verdict::bundle::Pin::Fingerprint(f)),
                (None, Some(path)) => match std::fs::read_to_string(&path) {
                    Ok(pem) => Some(verdict::bundle::Pin::PublicKeyPem(pem)),
                    Err(e) => {
                        eprintln!("cannot read {}: {e}", path.display());
                        return Ok(ExitCode::FAILURE);
                    }
                },
                (None, None) => None,
            };
            let report = verdict::bundle::verify(&dir, pin.as_ref());
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
            } else {
                println!("FAIL");
                return Ok(ExitCode::FAILURE);
            }
        }
        Command::Event(EventCmd::Export { event, file }) => {
            let db = open(&cli.store).await?;
            let signer = signing_key(&db, &cli.store).await?;
            let text = verdict::event_bundle::export(&db.conn, &signer, &event).await?;
            let mut out = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&file)
                .map_err(|e| AppError::bad_input("FILE", format!("{}: {e}", file.display())))?;
            std::io::Write::write_all(&mut out, text.as_bytes())
                .map_err(|e| AppError::Internal(format!("cannot write {}: {e}", file.display())))?;
            println!("event bundle written to {}", file.display());
        }
        Command::Event(EventCmd::Import {
            file,
            key,
            public_key,
            slug,
            external_id,
        }) => {
            use verdict::crypto::signing::PublicKey;
            let text = std::fs::read(&file)
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .ok_or_else(|| {
                    AppError::bad_input("file", format!("cannot read {} as text", file.display()))
                })?;
            let db = open(&cli.store).await?;
            let trusted: PublicKey = match (key, public_key) {
                (Some(f), _) => verdict::event_bundle::embedded_key(&text)
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
                (None, None) => signing_key(&db, &cli.store).await?.public(),
            };
            // Verified before the transaction opens: a refused bundle writes nothing.
            let contents = verdict::event_bundle::verify(&text, &trusted)?;
            let txn = db.write().await?;
            let (event, counts) = verdict::event_bundle::import(
                &txn,
                &contents,
                slug.as_deref(),
                external_id.as_deref(),
            )
            .await?;
            txn.commit().await?;
            println!(
                "imported {} ({}) from a bundle signed by {}: {} rows inserted {}",
                event.slug,
                event.external_id,
                trusted.fingerprint(),
                counts.total(),
                serde_json::to_string(&counts).unwrap_or_default()
            );
        }
        Command::Record(RecordCmd::Verify {
            file,
            key,
            public_key,
        }) => return Ok(verify_record(&file, key, public_key)),
        Command::Serve(cfg) => serve(cli.store, cfg).await?,
        Command::Backup { file } => {
            // No migration first: a backup before an upgrade must be of the old schema.
            let b = verdict::backup::backup(&cli.store.database_url, &file).await?;
            match b.chain {
                audit::Verification::Intact { seq, hash, .. } => println!(
                    "backup written to {}: {} bytes, audit chain intact at head seq {seq} hash {hash}",
                    b.file.display(),
                    b.bytes
                ),
                audit::Verification::Broken { seq, reason } => {
                    println!(
                        "backup written to {} ({} bytes), but its audit chain is broken at seq {seq}: {reason}; `verdict restore` will refuse it",
                        b.file.display(),
                        b.bytes
                    );
                    return Ok(ExitCode::FAILURE);
                }
            }
        }
        Command::Restore { file } => {
            let r = verdict::backup::restore(&cli.store.database_url, &file).await?;
            println!(
                "restored {} into {}: {} bytes, audit chain intact at head seq {} hash {}, {} pending migrations applied",
                file.display(),
                r.target,
                r.bytes,
                r.seq,
                r.hash,
                r.migrated
            );
        }
        Command::Invite { event, send, mail } => {
            let db = open(&cli.store).await?;
            let smtp = match (&mail.smtp_url, send) {
                (Some(url), true) => Some(verdict::mail::Smtp::new(url, &mail.mail_from)?),
                (None, true) => {
                    return Err(AppError::bad_input(
                        "send",
                        "--send needs --smtp-url (or VERDICT_SMTP_URL)",
                    ));
                }
                (_, false) => None,
            };
            let links = Links::new(
                mail.public_url
                    .as_deref()
                    .unwrap_or("http://127.0.0.1:8080"),
            );
            // No actor: the command line writes as the system.
            let w = Write::begin(&db, None).await?;
            let e = w.event(&event).await?;
            let made = invitations::invite_imported(&w, &e, &links).await?;
            w.commit().await?;
            for (inv, token) in &made {
                println!(
                    "{}\t{}\t{}",
                    inv.email,
                    inv.role.to_value(),
                    links.invitation(token)
                );
            }
            eprintln!("{} invitations made", made.len());
            if let Some(smtp) = smtp {
                let sent = verdict::mail::deliver_due(&db, &smtp).await?;
                eprintln!("{sent} messages sent");
            }
        }
        Command::Mail(MailCmd::List { all }) => {
            let db = open(&cli.store).await?;
            for m in verdict::domain::outbox::list(&db.conn, all).await? {
                println!(
                    "--- {} {} to {} ({:?}, {} attempts{})",
                    m.public_id,
                    m.created_at.format("%Y-%m-%d %H:%M:%S"),
                    m.to_email,
                    m.status,
                    m.attempts,
                    m.last_error
                        .as_deref()
                        .map(|e| format!(", last error: {e}"))
                        .unwrap_or_default()
                );
                println!("Subject: {}\n\n{}", m.subject, m.body_text);
            }
        }
        Command::Bench(BenchCmd::Calibrate {
            projects,
            judges,
            k,
            bootstrap,
            seed,
        }) => {
            let r = verdict::calibrate::bench(projects, judges, k, bootstrap, seed);
            println!(
                "calibrate: {projects} projects, {judges} judges, k={k}, bootstrap={bootstrap}, seed={seed}"
            );
            println!("  time (CV + fit + bootstrap): {:.3} s", r.seconds);
            println!(
                "  Kendall tau vs truth: raw mean {:.3}, calibrated {:.3}",
                r.kendall_tau_raw, r.kendall_tau_calibrated
            );
            println!(
                "  90% rank interval coverage of the true rank: {:.3}",
                r.coverage
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `verdict record verify`: pins the key like `results verify` (a fingerprint or a PEM
/// file; unpinned, the record's own key, said aloud), then checks the record with it.
fn verify_record(
    file: &std::path::Path,
    fingerprint: Option<String>,
    public_key: Option<std::path::PathBuf>,
) -> ExitCode {
    use verdict::crypto::signing::PublicKey;
    use verdict::domain::records::{self, Invalid};
    let fail = |why: String| {
        println!("FAIL  {why}");
        println!("FAIL");
        ExitCode::FAILURE
    };
    let text = match std::fs::read(file).map(String::from_utf8) {
        Ok(Ok(t)) => t,
        Ok(Err(_)) => return fail(format!("{} is not UTF-8", file.display())),
        Err(e) => return fail(format!("cannot read {}: {e}", file.display())),
    };
    let embedded = records::embedded_key(&text);
    let key: PublicKey = match (fingerprint, public_key) {
        (Some(f), _) => {
            match embedded.filter(|k| f.trim().eq_ignore_ascii_case(&k.fingerprint())) {
                Some(k) => {
                    println!("key   pinned: {}", k.fingerprint());
                    k
                }
                None => return fail(format!("the record is not signed by the pinned key {f}")),
            }
        }
        (None, Some(path)) => {
            match std::fs::read_to_string(&path)
                .ok()
                .and_then(|pem| PublicKey::from_pem(&pem).ok())
            {
                Some(k) => {
                    println!("key   pinned: {}", k.fingerprint());
                    k
                }
                None => {
                    return fail(format!(
                        "{} is not a readable Ed25519 public key",
                        path.display()
                    ));
                }
            }
        }
        (None, None) => match embedded {
            Some(k) => {
                let f = k.fingerprint();
                println!("key   {f} (taken from the record: pin it with --key {f})");
                k
            }
            None => return fail("the record carries no readable public key".into()),
        },
    };
    match records::verify(&text, &key) {
        Ok(r) => {
            println!(
                "ok    {} ({}) in {} ({}): roles {}; judged {}, built {}; issued {}",
                r.person.display_name,
                r.person.email,
                r.event.name,
                r.event.external_id,
                r.roles.join(", "),
                r.judged.len(),
                r.built.len(),
                r.issued_at
            );
            println!("PASS");
            ExitCode::SUCCESS
        }
        Err(e) => fail(
            match e {
                Invalid::NotJson => "not JSON",
                Invalid::NotARecord => "not a participation record byte for byte as issued",
                Invalid::OtherKey => "signed by another key than the trusted one",
                Invalid::BadSignature => "the signature (verdict.participation.v1) does not match",
            }
            .into(),
        ),
    }
}

/// `serve --demo`: seeds the bundled demo on first start (see [`verdict::demo`]) and prints
/// the demo accounts' passwords, once.
async fn seed_demo(db: &Db, signer: &Signer25519) -> Result<(), AppError> {
    let Some(seeded) = demo::seed(db, signer).await? else {
        println!("demo events are already here (credentials were printed on first start)");
        return Ok(());
    };
    let (hack, judging, finals) = (&seeded.hack, &seeded.judging, &seeded.finals);
    println!(
        "demo events imported: {} ({}, submissions open), {} ({}, judging open) and {} ({}, published final results)",
        hack.name, hack.slug, judging.name, judging.slug, finals.name, finals.slug
    );
    for (email, role, password) in &seeded.accounts {
        println!("  demo {role:<11} {email}  password: {password}");
    }
    Ok(())
}

/// A deployment with no account yet: the one-time link that makes its first account the
/// site admin, on lines of its own so it stands out of the log.
fn print_setup_link(link: &str, expires: chrono::DateTime<chrono::Utc>) {
    println!();
    println!("  No account exists yet. Open this one-time link to create the site admin:");
    println!();
    println!("      {link}");
    println!();
    println!(
        "  It works once and until {} (a restart while there is still no account prints a new one).",
        expires.format("%Y-%m-%d %H:%M UTC")
    );
    println!();
}

async fn serve(store: StoreConfig, cfg: ServeConfig) -> Result<(), AppError> {
    let db = open(&store).await?;
    let signer = std::sync::Arc::new(signing_key(&db, &store).await?);
    if cfg.demo {
        seed_demo(&db, &signer).await?;
    }
    let smtp = cfg
        .mail
        .smtp_url
        .as_deref()
        .map(|url| verdict::mail::Smtp::new(url, &cfg.mail.mail_from))
        .transpose()?;
    let listener = tokio::net::TcpListener::bind(cfg.addr)
        .await
        .map_err(|e| AppError::Internal(format!("cannot listen on {}: {e}", cfg.addr)))?;
    let addr = listener
        .local_addr()
        .map_err(|e| AppError::Internal(e.to_string()))?;
    let public_url = cfg
        .mail
        .public_url
        .clone()
        .unwrap_or_else(|| format!("http://{addr}"));
    if let Some((token, expires)) = verdict::domain::setup::issue_if_empty(&db).await? {
        print_setup_link(&verdict::domain::setup::link(&public_url, &token), expires);
    }
    let mail = verdict::mail::Wake::default();
    if let Some(smtp) = smtp {
        tokio::spawn(verdict::mail::run(db.clone(), smtp, mail.clone()));
    }
    let webhooks = cfg.webhooks.settings();
    if webhooks.allow_loopback {
        tracing::warn!(
            "webhooks may reach loopback addresses (--allow-loopback-webhooks): for tests only"
        );
    }
    let webhook_wake = verdict::webhooks::Wake::default();
    tokio::spawn(verdict::webhooks::run(
        db.clone(),
        webhooks.clone(),
        webhook_wake.clone(),
    ));
    let services = Services {
        signer,
        db,
        bus: Bus::new(),
        limits: cfg.limits.clone(),
        // Served over TLS: said by the flag, or by a public address that is https.
        served_over_tls: cfg.tls_cookies || public_url.starts_with("https://"),
        parsed_runs: Default::default(),
        feeds: Default::default(),
        calibrations: Default::default(),
        links: Links::new(&public_url),
        mail,
        webhook_wake,
        webhooks,
    };
    if services.db.backend() == sea_orm::DbBackend::Postgres {
        // Notice when PostgreSQL stops answering, and when it answers again.
        tokio::spawn(verdict::db::watch(
            services.db.clone(),
            store.database_url.clone(),
        ));
        // Other processes may share this database: hear their commits (and ours) from it.
        tokio::spawn(graphql::relay::run(
            services.db.clone(),
            store.database_url.clone(),
            services.bus.clone(),
        ));
    }
    let schema = graphql::schema(services.clone(), !cfg.no_introspection);
    let mut state = http::AppState::new(schema, services);
    let recorder = verdict::metrics::install()?;
    tokio::spawn(verdict::metrics::upkeep(recorder.clone()));
    state.metrics = Some(std::sync::Arc::new(http::observe::Exporter::new(
        recorder,
        cfg.metrics_token(),
    )));
    if let Some(dir) = cfg.web_dir.clone() {
        state.client = verdict::http::assets::ClientFiles::Dir(dir);
    }
    let shutdown = state.shutdown.clone();
    let router = http::router(state);
    println!("verdict listening on http://{addr}");
    println!("  playground: http://{addr}/graphql");
    axum::serve(
        listener,
        router.into_make_service_with_connect_info::<std::net::SocketAddr>(),
    )
    .with_graceful_shutdown({
        let shutdown = shutdown.clone();
        async move {
            shutdown_signal().await;
            shutdown.begin();
        }
    })
    .await
    .map_err(|e| AppError::Internal(e.to_string()))?;
    // Upgraded websockets are no longer axum's connections: give them a moment to send
    // their 1001 close before the runtime (and every task in it) goes away.
    if tokio::time::timeout(std::time::Duration::from_secs(5), shutdown.closed())
        .await
        .is_err()
    {
        tracing::warn!("some websockets did not close within 5 s");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::Cli;

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
