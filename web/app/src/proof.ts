// Checks a Merkle inclusion proof (`verdict.inclusion-proof.v1`, what
// `PublishedResults.inclusionProof.document` and `verdict results prove` give) in the
// browser, with WebCrypto only and no network: the same checks as
// `verdict results verify-proof` (server/src/domain/proofs.rs), one line each.

export type Check = { ok: boolean; what: string };

type Publication = {
  event: string;
  version: number;
  final: boolean;
  run: string;
  result_hash: string;
  published_at: string;
  merkle_root?: string;
  tree_size?: number;
  /** 2: the entries hold salted review commitments (a `verdict.publication.v3` document). */
  entry_format?: number;
};

type Proof = {
  format: string;
  publication: Publication;
  signature: string;
  public_key: string;
  project: string;
  leaf_index: number;
  tree_size: number;
  entry: string;
  audit_path: string[];
  root: string;
};

const utf8 = new TextEncoder();

function hex(bytes: ArrayBuffer | Uint8Array): string {
  return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** Lower-case hex only (the spelling the server writes), else null. */
function unhex(text: string): Uint8Array | null {
  if (!/^([0-9a-f]{2})*$/.test(text)) return null;
  const out = new Uint8Array(text.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(text.slice(2 * i, 2 * i + 2), 16);
  return out;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

async function sha256(bytes: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as BufferSource));
}

function same(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** RFC 9162 §2.1.3.2: the root that `path` leads to from `leaf` at `index` of `size`, or null. */
async function rootFromPath(leaf: Uint8Array, index: number, size: number, path: Uint8Array[]): Promise<Uint8Array | null> {
  if (!(index >= 0 && index < size)) return null;
  let [f, s] = [index, size - 1];
  let r = leaf;
  for (const p of path) {
    if (s === 0) return null;
    if (f % 2 === 1 || f === s) {
      r = await sha256(concat([new Uint8Array([1]), p, r]));
      if (f % 2 === 0) {
        while (f % 2 === 0 && f !== 0) {
          f = Math.floor(f / 2);
          s = Math.floor(s / 2);
        }
      }
    } else {
      r = await sha256(concat([new Uint8Array([1]), r, p]));
    }
    f = Math.floor(f / 2);
    s = Math.floor(s / 2);
  }
  return s === 0 ? r : null;
}

/** The signed pre-image: hex SHA-256 over the tag and each field, each as its length (8 bytes, big-endian) and bytes. */
async function preImage(tag: string, fields: string[]): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for (const f of [tag, ...fields]) {
    const bytes = utf8.encode(f);
    const len = new Uint8Array(8);
    new DataView(len.buffer).setBigUint64(0, BigInt(bytes.length));
    parts.push(len, bytes);
  }
  return utf8.encode(hex(await sha256(concat(parts))));
}

/** The raw 32-byte Ed25519 key inside an SPKI PEM (a 12-byte header, then the key). */
function rawKey(pem: string): Uint8Array | null {
  const b64 = pem.replace(/-----(BEGIN|END) PUBLIC KEY-----/g, '').replace(/\s+/g, '');
  try {
    const der = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    return der.length === 44 ? der.slice(12) : null;
  } catch {
    return null;
  }
}

/** Checks `text` (a proof file) against the key with SHA-256 fingerprint `pinned`. */
export async function verifyProof(text: string, pinned: string): Promise<Check[]> {
  const checks: Check[] = [];
  let p: Proof;
  try {
    p = JSON.parse(text) as Proof;
  } catch {
    return [{ ok: false, what: 'the proof is JSON' }];
  }
  const d = p.publication;
  const key = rawKey(p.public_key);
  const keyOk = key != null && hex(await sha256(key)) === pinned.toLowerCase();
  checks.push({ ok: keyOk, what: `the proof’s key is this deployment’s key ${pinned}` });

  let signed = false;
  // v3 signs the v2 fields under its own tag; no other entry format was ever signed.
  const tag = d.entry_format == null ? 'verdict.publication.v2' : 'verdict.publication.v3';
  let what = `publication signature (${tag}) over event ${d.event}, version ${d.version}, root and size`;
  const sig = unhex(p.signature);
  const formatOk = d.entry_format == null || d.entry_format === 2;
  if (key && keyOk && sig && formatOk && d.merkle_root != null && d.tree_size != null) {
    const fields = [d.event, String(d.version), d.final ? 'final' : 'provisional', d.run, d.result_hash, d.published_at, d.merkle_root, String(d.tree_size)];
    try {
      const k = await crypto.subtle.importKey('raw', key as BufferSource, { name: 'Ed25519' }, false, ['verify']);
      signed = await crypto.subtle.verify({ name: 'Ed25519' }, k, sig as BufferSource, (await preImage(tag, fields)) as BufferSource);
    } catch {
      what += ': not checked, this browser’s WebCrypto has no Ed25519 (check the file with verdict results verify-proof)';
    }
  }
  checks.push({ ok: signed, what });

  checks.push({
    ok: d.merkle_root === p.root && d.tree_size === p.tree_size,
    what: `the proof’s root and tree size (${p.tree_size}) are the signed ones`,
  });
  let names = false;
  try {
    names = (JSON.parse(p.entry) as { project?: string }).project === p.project;
  } catch {
    names = false;
  }
  checks.push({ ok: names, what: `the entry is project ${p.project}’s` });

  const path = p.audit_path.map(unhex);
  const root = unhex(p.root);
  let included = false;
  if (root && path.every((h): h is Uint8Array => h != null && h.length === 32)) {
    const leaf = await sha256(concat([new Uint8Array([0]), utf8.encode(p.entry)]));
    const got = await rootFromPath(leaf, p.leaf_index, p.tree_size, path as Uint8Array[]);
    included = got != null && same(got, root);
  }
  checks.push({ ok: included, what: `the audit path (${p.audit_path.length} hashes) leads from leaf ${p.leaf_index} of ${p.tree_size} to the root` });
  return checks;
}
