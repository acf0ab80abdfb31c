//! Inclusion proofs for published results (issue 27): a participant checks that their
//! project's entry, as published, is in the signed result, without anyone else's data.
//!
//! ## The entries
//!
//! A publication's tree has one leaf per project of its run's public projection (every
//! project of the result except those not submitted when the run was computed, exactly the
//! projects `PublishedResults.ranking` lists), ordered by project id (the external id, byte
//! order). A leaf is the project's entry as canonical JSON (keys sorted, no whitespace,
//! strings escaped as `serde_json` does, floats as the result's canonical text):
//!
//! ```text
//! {"excluded":null,"project":"prj_007","quality":0.61,"rank":3,"rank_high":5,"rank_low":2,
//!  "reviews":["<sha256>",...],"std_error":0.04}
//! ```
//!
//! `quality` and `std_error` are the calibrated quality and its standard error, `rank_low`
//! and `rank_high` the 90% interval of the rank, `excluded` why the project is not ranked.
//! `reviews` are a commitment (hex, sorted) to each of the project's reviews as the run
//! pinned them, i.e. to the exact text `{"judge":...,"project":...,"score":...}` that
//! appears in the run's `inputs.json` ([`EntryFormat`]):
//!
//! - `verdict.publication.v3` (entry format 2, every publication made now): HMAC-SHA256 of
//!   the text under the key `SHA-256("verdict.review-key.v1" 0x0a || inputs.json)`. Anyone
//!   holding the result bundle recomputes every leaf, and `verdict results verify` checks
//!   the signed root against the bundle; anyone else, who sees an entry in a proof, cannot
//!   test a guess of which judge gave which score: the key needs the whole of inputs.json
//!   (every review of the event), and the run's published `inputs_hash` is its plain
//!   SHA-256, not the key.
//! - `verdict.publication.v2` (no entry format, publications made before that): the plain
//!   SHA-256 of the text. A judge key and a score are few enough to guess, so someone who
//!   knows an event's judge keys could test which judge gave a project which score: why v3
//!   exists. v2 publications keep verifying, their proofs too.
//!
//! The tree is RFC 6962's ([`crate::crypto::merkle`]); its root and size are inside the
//! signed publication document (`verdict.publication.v2` or `.v3`,
//! [`super::results::PublicationDocument`]). Publications made before are v1 documents
//! without a root: they keep verifying as v1 and have no proofs.
//!
//! ## The proof
//!
//! An [`InclusionProof`] is one JSON file that verifies alone, offline: the publication
//! document with its signature, the public key, the entry, its leaf index, the tree size
//! and the audit path. [`verify`] checks, one line each: the file is byte for byte as
//! written, the key is the pinned one, the publication signature, that the proof's root
//! and size are the signed ones, that the entry names the project, and that the audit path
//! leads from the entry's leaf to that root.
//!
//! ## Two versions of an event
//!
//! Each publication's tree is built afresh from its own run, and a new run recomputes
//! every project's entry (a calibrated quality moves when any review does), so a later
//! tree is not an append-only extension of an earlier one: an RFC 6962 consistency proof
//! would fail at the first changed entry and could not say which. [`compare`] does what
//! the question asks instead: it matches entries by project and reports which are kept
//! byte for byte, changed, removed or added; each side's entries are first checked against
//! that publication's signed root.
//! A v2 and a v3 publication spell every review differently: across that change the
//! earlier one's entries are rebuilt from its run in the later one's spelling before they
//! are compared (each is still checked against its own signed root first).
//!
//! The rest of an entry (quality, rank, interval) is public already (`ranking`).

use std::collections::{BTreeMap, HashMap};

use entity::{calibration_run, event, result_publication};
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder};
use serde::{Deserialize, Serialize};

use super::results::PublicationDocument;
use crate::calibrate::{CalibrationInput, CalibrationResult, fmt_float};
use crate::crypto::merkle::{self, Hash, Tree};
use crate::crypto::sha256_hex;
use crate::crypto::signing::PublicKey;
use crate::error::{AppError, AppResult};

/// The `format` of an inclusion proof file.
pub const PROOF_FORMAT: &str = "verdict.inclusion-proof.v1";

/// One leaf: a project's canonical entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub project: String,
    pub text: String,
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

fn opt_float(x: Option<f64>) -> String {
    x.map_or_else(|| "null".into(), fmt_float)
}

fn opt_int(x: Option<u32>) -> String {
    x.map_or_else(|| "null".into(), |v| v.to_string())
}

/// How a tree's entries spell their reviews (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EntryFormat {
    /// `verdict.publication.v2`: the plain SHA-256 of each review's pinned text.
    Plain,
    /// `verdict.publication.v3`: HMAC-SHA256 of the text under a key derived from the
    /// whole of the run's inputs.
    Salted,
}

impl EntryFormat {
    /// [`EntryFormat::Salted`] as stored (`result_publications.entry_format`) and signed.
    pub const SALTED: i32 = 2;

    /// The format of a stored or signed `entry_format`: salted for 2, plain for none.
    pub fn of(stored: Option<i32>) -> EntryFormat {
        if stored == Some(Self::SALTED) {
            EntryFormat::Salted
        } else {
            EntryFormat::Plain
        }
    }

    /// What is stored and signed for this format.
    pub fn stored(self) -> Option<i32> {
        match self {
            EntryFormat::Plain => None,
            EntryFormat::Salted => Some(Self::SALTED),
        }
    }
}

/// The domain tag of the review commitments' key (followed by a newline, then the run's
/// canonical inputs).
const REVIEW_KEY_TAG: &str = "verdict.review-key.v1";

/// The commitment to one review's pinned text: HMAC-SHA256 under `key` (the salted
/// format's [`review_key`] of the run's inputs), or its plain SHA-256 without one (v2).
fn review_commitment(key: Option<&[u8; 32]>, text: &str) -> String {
    match key {
        None => sha256_hex(text.as_bytes()),
        Some(key) => {
            use hmac::{Hmac, KeyInit, Mac};
            // HMAC takes a key of any length; 32 bytes here.
            let mut mac = <Hmac<sha2::Sha256> as KeyInit>::new_from_slice(key)
                .unwrap_or_else(|_| unreachable!("HMAC takes a key of any length"));
            mac.update(text.as_bytes());
            hex::encode(mac.finalize().into_bytes())
        }
    }
}

/// The key of the salted review commitments of a run whose canonical inputs are `inputs`.
fn review_key(inputs: &str) -> [u8; 32] {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    h.update(REVIEW_KEY_TAG.as_bytes());
    h.update(b"\n");
    h.update(inputs.as_bytes());
    let mut key = [0u8; 32];
    key.copy_from_slice(&h.finalize());
    key
}

/// A pinned review exactly as the run's canonical inputs spell it.
pub fn review_text(judge: &str, project: &str, score: f64) -> String {
    format!(
        "{{\"judge\":{},\"project\":{},\"score\":{}}}",
        json_str(judge),
        json_str(project),
        fmt_float(score)
    )
}

/// The entries of a run's public projection in `format`, in leaf order (by project id):
/// `input` parsed from `inputs` (the run's canonical inputs text).
pub fn entries(
    input: &CalibrationInput,
    inputs: &str,
    format: EntryFormat,
    result: &CalibrationResult,
) -> Vec<Entry> {
    // Derived from the whole inputs once, and only for the format that uses it.
    let key = (format == EntryFormat::Salted).then(|| review_key(inputs));
    let mut reviews: HashMap<&str, Vec<String>> = HashMap::new();
    for r in &input.reviews {
        reviews
            .entry(r.project.as_str())
            .or_default()
            .push(review_commitment(
                key.as_ref(),
                &review_text(&r.judge, &r.project, r.score),
            ));
    }
    let mut out: Vec<Entry> = result
        .projects
        .iter()
        .filter(|p| p.excluded.as_deref() != Some("not_submitted"))
        .map(|p| {
            let mut hashes = reviews.remove(p.id.as_str()).unwrap_or_default();
            hashes.sort();
            let hashes: Vec<String> = hashes.iter().map(|h| json_str(h)).collect();
            let text = format!(
                "{{\"excluded\":{},\"project\":{},\"quality\":{},\"rank\":{},\"rank_high\":{},\
                 \"rank_low\":{},\"reviews\":[{}],\"std_error\":{}}}",
                p.excluded
                    .as_deref()
                    .map_or_else(|| "null".into(), json_str),
                json_str(&p.id),
                opt_float(p.quality),
                opt_int(p.rank),
                opt_int(p.rank_high),
                opt_int(p.rank_low),
                hashes.join(","),
                opt_float(p.std_error),
            );
            Entry {
                project: p.id.clone(),
                text,
            }
        })
        .collect();
    out.sort_by(|a, b| a.project.cmp(&b.project));
    out
}

/// A publication's tree: its entries, in leaf order, and the Merkle tree over them.
#[derive(Debug)]
pub struct ResultTree {
    pub entries: Vec<Entry>,
    pub tree: Tree,
    index: HashMap<String, usize>,
}

impl ResultTree {
    pub fn new(entries: Vec<Entry>) -> ResultTree {
        let tree = Tree::new(
            &entries
                .iter()
                .map(|e| e.text.as_bytes())
                .collect::<Vec<_>>(),
        );
        let index = entries
            .iter()
            .enumerate()
            .map(|(i, e)| (e.project.clone(), i))
            .collect();
        ResultTree {
            entries,
            tree,
            index,
        }
    }

    /// The tree in `format` of a run's pinned inputs (canonical JSON) and its parsed
    /// result.
    pub fn of(
        inputs_json: &str,
        result: &CalibrationResult,
        format: EntryFormat,
    ) -> AppResult<ResultTree> {
        let input: CalibrationInput = serde_json::from_str(inputs_json)
            .map_err(|e| AppError::Internal(format!("pinned inputs do not parse: {e}")))?;
        Ok(ResultTree::new(entries(
            &input,
            inputs_json,
            format,
            result,
        )))
    }

    /// The tree in `format` of a stored run.
    pub fn of_run(
        run: &calibration_run::Model,
        result: &CalibrationResult,
        format: EntryFormat,
    ) -> AppResult<ResultTree> {
        ResultTree::of(&run.inputs, result, format)
    }

    pub fn size(&self) -> usize {
        self.tree.size()
    }

    pub fn root_hex(&self) -> String {
        hex::encode(self.tree.root())
    }

    /// The leaf index of `project` (its external id).
    pub fn position(&self, project: &str) -> Option<usize> {
        self.index.get(project).copied()
    }

    /// The proof of `project`'s entry under `publication`, whose `signature` was made with
    /// the key `public_key_pem`. None when the project has no entry, or the publication has
    /// no root (a v1 document).
    pub fn prove(
        &self,
        project: &str,
        publication: PublicationDocument,
        signature: &str,
        public_key_pem: &str,
    ) -> Option<InclusionProof> {
        let i = self.position(project)?;
        let root = publication.merkle_root.clone()?;
        Some(InclusionProof {
            format: PROOF_FORMAT.into(),
            publication,
            signature: signature.to_owned(),
            public_key: public_key_pem.to_owned(),
            project: project.to_owned(),
            leaf_index: i as u64,
            tree_size: self.size() as u64,
            entry: self.entries[i].text.clone(),
            audit_path: self
                .tree
                .path(i)
                .unwrap_or_default()
                .iter()
                .map(hex::encode)
                .collect(),
            root,
        })
    }
}

/// One project's proof: everything needed to check it, in one file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InclusionProof {
    /// [`PROOF_FORMAT`].
    pub format: String,
    /// The signed publication document, root and tree size included.
    pub publication: PublicationDocument,
    /// The publication's Ed25519 signature (hex) over `publication`.
    pub signature: String,
    /// The signing key, SPKI PEM; a verifier pins it by its fingerprint.
    pub public_key: String,
    /// The project's id (external id) the entry is for.
    pub project: String,
    pub leaf_index: u64,
    pub tree_size: u64,
    /// The entry, canonical JSON: the leaf is `SHA-256(0x00 || entry)`.
    pub entry: String,
    /// Sibling hashes from the leaf up (hex).
    pub audit_path: Vec<String>,
    /// The root the path leads to (hex).
    pub root: String,
}

impl InclusionProof {
    /// The file as `verdict results prove` writes it: pretty JSON and a newline.
    pub fn to_file(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }
}

/// The checks of one verification, by name, in order.
#[derive(Debug, Default)]
pub struct Checks {
    pub passed: Vec<String>,
    pub failed: Vec<String>,
}

impl Checks {
    fn check(&mut self, ok: bool, what: impl Into<String>) -> bool {
        let what = what.into();
        if ok {
            self.passed.push(what);
        } else {
            self.failed.push(what);
        }
        ok
    }
    pub fn ok(&self) -> bool {
        self.failed.is_empty() && !self.passed.is_empty()
    }
}

/// Verifies an inclusion proof file offline against the key with SHA-256 fingerprint
/// `fingerprint` (hex). Never touches a database or the network.
pub fn verify(file: &str, fingerprint: &str) -> Checks {
    let mut c = Checks::default();
    let proof: InclusionProof = match serde_json::from_str(file) {
        Ok(p) => p,
        Err(e) => {
            c.check(false, format!("the file is an inclusion proof ({e})"));
            return c;
        }
    };
    c.check(
        proof.to_file() == file && proof.format == PROOF_FORMAT,
        format!("the file is a {PROOF_FORMAT} byte for byte as `results prove` writes it"),
    );
    let key = PublicKey::from_pem(&proof.public_key)
        .ok()
        .filter(|k| k.to_pem() == proof.public_key);
    let pinned = key
        .as_ref()
        .is_some_and(|k| fingerprint.trim().eq_ignore_ascii_case(&k.fingerprint()));
    c.check(
        pinned,
        format!("the proof's key is the pinned key {fingerprint}"),
    );
    let doc = &proof.publication;
    c.check(
        pinned
            && key.as_ref().is_some_and(|k| {
                doc.merkle_root.is_some() && doc.signature_ok(k, &proof.signature)
            }),
        format!(
            "publication signature ({}) over event {}, version {}, run {}, root and size",
            doc.tag(),
            doc.event,
            doc.version,
            doc.run
        ),
    );
    c.check(
        doc.merkle_root.as_deref() == Some(proof.root.as_str())
            && doc.tree_size == Some(proof.tree_size),
        format!(
            "the proof's root and tree size ({}) are the signed ones",
            proof.tree_size
        ),
    );
    let names = serde_json::from_str::<serde_json::Value>(&proof.entry)
        .ok()
        .is_some_and(|v| v["project"] == proof.project.as_str());
    c.check(names, format!("the entry is project {}'s", proof.project));
    let path: Option<Vec<Hash>> = proof
        .audit_path
        .iter()
        .map(|h| merkle::parse_hash(h))
        .collect();
    let included = match (path, merkle::parse_hash(&proof.root)) {
        (Some(path), Some(root)) => merkle::verify_inclusion(
            &merkle::leaf_hash(proof.entry.as_bytes()),
            proof.leaf_index,
            proof.tree_size,
            &path,
            &root,
        ),
        _ => false,
    };
    c.check(
        included,
        format!(
            "the audit path ({} hashes) leads from leaf {} of {} to the root",
            proof.audit_path.len(),
            proof.leaf_index,
            proof.tree_size
        ),
    );
    c
}

/// How a later publication's entries compare with an earlier one's, by project.
#[derive(Debug, Default, PartialEq)]
pub struct Comparison {
    /// Entries of the earlier version found byte for byte in the later one.
    pub kept: usize,
    /// Projects whose entry differs.
    pub changed: Vec<String>,
    /// Projects of the earlier version with no entry in the later one.
    pub removed: Vec<String>,
    /// Projects only the later version has.
    pub added: Vec<String>,
}

impl Comparison {
    /// Whether the later version kept every earlier entry unchanged.
    pub fn consistent(&self) -> bool {
        self.changed.is_empty() && self.removed.is_empty()
    }
}

/// Compares two publications' entries by project.
pub fn compare(earlier: &[Entry], later: &[Entry]) -> Comparison {
    let later_by: BTreeMap<&str, &str> = later
        .iter()
        .map(|e| (e.project.as_str(), e.text.as_str()))
        .collect();
    let mut c = Comparison::default();
    for e in earlier {
        match later_by.get(e.project.as_str()) {
            Some(text) if *text == e.text => c.kept += 1,
            Some(_) => c.changed.push(e.project.clone()),
            None => c.removed.push(e.project.clone()),
        }
    }
    let earlier_ids: std::collections::HashSet<&str> =
        earlier.iter().map(|e| e.project.as_str()).collect();
    c.added = later
        .iter()
        .filter(|e| !earlier_ids.contains(e.project.as_str()))
        .map(|e| e.project.clone())
        .collect();
    c
}

/// A stored publication of an event with its run and tree: `version`, or the latest.
pub struct Published {
    pub event: event::Model,
    pub publication: result_publication::Model,
    pub run: calibration_run::Model,
    pub tree: ResultTree,
}

impl Published {
    /// The publication's signed document.
    pub fn document(&self) -> PublicationDocument {
        PublicationDocument::of(&self.event.external_id, &self.publication, &self.run)
    }

    /// How its entries spell their reviews.
    pub fn format(&self) -> EntryFormat {
        EntryFormat::of(self.publication.entry_format)
    }

    /// Its run's entries in `format`: its own tree's when that is its format, else rebuilt
    /// (to compare with a publication that spells reviews the other way).
    pub fn entries_in(&self, format: EntryFormat) -> AppResult<Vec<Entry>> {
        if format == self.format() {
            return Ok(self.tree.entries.clone());
        }
        let result = super::results::parse_result(&self.run)?;
        Ok(ResultTree::of_run(&self.run, &result, format)?.entries)
    }

    /// Whether the tree rebuilt from the run is the one the publication signed.
    pub fn root_matches(&self) -> bool {
        self.publication.merkle_root.as_deref() == Some(self.tree.root_hex().as_str())
            && self.publication.merkle_size == Some(self.tree.size() as i64)
    }
}

/// Reads publication `version` (the latest when None) of the event `slug` and builds its
/// tree. BAD_USER_INPUT (naming `version`) when there is no such publication.
pub async fn published<C: ConnectionTrait>(
    db: &C,
    slug: &str,
    version: Option<i32>,
) -> AppResult<Published> {
    let event = super::event_by_slug(db, slug).await?;
    let mut q =
        result_publication::Entity::find().filter(result_publication::Column::EventId.eq(event.id));
    if let Some(v) = version {
        q = q.filter(result_publication::Column::Version.eq(v));
    }
    let publication = q
        .order_by_desc(result_publication::Column::Version)
        .one(db)
        .await?
        .ok_or_else(|| match version {
            Some(v) => AppError::bad_input("version", format!("this event has no version {v}")),
            None => AppError::conflict("this event has no published results yet"),
        })?;
    let run = calibration_run::Entity::find_by_id(publication.run_id)
        .one(db)
        .await?
        .ok_or(AppError::NotFound("calibration run"))?;
    let format = EntryFormat::of(publication.entry_format);
    let tree = ResultTree::of_run(&run, &super::results::parse_result(&run)?, format)?;
    Ok(Published {
        event,
        publication,
        run,
        tree,
    })
}

/// The proof of `project` (its id or external id) under the event's publication `version`
/// (the latest when None), carrying `key`'s PEM.
pub async fn prove<C: ConnectionTrait>(
    db: &C,
    slug: &str,
    project: &str,
    version: Option<i32>,
    key: &PublicKey,
) -> AppResult<InclusionProof> {
    let p = published(db, slug, version).await?;
    if p.publication.merkle_root.is_none() {
        return Err(AppError::conflict(format!(
            "version {} was published before results carried a Merkle root \
             (a verdict.publication.v1 document): it has no inclusion proofs",
            p.publication.version
        )));
    }
    let external = match p.tree.position(project) {
        Some(_) => project.to_owned(),
        None => super::find_project(db, project, Some(p.event.id))
            .await?
            // A public id names a project of any event: only this one's count.
            .filter(|row| row.event_id == p.event.id)
            .map(|row| row.external_id)
            .ok_or_else(|| AppError::bad_input("project", "no such project in this event"))?,
    };
    p.tree
        .prove(
            &external,
            p.document(),
            &p.publication.signature,
            &key.to_pem(),
        )
        .ok_or_else(|| {
            AppError::bad_input(
                "project",
                format!(
                    "{external} has no entry in version {} (it was not submitted when the run \
                     was computed)",
                    p.publication.version
                ),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::{self, Params, synth};
    use crate::crypto::signing::Signer25519;

    fn run(seed: u64) -> (CalibrationInput, String, CalibrationResult) {
        let panel = synth::Panel::generate(synth::SynthParams::realistic(40, 12, 3, seed));
        let (pinned, text) = super::super::results::pin(&panel.input).unwrap();
        let params = Params {
            bootstrap: 10,
            ..Params::default_for(seed)
        };
        let result = calibrate::calibrate(&pinned, &params);
        (pinned, text, result)
    }

    fn document(tree: &ResultTree) -> PublicationDocument {
        PublicationDocument {
            event: "evt".into(),
            version: 2,
            is_final: false,
            run: "run.x".into(),
            result_hash: "ab".repeat(32),
            published_at: "2026-12-05T03:00:00.000000Z".into(),
            merkle_root: Some(tree.root_hex()),
            tree_size: Some(tree.size() as u64),
            entry_format: EntryFormat::Salted.stored(),
        }
    }

    /// The reviews of `entry` (its `reviews` array).
    fn reviews_of(entry: &Entry) -> Vec<String> {
        let v: serde_json::Value = serde_json::from_str(&entry.text).unwrap();
        v["reviews"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h.as_str().unwrap().to_owned())
            .collect()
    }

    #[test]
    fn review_hashes_are_of_the_pinned_inputs_text() {
        let (input, text, result) = run(3);
        for r in &input.reviews {
            let t = review_text(&r.judge, &r.project, r.score);
            assert!(text.contains(&t), "{t} is not in the pinned inputs");
        }
        // v2 (plain): each review's plain SHA-256, sorted, as every v2 publication spelt it.
        let plain = ResultTree::of(&text, &result, EntryFormat::Plain).unwrap();
        for e in &plain.entries {
            let mut expected: Vec<String> = input
                .reviews
                .iter()
                .filter(|r| r.project == e.project)
                .map(|r| sha256_hex(review_text(&r.judge, &r.project, r.score).as_bytes()))
                .collect();
            expected.sort();
            assert_eq!(reviews_of(e), expected);
        }
        let tree = ResultTree::of(&text, &result, EntryFormat::Salted).unwrap();
        assert_eq!(tree.size(), result.projects.len());
        let first = &tree.entries[0];
        let v: serde_json::Value = serde_json::from_str(&first.text).unwrap();
        // Canonical: serde_json's sorted re-encoding of the entry gives its own text back
        // except for floats, which keep the result's canonical spelling.
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted);
        assert_eq!(v["project"], first.project.as_str());
        let reviews = input
            .reviews
            .iter()
            .filter(|r| r.project == first.project)
            .count();
        assert_eq!(v["reviews"].as_array().unwrap().len(), reviews);
        assert!(tree.entries.windows(2).all(|w| w[0].project < w[1].project));
    }

    /// v3's review commitments: recomputed from the whole pinned inputs (HMAC-SHA256 under
    /// SHA-256 of the tag, a newline and inputs.json), and no guess of a judge and a score
    /// tested against an entry by hashing it, which is what v2's plain hashes allowed.
    #[test]
    fn salted_review_commitments_need_the_whole_inputs() {
        use hmac::{Hmac, KeyInit, Mac};
        use sha2::Digest;
        let (input, text, result) = run(3);
        let tree = ResultTree::of(&text, &result, EntryFormat::Salted).unwrap();
        let plain = ResultTree::of(&text, &result, EntryFormat::Plain).unwrap();
        let key = sha2::Sha256::digest(format!("verdict.review-key.v1\n{text}").as_bytes());
        let mut reviewed = 0;
        for (e, p) in tree.entries.iter().zip(&plain.entries) {
            let mut expected: Vec<String> = input
                .reviews
                .iter()
                .filter(|r| r.project == e.project)
                .map(|r| {
                    let mut mac = <Hmac<sha2::Sha256> as KeyInit>::new_from_slice(&key).unwrap();
                    mac.update(review_text(&r.judge, &r.project, r.score).as_bytes());
                    hex::encode(mac.finalize().into_bytes())
                })
                .collect();
            expected.sort();
            let salted = reviews_of(e);
            assert_eq!(salted, expected, "{}", e.project);
            // An attacker's test: hash a guessed review and look for it in the entry.
            for h in reviews_of(p) {
                assert!(
                    !salted.contains(&h),
                    "a plain review hash is in {}",
                    e.project
                );
            }
            reviewed += salted.len();
        }
        assert!(reviewed > 0);
        assert_ne!(tree.root_hex(), plain.root_hex());
        // The same review text under another run's inputs commits differently.
        let other = run(4).1;
        let t = review_text(&input.reviews[0].judge, &input.reviews[0].project, 1.0);
        assert_ne!(
            review_commitment(Some(&review_key(&text)), &t),
            review_commitment(Some(&review_key(&other)), &t)
        );
        // The run's inputs_hash (public) is not the key.
        assert_ne!(sha256_hex(text.as_bytes()), hex::encode(review_key(&text)));
    }

    #[test]
    fn a_proof_verifies_alone_and_fails_on_any_changed_byte() {
        let dir = tempfile::tempdir().unwrap();
        let signer = Signer25519::load_or_create(&dir.path().join("k")).unwrap();
        let (_, text, result) = run(5);
        let tree = ResultTree::of(&text, &result, EntryFormat::Salted).unwrap();
        let doc = document(&tree);
        let sig = doc.sign(&signer);
        let pem = signer.public().to_pem();
        let fp = signer.fingerprint();
        for e in &tree.entries {
            let proof = tree.prove(&e.project, doc.clone(), &sig, &pem).unwrap();
            let checks = verify(&proof.to_file(), &fp);
            assert!(checks.ok(), "{:?}", checks.failed);
        }
        let file = tree
            .prove(&tree.entries[7].project, doc.clone(), &sig, &pem)
            .unwrap()
            .to_file();
        // Every byte, flipped in its low bit: not one flip passes.
        for i in 0..file.len() {
            let mut bytes = file.clone().into_bytes();
            bytes[i] ^= 1;
            let Ok(bad) = String::from_utf8(bytes) else {
                continue;
            };
            assert!(!verify(&bad, &fp).ok(), "byte {i} flipped still verifies");
        }
        // Another key pinned: fails.
        assert!(!verify(&file, &"0".repeat(64)).ok());
        // A v1 document (no root) has no proofs.
        let v1 = PublicationDocument {
            merkle_root: None,
            tree_size: None,
            entry_format: None,
            ..doc
        };
        assert!(
            tree.prove(&tree.entries[0].project, v1, &sig, &pem)
                .is_none()
        );
        assert!(tree.prove("nobody", document(&tree), &sig, &pem).is_none());
    }

    #[test]
    fn a_proof_for_another_versions_root_fails() {
        let dir = tempfile::tempdir().unwrap();
        let signer = Signer25519::load_or_create(&dir.path().join("k")).unwrap();
        let (_, text_a, result_a) = run(5);
        let (_, text_b, result_b) = run(6);
        let (a, b) = (
            ResultTree::of(&text_a, &result_a, EntryFormat::Salted).unwrap(),
            ResultTree::of(&text_b, &result_b, EntryFormat::Salted).unwrap(),
        );
        let doc_b = document(&b);
        let sig_b = doc_b.sign(&signer);
        let project = &a.entries[3].project;
        // Version a's path and entry under version b's signed document.
        let mut proof = a
            .prove(project, document(&a), &sig_b, &signer.public().to_pem())
            .unwrap();
        proof.publication = doc_b;
        proof.root = b.root_hex();
        let checks = verify(&proof.to_file(), &signer.fingerprint());
        assert!(!checks.ok());
        assert_eq!(
            checks.failed,
            vec![format!(
                "the audit path ({} hashes) leads from leaf 3 of 40 to the root",
                proof.audit_path.len()
            )]
        );
    }

    #[test]
    fn comparison_names_what_changed_by_project() {
        let e = |p: &str, t: &str| Entry {
            project: p.into(),
            text: t.into(),
        };
        let earlier = vec![e("a", "1"), e("b", "2"), e("c", "3")];
        assert!(compare(&earlier, &earlier).consistent());
        assert_eq!(compare(&earlier, &earlier).kept, 3);
        let later = vec![e("a", "1"), e("b", "2'"), e("d", "4")];
        assert_eq!(
            compare(&earlier, &later),
            Comparison {
                kept: 1,
                changed: vec!["b".into()],
                removed: vec!["c".into()],
                added: vec!["d".into()],
            }
        );
        assert!(!compare(&earlier, &later).consistent());
        assert!(compare(&earlier[..1], &later).consistent());
    }

    #[test]
    fn v1_v2_and_v3_documents_verify_each_as_signed() {
        let dir = tempfile::tempdir().unwrap();
        let signer = Signer25519::load_or_create(&dir.path().join("k")).unwrap();
        let tree = ResultTree::new(vec![]);
        let v3 = document(&tree);
        let v2 = PublicationDocument {
            entry_format: None,
            ..v3.clone()
        };
        let v1 = PublicationDocument {
            merkle_root: None,
            tree_size: None,
            ..v2.clone()
        };
        assert_eq!(
            (v1.tag(), v2.tag(), v3.tag()),
            (
                "verdict.publication.v1",
                "verdict.publication.v2",
                "verdict.publication.v3"
            )
        );
        let key = signer.public();
        // A v1 signature is made over the v1 fields with the v1 tag, as before this step.
        let old = signer.sign(
            crate::crypto::signing::PUBLICATION_TAG,
            &super::super::results::publication_fields(
                "evt",
                "2",
                false,
                "run.x",
                &"ab".repeat(32),
                "2026-12-05T03:00:00.000000Z",
            ),
        );
        assert_eq!(v1.sign(&signer), old);
        assert!(v1.signature_ok(&key, &old));
        let new = v2.sign(&signer);
        assert!(v2.signature_ok(&key, &new));
        // Neither passes for the other, nor with its root or size taken away or changed.
        assert!(!v2.signature_ok(&key, &old));
        assert!(!v1.signature_ok(&key, &new));
        let resized = PublicationDocument {
            tree_size: Some(1),
            ..v2.clone()
        };
        assert!(!resized.signature_ok(&key, &new));
        let half = PublicationDocument {
            tree_size: None,
            ..v2.clone()
        };
        assert!(!half.signature_ok(&key, &new));
        // v3: the v2 fields under its own tag. A v3 signature does not pass for the v2
        // document of the same root (a downgrade of the entries' format) nor the reverse,
        // and no other format number or a format without a root was signed by anyone.
        let salted = v3.sign(&signer);
        assert!(v3.signature_ok(&key, &salted));
        assert!(!v2.signature_ok(&key, &salted));
        assert!(!v3.signature_ok(&key, &new));
        let (result_hash, root, size) = ("ab".repeat(32), tree.root_hex(), tree.size().to_string());
        let mut v2_fields = super::super::results::publication_fields(
            "evt",
            "2",
            false,
            "run.x",
            &result_hash,
            "2026-12-05T03:00:00.000000Z",
        )
        .to_vec();
        v2_fields.extend([root.as_bytes(), size.as_bytes()]);
        assert_eq!(
            salted,
            signer.sign(crate::crypto::signing::PUBLICATION_V3_TAG, &v2_fields)
        );
        for bad in [
            PublicationDocument {
                entry_format: Some(3),
                ..v3.clone()
            },
            PublicationDocument {
                merkle_root: None,
                tree_size: None,
                ..v3.clone()
            },
        ] {
            assert!(!bad.signature_ok(&key, &bad.sign(&signer)));
        }
    }
}
