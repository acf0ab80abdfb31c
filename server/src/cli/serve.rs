//! `verdict serve`: migrate, seed the demo if asked, print the setup link of an empty
//! deployment, start the workers, and serve until SIGINT or SIGTERM.

use std::process::ExitCode;

use verdict::config::{ServeConfig, StoreConfig};
use verdict::crypto::signing::Signer25519;
use verdict::db::Db;
use verdict::demo;
use verdict::domain::outbox::Links;
use verdict::error::{AppError, AppResult};
use verdict::graphql::{self, Services, bus::Bus};
use verdict::http;

use super::{open, signing_key};

pub(super) async fn run(store: &StoreConfig, cfg: ServeConfig) -> AppResult<ExitCode> {
    serve(store, cfg).await?;
    Ok(ExitCode::SUCCESS)
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

async fn serve(store: &StoreConfig, cfg: ServeConfig) -> AppResult<()> {
    let db = open(store).await?;
    let signer = std::sync::Arc::new(signing_key(&db, store).await?);
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
        previews: Default::default(),
        progress: Default::default(),
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
        // Give entries left pending (by a process killed after a commit) their place, now
        // and every second.
        tokio::spawn(verdict::audit::sequencer::keep(services.db.clone()));
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
