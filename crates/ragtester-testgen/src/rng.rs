//! SplitMix64: a fixed algorithm, so a seed gives the same baseline suite on every machine and every version
//! of every dependency (rand's StdRng makes no such promise).

pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// A seed derived from a base seed and a text (a document id), so each document draws its own sequence.
pub fn seed_for(base: u64, text: &str) -> u64 {
    text.bytes().fold(base ^ 0xA076_1D64_78BD_642F, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01B3)
    })
}
