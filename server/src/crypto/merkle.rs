//! Merkle trees as RFC 6962 (Certificate Transparency) defines them, for inclusion proofs of
//! published results (`domain::proofs`). Pure: no database, no I/O.
//!
//! - leaf hash: `SHA-256(0x00 || leaf)`; node hash: `SHA-256(0x01 || left || right)`; the
//!   two prefixes keep a leaf from ever passing for a node (second-preimage resistance).
//! - the tree over `n` leaves splits at `k`, the largest power of two smaller than `n`: the
//!   left subtree holds the first `k` leaves, the right one the rest. The root of no leaves
//!   is `SHA-256()` of nothing.
//! - the audit path of leaf `m` lists, leaf side first, the root of every sibling subtree on
//!   the way up (RFC 6962 §2.1.1 `PATH`), and [`verify_inclusion`] is RFC 9162 §2.1.3.2's
//!   algorithm, which also checks that the path's length and shape fit `m` and `n`.
//!
//! [`Tree`] builds the levels bottom-up, pairing neighbours and carrying an odd last node up
//! unchanged; that gives exactly the tree of the RFC's recursive split (the tests compare
//! the two on every size up to 70), and every path in `O(log n)` after one `O(n)` build.

use sha2::{Digest, Sha256};

/// A SHA-256 digest.
pub type Hash = [u8; 32];

/// `SHA-256(0x00 || leaf)`.
pub fn leaf_hash(leaf: &[u8]) -> Hash {
    let mut h = Sha256::new();
    h.update([0u8]);
    h.update(leaf);
    h.finalize().into()
}

/// `SHA-256(0x01 || left || right)`.
pub fn node_hash(left: &Hash, right: &Hash) -> Hash {
    let mut h = Sha256::new();
    h.update([1u8]);
    h.update(left);
    h.update(right);
    h.finalize().into()
}

/// The root of the empty tree: SHA-256 of no bytes.
pub fn empty_root() -> Hash {
    Sha256::digest([]).into()
}

/// A built tree: every level from the leaf hashes up to the root.
#[derive(Debug, Clone)]
pub struct Tree {
    levels: Vec<Vec<Hash>>,
}

impl Tree {
    /// The tree over `leaves` (the leaves themselves, hashed here with [`leaf_hash`]).
    pub fn new<L: AsRef<[u8]>>(leaves: &[L]) -> Tree {
        Tree::from_leaf_hashes(leaves.iter().map(|l| leaf_hash(l.as_ref())).collect())
    }

    /// The tree over leaves already hashed with [`leaf_hash`].
    pub fn from_leaf_hashes(hashes: Vec<Hash>) -> Tree {
        let mut levels = vec![hashes];
        while levels.last().is_some_and(|l| l.len() > 1) {
            let below = levels.last().map(Vec::as_slice).unwrap_or_default();
            let up = below
                .chunks(2)
                .filter_map(|pair| match pair {
                    [l, r] => Some(node_hash(l, r)),
                    // The odd last node is carried up as it is.
                    [odd] => Some(*odd),
                    _ => None,
                })
                .collect();
            levels.push(up);
        }
        Tree { levels }
    }

    /// How many leaves.
    pub fn size(&self) -> usize {
        self.levels[0].len()
    }

    /// The root hash ([`empty_root`] for no leaves).
    pub fn root(&self) -> Hash {
        self.levels
            .last()
            .and_then(|l| l.first())
            .copied()
            .unwrap_or_else(empty_root)
    }

    /// The leaf hash at `index`.
    pub fn leaf(&self, index: usize) -> Option<Hash> {
        self.levels[0].get(index).copied()
    }

    /// The audit path of leaf `index`, leaf side first; None when there is no such leaf.
    pub fn path(&self, index: usize) -> Option<Vec<Hash>> {
        if index >= self.size() {
            return None;
        }
        let mut path = vec![];
        let mut i = index;
        for level in &self.levels[..self.levels.len() - 1] {
            let sibling = i ^ 1;
            // A last node without a right neighbour is carried up: no path element.
            if let Some(h) = level.get(sibling) {
                path.push(*h);
            }
            i /= 2;
        }
        Some(path)
    }
}

/// Whether `path` proves that the leaf with hash `leaf` is leaf `index` of a tree of `size`
/// leaves with root `root` (RFC 9162 §2.1.3.2).
pub fn verify_inclusion(leaf: &Hash, index: u64, size: u64, path: &[Hash], root: &Hash) -> bool {
    if index >= size {
        return false;
    }
    let (mut f, mut s) = (index, size - 1);
    let mut r = *leaf;
    for p in path {
        if s == 0 {
            return false;
        }
        if f & 1 == 1 || f == s {
            r = node_hash(p, &r);
            if f & 1 == 0 {
                while f & 1 == 0 && f != 0 {
                    f >>= 1;
                    s >>= 1;
                }
            }
        } else {
            r = node_hash(&r, p);
        }
        f >>= 1;
        s >>= 1;
    }
    s == 0 && r == *root
}

/// Parses a lower-case hex SHA-256 (exactly the spelling [`hex::encode`] writes: a hash that
/// differs in any character is another hash).
pub fn parse_hash(text: &str) -> Option<Hash> {
    if text.len() != 64 || !text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return None;
    }
    hex::decode(text).ok()?.try_into().ok()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, RngAlgorithm, RngSeed, TestRunner};

    use super::*;

    /// The RFC's recursive definitions, written out as they read, to hold the level-wise
    /// [`Tree`] against.
    fn mth(d: &[Vec<u8>]) -> Hash {
        match d.len() {
            0 => empty_root(),
            1 => leaf_hash(&d[0]),
            n => {
                let k = split(n);
                node_hash(&mth(&d[..k]), &mth(&d[k..]))
            }
        }
    }

    fn rfc_path(m: usize, d: &[Vec<u8>]) -> Vec<Hash> {
        let n = d.len();
        if n <= 1 {
            return vec![];
        }
        let k = split(n);
        if m < k {
            let mut p = rfc_path(m, &d[..k]);
            p.push(mth(&d[k..]));
            p
        } else {
            let mut p = rfc_path(m - k, &d[k..]);
            p.push(mth(&d[..k]));
            p
        }
    }

    /// The largest power of two smaller than `n` (n > 1).
    fn split(n: usize) -> usize {
        let mut k = 1;
        while k * 2 < n {
            k *= 2;
        }
        k
    }

    fn leaves(n: usize) -> Vec<Vec<u8>> {
        (0..n).map(|i| vec![i as u8]).collect()
    }

    fn hex32(h: &Hash) -> String {
        hex::encode(h)
    }

    /// Known answers: leaves are the single bytes 0, 1, 2, ...; each root is spelled out as
    /// the RFC's split gives it, and also pinned as hex (computed independently with
    /// Python's hashlib from the same definitions).
    #[test]
    fn known_answers_for_1_2_3_5_7_leaves() {
        let l: Vec<Hash> = (0u8..7).map(|i| leaf_hash(&[i])).collect();
        let n = node_hash;
        let cases: [(usize, Hash, &str); 6] = [
            (
                0,
                empty_root(),
                "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            ),
            (
                1,
                l[0],
                "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            ),
            (
                2,
                n(&l[0], &l[1]),
                "a20bf9a7cc2dc8a08f5f415a71b19f6ac427bab54d24eec868b5d3103449953a",
            ),
            // 3 = 2 + 1: the third leaf is the right subtree on its own.
            (
                3,
                n(&n(&l[0], &l[1]), &l[2]),
                "3b6cccd7e3e023ff393006f030315ee7ad9eb111b022b41fba7e5b7a3973f688",
            ),
            // 5 = 4 + 1.
            (
                5,
                n(&n(&n(&l[0], &l[1]), &n(&l[2], &l[3])), &l[4]),
                "b855b42d6c30f5b087e05266783fbd6e394f7b926013ccaa67700a8b0c5a596f",
            ),
            // 7 = 4 + (2 + 1).
            (
                7,
                n(
                    &n(&n(&l[0], &l[1]), &n(&l[2], &l[3])),
                    &n(&n(&l[4], &l[5]), &l[6]),
                ),
                "3560191803028444b232018ac047fdb561c09c23a7a6876c85e08b5e4d48e9f3",
            ),
        ];
        for (size, by_hand, pinned) in cases {
            let tree = Tree::new(&leaves(size));
            assert_eq!(tree.root(), by_hand, "n = {size}");
            assert_eq!(hex32(&tree.root()), pinned, "n = {size}");
        }
        // Paths by hand for n = 7: leaf 6 has no neighbour at the bottom (it is carried
        // up), then climbs past (4,5), then the left four; leaf 2 past 3, (0,1), then (4..7).
        let tree = Tree::new(&leaves(7));
        let right = n(&n(&l[4], &l[5]), &l[6]);
        let left = n(&n(&l[0], &l[1]), &n(&l[2], &l[3]));
        assert_eq!(tree.path(6), Some(vec![n(&l[4], &l[5]), left]));
        assert_eq!(tree.path(2), Some(vec![l[3], n(&l[0], &l[1]), right]));
        assert_eq!(tree.path(7), None);
        // n = 3: leaf 2's path is the left pair alone; n = 1: the path is empty.
        let three = Tree::new(&leaves(3));
        assert_eq!(three.path(2), Some(vec![n(&l[0], &l[1])]));
        assert_eq!(Tree::new(&leaves(1)).path(0), Some(vec![]));
        // And they verify, each only at its own index.
        for (t, size) in [(&tree, 7u64), (&three, 3)] {
            for i in 0..size {
                let p = t.path(i as usize).unwrap();
                for j in 0..size {
                    assert_eq!(
                        verify_inclusion(&l[i as usize], j, size, &p, &t.root()),
                        i == j,
                        "leaf {i} at index {j} of {size}"
                    );
                }
            }
        }
    }

    #[test]
    fn level_wise_tree_is_the_rfc_tree_for_every_size_up_to_70() {
        for size in 0..=70 {
            let d = leaves(size);
            let tree = Tree::new(&d);
            assert_eq!(tree.root(), mth(&d), "root of {size}");
            for m in 0..size {
                assert_eq!(tree.path(m), Some(rfc_path(m, &d)), "path {m} of {size}");
            }
        }
    }

    #[test]
    fn a_leaf_never_passes_for_a_node() {
        let (a, b) = (leaf_hash(b"a"), leaf_hash(b"b"));
        let mut concatenated = a.to_vec();
        concatenated.extend_from_slice(&b);
        assert_ne!(leaf_hash(&concatenated), node_hash(&a, &b));
    }

    #[test]
    fn hashes_parse_only_as_lower_case_hex_of_32_bytes() {
        let h = leaf_hash(b"x");
        assert_eq!(parse_hash(&hex::encode(h)), Some(h));
        assert_eq!(parse_hash(&hex::encode(h).to_uppercase()), None);
        assert_eq!(parse_hash(&hex::encode(h)[2..]), None);
        assert_eq!(parse_hash(""), None);
    }

    /// A random tree, a leaf of it, and where to flip a bit.
    fn case() -> impl Strategy<Value = (Vec<Vec<u8>>, usize, usize, u8, Vec<Vec<u8>>)> {
        (
            proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..24), 1..90),
            any::<usize>(),
            any::<usize>(),
            1u8..=255,
            proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..24), 1..90),
        )
    }

    /// Every leaf's proof verifies; a flipped byte anywhere in the path, the leaf or the
    /// root fails; the proof fails against another tree's root.
    #[test]
    fn random_trees_prove_every_leaf_and_nothing_else() {
        let mut config = Config::with_cases(256);
        config.rng_seed = RngSeed::Fixed(6962);
        config.rng_algorithm = RngAlgorithm::ChaCha;
        config.failure_persistence = None;
        TestRunner::new(config)
            .run(&case(), |(d, pick, at, flip, other)| {
                let tree = Tree::new(&d);
                let size = d.len() as u64;
                let root = tree.root();
                for (i, leaf) in d.iter().enumerate() {
                    let path = tree.path(i).unwrap();
                    prop_assert!(verify_inclusion(
                        &leaf_hash(leaf),
                        i as u64,
                        size,
                        &path,
                        &root
                    ));
                }
                let i = pick % d.len();
                let path = tree.path(i).unwrap();
                let leaf = leaf_hash(&d[i]);
                // A byte of the path.
                if !path.is_empty() {
                    let mut bad = path.clone();
                    let k = at % (path.len() * 32);
                    bad[k / 32][k % 32] ^= flip;
                    prop_assert!(!verify_inclusion(&leaf, i as u64, size, &bad, &root));
                }
                // A byte of the entry (or one byte more).
                let mut entry = d[i].clone();
                if entry.is_empty() {
                    entry.push(flip);
                } else {
                    let k = at % entry.len();
                    entry[k] ^= flip;
                }
                prop_assert!(!verify_inclusion(
                    &leaf_hash(&entry),
                    i as u64,
                    size,
                    &path,
                    &root
                ));
                // A byte of the root.
                let mut bad_root = root;
                bad_root[at % 32] ^= flip;
                prop_assert!(!verify_inclusion(&leaf, i as u64, size, &path, &bad_root));
                // Another tree's root (unless it is the same leaves).
                if other != d {
                    let other_tree = Tree::new(&other);
                    prop_assert!(!verify_inclusion(
                        &leaf,
                        i as u64,
                        other_tree.size() as u64,
                        &path,
                        &other_tree.root()
                    ));
                    prop_assert!(!verify_inclusion(
                        &leaf,
                        i as u64,
                        size,
                        &path,
                        &other_tree.root()
                    ));
                }
                // A path that is one hash short or one too long.
                if let Some((_, shorter)) = path.split_last() {
                    prop_assert!(!verify_inclusion(&leaf, i as u64, size, shorter, &root));
                }
                let mut longer = path.clone();
                longer.push(root);
                prop_assert!(!verify_inclusion(&leaf, i as u64, size, &longer, &root));
                Ok(())
            })
            .unwrap();
    }
}
