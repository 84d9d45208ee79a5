//! The keys of the series seen before a batch, for the parallel piece parsers: each common
//! line's key is resolved to its series while the batch is parsed, so the booking thread (the
//! serial part of a text read) no longer compares a key per line.
//!
//! The index holds each key's bytes once, in one buffer in the order the series were
//! interned, and a hash table from a 64-bit hash of the key to its series. A lookup hashes
//! the key and compares it byte for byte with the one stored under that hash, so a key is
//! resolved exactly or not at all; two keys whose hashes are equal are both left to the
//! booking thread's lookup. The table is only probed, never iterated, so the hash function
//! decides nothing but speed.
//!
//! The index lags the accumulator by one batch (a key first seen in batch k is added after
//! batch k is booked, while batch k + 1 was already being parsed): a line whose key it does
//! not know goes through the booking thread's lookup exactly as before.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Marks a hash shared by two different keys.
const AMBIGUOUS: u32 = u32::MAX;

/// Series keys by hash, for lookups from several threads at once.
#[derive(Debug, Default)]
pub(super) struct KeyIndex {
    /// Every key, one after another, in the order the series were interned.
    bytes: Vec<u8>,
    /// Each series' key as `(start, end)` in `bytes`.
    spans: Vec<(usize, usize)>,
    /// Key hash → series, or [`AMBIGUOUS`].
    table: HashMap<u64, u32, BuildHasherDefault<Premixed>>,
}

impl KeyIndex {
    /// The series whose key is `key`, if the index holds it.
    ///
    /// # Complexity
    /// O(key): one hash, one probe, one comparison.
    pub(super) fn get(&self, key: &[u8]) -> Option<u32> {
        let id = *self.table.get(&hash(key))?;
        if id == AMBIGUOUS {
            return None;
        }
        let (s, e) = *self.spans.get(id as usize)?;
        (self.bytes.get(s..e)? == key).then_some(id)
    }

    /// Series indexed so far (they are the accumulator's series `0..len`).
    pub(super) fn len(&self) -> usize {
        self.spans.len()
    }

    /// Adds the series `len()..` of `keys` (the accumulator's keys in series order).
    ///
    /// # Complexity
    /// O(bytes of the new keys).
    pub(super) fn extend(&mut self, keys: &[Box<str>]) {
        for key in keys.get(self.spans.len()..).unwrap_or(&[]) {
            let id = u32::try_from(self.spans.len()).unwrap_or(AMBIGUOUS);
            let s = self.bytes.len();
            self.bytes.extend_from_slice(key.as_bytes());
            self.spans.push((s, self.bytes.len()));
            self.table
                .entry(hash(key.as_bytes()))
                .and_modify(|v| *v = AMBIGUOUS)
                .or_insert(id);
        }
    }
}

/// Bytes hashed at each end of a key: the part of a DCGM key that tells series apart (the
/// metric, `gpu` and `UUID` come first, the pod last); the lookup compares the whole key.
const SAMPLE: usize = 64;

/// A 64-bit hash of a key's length and its first and last [`SAMPLE`] bytes, eight bytes at a
/// time on four independent lanes (multiply and rotate), then a final mix: the table takes
/// both its bucket and its tag bits from it. Keys equal at both ends share a hash and are
/// left to the booking thread.
fn hash(key: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let n = key.len();
    let head = &key[..n.min(SAMPLE)];
    let tail = &key[head.len().max(n.saturating_sub(SAMPLE))..];
    let mut lanes = [K, K.rotate_left(16), K.rotate_left(32), K.rotate_left(48)];
    let mut i = 0usize;
    for part in [head, tail] {
        let mut chunks = part.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            let l = &mut lanes[i % 4];
            *l = (*l ^ u64::from_le_bytes(w)).wrapping_mul(K).rotate_left(29);
            i += 1;
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            let l = &mut lanes[i % 4];
            *l = (*l ^ u64::from_le_bytes(w)).wrapping_mul(K).rotate_left(29);
            i += 1;
        }
    }
    let mut h = (n as u64).wrapping_mul(K)
        ^ lanes[0]
        ^ lanes[1].rotate_left(17)
        ^ lanes[2].rotate_left(31)
        ^ lanes[3].rotate_left(47);
    // final mix (murmur3's)
    h ^= h >> 33;
    h = h.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    h ^= h >> 33;
    h = h.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    h ^ (h >> 33)
}

/// The table's hasher: its keys are hashes already.
#[derive(Debug, Default)]
pub(super) struct Premixed(u64);

impl Hasher for Premixed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // only `write_u64` is used; any other input is folded in for completeness
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x0100_0000_01B3);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(list: &[&str]) -> Vec<Box<str>> {
        list.iter().map(|k| Box::<str>::from(*k)).collect()
    }

    #[test]
    fn resolves_exactly_the_keys_added() {
        let all = keys(&[
            "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\"}",
            "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\"}",
            "DCGM_FI_DEV_GPU_UTIL{gpu=\"10\"}",
        ]);
        let mut index = KeyIndex::default();
        index.extend(&all[..2]);
        assert_eq!(index.len(), 2);
        assert_eq!(index.get(b"DCGM_FI_DEV_GPU_UTIL{gpu=\"1\"}"), Some(1));
        assert_eq!(index.get(b"DCGM_FI_DEV_GPU_UTIL{gpu=\"0\"}"), Some(0));
        // not added yet, a prefix, and a longer key
        assert_eq!(index.get(b"DCGM_FI_DEV_GPU_UTIL{gpu=\"10\"}"), None);
        assert_eq!(index.get(b"DCGM_FI_DEV_GPU_UTIL{gpu=\"1\""), None);
        assert_eq!(index.get(b""), None);
        // extending adds only what is new
        index.extend(&all);
        assert_eq!(index.len(), 3);
        assert_eq!(index.get(b"DCGM_FI_DEV_GPU_UTIL{gpu=\"10\"}"), Some(2));
        assert_eq!(index.get(b"DCGM_FI_DEV_GPU_UTIL{gpu=\"1\"}"), Some(1));
    }

    #[test]
    fn keys_that_share_a_hash_are_left_to_the_booking_thread() {
        // equal in their first and last 64 bytes and in length: one hash for both
        let a = format!("m{{a=\"{}\",b=\"{}\"}}", "x".repeat(100), "y".repeat(100));
        let mid = a.len() / 2;
        let b = format!("{}{}{}", &a[..mid], "q", &a[mid + 1..]);
        assert_ne!(a, b);
        assert_eq!(hash(a.as_bytes()), hash(b.as_bytes()));
        let mut index = KeyIndex::default();
        index.extend(&keys(&["m{c=\"1\"}", a.as_str()]));
        assert_eq!(index.get(a.as_bytes()), Some(1));
        // the second key makes the shared hash ambiguous: neither is resolved here
        index.extend(&keys(&["m{c=\"1\"}", a.as_str(), b.as_str()]));
        assert_eq!(index.get(a.as_bytes()), None);
        assert_eq!(index.get(b.as_bytes()), None);
        assert_eq!(index.get(b"m{c=\"1\"}"), Some(0));
    }

    #[test]
    fn short_keys_are_hashed_whole() {
        // a difference anywhere in a key of at most 64 bytes changes the hash
        let a = b"DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-1\"}";
        for i in 0..a.len() {
            let mut b = a.to_vec();
            b[i] ^= 1;
            assert_ne!(hash(a), hash(&b), "byte {i}");
        }
        // and in the middle of a key of 65 to 128 bytes too
        let long = [b'k'; 100];
        let mut other = long;
        other[64] = b'j';
        assert_ne!(hash(&long), hash(&other));
    }

    proptest::proptest! {
        /// Every key added resolves to its own series, and a key never added to nothing.
        #[test]
        fn lookups_agree_with_a_map(
            list in proptest::collection::vec("[a-c{}=\"]{0,20}", 0..60),
            probe in "[a-c{}=\"]{0,20}",
        ) {
            let mut first = std::collections::BTreeMap::new();
            let mut distinct = Vec::new();
            for k in &list {
                if !first.contains_key(k.as_str()) {
                    first.insert(k.clone(), u32::try_from(distinct.len()).unwrap_or(0));
                    distinct.push(Box::<str>::from(k.as_str()));
                }
            }
            let mut index = KeyIndex::default();
            let half = distinct.len() / 2;
            index.extend(&distinct[..half]);
            index.extend(&distinct);
            for (k, id) in &first {
                proptest::prop_assert_eq!(index.get(k.as_bytes()), Some(*id));
            }
            proptest::prop_assert_eq!(index.get(probe.as_bytes()), first.get(&probe).copied());
        }
    }
}
