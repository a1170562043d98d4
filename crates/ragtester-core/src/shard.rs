//! One of N deterministic slices of a run's cells, so a matrix can be spread over CI jobs or the pods of a
//! Kubernetes indexed Job, each writing its own run directory, and merged afterwards (`ragtester merge`).
//! A cell belongs to the slice its id hashes to: the same on every machine, whatever the order of cases
//! or configurations, and about 1/N of the cells each.

use anyhow::{Result, bail};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// 1-based, as `--shard K/N` is written (and as CI matrices and `JOB_COMPLETION_INDEX + 1` count).
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// `K/N` with 1 ≤ K ≤ N.
    pub fn parse(s: &str) -> Result<Self> {
        let Some((k, n)) = s.split_once('/') else {
            bail!("--shard takes K/N (this job's slice K of N), not `{s}`");
        };
        let (Ok(index), Ok(count)) = (k.trim().parse::<usize>(), n.trim().parse::<usize>()) else {
            bail!("--shard takes two whole numbers K/N, not `{s}`");
        };
        if count == 0 || index == 0 || index > count {
            bail!("--shard {s}: K must be between 1 and N");
        }
        Ok(Self { index, count })
    }

    /// Whether the cell (the case's [`shard_unit`], configuration) is this slice's.
    pub fn holds(&self, unit: &str, config_id: &str) -> bool {
        cell_slot(unit, config_id, self.count) == self.index - 1
    }
}

/// What a case is sharded by: a turn of a conversation by its conversation (one job holds the whole
/// history), any other case by itself.
pub fn shard_unit(case: &crate::TestCase) -> &str {
    case.conversation().unwrap_or(&case.id)
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// The 0-based slice of N a cell belongs to: its stable id read as a number.
pub fn cell_slot(case_id: &str, config_id: &str, count: usize) -> usize {
    let id = crate::ids::stable_id("cell", &(case_id, config_id));
    let n = u64::from_str_radix(&id, 16).expect("stable ids are hexadecimal");
    (n % count as u64) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cell_is_in_exactly_one_slice_and_slices_are_even() {
        let shards: Vec<Shard> = (1..=3)
            .map(|k| Shard::parse(&format!("{k}/3")).unwrap())
            .collect();
        let mut sizes = [0usize; 3];
        for case in 0..300 {
            for config in 0..4 {
                let (c, k) = (format!("case{case}"), format!("cfg{config}"));
                let owners: Vec<usize> = (0..3).filter(|&i| shards[i].holds(&c, &k)).collect();
                assert_eq!(owners.len(), 1);
                sizes[owners[0]] += 1;
            }
        }
        for size in sizes {
            assert!((300..=500).contains(&size), "{sizes:?}");
        }
    }

    #[test]
    fn bad_slices_are_refused_with_the_form_to_use() {
        assert_eq!(Shard::parse("2/5").unwrap(), Shard { index: 2, count: 5 });
        for bad in ["0/3", "4/3", "3", "a/b", "1/0"] {
            let e = Shard::parse(bad).unwrap_err().to_string();
            assert!(e.contains("K"), "{bad}: {e}");
        }
    }
}
