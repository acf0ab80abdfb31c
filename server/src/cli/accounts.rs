//! Accounts, for the operator at the machine: `verdict token mint`, `verdict admin create`,
//! `verdict user reset-password`. Each is one write on behalf of the system.

use std::process::ExitCode;

use clap::Subcommand;
use entity::api_token::TokenScope;
use verdict::config::StoreConfig;
use verdict::domain::accounts;
use verdict::error::AppResult;

use super::write;

#[derive(Subcommand)]
pub(super) enum TokenCmd {
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
pub(super) enum AdminCmd {
    /// Create or promote a site administrator; prints a generated password once.
    Create {
        /// The account's email address (created if it does not exist).
        #[arg(long)]
        email: String,
    },
}

#[derive(Subcommand)]
pub(super) enum UserCmd {
    /// Set a generated one-time password for an account and print it once; every session
    /// of the account is revoked. Makes nobody a site admin.
    ResetPassword {
        /// The account's email address.
        #[arg(long)]
        email: String,
    },
}

/// `verdict token mint`: prints the raw token, nothing else.
pub(super) async fn token(store: &StoreConfig, cmd: TokenCmd) -> AppResult<ExitCode> {
    let TokenCmd::Mint {
        email,
        name,
        scope,
        expires_days,
    } = cmd;
    let scope = match scope.as_str() {
        "read" => TokenScope::Read,
        _ => TokenScope::Write,
    };
    let token = write(store, async |w| {
        let expires = expires_days.map(|d| w.now() + chrono::Duration::days(i64::from(d)));
        accounts::mint_token(w, &email, &name, scope, expires).await
    })
    .await?;
    println!("{token}");
    Ok(ExitCode::SUCCESS)
}

/// `verdict admin create`: the bare password on stdout, for scripts.
pub(super) async fn admin(store: &StoreConfig, cmd: AdminCmd) -> AppResult<ExitCode> {
    let AdminCmd::Create { email } = cmd;
    let password = write(store, async |w| accounts::admin_create(w, &email).await).await?;
    // Standard output stays the bare password, for scripts; the person reads this.
    eprintln!(
        "Site admin {email}: log in with the password below (shown once; \
         `verdict user reset-password --email {email}` makes a new one)."
    );
    println!("{password}");
    Ok(ExitCode::SUCCESS)
}

/// `verdict user reset-password`: the one-time password on stdout.
pub(super) async fn user(store: &StoreConfig, cmd: UserCmd) -> AppResult<ExitCode> {
    let UserCmd::ResetPassword { email } = cmd;
    let password = write(store, async |w| {
        accounts::operator_reset_password(w, &email).await
    })
    .await?;
    println!("{password}");
    Ok(ExitCode::SUCCESS)
}
