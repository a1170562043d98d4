//! `generate --update`: a suite kept in step with documents that changed since it was written.
//!
//! The earlier suite comes with a snapshot of the documents it was written from. Each earlier document is
//! matched to its new version (the same text, else the same path, else the same file name) and the two
//! texts compared (`text_map.rs`); each case's spans are then followed into the new text (`fates.rs`):
//! a case whose spans are all unchanged keeps its id and text (its offsets moved where text moved); one whose
//! span's words changed is written again from the new text by the writer that wrote it, under the same
//! strategy, carrying its lineage; one whose text is gone is retired; one whose document no longer parses is
//! kept, marked stale with the reason. Sections that are new get new cases, as many per section as the
//! document had, under the same strategies; new documents are generated whole. A conversation changes as one:
//! any turn changed writes the conversation again.

mod fates;
mod text_map;

pub use fates::Unparsed;

use crate::critic::QualityGate;
use crate::options::GenerationOptions;
use crate::plan::{GenerationReport, ragtester_slots};
use crate::sections::{Section, sections_of};
use crate::writer::DocWriter;
use anyhow::Result;
use fates::{Corpus, DocStatus, SpanFate, match_documents};
use ragtester_core::{ChatModel, Document, Generator, SourceSpan, Strategy, TestCase};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};

/// What an update did to one case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// Its source text is unchanged (perhaps moved): same id, same text.
    Kept,
    /// Its source text changed: written again from the new text, under its lineage.
    Rewritten,
    /// Its source text is gone: not in the new suite.
    Retired,
    /// Written for a new section or a new document.
    New,
    /// Kept as it was, though it may test what the documents no longer say (the reason says why).
    Stale,
}

impl Change {
    pub fn as_str(self) -> &'static str {
        match self {
            Change::Kept => "kept",
            Change::Rewritten => "rewritten",
            Change::Retired => "retired",
            Change::New => "new",
            Change::Stale => "stale",
        }
    }
}

/// One line of an update's report.
#[derive(Debug, Clone, Serialize)]
pub struct CaseChange {
    pub change: Change,
    /// The case in the new suite; none for a retired one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub case_id: Option<String>,
    /// The case of the earlier suite; none for a new one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_id: Option<String>,
    pub lineage: String,
    /// The document the case is about.
    pub source: String,
    pub generator: Generator,
    pub query: String,
    pub expected_answer: String,
    /// For a rewritten case, what it asked and expected before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_query: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_expected_answer: Option<String>,
    pub reason: String,
}

/// What happened to each document of the earlier corpus, and the new ones.
#[derive(Debug, Clone, Serialize)]
pub struct DocumentChange {
    pub source: String,
    /// unchanged, changed, removed, unparsable or added.
    pub status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// An update's report: every case's change with its reason, and every document's.
#[derive(Debug, Clone, Default, Serialize)]
pub struct UpdateReport {
    pub documents: Vec<DocumentChange>,
    pub cases: Vec<CaseChange>,
}

impl UpdateReport {
    /// Cases per kind of change.
    pub fn counts(&self) -> BTreeMap<Change, usize> {
        let mut out = BTreeMap::new();
        for c in &self.cases {
            *out.entry(c.change).or_default() += 1;
        }
        out
    }

    /// One line: how many cases of each kind.
    pub fn summary(&self) -> String {
        let counts = self.counts();
        let parts: Vec<String> = [
            Change::Kept,
            Change::Rewritten,
            Change::Retired,
            Change::New,
            Change::Stale,
        ]
        .iter()
        .map(|c| format!("{} {}", counts.get(c).copied().unwrap_or(0), c.as_str()))
        .collect();
        format!("suite updated: {}", parts.join(", "))
    }
}

/// The suite an update writes, its report, and the generation report of what was written anew.
pub struct Updated {
    pub cases: Vec<TestCase>,
    pub report: UpdateReport,
    pub generation: GenerationReport,
}

/// The earlier suite and the documents it was written from (its snapshot; empty when it has none, in which
/// case only cases whose documents are still there unchanged can be told apart from stale ones).
pub struct Earlier<'a> {
    pub cases: &'a [TestCase],
    pub documents: &'a [Document],
}

/// Update `earlier` against the new corpus `docs` (with the files that no longer parse). `options` are the
/// generation settings new and rewritten cases are written under; each case is written again by its own
/// generator.
pub async fn update(
    earlier: Earlier<'_>,
    docs: &[Document],
    unparsed: &[Unparsed],
    options: &GenerationOptions,
    model: &dyn ChatModel,
    gate: Option<&QualityGate<'_>>,
) -> Result<Updated> {
    let (status, added) = match_documents(earlier.documents, docs, unparsed);
    let corpus = Corpus {
        earlier: earlier
            .documents
            .iter()
            .map(|d| (d.id.as_str(), d))
            .collect(),
        status,
        now: docs.iter().map(|d| (d.id.as_str(), d)).collect(),
    };
    let sections: HashMap<&str, Vec<Section>> = docs
        .iter()
        .map(|d| Ok((d.id.as_str(), sections_of(d, options.section_tokens)?)))
        .collect::<Result<_>>()?;
    let mut work = Work {
        corpus: &corpus,
        sections: &sections,
        options,
        model,
        gate,
        cases: Vec::new(),
        report: UpdateReport::default(),
        claimed: HashMap::new(),
    };
    for unit in units(earlier.cases) {
        work.settle(&unit).await;
    }
    work.new_sections(earlier.cases).await;
    let generation = work.new_documents(&added, earlier.cases).await?;
    work.report.documents = document_changes(earlier.documents, &corpus, &added);
    unique_ids(&mut work.cases);
    Ok(Updated {
        cases: work.cases,
        report: work.report,
        generation,
    })
}

/// A single case, or a conversation's turns in order: what changes as one.
fn units(cases: &[TestCase]) -> Vec<Vec<&TestCase>> {
    let mut out: Vec<Vec<&TestCase>> = Vec::new();
    let mut at: HashMap<&str, usize> = HashMap::new();
    for case in cases {
        match case.conversation() {
            Some(id) => match at.get(id) {
                Some(&i) => out[i].push(case),
                None => {
                    at.insert(id, out.len());
                    out.push(vec![case]);
                }
            },
            None => out.push(vec![case]),
        }
    }
    for unit in &mut out {
        unit.sort_by_key(|c| c.turn.as_ref().map_or(0, |t| t.index));
    }
    out
}

/// What one unit comes to, before any writing.
enum Verdict<'a> {
    Keep(Vec<TestCase>),
    Rewrite(Vec<SpanFate<'a>>),
    Retire(String),
    Stale(String),
}

/// Inserted text of fewer terms than this (a word, a figure) is an edit, not new text to ask about; terms
/// (words, CJK bigrams) count alike in both languages, where chars do not.
const NEW_TEXT: usize = 8;

/// Words of a question that ask rather than name what is asked about (stemmed, as `terms` gives them).
const QUESTION_TERMS: &[&str] = &[
    "how", "mani", "much", "long", "often", "old", "when", "what", "which", "who", "whom", "whose",
    "doe", "document", "say", "accord", "多少", "什么", "哪个", "哪些", "是否", "文档",
];

struct Work<'w, 'a> {
    corpus: &'w Corpus<'a>,
    sections: &'w HashMap<&'a str, Vec<Section>>,
    options: &'w GenerationOptions,
    model: &'w dyn ChatModel,
    gate: Option<&'w QualityGate<'w>>,
    cases: Vec<TestCase>,
    report: UpdateReport,
    /// Per new document, the char ranges rewritten cases were written from: new text is asked about only
    /// where no rewrite already asks.
    claimed: HashMap<String, Vec<(usize, usize)>>,
}

impl<'w, 'a> Work<'w, 'a> {
    async fn settle(&mut self, unit: &[&TestCase]) {
        match self.judge(unit) {
            Verdict::Keep(kept) => {
                for (old, new) in unit.iter().zip(kept) {
                    let moved = old.source_spans != new.source_spans;
                    let reason = if moved {
                        "its source text is unchanged; it moved in its document"
                    } else {
                        "its source text is unchanged"
                    };
                    self.log(Change::Kept, Some(old), Some(&new), reason.to_string());
                    self.cases.push(new);
                }
            }
            Verdict::Retire(reason) => {
                for old in unit {
                    self.log(Change::Retired, Some(old), None, reason.clone());
                }
            }
            Verdict::Stale(reason) => self.keep_stale(unit, reason),
            Verdict::Rewrite(fates) => self.rewrite(unit, fates).await,
        }
    }

    /// Keep, retire, rewrite or mark stale, from the fates of the unit's spans.
    fn judge(&self, unit: &[&TestCase]) -> Verdict<'a> {
        let mut fates = Vec::new();
        for case in unit {
            if case.source_spans.is_empty() {
                let span = SourceSpan {
                    document_id: case.document_id.clone(),
                    start: 0,
                    end: 0,
                    page: 1,
                    hash: None,
                };
                // A negative has no span: it goes with its document, when the snapshot knows it (an
                // imported row may name none: nothing anchors it, so nothing retires it). A changed
                // document may now answer it: then it tests nothing the documents lack, and retires.
                if let Some(sentence) = self.now_answered(case) {
                    return Verdict::Retire(format!(
                        "its document now answers it: «{}»",
                        clip(&sentence, 120)
                    ));
                }
                match self.corpus.status.get(&case.document_id) {
                    Some(DocStatus::Removed) => fates.push(SpanFate::Removed(
                        "its document is no longer in the corpus".into(),
                    )),
                    Some(DocStatus::Unparsable(reason)) => fates.push(SpanFate::Stale(format!(
                        "its document no longer parses ({reason}); kept as it was"
                    ))),
                    _ => fates.push(SpanFate::Same(span)),
                }
                continue;
            }
            fates.extend(case.source_spans.iter().map(|s| self.corpus.fate(case, s)));
        }
        if let Some(reason) = fates.iter().find_map(|f| match f {
            SpanFate::Stale(r) => Some(r.clone()),
            _ => None,
        }) {
            return Verdict::Stale(reason);
        }
        if let Some(reason) = fates.iter().find_map(|f| match f {
            SpanFate::Removed(r) => Some(r.clone()),
            _ => None,
        }) {
            return Verdict::Retire(reason);
        }
        if fates.iter().any(|f| matches!(f, SpanFate::Changed { .. })) {
            let rewritable = unit.iter().all(|c| {
                matches!(c.generator, Generator::Ragtester | Generator::Baseline)
                    && self.corpus.successor(&c.document_id).is_some()
            });
            if !rewritable {
                return Verdict::Stale(format!(
                    "its source text changed, and its expected answer is the {} generator's to write \
                     again (re-import or review it)",
                    unit[0].generator.as_str()
                ));
            }
            return Verdict::Rewrite(fates);
        }
        Verdict::Keep(unit.iter().map(|c| self.carried(c)).collect())
    }

    /// For a case the documents could not answer (a negative), the sentence of its changed document's new
    /// text that now answers it: one that holds most of the question's own words (three of them at least)
    /// and, where the question asks for a figure or a name, states one.
    fn now_answered(&self, case: &TestCase) -> Option<String> {
        if !case.expects_refusal() {
            return None;
        }
        let DocStatus::Changed { new, map } = self.corpus.status.get(&case.document_id)? else {
            return None;
        };
        let asked: HashSet<String> = ragtester_text::terms(&case.query)
            .into_iter()
            .filter(|t| !QUESTION_TERMS.contains(&t.as_str()))
            .collect();
        if asked.len() < 3 {
            return None;
        }
        map.inserted().into_iter().find_map(|r| {
            let text = new.slice(r.start, r.end);
            ragtester_text::sentences(&text)
                .into_iter()
                .find_map(|(a, b)| {
                    let sentence: String = text.chars().skip(a).take(b - a).collect();
                    let said: HashSet<String> =
                        ragtester_text::terms(&sentence).into_iter().collect();
                    let held = asked.iter().filter(|t| said.contains(*t)).count();
                    let states_a_fact = !ragtester_text::facts::quantities(&sentence).is_empty()
                        || ragtester_text::contradiction::is_name(&sentence);
                    (held * 5 >= asked.len() * 3 && states_a_fact).then_some(sentence)
                })
        })
    }

    /// An unchanged case with its ids and offsets in the new corpus.
    fn carried(&self, case: &TestCase) -> TestCase {
        let mut out = case.clone();
        let id_now = |id: &str| {
            self.corpus
                .successor(id)
                .map_or(id.to_string(), |d| d.id.clone())
        };
        out.document_id = id_now(&case.document_id);
        out.restrict_to = case.restrict_to.iter().map(|d| id_now(d)).collect();
        out.source_spans = case
            .source_spans
            .iter()
            .map(|s| match self.corpus.fate(case, s) {
                SpanFate::Same(span) => span,
                _ => s.clone(),
            })
            .collect();
        out
    }

    fn keep_stale(&mut self, unit: &[&TestCase], reason: String) {
        for old in unit {
            let mut case = (*old).clone();
            case.stale = Some(reason.clone());
            self.log(Change::Stale, Some(old), Some(&case), reason.clone());
            self.cases.push(case);
        }
    }

    /// Write the unit again from the new text of its document, held to the sections its spans now fall in.
    async fn rewrite(&mut self, unit: &[&TestCase], fates: Vec<SpanFate<'a>>) {
        let first = unit[0];
        let Some(doc) = self.corpus.successor(&first.document_id) else {
            return self.keep_stale(unit, "its document has no new version".into());
        };
        let sections = &self.sections[doc.id.as_str()];
        let mut regions: Vec<(usize, usize)> = Vec::new();
        let mut other: Option<&'a Document> = None;
        let mut was = String::new();
        for fate in &fates {
            match fate {
                SpanFate::Same(s) if s.document_id == doc.id => regions.push((s.start, s.end)),
                SpanFate::Changed {
                    doc: d,
                    start,
                    end,
                    was: text,
                } if d.id == doc.id => {
                    regions.push((*start, *end));
                    if was.is_empty() {
                        was = text.clone();
                    }
                }
                SpanFate::Same(s) => {
                    other = other.or(self.corpus.now.get(s.document_id.as_str()).copied())
                }
                SpanFate::Changed { doc: d, .. } => other = other.or(Some(*d)),
                _ => {}
            }
        }
        let (focus, only) = focused(doc, sections, &regions);
        let options = GenerationOptions {
            generator: first.generator,
            ..self.options.clone()
        };
        let mut writer = DocWriter::new(doc, &focus, &options, self.model, self.gate);
        writer.cases = self.peers(&doc.id, first.generator);
        let before = writer.cases.len();
        writer.only = Some(only.clone());
        let written = match first.turn.as_ref() {
            Some(turn) => writer.conversation(turn.kind).await,
            None => {
                let other = other.map(|d| (d, self.sections[d.id.as_str()].as_slice()));
                let slot = if first.strategy == Strategy::Baseline {
                    Strategy::Baseline
                } else {
                    first.strategy
                };
                writer.fill(slot, other).await;
                writer.cases.len() > before
            }
        };
        let fresh: Vec<TestCase> = writer.cases.split_off(before);
        if !written || fresh.is_empty() {
            // The first section's own refusal says more than the slot's closing "no section left".
            let notes = &writer.notes;
            let why = notes
                .iter()
                .find(|n| n.contains("(section "))
                .or(notes.last())
                .cloned()
                .unwrap_or_default();
            return self.keep_stale(
                unit,
                format!("its source text changed and no question could be written from the new text ({why})"),
            );
        }
        self.claimed
            .entry(doc.id.clone())
            .or_default()
            .extend(regions);
        let reason = format!("its source text changed: «{}»", clip(&was, 160));
        let written = fresh.len();
        for (k, mut case) in fresh.into_iter().enumerate() {
            let old = unit.get(k).copied();
            if let Some(old) = old {
                case.lineage = Some(old.lineage_id().to_string());
            }
            let change = if old.is_some() {
                Change::Rewritten
            } else {
                Change::New
            };
            self.log(change, old, Some(&case), reason.clone());
            self.cases.push(case);
        }
        // A conversation written again with fewer turns retires the rest.
        for old in unit.iter().skip(written) {
            self.log(Change::Retired, Some(old), None, reason.clone());
        }
    }

    /// New cases for the sections of changed documents that are new, as many per section as the document
    /// had, under the strategies of each generator the document had cases from.
    async fn new_sections(&mut self, earlier: &[TestCase]) {
        let changed: Vec<(&'a Document, &str)> = self
            .corpus
            .status
            .iter()
            .filter_map(|(old_id, s)| match s {
                DocStatus::Changed { new, .. } => Some((*new, old_id.as_str())),
                _ => None,
            })
            .collect();
        let mut changed = changed;
        changed.sort_by(|a, b| a.0.source.cmp(&b.0.source));
        for (doc, old_id) in changed {
            let DocStatus::Changed { map, .. } = &self.corpus.status[old_id] else {
                continue;
            };
            let sections = &self.sections[doc.id.as_str()];
            let claimed = self.claimed.get(&doc.id).cloned().unwrap_or_default();
            let regions: Vec<(usize, usize)> = map
                .inserted()
                .into_iter()
                .filter(|r| {
                    // A short new sentence is asked about when it carries a fact: a figure or a name.
                    let text = doc.slice(r.start, r.end);
                    ragtester_text::terms(&text).len() >= NEW_TEXT
                        || (ragtester_text::terms(&text).len() >= 3
                            && (!ragtester_text::facts::quantities(&text).is_empty()
                                || ragtester_text::contradiction::is_name(&text)))
                })
                .map(|r| (r.start, r.end))
                .filter(|&(a, b)| claimed.iter().all(|&(x, y)| b <= x || y <= a))
                .collect();
            let (focus, fresh) = focused(doc, sections, &regions);
            let fresh: HashSet<usize> = fresh
                .into_iter()
                .filter(|&i| focus[i].class.can_hold_a_question())
                .collect();
            if fresh.is_empty() {
                continue;
            }
            let old_sections = self
                .corpus
                .earlier
                .get(old_id)
                .and_then(|d| sections_of(d, self.options.section_tokens).ok())
                .map_or(1, |s| {
                    s.iter()
                        .filter(|s| s.class.can_hold_a_question())
                        .count()
                        .max(1)
                });
            for generator in [Generator::Ragtester, Generator::Baseline] {
                let had = earlier
                    .iter()
                    .filter(|c| {
                        c.document_id == old_id && c.generator == generator && c.turn.is_none()
                    })
                    .count();
                if had == 0 {
                    continue;
                }
                let n = ((had * fresh.len()) as f64 / old_sections as f64)
                    .round()
                    .max(1.0) as usize;
                let slots = match generator {
                    Generator::Baseline => vec![Strategy::Baseline; n],
                    _ => ragtester_slots(n, None, false),
                };
                let options = GenerationOptions {
                    generator,
                    ..self.options.clone()
                };
                let mut writer = DocWriter::new(doc, &focus, &options, self.model, self.gate);
                writer.cases = self.peers(&doc.id, generator);
                let before = writer.cases.len();
                writer.only = Some(fresh.clone());
                for slot in slots {
                    writer.fill(slot, None).await;
                }
                for case in writer.cases.split_off(before) {
                    let opening = case
                        .source_spans
                        .first()
                        .map(|s| clip(&doc.slice(s.start, s.end), 80))
                        .unwrap_or_default();
                    let reason = format!("a new section of {}: «{opening}»", doc.source);
                    self.log(Change::New, None, Some(&case), reason);
                    self.cases.push(case);
                }
            }
        }
    }

    /// Documents the earlier corpus did not have, generated whole by each generator the suite used.
    async fn new_documents(
        &mut self,
        added: &[&'a Document],
        earlier: &[TestCase],
    ) -> Result<GenerationReport> {
        let mut report = GenerationReport::default();
        if added.is_empty() {
            return Ok(report);
        }
        let docs: Vec<Document> = added.iter().map(|d| (*d).clone()).collect();
        let mut generators: Vec<Generator> = earlier
            .iter()
            .map(|c| c.generator)
            .filter(|g| matches!(g, Generator::Ragtester | Generator::Baseline))
            .collect();
        generators.sort();
        generators.dedup();
        if generators.is_empty() {
            generators.push(Generator::Ragtester);
        }
        for generator in generators {
            let options = GenerationOptions {
                generator,
                ..self.options.clone()
            };
            let made = crate::plan::generate(&docs, &options, self.model, self.gate, None).await?;
            for case in &made.cases {
                let source = docs
                    .iter()
                    .find(|d| d.id == case.document_id)
                    .map_or("", |d| d.source.as_str());
                self.log(
                    Change::New,
                    None,
                    Some(case),
                    format!("a new document: {source}"),
                );
            }
            self.cases.extend(made.cases.iter().cloned());
            report.cases.extend(made.cases);
            report.documents.extend(made.documents);
        }
        Ok(report)
    }

    /// The cases of the new suite a writer must not repeat: the same document's, by the same generator.
    fn peers(&self, doc_id: &str, generator: Generator) -> Vec<TestCase> {
        self.cases
            .iter()
            .filter(|c| c.document_id == doc_id && c.generator == generator)
            .cloned()
            .collect()
    }

    fn log(
        &mut self,
        change: Change,
        old: Option<&TestCase>,
        new: Option<&TestCase>,
        reason: String,
    ) {
        let shown = new.or(old).expect("a change has a case");
        let rewritten = change == Change::Rewritten;
        let doc_id = &shown.document_id;
        let source = self
            .corpus
            .now
            .get(doc_id.as_str())
            .or_else(|| self.corpus.earlier.get(doc_id.as_str()))
            .map_or(doc_id.clone(), |d| d.source.clone());
        self.report.cases.push(CaseChange {
            change,
            case_id: new.map(|c| c.id.clone()),
            previous_id: old.map(|c| c.id.clone()),
            lineage: new
                .or(old)
                .map(|c| c.lineage_id().to_string())
                .unwrap_or_default(),
            source,
            generator: shown.generator,
            query: shown.query.clone(),
            expected_answer: shown.expected_answer.clone(),
            previous_query: old.filter(|_| rewritten).map(|c| c.query.clone()),
            previous_expected_answer: old.filter(|_| rewritten).map(|c| c.expected_answer.clone()),
            reason,
        });
    }
}

/// The document's sections with each one that holds a region cut down to it (regions in one section
/// joined), and the indices of those cut: the only sections an update's writer may ask about.
fn focused(
    doc: &Document,
    sections: &[Section],
    regions: &[(usize, usize)],
) -> (Vec<Section>, HashSet<usize>) {
    let mut spans: BTreeMap<usize, (usize, usize)> = BTreeMap::new();
    for &(a, b) in regions {
        // A region may run over several sections (a new heading and its paragraph): each gets its part.
        for s in sections
            .iter()
            .filter(|s| s.start < b.max(a + 1) && a < s.end)
        {
            let (a, b) = (a.max(s.start), b.min(s.end));
            spans
                .entry(s.index)
                .and_modify(|r| *r = (r.0.min(a), r.1.max(b)))
                .or_insert((a, b));
        }
    }
    let mut out = sections.to_vec();
    for (&i, &(a, b)) in &spans {
        out[i] = crate::sections::section_at(doc, i, a, b);
    }
    (out, spans.into_keys().collect())
}

fn document_changes(
    earlier: &[Document],
    corpus: &Corpus<'_>,
    added: &[&Document],
) -> Vec<DocumentChange> {
    let mut out: Vec<DocumentChange> = earlier
        .iter()
        .map(|d| {
            let (status, reason) = match &corpus.status[&d.id] {
                DocStatus::Unchanged(_) => ("unchanged", None),
                DocStatus::Changed { new, .. } => (
                    "changed",
                    (new.source != d.source).then(|| format!("now {}", new.source)),
                ),
                DocStatus::Removed => ("removed", None),
                DocStatus::Unparsable(r) => ("unparsable", Some(r.clone())),
            };
            DocumentChange {
                source: d.source.clone(),
                status,
                reason,
            }
        })
        .collect();
    out.extend(added.iter().map(|d| DocumentChange {
        source: d.source.clone(),
        status: "added",
        reason: None,
    }));
    out
}

/// Two cases written with the same question for the same document would share an id: the later one is
/// renumbered, so every id of a suite names one case.
fn unique_ids(cases: &mut [TestCase]) {
    let mut seen = HashSet::new();
    for case in cases {
        let mut n = 1;
        while !seen.insert(case.id.clone()) {
            case.id = ragtester_core::ids::stable_id("case-again", &(&case.id, n));
            n += 1;
        }
    }
}

fn clip(text: &str, n: usize) -> String {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.chars().count() <= n {
        text
    } else {
        format!("{}…", text.chars().take(n).collect::<String>())
    }
}
