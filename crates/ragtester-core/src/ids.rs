//! Stable, content-derived identifiers.
//!
//! Ids are the first 16 hex digits of a SHA-256: short enough to read in a report, long enough that a corpus of
//! millions of records will not collide in practice.

use serde::Serialize;
use sha2::{Digest, Sha256};

/// Hex id of raw content (documents, chunks).
pub fn content_id(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    hex::encode(&digest[..8])
}

/// Hex id of a serialisable value, computed from its canonical JSON.
///
/// serde_json writes struct fields in declaration order and we never put hash maps in hashed values, so the
/// same settings always give the same id, across runs and machines.
///
/// The JSON is streamed into the hash, never held: ids of whole answer sets and million-chunk corpora are
/// taken this way.
pub fn stable_id<T: Serialize>(prefix: &str, value: &T) -> String {
    let mut hasher = HashWriter(Sha256::new());
    hasher.0.update(prefix.as_bytes());
    hasher.0.update([0u8]);
    serde_json::to_writer(&mut hasher, value).expect("records serialise to JSON");
    hex::encode(&hasher.0.finalize()[..8])
}

/// `stable_id(prefix, &items)` of a list fed one item at a time, so a run's answers are hashed as they are
/// read rather than collected first: the same id as the whole list's.
pub struct StableListId {
    hasher: HashWriter,
    first: bool,
}

impl StableListId {
    pub fn new(prefix: &str) -> Self {
        let mut hasher = HashWriter(Sha256::new());
        hasher.0.update(prefix.as_bytes());
        hasher.0.update([0u8]);
        hasher.0.update(b"[");
        Self {
            hasher,
            first: true,
        }
    }

    pub fn add<T: Serialize>(&mut self, item: &T) {
        if !self.first {
            self.hasher.0.update(b",");
        }
        self.first = false;
        serde_json::to_writer(&mut self.hasher, item).expect("records serialise to JSON");
    }

    pub fn finish(mut self) -> String {
        self.hasher.0.update(b"]");
        hex::encode(&self.hasher.0.finalize()[..8])
    }
}

/// The bytes written, fed to SHA-256.
struct HashWriter(Sha256);

impl std::io::Write for HashWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.update(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A sampled digest of a (possibly multi-gigabyte) file: SHA-256 over its length, its first and last MiB and
/// 64 KiB at each sixteenth in between. Model weights that differ anywhere a fine-tune or a re-quantisation
/// touches differ in these samples, and a 4 GB file is read in milliseconds rather than seconds.
pub fn file_fingerprint(path: &std::path::Path) -> std::io::Result<String> {
    use std::io::{Read, Seek, SeekFrom};
    const EDGE: u64 = 1 << 20;
    const SAMPLE: u64 = 64 << 10;
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    let mut hasher = Sha256::new();
    hasher.update(len.to_le_bytes());
    let mut read_at = |offset: u64, n: u64, hasher: &mut Sha256| -> std::io::Result<()> {
        file.seek(SeekFrom::Start(offset))?;
        let mut buf = Vec::with_capacity(n as usize);
        (&mut file).take(n).read_to_end(&mut buf)?;
        hasher.update(&buf);
        Ok(())
    };
    if len <= 2 * EDGE + 16 * SAMPLE {
        read_at(0, len, &mut hasher)?;
    } else {
        read_at(0, EDGE, &mut hasher)?;
        for i in 1..16 {
            read_at(len / 16 * i, SAMPLE, &mut hasher)?;
        }
        read_at(len - EDGE, EDGE, &mut hasher)?;
    }
    Ok(format!("sha256s:{}", hex::encode(&hasher.finalize()[..8])))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_id_is_stable_and_content_sensitive() {
        assert_eq!(content_id(b"abc"), content_id(b"abc"));
        assert_ne!(content_id(b"abc"), content_id(b"abd"));
        // First 8 bytes of SHA-256("abc"), a published test vector.
        assert_eq!(content_id(b"abc"), "ba7816bf8f01cfea");
    }

    #[test]
    fn stable_id_is_the_hash_of_prefix_and_json() {
        let value = (1, "a", vec![2.5, 3.0]);
        let mut hasher = Sha256::new();
        hasher.update(b"c\0");
        hasher.update(serde_json::to_vec(&value).unwrap());
        assert_eq!(
            stable_id("c", &value),
            hex::encode(&hasher.finalize()[..8]),
            "streaming keeps every id already stored"
        );
    }

    #[test]
    fn a_list_fed_item_by_item_has_the_whole_lists_id() {
        for items in [vec![], vec![(1, "a")], vec![(1, "a"), (2, "b"), (3, "c")]] {
            let mut streamed = StableListId::new("answers");
            items.iter().for_each(|i| streamed.add(i));
            assert_eq!(streamed.finish(), stable_id("answers", &items));
        }
    }

    #[test]
    fn stable_id_depends_on_prefix_and_value() {
        assert_eq!(stable_id("c", &(1, "a")), stable_id("c", &(1, "a")));
        assert_ne!(stable_id("c", &(1, "a")), stable_id("d", &(1, "a")));
        assert_ne!(stable_id("c", &(1, "a")), stable_id("c", &(2, "a")));
    }

    #[test]
    fn a_file_fingerprint_changes_with_any_sampled_byte() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.gguf");
        let mut bytes = vec![7u8; 5 << 20];
        std::fs::write(&path, &bytes).unwrap();
        let a = file_fingerprint(&path).unwrap();
        assert_eq!(a, file_fingerprint(&path).unwrap());
        // A byte in the middle sample (at 8/16 of the file) and one near the end.
        for offset in [bytes.len() / 2 + 10, bytes.len() - 3] {
            bytes[offset] ^= 1;
            std::fs::write(&path, &bytes).unwrap();
            assert_ne!(a, file_fingerprint(&path).unwrap());
            bytes[offset] ^= 1;
        }
        let small = dir.path().join("s");
        std::fs::write(&small, b"abc").unwrap();
        assert_ne!(file_fingerprint(&small).unwrap(), a);
    }
}
