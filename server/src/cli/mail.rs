//! Mail from the command line: `verdict invite` (invitations for imported people, to the
//! outbox, delivered now with `--send`) and `verdict mail list` (the outbox).

use std::process::ExitCode;

use clap::Subcommand;
use sea_orm::ActiveEnum;
use verdict::config::{MailConfig, StoreConfig};
use verdict::domain::{invitations, outbox};
use verdict::error::{AppError, AppResult};

use super::{Commit, open, write_in};

// No doc comment: the command's help is the `Invite` variant's.
#[derive(clap::Args)]
pub(super) struct Invite {
    /// The event, by slug.
    #[arg(long)]
    event: String,
    /// Also deliver the messages now, from this process, over `--smtp-url`.
    #[arg(long)]
    send: bool,
    #[command(flatten)]
    mail: MailConfig,
}

#[derive(Subcommand)]
pub(super) enum MailCmd {
    /// Print the messages not sent yet (all of them with `--all`), including those that
    /// carry someone's secret (password resets), which the API never shows.
    List {
        /// Every message, sent, failed and cancelled ones too.
        #[arg(long)]
        all: bool,
    },
}

/// `verdict invite`: one line per invitation on stdout (email, role, link), the counts on
/// stderr.
pub(super) async fn invite(store: &StoreConfig, cmd: Invite) -> AppResult<ExitCode> {
    let Invite { event, send, mail } = cmd;
    let db = open(store).await?;
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
    let links = outbox::Links::new(
        mail.public_url
            .as_deref()
            .unwrap_or("http://127.0.0.1:8080"),
    );
    let made = write_in(&db, Commit::Yes, async |w| {
        let e = w.event(&event).await?;
        invitations::invite_imported(w, &e, &links).await
    })
    .await?;
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
    Ok(ExitCode::SUCCESS)
}

/// `verdict mail list`: each message with its headers and text.
pub(super) async fn run(store: &StoreConfig, cmd: MailCmd) -> AppResult<ExitCode> {
    let MailCmd::List { all } = cmd;
    let db = open(store).await?;
    for m in outbox::list(&db.conn, all).await? {
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
    Ok(ExitCode::SUCCESS)
}
