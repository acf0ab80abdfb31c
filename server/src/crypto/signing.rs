//! The deployment's Ed25519 signing key, and domain-separated signatures.
//!
//! Every kind of signed artifact has its own domain tag (`verdict.run.v1`,
//! `verdict.checkpoint.v1`, ...). The signed pre-image is [`super::sha256_fields`] over the
//! tag and the artifact's fields, so a signature of one kind never verifies as another.

use std::io::Write;
use std::path::Path;

use ed25519_dalek::pkcs8::{
    DecodePrivateKey, EncodePrivateKey, EncodePublicKey, spki::der::pem::LineEnding,
};
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use rand::Rng;

use crate::error::{AppError, AppResult};

pub const RUN_TAG: &str = "verdict.run.v1";
pub const CHECKPOINT_TAG: &str = "verdict.checkpoint.v1";
pub const PUBLICATION_TAG: &str = "verdict.publication.v1";
/// A publication that carries the Merkle root of its entries (`domain::proofs`): the v1
/// fields, then the root and the tree size.
pub const PUBLICATION_V2_TAG: &str = "verdict.publication.v2";
/// The same fields as v2, for a tree whose entries hold salted review commitments
/// (`domain::proofs::EntryFormat::Salted`) instead of the reviews' plain hashes.
pub const PUBLICATION_V3_TAG: &str = "verdict.publication.v3";
pub const PARTICIPATION_TAG: &str = "verdict.participation.v1";
pub const EVENT_BUNDLE_TAG: &str = "verdict.event-bundle.v1";

/// The signing key of this deployment. Never served, never logged.
pub struct Signer25519 {
    key: SigningKey,
}

impl std::fmt::Debug for Signer25519 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Signer25519({})", self.fingerprint())
    }
}

impl Signer25519 {
    /// The key in `path`, or None when there is no such file.
    pub fn load(path: &Path) -> AppResult<Option<Signer25519>> {
        match std::fs::read_to_string(path) {
            Ok(pem) => Self::from_pem(path, &pem).map(Some),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(AppError::Internal(format!(
                "cannot read the signing key {}: {e}",
                path.display()
            ))),
        }
    }

    fn from_pem(path: &Path, pem: &str) -> AppResult<Signer25519> {
        let key = SigningKey::from_pkcs8_pem(pem).map_err(|e| {
            AppError::Internal(format!(
                "{} is not an Ed25519 PKCS#8 key: {e}",
                path.display()
            ))
        })?;
        Ok(Signer25519 { key })
    }

    /// Loads the key from `path`, or creates it there on first start, never overwriting a
    /// key that appeared meanwhile. The key is written whole (mode 0600, synced) to a
    /// temporary file beside `path` and published by a hard link, which fails when `path`
    /// exists: so `path` is either absent or holds a whole key, and a second process that
    /// starts at the same moment (two servers on one volume) loads the first one's key
    /// rather than reading a file not yet written.
    pub fn load_or_create(path: &Path) -> AppResult<Signer25519> {
        if let Some(signer) = Self::load(path)? {
            return Ok(signer);
        }
        let mut secret = [0u8; 32];
        rand::rng().fill_bytes(&mut secret);
        let key = SigningKey::from_bytes(&secret);
        let pem = key
            .to_pkcs8_pem(LineEnding::LF)
            .map_err(|e| AppError::Internal(format!("cannot encode the signing key: {e}")))?;
        let tmp = temp_beside(path);
        let published = write_new(&tmp, pem.as_bytes()).and_then(|()| {
            std::fs::hard_link(&tmp, path)?;
            sync_dir(path)
        });
        let _ = std::fs::remove_file(&tmp);
        match published {
            Ok(()) => Ok(Signer25519 { key }),
            // Another process published its key first: use theirs.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Self::load_or_create(path),
            Err(e) => Err(AppError::Internal(format!(
                "cannot create the signing key {}: {e}",
                path.display()
            ))),
        }
    }

    pub fn public(&self) -> PublicKey {
        PublicKey(self.key.verifying_key())
    }

    pub fn fingerprint(&self) -> String {
        self.public().fingerprint()
    }

    /// Signs the domain-tagged pre-image of `fields`; hex signature.
    pub fn sign(&self, tag: &str, fields: &[&[u8]]) -> String {
        let pre = super::sha256_fields(tag, fields);
        hex::encode(self.key.sign(pre.as_bytes()).to_bytes())
    }
}

/// A name for a temporary file in `path`'s directory, unique to this call.
fn temp_beside(path: &Path) -> std::path::PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut nonce = [0u8; 8];
    rand::rng().fill_bytes(&mut nonce);
    path.with_file_name(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        hex::encode(nonce)
    ))
}

/// Creates `path` (it must not exist) with mode 0600, writes `bytes` and syncs them.
fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts.open(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

/// Syncs the directory holding `path`, so its new name survives a crash.
fn sync_dir(path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    if let Some(dir) = path.parent() {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        std::fs::File::open(dir)?.sync_all()?;
    }
    Ok(())
}

/// A public verification key.
#[derive(Clone, Debug)]
pub struct PublicKey(VerifyingKey);

impl PublicKey {
    pub fn from_pem(pem: &str) -> AppResult<PublicKey> {
        use ed25519_dalek::pkcs8::DecodePublicKey;
        VerifyingKey::from_public_key_pem(pem)
            .map(PublicKey)
            .map_err(|e| {
                AppError::bad_input("publicKey", format!("not an Ed25519 public key: {e}"))
            })
    }

    pub fn to_pem(&self) -> String {
        self.0.to_public_key_pem(LineEnding::LF).unwrap_or_default()
    }

    /// SHA-256 of the raw 32-byte public key, hex.
    pub fn fingerprint(&self) -> String {
        super::sha256_hex(&self.0.to_bytes())
    }

    /// Whether `signature` (hex) signs the domain-tagged pre-image of `fields`.
    pub fn verify(&self, tag: &str, fields: &[&[u8]], signature: &str) -> bool {
        // Only the spelling `sign` writes (lower-case hex): hex decoding ignores case, and
        // a signed document must fail on any changed byte, a signature's letters included.
        if !signature
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        {
            return false;
        }
        let Ok(bytes) = hex::decode(signature) else {
            return false;
        };
        let Ok(bytes) = <[u8; 64]>::try_from(bytes.as_slice()) else {
            return false;
        };
        let pre = super::sha256_fields(tag, fields);
        self.0
            .verify(pre.as_bytes(), &Signature::from_bytes(&bytes))
            .is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_is_created_once_with_0600_and_reloaded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.pem");
        let a = Signer25519::load_or_create(&path).unwrap();
        let b = Signer25519::load_or_create(&path).unwrap();
        assert_eq!(a.fingerprint(), b.fingerprint());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    /// Two servers starting on one volume at once: every caller gets the one key, none
    /// reads a key file not yet written, and no temporary file is left behind.
    #[test]
    fn concurrent_first_starts_all_load_the_one_key() {
        const THREADS: usize = 16;
        for round in 0..50 {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("signing.key");
            let start = std::sync::Barrier::new(THREADS);
            let got: Vec<Result<String, String>> = std::thread::scope(|s| {
                let handles: Vec<_> = (0..THREADS)
                    .map(|_| {
                        s.spawn(|| {
                            start.wait();
                            Signer25519::load_or_create(&path)
                                .map(|k| k.fingerprint())
                                .map_err(|e| e.to_string())
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            let on_disk = Signer25519::load(&path).unwrap().unwrap().fingerprint();
            for (i, g) in got.iter().enumerate() {
                assert_eq!(g.as_ref(), Ok(&on_disk), "round {round}, thread {i}");
            }
            let names: Vec<_> = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            assert_eq!(names, vec![std::ffi::OsString::from("signing.key")]);
        }
    }

    #[test]
    fn signatures_are_bound_to_their_domain_and_fields() {
        let dir = tempfile::tempdir().unwrap();
        let s = Signer25519::load_or_create(&dir.path().join("k")).unwrap();
        let sig = s.sign(RUN_TAG, &[b"a", b"b"]);
        let pk = PublicKey::from_pem(&s.public().to_pem()).unwrap();
        assert!(pk.verify(RUN_TAG, &[b"a", b"b"], &sig));
        assert!(
            !pk.verify(CHECKPOINT_TAG, &[b"a", b"b"], &sig),
            "a run signature verified as a checkpoint"
        );
        assert!(!pk.verify(RUN_TAG, &[b"a", b"c"], &sig));
        assert!(!pk.verify(RUN_TAG, &[b"ab"], &sig));
        assert!(!pk.verify(RUN_TAG, &[b"a", b"b"], "00"));
        // The same signature in upper case is another byte string: refused.
        assert_ne!(sig.to_uppercase(), sig);
        assert!(!pk.verify(RUN_TAG, &[b"a", b"b"], &sig.to_uppercase()));
    }
}
