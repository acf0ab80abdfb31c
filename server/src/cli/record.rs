//! `verdict record verify`: check a participation record offline.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;

#[derive(Subcommand)]
pub(super) enum RecordCmd {
    /// Offline: check a participation record (the text `participationRecord` returned,
    /// byte for byte) against a deployment's key, without the server. Exit 0 on PASS, 1
    /// saying what failed.
    Verify {
        /// The record document (JSON).
        file: PathBuf,
        /// Trust only the key with this SHA-256 fingerprint (hex; the deployment publishes
        /// it at /.well-known/verdict-signing-key). Without --key or --public-key the key
        /// inside the record is trusted, and the verifier says so.
        #[arg(long, value_name = "FINGERPRINT", conflicts_with = "public_key")]
        key: Option<String>,
        /// Trust only this Ed25519 public key (PEM file).
        #[arg(long, value_name = "FILE")]
        public_key: Option<PathBuf>,
    },
}

pub(super) fn run(cmd: RecordCmd) -> ExitCode {
    let RecordCmd::Verify {
        file,
        key,
        public_key,
    } = cmd;
    verify_record(&file, key, public_key)
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
