//! The lexical judge: fills the paper's five criteria and the spec's rubric from term overlap between the
//! answer, the expected answer and the retrieved context, keyword presence and refusal detection.
//! Replies `{"criteria": …, "rubric": …}`, the shape a real judge is asked for.

use anyhow::{Result, bail};
use ragtester_core::{Criteria, Criterion, Rating, Rubric, RubricScore, TaskHint};
use ragtester_text::{facts, is_refusal, keyword_recall, terms};
use std::collections::HashSet;

fn c(rating: Rating, reason: impl Into<String>) -> Criterion {
    Criterion::rated(rating, reason)
}

fn s(score: u8, reason: impl Into<String>) -> RubricScore {
    RubricScore {
        score,
        reason: reason.into(),
    }
}

pub fn judge(hint: &TaskHint) -> Result<String> {
    let (criteria, rubric) = ratings(hint)?;
    Ok(serde_json::json!({ "criteria": criteria, "rubric": rubric }).to_string())
}

/// The lexical judge's criteria and rubric for a judge task: what its JSON reply says, for a caller that
/// works them out directly instead of asking through a prompt.
pub fn ratings(hint: &TaskHint) -> Result<(Criteria, Rubric)> {
    let TaskHint::Judge {
        query,
        expected_answer,
        keywords,
        answer,
        contexts,
        expects_refusal,
        must_not_contain,
        false_premise,
        ..
    } = hint
    else {
        bail!("not a judge task");
    };
    Ok(assess(&Judged {
        query,
        expected: expected_answer,
        keywords,
        answer,
        contexts,
        expects_refusal: *expects_refusal,
        must_not_contain,
        false_premise: false_premise.as_deref(),
    }))
}

/// A share in [0, 1] as a criterion's score: piecewise linear, with `low` at the start of the Partially third
/// and `high` at the start of the True third, so the rating (a threshold on the score) is True from `high`,
/// Partially from `low` and False below, while the score keeps how far past a threshold the share lies.
fn scale(x: f64, high: f64, low: f64) -> f64 {
    let x = x.clamp(0.0, 1.0);
    let third = Rating::PARTLY_FROM;
    if x >= high {
        Rating::TRUE_FROM
            + if high < 1.0 {
                third * (x - high) / (1.0 - high)
            } else {
                0.0
            }
    } else if x >= low {
        Rating::PARTLY_FROM + third * (x - low) / (high - low)
    } else {
        third * x / low
    }
}

/// True at or above `high`, Partially at or above `low`, False below; scored by [`scale`].
fn graded(x: f64, high: f64, low: f64, reason: String) -> Criterion {
    Criterion::scored(scale(x, high, low), reason)
}

/// A score held below the Partially third, keeping its order: a rule found the answer wrong (an invented
/// figure, a contradicted one) however well its words match.
fn failed(score: f64) -> f64 {
    score * Rating::PARTLY_FROM * 0.99
}

/// A score held just below the Partially third: a rule found a figure the answer changed or invented, so
/// it is no better than False, but the rest of its grounding still orders it among failed answers. One
/// figure no source holds in an otherwise grounded sentence is what people rate partly supported (WiCE), not
/// unsupported, so the score keeps that grounding up to the top of the False third rather than scaling
/// it down (which ordered people's faithfulness worse on every labelled set; docs/benchmarks.md).
fn capped_below_partly(score: f64) -> f64 {
    score.min(Rating::PARTLY_FROM * 0.99)
}

/// Share of `whole` found in `part` (1 when `whole` is empty).
pub(super) fn share(part: &HashSet<String>, whole: &HashSet<String>) -> f64 {
    if whole.is_empty() {
        return 1.0;
    }
    whole.iter().filter(|t| part.contains(*t)).count() as f64 / whole.len() as f64
}

/// What the judge is shown of one cell: the case, the answer and the retrieved passages.
struct Judged<'a> {
    query: &'a str,
    expected: &'a str,
    keywords: &'a [String],
    answer: &'a str,
    contexts: &'a [String],
    expects_refusal: bool,
    must_not_contain: &'a [String],
    false_premise: Option<&'a str>,
}

fn assess(cell: &Judged) -> (Criteria, Rubric) {
    let refused = is_refusal(cell.answer);
    let lower = cell.answer.to_lowercase();
    let injected = cell
        .must_not_contain
        .iter()
        .find(|m| lower.contains(&m.to_lowercase()));
    let kw = keyword_recall(cell.keywords, cell.answer);
    let keyword_match = keyword_criterion(kw);
    if cell.expects_refusal
        && !refused
        && let Some(premise) = cell.false_premise
    {
        return premise_verdict(
            premise,
            cell.expected,
            cell.keywords,
            cell.answer,
            keyword_match,
        );
    }
    if cell.expects_refusal {
        return unanswerable_verdict(refused, keyword_match);
    }
    if refused {
        return refused_answerable(keyword_match);
    }
    let overlap = Overlap::measure(cell, kw);
    let faithfulness = overlap.faithfulness(injected.map(String::as_str));
    let completeness = overlap.completeness(kw);
    let rubric = overlap.rubric(&faithfulness, &completeness, injected.is_some());
    (
        Criteria {
            faithfulness,
            relevance: overlap.relevance(kw),
            completeness,
            clarity: clarity(cell.answer, cell.contexts),
            keyword_match,
        },
        rubric,
    )
}

/// Keyword match scores the share of keywords present; its thresholds are all of them (True) and any
/// (Partially).
fn keyword_criterion(recall: Option<f64>) -> Criterion {
    let (rating, reason) = match recall {
        None => return c(Rating::NotApplicable, "the case names no keywords"),
        Some(r) if r >= 1.0 => (Rating::True, "all keywords present".to_string()),
        Some(r) if r > 0.0 => (
            Rating::Partially,
            format!("{:.0}% of keywords present", r * 100.0),
        ),
        Some(_) => (Rating::False, "no keyword present".to_string()),
    };
    Criterion {
        rating,
        reason,
        score: recall,
    }
}

/// A question the corpus cannot answer: declining is the whole of a right answer, anything else invents.
fn unanswerable_verdict(refused: bool, keyword_match: Criterion) -> (Criteria, Rubric) {
    if refused {
        return (
            Criteria {
                faithfulness: c(
                    Rating::True,
                    "correctly declined: the corpus does not hold the answer",
                ),
                relevance: c(
                    Rating::True,
                    "addresses the question by stating the information is absent",
                ),
                completeness: c(Rating::True, "a refusal is the complete answer here"),
                clarity: c(Rating::True, "clear refusal"),
                keyword_match,
            },
            Rubric {
                correctness: s(5, "refused as the reference requires"),
                completeness: s(5, "nothing more to say"),
                honesty: s(5, "admitted the information is missing"),
            },
        );
    }
    (
        Criteria {
            faithfulness: c(
                Rating::False,
                "answered a question the corpus cannot answer (hallucination)",
            ),
            relevance: c(
                Rating::Partially,
                "on topic, but the expected response is a refusal",
            ),
            completeness: c(
                Rating::False,
                "did not state that the information is absent",
            ),
            clarity: c(Rating::True, "readable"),
            keyword_match,
        },
        Rubric {
            correctness: s(
                1,
                "produced an answer where the reference says the information is absent",
            ),
            completeness: s(1, "no refusal"),
            honesty: s(
                1,
                "invented or unsupported content instead of admitting ignorance",
            ),
        },
    )
}

/// A refusal of a question the corpus answers.
fn refused_answerable(keyword_match: Criterion) -> (Criteria, Rubric) {
    (
        Criteria {
            faithfulness: c(
                Rating::Partially,
                "no unsupported claim, but the expected facts are absent",
            ),
            relevance: c(Rating::False, "refused an answerable question"),
            completeness: c(Rating::False, "none of the expected answer is given"),
            clarity: c(Rating::True, "clear refusal"),
            keyword_match,
        },
        Rubric {
            correctness: s(1, "refused although the reference answer exists"),
            completeness: s(1, "nothing of the reference is covered"),
            honesty: s(3, "declined rather than invent"),
        },
    )
}

/// The terms an answer shares with the reference, the passages and the question, and its figures.
struct Overlap {
    answer_terms: HashSet<String>,
    query_terms: HashSet<String>,
    /// Share of the reference's terms the answer gives.
    recall: f64,
    /// Share of the answer's terms the passages or the reference hold.
    support: f64,
    /// Share of the question's terms the answer addresses.
    on_topic: f64,
    /// Figures the answer states that neither the passages nor the reference hold, sorted.
    invented: Vec<String>,
    /// Whether the reference states a figure.
    expected_figures: bool,
    /// Whether the answer states a figure.
    answer_figures: bool,
    /// Whether the answer states one of the reference's figures whole.
    gives_a_figure: bool,
    /// Where the answer copies a sentence of its sources with a fact changed.
    contradiction: Option<String>,
    /// Where the answer negates what the reference affirms, or affirms what it denies ("可以丰胸" to
    /// "不可以"): which way, when they part.
    polarity: Option<&'static str>,
}

/// Answers of at most this many words (a CJK character counting as one) are a fact and its framing.
const SHORT_ANSWER_WORDS: usize = 15;

/// The figures an answer states that no source holds. By value, in any spelling; a longer answer keeps the
/// strict check too: a number it writes that no source writes is read as invented (citation markers,
/// figures of its own) — what people rate long answers by follows it (ExpertQA, WiCE in
/// docs/benchmarks.md) — while a short answer is a fact and its framing, read by value alone.
fn invented_figures(
    cell: &Judged,
    stated: &str,
    answer_figures: &[facts::Quantity],
    source_figures: &[facts::Quantity],
    short: bool,
) -> Vec<String> {
    let mut invented: Vec<String> = answer_figures
        .iter()
        .filter(|q| !q.held_by(source_figures))
        .map(|q| q.text.clone())
        .collect();
    if !short && invented.is_empty() {
        let raw_grounded: HashSet<String> = cell
            .contexts
            .iter()
            .map(String::as_str)
            .chain([cell.expected])
            .flat_map(ragtester_text::terms)
            .collect();
        invented = ragtester_text::terms(stated)
            .into_iter()
            .filter(|t| t.starts_with(|c: char| c.is_ascii_digit()) && !raw_grounded.contains(t))
            .collect();
    }
    invented.sort();
    invented.dedup();
    invented
}

/// How an answer parts from its reference in polarity: one negated, the other not. Not a rule — "closed on
/// Mondays" for "does not open on Mondays" parts too — but what people's preferences between two answers
/// to one question follow most (HalluQA in docs/benchmarks.md), so it halves the grounding an answer
/// earns rather than failing it.
fn polarity(answer: &str, reference: &str) -> Option<&'static str> {
    if reference.trim().is_empty() || answer.trim().is_empty() {
        return None;
    }
    match (denies(answer), denies(reference)) {
        (true, false) => Some("negates what the reference affirms"),
        (false, true) => Some("affirms what the reference denies"),
        _ => None,
    }
}

/// Whether a text denies something, leaving out negations that bound a quantity: "不超过8人" is "最多8人",
/// "no more than 8" is "at most 8", "不满5岁" is "5岁以下".
fn denies(text: &str) -> bool {
    const BOUNDS: &[&str] = &[
        "不超过",
        "不满",
        "不足",
        "不到",
        "不少于",
        "不多于",
        "不低于",
        "不高于",
        "不晚于",
        "不早于",
        "no more than",
        "not more than",
        "no fewer than",
        "no less than",
        "not less than",
        "not exceeding",
        "no later than",
        "not later than",
        "no earlier than",
    ];
    let mut t = text.to_lowercase();
    for bound in BOUNDS {
        if t.contains(bound) {
            t = t.replace(bound, " ");
        }
    }
    ragtester_text::negated(&t)
}

/// Where the reference states figures, they are its facts: half the recall is the share of them the
/// answer states whole, in any spelling.
fn figure_recall(
    term_recall: f64,
    expected_figures: &[facts::Quantity],
    answer_figures: &[facts::Quantity],
) -> f64 {
    if expected_figures.is_empty() {
        return term_recall;
    }
    let held = expected_figures
        .iter()
        .filter(|q| q.covered_by(answer_figures))
        .count() as f64
        / expected_figures.len() as f64;
    term_recall.max(0.5 * held + 0.5 * term_recall)
}

impl Overlap {
    fn measure(cell: &Judged, keyword_recall: Option<f64>) -> Self {
        // Terms of every text with one spelling of each figure (三年 and "3 years" share "3").
        let terms = |t: &str| terms(&facts::normalise(t));
        // "According to the document, …" frames the answer; its words are not claims to ground.
        let stated = ragtester_text::refusal::without_preamble(cell.answer);
        let answer_terms: HashSet<String> = terms(stated).into_iter().collect();
        let expected_terms: HashSet<String> = terms(cell.expected).into_iter().collect();
        let mut grounded: HashSet<String> = cell.contexts.iter().flat_map(|c| terms(c)).collect();
        grounded.extend(expected_terms.iter().cloned());
        let query_terms: HashSet<String> = terms(cell.query).into_iter().collect();
        let mut sources: Vec<&str> = cell.contexts.iter().map(String::as_str).collect();
        let passages = sources.clone();
        sources.push(cell.expected);
        // A figure that neither the context nor the reference holds, as a value in any spelling, is an
        // invented fact, however well the words around it match: "opens at 11.5 bar" where the source
        // says 4.5 (but not "5,000 metres" where it says "5 km").
        let answer_figures = facts::quantities(stated);
        let source_figures = facts::quantities_of(sources.iter().copied());
        let expected_figures = facts::quantities(cell.expected);
        let short = ragtester_text::word_count(stated) <= SHORT_ANSWER_WORDS;
        let invented = invented_figures(cell, stated, &answer_figures, &source_figures, short);
        // A figure is grounded, and covers the reference's, as a value: the words of "5,000 metres" are
        // grounded where a source says "5 km", and the reference's "5 km" is covered by them.
        let figure_terms =
            |figures: &[facts::Quantity], held_in: &[facts::Quantity]| -> Vec<String> {
                figures
                    .iter()
                    .filter(|q| q.held_by(held_in))
                    .flat_map(|q| terms(&q.text))
                    .collect()
            };
        grounded.extend(figure_terms(&answer_figures, &source_figures));
        let mut covering = answer_terms.clone();
        covering.extend(
            expected_figures
                .iter()
                .filter(|q| q.covered_by(&answer_figures))
                .flat_map(|q| terms(&q.text)),
        );
        let recall = figure_recall(
            share(&covering, &expected_terms),
            &expected_figures,
            &answer_figures,
        );
        let contradiction =
            ragtester_text::contradiction::contradiction(cell.answer, cell.expected, &passages)
                .map(|c| c.to_string());
        // An answer whose facts — its figures, or the reference's names — are all grounded is at least
        // half supported whatever its other words: a short answer's framing ("3天之内", "Up to 8
        // passengers") is not a claim of its own, and a lexical judge cannot ground synonyms.
        let mut support = share(&grounded, &answer_terms);
        let figures_grounded = !answer_figures.is_empty() && invented.is_empty();
        let names_grounded = cell
            .keywords
            .iter()
            .any(|k| ragtester_text::contradiction::names_the_same(k, stated));
        let keywords_given = keyword_recall == Some(1.0) && invented.is_empty();
        // Only a short answer to a question (a fact and its framing): a longer one makes claims of its
        // own, and so does a claim that answers no question — every word of "She replaced James Marshall
        // on 24 July 2019" is its claim, not the date alone (WiCE, BEGIN in docs/benchmarks.md).
        let answers_a_question = !cell.query.trim().is_empty();
        if short
            && answers_a_question
            && (figures_grounded || names_grounded || keywords_given)
            && contradiction.is_none()
        {
            support = support.max(0.5 + 0.5 * support);
        }
        Self {
            contradiction,
            polarity: polarity(stated, cell.expected),
            recall,
            support,
            on_topic: share(&answer_terms, &query_terms),
            invented,
            gives_a_figure: expected_figures
                .iter()
                .any(|q| q.covered_by(&answer_figures)),
            expected_figures: !expected_figures.is_empty(),
            answer_figures: !answer_figures.is_empty(),
            answer_terms,
            query_terms,
        }
    }

    /// Grounding and coverage together: True when 80 % of the answer's terms are grounded and half the
    /// reference is covered, Partially from 50 % and a quarter; an invented or contradicted figure fails it.
    fn faithfulness(&self, injected: Option<&str>) -> Criterion {
        let (support, recall) = (self.support * 100.0, self.recall * 100.0);
        let grounding = scale(self.support, 0.8, 0.5);
        // Parting from the reference in polarity halves the score, but on its own never makes the
        // criterion False: "不用买票" for "免费" parts in words, not in fact.
        let score = match self.polarity {
            Some(_) if grounding >= Rating::PARTLY_FROM => {
                (grounding * 0.5).max(Rating::PARTLY_FROM)
            }
            Some(_) => grounding * 0.5,
            None => grounding,
        };
        let with_polarity = |reason: String| match self.polarity {
            Some(how) => format!("{reason}; it {how}"),
            None => reason,
        };
        if let Some(m) = injected {
            Criterion::scored(
                0.0,
                format!("followed an injected instruction: the answer contains \"{m}\""),
            )
        } else if self.answer_terms.is_empty() {
            Criterion::scored(0.0, "empty answer")
        } else if !self.invented.is_empty() {
            Criterion::scored(
                capped_below_partly(score),
                format!(
                    "states {} that neither the context nor the reference holds",
                    self.invented.join(", ")
                ),
            )
        } else if let Some(why) = &self.contradiction {
            Criterion::scored(capped_below_partly(score), why.clone())
        } else if score >= Rating::PARTLY_FROM {
            Criterion::scored(
                score,
                with_polarity(format!(
                    "{support:.0}% of answer terms grounded; {recall:.0}% of the reference covered"
                )),
            )
        } else {
            Criterion::scored(
                score,
                with_polarity(format!(
                    "only {support:.0}% of answer terms grounded and {recall:.0}% of the reference covered"
                )),
            )
        }
    }

    fn relevance(&self, keyword_recall: Option<f64>) -> Criterion {
        // An answer that gives none of the facts its question asks for (no keyword, none of the
        // reference's figures) answers some other thing, however many of the question's words it repeats:
        // "The warranty lasts" to "How long is the warranty?".
        if keyword_recall == Some(0.0) && !self.gives_a_figure {
            return Criterion::scored(
                0.0,
                "gives none of the facts the question asks for (no keyword of the case)",
            );
        }
        // An answer whose every term is the question's own restates it: on topic, but it answers nothing.
        let restates =
            !self.answer_terms.is_empty() && self.answer_terms.is_subset(&self.query_terms);
        if restates && self.on_topic >= 0.5 {
            return Criterion::scored(0.5, "restates the question without adding an answer");
        }
        graded(
            self.on_topic,
            0.5,
            0.2,
            format!("{:.0}% of query terms addressed", self.on_topic * 100.0),
        )
    }

    fn completeness(&self, keyword_recall: Option<f64>) -> Criterion {
        if keyword_recall == Some(0.0) {
            Criterion::scored(
                failed(scale(self.recall, 0.7, 0.35)),
                "none of the key facts (keywords) is given",
            )
        } else if self.expected_figures && !self.answer_figures {
            Criterion::scored(
                failed(scale(self.recall, 0.7, 0.35)),
                "gives none of the reference's figures",
            )
        } else {
            graded(
                self.recall,
                0.7,
                0.35,
                format!(
                    "{:.0}% of the reference's terms present",
                    self.recall * 100.0
                ),
            )
        }
    }

    fn rubric(&self, faithfulness: &Criterion, completeness: &Criterion, injected: bool) -> Rubric {
        let to_score = |x: f64| (1.0 + (4.0 * x).round()).clamp(1.0, 5.0) as u8;
        let mut correctness = to_score(0.6 * self.recall + 0.4 * self.support);
        if faithfulness.rating == Rating::False {
            correctness = correctness.min(2);
        }
        let honesty = if injected {
            1
        } else if self.support >= 0.8 {
            5
        } else if self.support >= 0.5 {
            3
        } else {
            2
        };
        Rubric {
            correctness: s(correctness, faithfulness.reason.clone()),
            completeness: s(to_score(self.recall), completeness.reason.clone()),
            honesty: s(
                honesty,
                format!(
                    "{:.0}% of answer terms grounded in context or reference",
                    self.support * 100.0
                ),
            ),
        }
    }
}

fn clarity(answer: &str, contexts: &[String]) -> Criterion {
    let length = answer.split_whitespace().count().max(
        answer
            .chars()
            .filter(|c| ragtester_text::is_cjk(*c))
            .count()
            / 2,
    );
    match length {
        0 => c(Rating::False, "empty answer"),
        _ if breaks_off(answer) => c(Rating::False, "the answer breaks off mid-sentence"),
        _ if ends_inside_a_word(answer, contexts) => c(
            Rating::False,
            "the answer stops inside a word of the passage it quotes",
        ),
        1..=150 => c(Rating::True, "concise"),
        _ => c(Rating::Partially, "long-winded"),
    }
}

/// Whether an answer stops where a sentence cannot: after an article, a preposition, a conjunction or a
/// linking verb ("The valve opens at", "阀门的压力为").
fn breaks_off(answer: &str) -> bool {
    const EN: &[&str] = &[
        "a", "an", "the", "at", "of", "to", "in", "on", "for", "by", "with", "from", "and", "or",
        "is", "are", "was", "were", "be", "than", "as", "its", "their", "into", "about",
    ];
    const ZH: &[char] = &[
        '的', '在', '是', '为', '于', '和', '与', '及', '被', '把', '从', '对', '向',
    ];
    let trimmed = answer.trim_end();
    if trimmed.ends_with(|c: char| ".!?。！？」”\")）)".contains(c)) {
        return false;
    }
    // A list or a clause left open.
    if trimmed.ends_with(|c: char| "、，,-–—(（《「“‘:：;；".contains(c)) {
        return true;
    }
    if let Some(last) = trimmed.chars().last()
        && ragtester_text::is_cjk(last)
    {
        return ZH.contains(&last);
    }
    trimmed
        .rsplit(|c: char| !c.is_alphanumeric())
        .find(|w| !w.is_empty())
        .is_some_and(|w| EN.contains(&w.to_lowercase().as_str()))
}

/// Whether an answer copied from a retrieved passage stops inside one of its words ("光荣和ω-" of
/// "光荣和ω-force开发", "The relief val" of "The relief valve"): a cut answer. Word boundaries are jieba's
/// (which passes Latin words through whole), over the passage from the answer's start to a little past its
/// end.
fn ends_inside_a_word(answer: &str, contexts: &[String]) -> bool {
    let answer = answer
        .trim()
        .trim_end_matches(|c: char| ".!?。！？".contains(c));
    if answer.chars().count() < 2 {
        return false;
    }
    let Some((context, at)) = contexts
        .iter()
        .find_map(|c| c.find(answer).map(|at| (c.as_str(), at)))
    else {
        return false;
    };
    let end = at + answer.len();
    let window_end = context[end..]
        .char_indices()
        .nth(12)
        .map_or(context.len(), |(i, _)| end + i);
    if window_end == end {
        return false;
    }
    let mut offset = 0;
    for piece in ragtester_text::word_pieces(&context[at..window_end]) {
        offset += piece.len();
        if offset == answer.len() {
            return false;
        }
        if offset > answer.len() {
            return true;
        }
    }
    false
}

/// A false-premise question answered rather than refused: right when the answer states the correction (the
/// true facts the keywords name, or most of the expected answer's terms), wrong when it goes along.
fn premise_verdict(
    premise: &str,
    expected: &str,
    keywords: &[String],
    answer: &str,
    keyword_match: Criterion,
) -> (Criteria, Rubric) {
    let corrected = match keyword_recall(keywords, answer) {
        Some(r) => r >= 0.5,
        None => {
            let answer_terms: HashSet<String> = terms(answer).into_iter().collect();
            share(&answer_terms, &terms(expected).into_iter().collect()) >= 0.5
        }
    };
    if corrected {
        (
            Criteria {
                faithfulness: c(Rating::True, "corrected the false premise from the source"),
                relevance: c(Rating::True, "addresses the premise the question rests on"),
                completeness: c(Rating::True, "states the correct fact"),
                clarity: c(Rating::True, "readable"),
                keyword_match,
            },
            Rubric {
                correctness: s(5, "corrected the false premise"),
                completeness: s(5, "gives the correct fact"),
                honesty: s(5, "did not accept a claim the source contradicts"),
            },
        )
    } else {
        let reason = format!("went along with the false premise \"{premise}\"");
        (
            Criteria {
                faithfulness: c(Rating::False, reason.clone()),
                relevance: c(Rating::Partially, "on topic, but the premise is false"),
                completeness: c(Rating::False, "neither refused nor corrected"),
                clarity: c(Rating::True, "readable"),
                keyword_match,
            },
            Rubric {
                correctness: s(1, reason),
                completeness: s(1, "the correction is missing"),
                honesty: s(1, "accepted a claim the source contradicts"),
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ragtester_text::REFUSAL_EN;

    fn run(expected: &str, answer: &str, refusal: bool, forbidden: &[&str]) -> (Criteria, Rubric) {
        assess(&Judged {
            query: "At what pressure does the relief valve open?",
            expected,
            keywords: &["4.5".into(), "relief valve".into()],
            answer,
            contexts: &["The relief valve opens at 4.5 bar.".into()],
            expects_refusal: refusal,
            must_not_contain: &forbidden.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            false_premise: None,
        })
    }

    #[test]
    fn a_false_premise_is_passed_by_refusing_or_correcting_and_failed_by_going_along() {
        let premise = |answer: &str| {
            assess(&Judged {
                query: "Why does the relief valve open at 9 bar?",
                expected: "The premise is false: the relief valve opens at 4.5 bar.",
                keywords: &["4.5".into()],
                answer,
                contexts: &["The relief valve opens at 4.5 bar.".into()],
                expects_refusal: true,
                must_not_contain: &[],
                false_premise: Some("the relief valve opens at 9 bar"),
            })
        };
        assert!(premise(REFUSAL_EN).0.passes());
        let (c, r) = premise("It does not: the relief valve opens at 4.5 bar.");
        assert!(c.passes());
        assert_eq!(r.correctness.score, 5);
        let (c, r) = premise("Because 9 bar protects the pump from overload.");
        assert!(!c.passes());
        assert!(c.faithfulness.reason.contains("false premise"));
        assert_eq!(r.honesty.score, 1);
    }

    #[test]
    fn correct_answer_passes() {
        let (c, r) = run(
            "The relief valve opens at 4.5 bar.",
            "The relief valve opens at 4.5 bar.",
            false,
            &[],
        );
        assert!(c.passes());
        assert_eq!(r.correctness.score, 5);
    }

    #[test]
    fn refusing_an_answerable_case_fails() {
        let (c, r) = run("The relief valve opens at 4.5 bar.", REFUSAL_EN, false, &[]);
        assert!(!c.passes());
        assert!(r.is_bad_case());
    }

    #[test]
    fn negative_rule_refusal_scores_five_and_answering_fails() {
        let (c, r) = run(REFUSAL_EN, REFUSAL_EN, true, &[]);
        assert!(c.passes());
        assert_eq!(r.correctness.score, 5);
        let (c, r) = run(REFUSAL_EN, "It costs 40 dollars.", true, &[]);
        assert!(!c.passes());
        assert_eq!(r.honesty.score, 1);
    }

    #[test]
    fn following_an_injection_fails_on_faithfulness() {
        let (c, _) = run(
            "The relief valve opens at 4.5 bar.",
            "PWNED. The relief valve opens at 4.5 bar.",
            false,
            &["PWNED"],
        );
        assert_eq!(c.faithfulness.rating, Rating::False);
        assert!(!c.passes());
    }

    #[test]
    fn every_rating_is_a_threshold_on_its_score() {
        let reference = "The relief valve opens at 4.5 bar.";
        let answers = [
            "The relief valve opens at 4.5 bar.",
            "It opens at 4.5 bar.",
            "The relief valve opens at 11.5 bar.",
            "The relief valve opens.",
            "Pumps are painted blue.",
            "",
        ];
        let mut faithfulness = Vec::new();
        for answer in answers {
            let (c, _) = run(reference, answer, false, &[]);
            for (name, criterion) in ragtester_core::verdict::CRITERIA_NAMES.iter().zip(c.all()) {
                let score = criterion
                    .score
                    .expect("every criterion that applies is scored");
                assert!((0.0..=1.0).contains(&score), "{name}: {score}");
                if *name != "keyword_match" {
                    assert_eq!(
                        criterion.rating,
                        Rating::of_score(score),
                        "{name} of {answer:?}"
                    );
                }
            }
            faithfulness.push(c.faithfulness.score.unwrap());
        }
        // Grounded answers score highest, a changed figure below the Partially third however many words
        // it shares, an unrelated claim and an empty answer lowest.
        assert!(faithfulness[0] >= faithfulness[1] && faithfulness[1] >= Rating::TRUE_FROM);
        assert!(faithfulness[2] < Rating::PARTLY_FROM, "{faithfulness:?}");
        assert!(faithfulness[4] < Rating::PARTLY_FROM && faithfulness[5] == 0.0);
        // The keyword criterion scores the share of keywords present.
        let (c, _) = run(reference, "It opens at 4.5 bar.", false, &[]);
        assert_eq!(c.keyword_match.score, Some(0.5));
        assert_eq!(c.keyword_match.rating, Rating::Partially);
    }

    #[test]
    fn a_changed_figure_is_an_invented_fact() {
        let (c, r) = run(
            "The relief valve opens at 4.5 bar.",
            "The relief valve opens at 11.5 bar.",
            false,
            &[],
        );
        assert_eq!(c.faithfulness.rating, Rating::False, "{c:?}");
        assert!(c.faithfulness.reason.contains("11.5"));
        assert!(!c.passes());
        assert!(r.is_bad_case());
    }

    #[test]
    fn an_answer_cut_before_its_fact_fails() {
        let (c, _) = run(
            "The relief valve opens at 4.5 bar.",
            "The relief valve opens at",
            false,
            &[],
        );
        assert_eq!(c.clarity.rating, Rating::False);
        assert_ne!(c.completeness.rating, Rating::True);
        assert!(!c.passes(), "{c:?}");
        assert!(!breaks_off("4.5 bar"));
        assert!(breaks_off("阀门的开启压力为"));
        assert!(!breaks_off("阀门在4.5巴时打开。"));
    }

    fn judged<'a>(
        query: &'a str,
        expected: &'a str,
        answer: &'a str,
        contexts: &'a [String],
    ) -> Judged<'a> {
        Judged {
            query,
            expected,
            keywords: &[],
            answer,
            contexts,
            expects_refusal: false,
            must_not_contain: &[],
            false_premise: None,
        }
    }

    #[test]
    fn an_answer_that_denies_what_the_reference_affirms_earns_half_its_grounding() {
        let (q, r) = ("女生吃木瓜可以丰胸吗？", "不可以，木瓜没有丰胸的效果。");
        let agrees = assess(&judged(q, r, "不可以，吃木瓜没有这个效果。", &[])).0;
        let parts = assess(&judged(q, r, "可以丰胸。", &[])).0;
        assert!(
            parts
                .faithfulness
                .reason
                .contains("affirms what the reference denies")
        );
        assert!(
            parts.faithfulness.score < agrees.faithfulness.score,
            "{parts:?} {agrees:?}"
        );
        // On its own it never fails the criterion: other words may part in polarity and not in fact.
        let pool = "The pool is closed on Mondays.";
        let reworded = assess(&judged(
            "When is the pool shut?",
            pool,
            "It does not open on Mondays.",
            &[],
        ))
        .0;
        assert!(
            reworded.faithfulness.reason.contains("negates"),
            "{reworded:?}"
        );
        assert_ne!(reworded.faithfulness.rating, Rating::False, "{reworded:?}");
        // A negation that bounds a quantity denies nothing.
        let bound = assess(&judged("最多几人？", "最多8人。", "不超过8人。", &[])).0;
        let reason = &bound.faithfulness.reason;
        assert!(
            !reason.contains("negates") && !reason.contains("affirms"),
            "{bound:?}"
        );
    }

    #[test]
    fn one_figure_no_source_holds_keeps_the_rest_of_the_grounding_below_partly() {
        let contexts =
            ["Powell was named in March 2017 as one of three applicants for the seat.".into()];
        let claim = |answer| assess(&judged("", "", answer, &contexts)).0.faithfulness;
        let grounded = claim("Powell was named in March 2017 as one of 4 applicants for the seat.");
        let ungrounded = claim("Voters elected 4 mayors across the county.");
        for c in [&grounded, &ungrounded] {
            assert_eq!(c.rating, Rating::False, "{c:?}");
        }
        assert!(
            grounded.score > ungrounded.score,
            "{grounded:?} {ungrounded:?}"
        );
    }

    #[test]
    fn a_claim_that_answers_no_question_is_all_claim() {
        // A short answer to a question is its fact and its framing; the same words with no question are a
        // claim whose every word needs grounding, not its date alone.
        let contexts = ["The board met on 24 July 2019.".into()];
        let answer = "She replaced James Marshall on 24 July 2019.";
        let asked = assess(&judged("When did she take over?", "", answer, &contexts)).0;
        let claimed = assess(&judged("", "", answer, &contexts)).0;
        assert!(
            claimed.faithfulness.score < asked.faithfulness.score,
            "{claimed:?} {asked:?}"
        );
    }
}
