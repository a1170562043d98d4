//! Where each char of a document's earlier text went in its new text: the diff that tells a span that
//! stayed (perhaps moved) from one whose words changed or whose text is gone, and which text is new.
//!
//! Lines are compared first (patience: a section moved or inserted stays one hunk), then the chars of each
//! changed hunk (Myers), so an edited figure is a change of a few chars inside an otherwise equal span, and
//! a long document with a small edit is compared in about the time it takes to read it.

use similar::{Algorithm, DiffTag, capture_diff_slices_deadline};
use std::ops::Range;
use std::time::{Duration, Instant};

/// How long one document's char comparison may take before the rest of a hunk counts as replaced.
const DEADLINE: Duration = Duration::from_secs(5);

/// Share of a span's chars that must survive for it to be the same passage with its words changed; below
/// it, its text is gone (a section deleted, or replaced by another).
const SURVIVES: f64 = 0.3;

/// One run of the comparison, in chars: equal text, or old text replaced by new (either side may be
/// empty: a deletion, an insertion).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Run {
    equal: bool,
    old: Range<usize>,
    new: Range<usize>,
}

/// What became of a span of the earlier text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fate {
    /// Every char is still there, in this range of the new text.
    Same(Range<usize>),
    /// Some of its text changed; this range of the new text holds what it became.
    Changed(Range<usize>),
    /// Its text is gone.
    Removed,
}

/// The comparison of a document's earlier and new text.
#[derive(Debug, Clone)]
pub struct TextMap {
    runs: Vec<Run>,
}

impl TextMap {
    pub fn new(old: &str, new: &str) -> Self {
        let old_chars: Vec<char> = old.chars().collect();
        let new_chars: Vec<char> = new.chars().collect();
        let (old_lines, new_lines) = (lines(&old_chars), lines(&new_chars));
        let deadline = Some(Instant::now() + DEADLINE);
        let line_ops = capture_diff_slices_deadline(
            Algorithm::Patience,
            &line_texts(&old_chars, &old_lines),
            &line_texts(&new_chars, &new_lines),
            deadline,
        );
        let mut raw = Vec::new();
        for op in line_ops {
            let (tag, o, n) = op.as_tag_tuple();
            let old_range = chars_of(&old_lines, o, old_chars.len());
            let new_range = chars_of(&new_lines, n, new_chars.len());
            if tag == DiffTag::Equal {
                raw.push(Run {
                    equal: true,
                    old: old_range,
                    new: new_range,
                });
                continue;
            }
            // A changed hunk is compared char by char, so an edited word leaves its line's rest equal.
            let ops = capture_diff_slices_deadline(
                Algorithm::Myers,
                &old_chars[old_range.clone()],
                &new_chars[new_range.clone()],
                deadline,
            );
            let hunk: Vec<Run> = ops
                .iter()
                .map(|op| {
                    let (tag, o, n) = op.as_tag_tuple();
                    Run {
                        equal: tag == DiffTag::Equal,
                        old: old_range.start + o.start..old_range.start + o.end,
                        new: new_range.start + n.start..new_range.start + n.end,
                    }
                })
                .collect();
            raw.extend(replaced_if_mostly_changed(
                hunk,
                old_range.len().max(new_range.len()),
            ));
        }
        let mut runs = Vec::new();
        for run in without_short_equals(raw) {
            push(&mut runs, run.equal, run.old, run.new);
        }
        Self { runs }
    }

    /// Whether the new text is the old one.
    #[cfg(test)]
    pub fn unchanged(&self) -> bool {
        self.runs.iter().all(|r| r.equal)
    }

    /// What became of the old chars `[start, end)`.
    pub fn fate(&self, start: usize, end: usize) -> Fate {
        if start >= end {
            return Fate::Removed;
        }
        let touching: Vec<&Run> = self
            .runs
            .iter()
            .filter(|r| overlaps(&r.old, start, end) || inserted_inside(r, start, end))
            .collect();
        let (Some(first), Some(last)) = (touching.first(), touching.last()) else {
            return Fate::Removed;
        };
        let new_start = if first.equal {
            first.new.start + (start - first.old.start)
        } else {
            first.new.start
        };
        let new_end = if last.equal {
            last.new.start + (end.min(last.old.end) - last.old.start)
        } else {
            last.new.end
        };
        if touching.iter().all(|r| r.equal) {
            return Fate::Same(new_start..new_end);
        }
        let kept: usize = touching
            .iter()
            .filter(|r| r.equal)
            .map(|r| r.old.end.min(end) - r.old.start.max(start))
            .sum();
        if new_end <= new_start || (kept as f64) < SURVIVES * (end - start) as f64 {
            Fate::Removed
        } else {
            Fate::Changed(new_start..new_end)
        }
    }

    /// The ranges of the new text that the old one did not have.
    pub fn inserted(&self) -> Vec<Range<usize>> {
        self.runs
            .iter()
            .filter(|r| !r.equal && !r.new.is_empty())
            .map(|r| r.new.clone())
            .collect()
    }
}

/// Equal runs shorter than this between two changes are part of the change: two unrelated sentences
/// share letters, and an alignment on them is noise.
const MIN_EQUAL: usize = 8;

/// A hunk that is mostly changed as one replacement: a section replaced by another is new text, not an
/// edit of the old one, whatever letters the two share.
fn replaced_if_mostly_changed(hunk: Vec<Run>, longest: usize) -> Vec<Run> {
    let equal: usize = hunk.iter().filter(|r| r.equal).map(|r| r.old.len()).sum();
    if (equal as f64) >= SURVIVES * longest as f64 {
        return hunk;
    }
    match (hunk.first(), hunk.last()) {
        (Some(a), Some(b)) => vec![Run {
            equal: false,
            old: a.old.start..b.old.end,
            new: a.new.start..b.new.end,
        }],
        _ => Vec::new(),
    }
}

/// Equal runs shorter than [`MIN_EQUAL`] between two changes made part of the change: a shared blank line
/// or letter does not split new text in two.
fn without_short_equals(runs: Vec<Run>) -> Vec<Run> {
    let last = runs.len().saturating_sub(1);
    let changed = |i: usize| runs.get(i).is_some_and(|r: &Run| !r.equal);
    runs.iter()
        .enumerate()
        .map(|(i, r)| Run {
            equal: r.equal
                && !(i > 0
                    && i < last
                    && r.old.len() < MIN_EQUAL
                    && changed(i - 1)
                    && changed(i + 1)),
            ..r.clone()
        })
        .collect()
}

/// Adds a run, joining it to the last one when both are equal or both changed and they touch.
fn push(runs: &mut Vec<Run>, equal: bool, old: Range<usize>, new: Range<usize>) {
    if old.is_empty() && new.is_empty() {
        return;
    }
    if let Some(last) = runs.last_mut()
        && last.equal == equal
        && last.old.end == old.start
        && last.new.end == new.start
    {
        last.old.end = old.end;
        last.new.end = new.end;
        return;
    }
    runs.push(Run { equal, old, new });
}

fn overlaps(range: &Range<usize>, start: usize, end: usize) -> bool {
    range.start < end && start < range.end
}

/// An insertion strictly inside a span changes it (one at its edge does not).
fn inserted_inside(run: &Run, start: usize, end: usize) -> bool {
    !run.equal && run.old.is_empty() && run.old.start > start && run.old.start < end
}

/// Each line's char range, its line break included.
fn lines(chars: &[char]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in chars.iter().enumerate() {
        if *c == '\n' {
            out.push(start..i + 1);
            start = i + 1;
        }
    }
    if start < chars.len() {
        out.push(start..chars.len());
    }
    out
}

fn line_texts(chars: &[char], lines: &[Range<usize>]) -> Vec<String> {
    lines
        .iter()
        .map(|r| chars[r.clone()].iter().collect())
        .collect()
}

/// The char range covered by the lines `range` (empty at the place the lines would start).
fn chars_of(lines: &[Range<usize>], range: Range<usize>, len: usize) -> Range<usize> {
    let at = |i: usize| lines.get(i).map_or(len, |l| l.start);
    at(range.start)..at(range.end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span_of(text: &str, part: &str) -> (usize, usize) {
        let at = text.find(part).unwrap();
        let start = text[..at].chars().count();
        (start, start + part.chars().count())
    }

    fn new_text(new: &str, range: Range<usize>) -> String {
        new.chars().skip(range.start).take(range.len()).collect()
    }

    #[test]
    fn a_moved_span_is_the_same_and_an_edited_figure_changes_its_span_only() {
        let old = "# Pump\n\nThe pump runs at 40 bar.\nFilters last 21 days.\n\nThe vent opens at noon.\n";
        let new = "# Pump\n\nA new opening line.\n\nThe pump runs at 45 bar.\nFilters last 21 days.\n\nThe vent opens at noon.\n";
        let map = TextMap::new(old, new);
        assert!(!map.unchanged());
        let (s, e) = span_of(old, "Filters last 21 days.");
        let Fate::Same(r) = map.fate(s, e) else {
            panic!("moved, not changed")
        };
        assert_eq!(new_text(new, r), "Filters last 21 days.");
        let (s, e) = span_of(old, "The pump runs at 40 bar.");
        let Fate::Changed(r) = map.fate(s, e) else {
            panic!("the figure changed")
        };
        assert_eq!(new_text(new, r), "The pump runs at 45 bar.");
        let inserted: Vec<String> = map
            .inserted()
            .into_iter()
            .map(|r| new_text(new, r))
            .collect();
        assert!(inserted.iter().any(|t| t.contains("A new opening line.")));
    }

    #[test]
    fn a_deleted_section_is_removed_and_chinese_is_compared_by_chars() {
        let old = "泵的额定压力为40巴。\n\n滤芯每21天更换一次。\n\n通风口中午打开。\n";
        let new = "泵的额定压力为45巴。\n\n通风口中午打开。\n";
        let map = TextMap::new(old, new);
        let (s, e) = span_of(old, "滤芯每21天更换一次。");
        assert_eq!(map.fate(s, e), Fate::Removed);
        let (s, e) = span_of(old, "泵的额定压力为40巴。");
        let Fate::Changed(r) = map.fate(s, e) else {
            panic!("changed")
        };
        // Chars align more than one way around a deletion; the region holds the changed fact either way.
        assert!(new_text(new, r).starts_with("泵的额定压力为45巴"));
        let (s, e) = span_of(old, "通风口中午打开。");
        assert!(matches!(map.fate(s, e), Fate::Same(_)));
        assert!(TextMap::new(old, old).unchanged());
    }
}
