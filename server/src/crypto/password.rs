//! Password hashing with argon2id (m = 19 MiB, t = 2, p = 1: OWASP's baseline).

use argon2::{Algorithm, Argon2, Params, PasswordHasher, PasswordVerifier, Version};

fn hasher() -> Argon2<'static> {
    // The parameters are constants known to be valid.
    let params = Params::new(19_456, 2, 1, None).unwrap_or_default();
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
}

pub fn hash(password: &str) -> Result<String, String> {
    hasher()
        .hash_password(password.as_bytes())
        .map(|h| h.to_string())
        .map_err(|e| e.to_string())
}

/// Verifies `password` against a stored hash. With no stored hash (an unknown account or
/// a person imported without a password) it still spends one full verification against a
/// dummy hash, so the response time does not reveal whether the account exists.
pub fn verify(password: &str, stored: Option<&str>) -> bool {
    static DUMMY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    match stored {
        Some(h) => hasher().verify_password(password.as_bytes(), h).is_ok(),
        None => {
            let dummy = DUMMY.get_or_init(|| hash("verdict-timing-equalizer").unwrap_or_default());
            let _ = hasher().verify_password(password.as_bytes(), dummy.as_str());
            false
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn hashes_verify_and_reject() {
        let h = super::hash("correct horse").unwrap();
        assert!(h.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"));
        assert!(super::verify("correct horse", Some(&h)));
        assert!(!super::verify("wrong horse", Some(&h)));
        assert!(!super::verify("correct horse", None));
    }
}
