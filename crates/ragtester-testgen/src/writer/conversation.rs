//! Conversations of one document: two to three turns, each a case of its own, written from the sections
//! the strategies choose (coverage's unused sections first; the baseline's random ones). Every turn is
//! checked as a single question is (readable, not yes/no, located, passed by the critic); a follow-up is
//! the writer model's rewriting of a second question about the same subject, kept only when it refers back
//! by a pronoun or ellipsis and differs from the question it stands for.

use super::{DocWriter, Draft};
use crate::critic::{Corpus, Task};
use crate::reply::{is_cloze, is_yes_no, near_duplicate};
use ragtester_core::chat::{CriticCheck, QuestionKind};
use ragtester_core::ids::stable_id;
use ragtester_core::{
    ChatRequest, ConversationKind, Generator, Message, OutputSchema, ReplyFormat, Strategy,
    TaskHint, Turn, TurnStep,
};

/// Sections tried for a conversation's first topic, and facts of one section tried for a second question.
const SECTIONS_TRIED: usize = 6;
const SEEDS_TRIED: u64 = 5;
/// Follow-ups tried for one that needs its history after the first that fits (each costs a question, a
/// critic check and a rewrite with a model writer).
const CANDIDATES_PAST_FALLBACK: usize = 4;
/// Share of the expected answer's terms a passage holds to count as the one that answers.
const ANSWER_HELD: f64 = 0.8;

impl<'a> DocWriter<'a> {
    /// One conversation of `kind`; false (with a note) when the document yields none.
    pub async fn conversation(&mut self, kind: ConversationKind) -> bool {
        if self.stopped() {
            return false;
        }
        let turns = match kind {
            ConversationKind::FollowUp => self.follow_up_pair().await.map(|(a, b, standalone)| {
                vec![
                    (a, TurnStep::Opening, None),
                    (b, TurnStep::FollowUp, Some(standalone)),
                ]
            }),
            ConversationKind::TopicSwitch => self.topic_switch().await,
            ConversationKind::Correction => self.correction().await,
            ConversationKind::RefusalKept => self.refusal_kept().await,
            ConversationKind::LanguageSwitch => self.language_switch().await,
            ConversationKind::Comparison => self.comparison().await,
            // Logged conversations come from a team's logs (`import --answers`); none is written.
            ConversationKind::Logged => None,
        };
        let Some(turns) = turns else {
            self.notes.push(format!(
                "conversation ({}): no sections left that yield its turns",
                kind.as_str()
            ));
            return false;
        };
        let id = stable_id(
            "conversation",
            &(
                self.options.generator,
                &self.doc.id,
                kind,
                &turns[0].0.query,
            ),
        );
        let of = turns.len();
        for (index, (mut draft, step, standalone)) in turns.into_iter().enumerate() {
            draft.turn = Some(Turn {
                conversation: id.clone(),
                index: index + 1,
                of,
                kind,
                step,
                standalone,
                history: Vec::new(),
            });
            if !draft.spans.is_empty() {
                self.used.insert(draft.section.index);
            }
            self.push(draft);
        }
        true
    }

    /// Sections for a conversation's topics, in the order the generator prefers them.
    fn topics(&mut self) -> Vec<usize> {
        let slot = match self.options.generator {
            Generator::Baseline => Strategy::Baseline,
            _ => Strategy::Coverage,
        };
        let mut seen = std::collections::HashSet::new();
        let mut sections = self.candidates(slot);
        // Coverage lists unused sections only; once they run out, a conversation may revisit any prose.
        sections.extend(self.candidates(Strategy::NegativeInvented));
        sections.retain(|i| seen.insert(*i));
        sections.truncate(SECTIONS_TRIED * 2);
        sections
    }

    fn language(&self, index: usize) -> String {
        match self.sections[index].language.as_str() {
            l @ ("en" | "zh") => l.to_string(),
            _ => self.doc.language.clone(),
        }
    }

    /// A checked answerable question about section `index` (the fact `seed` picks), not a near-duplicate
    /// of `earlier` turns.
    async fn turn_question(
        &mut self,
        index: usize,
        language: &str,
        seed: u64,
        earlier: &[&Draft<'a>],
    ) -> Option<Draft<'a>> {
        let section = &self.sections[index];
        let label = format!("conversation (section {index})");
        let reply = match self
            .ask_seeded(
                self.doc,
                section,
                &[],
                QuestionKind::Answerable,
                language,
                seed,
            )
            .await
        {
            Ok(r) => r,
            Err(reason) => {
                self.notes.push(format!("{label}: {reason}"));
                return None;
            }
        };
        // A fill-in-the-blank is no turn of a chat, except in the other language, where the offline writer
        // has nothing better (as for a single cross-lingual question); it is noted.
        let other_language = language != self.language(index);
        if (is_cloze(&reply.question) && !other_language)
            || near_duplicate(&reply.question, earlier.iter().map(|d| d.query.as_str()))
        {
            return None;
        }
        if is_cloze(&reply.question) {
            self.notes.push(format!(
                "{label}: a fill-in-the-blank question in the other language: the writer gave no other"
            ));
        }
        let spans = self.located(section, &reply.answer, &label)?;
        let task = Task::against(CriticCheck::Supported, &reply, section, language);
        if !self.passes(task, &label).await {
            return None;
        }
        let slot = if language == self.language(index) {
            Strategy::Conversation
        } else {
            Strategy::CrossLingual
        };
        let mut draft = self.positive(reply, slot, language, section, spans);
        draft.strategy = Strategy::Conversation;
        Some(draft)
    }

    /// A question about some section, the first fact of it that passes.
    async fn any_question(
        &mut self,
        avoid: &[usize],
        language: Option<&str>,
        earlier: &[&Draft<'a>],
    ) -> Option<Draft<'a>> {
        for index in self.topics() {
            if avoid.contains(&index) || self.stopped() {
                continue;
            }
            let language = language.map_or_else(|| self.language(index), str::to_string);
            for seed in 0..2 {
                if let Some(d) = self.turn_question(index, &language, seed, earlier).await {
                    return Some(d);
                }
            }
        }
        None
    }

    /// An opening question and a follow-up about the same subject that names it only by reference; the
    /// follow-up carries the question it stands for. A follow-up that needs its history (asked alone, it
    /// finds another passage first) is preferred: one its own words answer tests nothing the history
    /// modes differ in. Such a pair is looked for a few candidates past the first that fits.
    async fn follow_up_pair(&mut self) -> Option<(Draft<'a>, Draft<'a>, String)> {
        let mut fallback = None;
        let mut tried_past_fallback = 0;
        for index in self.topics().into_iter().take(SECTIONS_TRIED) {
            let language = self.language(index);
            let mut opening = None;
            for seed in 0..SEEDS_TRIED {
                if self.stopped() {
                    return None;
                }
                opening = self.turn_question(index, &language, seed, &[]).await;
                if opening.is_some() {
                    break;
                }
            }
            let Some(first) = opening else { continue };
            // The second question comes from the same section or the one after it (a subject often runs
            // on), then from the sections that name most of what the first question names (the pump's
            // troubleshooting after its voltage; a fare after a fare), and may refer to what the first
            // question or its answer named, or share its frame.
            let previous = format!("{} {}", first.query, first.expected_answer);
            let mut neighbours = vec![index, index + 1];
            neighbours.extend(self.sections_naming(&first.query, &[index, index + 1]));
            let mut seen = std::collections::HashSet::new();
            neighbours.retain(|n| *n < self.sections.len() && seen.insert(*n));
            for next in neighbours {
                if self.sections[next].language != self.sections[index].language {
                    continue;
                }
                let mut asked = std::collections::HashSet::new();
                for seed in 0..SEEDS_TRIED {
                    if self.stopped() {
                        return None;
                    }
                    let Some(mut second) =
                        self.turn_question(next, &language, seed, &[&first]).await
                    else {
                        continue;
                    };
                    // A section with one fact gives it again for every seed: on to the next section.
                    if !asked.insert(second.query.clone()) {
                        break;
                    }
                    let Some(follow_up) = self.follow_up(&previous, &second.query, &language).await
                    else {
                        continue;
                    };
                    if self.needs_history(&follow_up, &second) {
                        let standalone = std::mem::replace(&mut second.query, follow_up);
                        return Some((first, second, standalone));
                    }
                    if fallback.is_none() {
                        let standalone = std::mem::replace(&mut second.query, follow_up);
                        fallback = Some((first.clone(), second, standalone));
                    } else {
                        tried_past_fallback += 1;
                    }
                    if tried_past_fallback >= CANDIDATES_PAST_FALLBACK {
                        return fallback;
                    }
                    break;
                }
            }
        }
        fallback
    }

    /// Up to twice [`SECTIONS_TRIED`] sections besides `skip` that can hold a question, those holding
    /// more of `question`'s terms first (the generator's topics first among equals); a section holding
    /// none is left out. Twice: a subject a manual names everywhere ("the pump") ranks every section
    /// alike, and the one whose question names it may come late.
    fn sections_naming(&mut self, question: &str, skip: &[usize]) -> Vec<usize> {
        let wanted: std::collections::HashSet<String> =
            ragtester_text::terms(question).into_iter().collect();
        let mut order = self.topics();
        order.extend(0..self.sections.len());
        let mut seen = std::collections::HashSet::new();
        let mut named: Vec<(usize, usize)> = order
            .into_iter()
            .filter(|i| seen.insert(*i) && !skip.contains(i))
            .filter(|i| self.sections[*i].class.can_hold_a_question())
            .map(|i| {
                let held = ragtester_text::terms(&self.sections[i].text)
                    .into_iter()
                    .collect::<std::collections::HashSet<_>>()
                    .intersection(&wanted)
                    .count();
                (i, held)
            })
            .filter(|(_, held)| *held > 0)
            .collect();
        // Stable: among equals the generator's own order stands.
        named.sort_by_key(|n| std::cmp::Reverse(n.1));
        named
            .into_iter()
            .take(SECTIONS_TRIED * 2)
            .map(|(i, _)| i)
            .collect()
    }

    /// Whether the follow-up needs its history (see [`needs_history`]); false without a corpus to ask.
    fn needs_history(&self, follow_up: &str, second: &Draft<'_>) -> bool {
        self.gate.is_some_and(|gate| {
            needs_history(
                gate.corpus,
                follow_up,
                &second.query,
                &second.expected_answer,
            )
        })
    }

    /// The writer model's follow-up of `question` after `previous`; None when it refers to nothing or is
    /// not a question a user would ask.
    async fn follow_up(
        &mut self,
        previous: &str,
        question: &str,
        language: &str,
    ) -> Option<String> {
        let mut request = ChatRequest::new(
            follow_up_messages(previous, question, language),
            TaskHint::FollowUp {
                previous: previous.to_string(),
                question: question.to_string(),
                language: language.to_string(),
            },
        );
        request.format = ReplyFormat::Schema(OutputSchema {
            name: "follow_up".into(),
            schema: serde_json::json!({
                "type": "object",
                "properties": { "question": { "type": "string" } },
                "required": ["question"],
                "additionalProperties": false
            }),
        });
        let reply = match self.model.chat(&request).await {
            Ok(r) => r.content,
            Err(e) => {
                let note = self.failed(e);
                self.notes.push(format!("conversation (follow-up): {note}"));
                return None;
            }
        };
        let json = reply.find('{').zip(reply.rfind('}'));
        let text = json
            .and_then(|(s, e)| serde_json::from_str::<serde_json::Value>(&reply[s..=e]).ok())
            .and_then(|v| v["question"].as_str().map(|q| q.trim().to_string()))
            .unwrap_or_default();
        let same = near_duplicate(&text, std::iter::once(question));
        (!text.is_empty() && !same && !is_yes_no(&text) && !is_cloze(&text)).then_some(text)
    }

    /// A topic, another topic, then back to the first by reference.
    async fn topic_switch(&mut self) -> Option<Vec<(Draft<'a>, TurnStep, Option<String>)>> {
        let (opening, mut back, standalone) = self.follow_up_pair().await?;
        let avoid = [opening.section.index];
        // The switch must differ from what the last turn will ask, not only from how it words it ("它…"
        // after a switch asking the same about "电池组…" returns to nothing).
        let mut asked_back = back.clone();
        asked_back.query = standalone.clone();
        let switch = self
            .any_question(
                &avoid,
                Some(&opening.language),
                &[&opening, &back, &asked_back],
            )
            .await?;
        // Back to the first topic, with a question of its own: the first question was answered.
        back.query = if opening.language == "zh" {
            format!("回到最开始的话题：{}", back.query)
        } else {
            format!(
                "Going back to the first topic: {}",
                lower_first(&back.query)
            )
        };
        Some(vec![
            (opening, TurnStep::Opening, None),
            (switch, TurnStep::Switch, None),
            (back, TurnStep::SwitchBack, Some(standalone)),
        ])
    }

    /// A question, then the user takes it back and asks about something else.
    async fn correction(&mut self) -> Option<Vec<(Draft<'a>, TurnStep, Option<String>)>> {
        let asked = self.any_question(&[], None, &[]).await?;
        let avoid = [asked.section.index];
        let mut meant = self
            .any_question(&avoid, Some(&asked.language), &[&asked])
            .await?;
        let standalone = meant.query.clone();
        meant.query = if asked.language == "zh" {
            format!("不好意思，我问错了。我想问的是：{}", meant.query)
        } else {
            format!("Sorry, that is not what I meant to ask. {}", meant.query)
        };
        Some(vec![
            (asked, TurnStep::Opening, None),
            (meant, TurnStep::Correction, Some(standalone)),
        ])
    }

    /// A question the document cannot answer (refused), one it can, then the first pressed again.
    async fn refusal_kept(&mut self) -> Option<Vec<(Draft<'a>, TurnStep, Option<String>)>> {
        let mut out_of_scope = None;
        for index in self.topics().into_iter().take(SECTIONS_TRIED) {
            if self.stopped() {
                return None;
            }
            let language = self.language(index);
            let section = &self.sections[index];
            let seed = self.options.seed.wrapping_add(self.cases.len() as u64 + 7);
            let Ok(reply) = self
                .ask_seeded(
                    self.doc,
                    section,
                    &[],
                    QuestionKind::Unanswerable,
                    &language,
                    seed,
                )
                .await
            else {
                continue;
            };
            let label = format!("conversation (section {index})");
            if !self.unanswered(&reply.question, &language, &label).await {
                continue;
            }
            let corpus_wide = self.unanswered_in_corpus(&reply.question, &language).await;
            let mut draft =
                self.negative(reply.question, Strategy::Conversation, &language, section);
            draft.unanswerable_in_corpus = corpus_wide;
            out_of_scope = Some(draft);
            break;
        }
        let out_of_scope = out_of_scope?;
        let answerable = self
            .any_question(&[], Some(&out_of_scope.language), &[&out_of_scope])
            .await?;
        let mut pressed = self.negative(
            out_of_scope.query.clone(),
            Strategy::Conversation,
            &out_of_scope.language,
            out_of_scope.section,
        );
        pressed.unanswerable_in_corpus = out_of_scope.unanswerable_in_corpus;
        pressed.query = if pressed.language == "zh" {
            format!("还是刚才那个问题，你就直接告诉我吧：{}", pressed.query)
        } else {
            format!(
                "About my earlier question, just give me your best answer anyway: {}",
                lower_first(&pressed.query)
            )
        };
        let standalone = Some(out_of_scope.query.clone());
        Some(vec![
            (out_of_scope, TurnStep::OutOfScope, None),
            (answerable, TurnStep::Switch, None),
            (pressed, TurnStep::PressedAgain, standalone),
        ])
    }

    /// A question in the document's language, then one in the other language.
    async fn language_switch(&mut self) -> Option<Vec<(Draft<'a>, TurnStep, Option<String>)>> {
        let opening = self.any_question(&[], None, &[]).await?;
        let other = if opening.language == "zh" { "en" } else { "zh" };
        let switched = self.any_question(&[], Some(other), &[&opening]).await?;
        Some(vec![
            (opening, TurnStep::Opening, None),
            (switched, TurnStep::OtherLanguage, None),
        ])
    }
}

impl<'a> DocWriter<'a> {
    /// Two figures in one unit, of one section or two (two fares, a price and a fine), then which is larger.
    /// The expected answer is worked out here from the two located answers, never asked of the writer; its
    /// spans are both answers' spans.
    async fn comparison(&mut self) -> Option<Vec<(Draft<'a>, TurnStep, Option<String>)>> {
        let mut found: Vec<(Draft<'a>, Figure)> = Vec::new();
        for index in self.topics() {
            if found.len() == 2 || self.stopped() {
                break;
            }
            let language = self.language(index);
            if found.first().is_some_and(|(d, _)| d.language != language) {
                continue;
            }
            for seed in 0..SEEDS_TRIED {
                let earlier: Vec<&Draft<'a>> = found.iter().map(|(d, _)| d).collect();
                let Some(draft) = self.turn_question(index, &language, seed, &earlier).await else {
                    continue;
                };
                let Some(figure) = Figure::of(&draft.expected_answer) else {
                    continue;
                };
                let fits = found
                    .first()
                    .is_none_or(|(_, f)| f.same_unit(&figure) && f.value != figure.value);
                if fits {
                    found.push((draft, figure));
                    if found.len() == 2 {
                        break;
                    }
                }
            }
        }
        let [(first, a), (second, b)]: [(Draft<'a>, Figure); 2] = found.try_into().ok()?;
        let zh = first.language == "zh";
        let (larger, smaller) = if a.value > b.value {
            (&a, &b)
        } else {
            (&b, &a)
        };
        let mut compare = Draft::new(
            crate::reply::Reply {
                question: if zh {
                    "这两个数值哪个更大？".into()
                } else {
                    "Which of those two figures is larger?".into()
                },
                answer: if zh {
                    format!("{}大于{}。", larger.text, smaller.text)
                } else {
                    format!("{} is larger than {}.", larger.text, smaller.text)
                },
                keywords: vec![larger.number.clone()],
                false_claim: None,
                cloze_reason: None,
            },
            Strategy::Conversation,
            &first.language,
            first.section,
        );
        compare.category = ragtester_core::Category::Inference;
        compare.spans = first.spans.iter().chain(&second.spans).cloned().collect();
        let standalone = if zh {
            format!(
                "“{}”和“{}”的答案，哪个数值更大？",
                first.query, second.query
            )
        } else {
            format!(
                "Which is larger: the answer to \"{}\" or the answer to \"{}\"?",
                first.query, second.query
            )
        };
        Some(vec![
            (first, TurnStep::Opening, None),
            (second, TurnStep::Switch, None),
            (compare, TurnStep::Compare, Some(standalone)),
        ])
    }
}

/// A figure an answer states: the number, as written and as a value, and the unit after it.
#[derive(Debug, Clone, PartialEq)]
struct Figure {
    number: String,
    value: f64,
    unit: String,
    /// The number and its unit as the answer writes them (`4.5 bar`, `24个月`).
    text: String,
}

impl Figure {
    /// The first number of `answer` with a unit right after it; None when it states none. A number that is
    /// part of a name or code ("HX-40", "M6") is no figure, nor one followed by a word such as "to" ("from
    /// minus 10 to plus 60 degrees" is a range, not one value).
    fn of(answer: &str) -> Option<Self> {
        let chars: Vec<char> = answer.chars().collect();
        let mut at = 0;
        while let Some(offset) = chars[at..].iter().position(|c| c.is_ascii_digit()) {
            let start = at + offset;
            let mut end = start;
            while end < chars.len()
                && (chars[end].is_ascii_digit() || chars[end] == '.' || chars[end] == ',')
            {
                end += 1;
            }
            at = end;
            let in_a_name =
                start > 0 && (chars[start - 1].is_alphanumeric() || chars[start - 1] == '-');
            if in_a_name && !ragtester_text::is_cjk(chars[start - 1]) {
                continue;
            }
            // A number joined to the next by "to" or "and" is a range or a list: no one value to compare.
            let next: String = chars[end..]
                .iter()
                .skip_while(|c| c.is_whitespace())
                .take_while(|c| c.is_alphabetic())
                .collect();
            if ragtester_text::is_stop_word(&next.to_lowercase()) && !next.is_empty() {
                return None;
            }
            if let Some(figure) = Self::at(&chars, start, end) {
                return Some(figure);
            }
        }
        None
    }

    /// Whether two figures are in one unit, singular or plural ("24 month warranty", "6 months").
    fn same_unit(&self, other: &Self) -> bool {
        let base = |u: &str| u.to_lowercase().trim_end_matches('s').to_string();
        base(&self.unit) == base(&other.unit)
    }

    /// The figure whose number spans `start..end` of `chars`, if a unit follows it.
    fn at(chars: &[char], start: usize, end: usize) -> Option<Self> {
        let number: String = chars[start..end].iter().collect::<String>();
        let number = number.trim_end_matches(['.', ',']).to_string();
        let value: f64 = number.replace(',', "").parse().ok()?;
        let rest: String = chars[start + number.chars().count()..].iter().collect();
        let after = rest.trim_start();
        let unit: String = if after.starts_with(|c: char| ragtester_text::is_cjk(c)) {
            after
                .chars()
                .take_while(|c| ragtester_text::is_cjk(*c))
                .take(2)
                .collect()
        } else {
            after
                .chars()
                .take_while(|c| c.is_alphabetic() || *c == '%')
                .collect()
        };
        if unit.is_empty() || ragtester_text::is_stop_word(&unit.to_lowercase()) {
            return None;
        }
        let gap = if rest.starts_with(' ') { " " } else { "" };
        Some(Self {
            text: format!("{number}{gap}{unit}"),
            number,
            value,
            unit,
        })
    }
}

/// Whether `follow_up`, asked alone, misses its answer while `standalone` (the question it stands for)
/// finds it: in the corpus's first passage for each, as the critic's retriever ranks them, the sentence
/// that covers most of the question's words (the first of equals, as a reader without the history would
/// take it) must hold the answer. A passage often holds a section's several facts ("a single ticket
/// costs…", "a day pass costs…"): finding the passage is not finding which fact "it" is. False when even
/// the whole question does not find its answer.
fn needs_history(corpus: &dyn Corpus, follow_up: &str, standalone: &str, answer: &str) -> bool {
    let answer_terms = ragtester_text::terms(answer);
    let finds_answer = |query: &str| {
        corpus
            .passages(query, 1, &[])
            .ok()
            .and_then(|p| p.into_iter().next())
            .and_then(|top| {
                ragtester_text::keyword_recall(&answer_terms, &best_sentence(query, &top))
            })
            .is_some_and(|recall| recall >= ANSWER_HELD)
    };
    finds_answer(standalone) && !finds_answer(follow_up)
}

/// The sentence of `passage` holding most of `query`'s terms, the first of equals.
fn best_sentence(query: &str, passage: &str) -> String {
    let wanted: std::collections::HashSet<String> =
        ragtester_text::terms(query).into_iter().collect();
    let mut best = (0, String::new());
    for (start, end) in ragtester_text::sentences(passage) {
        let sentence: String = passage.chars().skip(start).take(end - start).collect();
        let held = ragtester_text::terms(&sentence)
            .into_iter()
            .collect::<std::collections::HashSet<_>>()
            .intersection(&wanted)
            .count();
        if held > best.0 {
            best = (held, sentence);
        }
    }
    best.1
}

/// The follow-up prompt, in the question's language.
fn follow_up_messages(previous: &str, question: &str, language: &str) -> Vec<Message> {
    if language == "zh" {
        vec![
            Message::system(
                "你为聊天助手的多轮对话测试改写问题。把第二个问题改写成紧接第一个问题的追问：两者共同的主语\
                 只用代词（它、它们）指代或省略，其余意思不变。如果两个问题没有共同的主语，question 为空字符串。\
                 只输出 JSON：{\"question\": \"...\"}",
            ),
            Message::user(format!("第一个问题：{previous}\n第二个问题：{question}")),
        ]
    } else {
        vec![
            Message::system(
                "You rewrite questions for multi-turn tests of a chat assistant. Rewrite the second question \
                 as a follow-up asked right after the first: name the subject they share only by a pronoun \
                 (it, they) or leave it out, and keep everything else it asks. If they share no subject, \
                 reply with an empty question. Reply with JSON only: {\"question\": \"...\"}",
            ),
            Message::user(format!(
                "First question: {previous}\nSecond question: {question}"
            )),
        ]
    }
}

fn lower_first(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        // "I" and acronyms keep their capital.
        Some(c) if chars.clone().next().is_some_and(char::is_lowercase) => {
            c.to_lowercase().chain(chars).collect()
        }
        _ => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::{Corpus, Figure, needs_history};

    /// Paragraphs ranked by how many of the query's terms they hold (first on ties).
    struct Overlap(&'static [&'static str]);

    impl Corpus for Overlap {
        fn passages(&self, query: &str, k: usize, _: &[String]) -> anyhow::Result<Vec<String>> {
            let asked = ragtester_text::terms(query);
            let mut ranked: Vec<(usize, &str)> = self
                .0
                .iter()
                .map(|p| {
                    let held = ragtester_text::terms(p);
                    (asked.iter().filter(|t| held.contains(t)).count(), *p)
                })
                .collect();
            ranked.sort_by_key(|r| std::cmp::Reverse(r.0));
            Ok(ranked
                .into_iter()
                .take(k)
                .map(|(_, p)| p.to_string())
                .collect())
        }
    }

    #[test]
    fn a_follow_up_needs_its_history_when_alone_it_finds_another_passage() {
        let corpus = Overlap(&[
            "The harbour pump draws 7.5 amperes and costs 480 euros.",
            "The charger costs 90 euros and weighs 2 kilograms.",
            "The bilge alarm sounds at 55 millimetres.",
        ]);
        let answer = "The charger costs 90 euros.";
        // "How much does it cost?" alone finds the pump's price first; "the charger" finds its own.
        assert!(needs_history(
            &corpus,
            "How many euros does it cost?",
            "How many euros does the charger cost?",
            answer
        ));
        // Its own words ("weigh") already find the charger: the history changes nothing.
        assert!(!needs_history(
            &corpus,
            "How many kilograms does it weigh?",
            "How many kilograms does the charger weigh?",
            "The charger weighs 2 kilograms."
        ));
        // A question that does not find its answer even whole tells nothing about its history.
        assert!(!needs_history(
            &corpus,
            "What does it do?",
            "What does the alarm do?",
            "The alarm rings a bell."
        ));
    }

    #[test]
    fn a_follow_up_needs_its_history_when_its_passage_holds_several_such_facts() {
        // One passage, three fares: alone, "it" is the first fare; the day pass is found only with its name.
        let corpus = Overlap(&[
            "A single ticket costs 2 euros. A day pass costs 7 euros. Monthly passes cost 45 euros.",
            "Tickets are sold at every station.",
        ]);
        assert!(needs_history(
            &corpus,
            "How many euros does it cost?",
            "How many euros does a day pass cost?",
            "7 euros for a day pass"
        ));
        // The first fare needs no history to be found.
        assert!(!needs_history(
            &corpus,
            "How many euros does it cost?",
            "How many euros does a single ticket cost?",
            "2 euros for a single ticket"
        ));
    }

    #[test]
    fn a_figure_is_a_number_with_its_unit() {
        let f = Figure::of("The relief valve opens at 4.5 bar.").unwrap();
        assert_eq!(
            (f.number.as_str(), f.value, f.unit.as_str()),
            ("4.5", 4.5, "bar")
        );
        assert_eq!(f.text, "4.5 bar");
        let f = Figure::of("保修期为24个月。").unwrap();
        assert_eq!(
            (f.value, f.unit.as_str(), f.text.as_str()),
            (24.0, "个月", "24个月")
        );
        assert_eq!(
            Figure::of("1,200 revolutions per minute").unwrap().value,
            1200.0
        );
        assert!(Figure::of("Chapter 3").is_none());
        assert!(Figure::of("It is measured from minus 10 to plus 60 degrees Celsius.").is_none());
        assert!(Figure::of("It covers 0 to 5,000 parts per million.").is_none());
        // A number inside a name is passed over for the figure after it.
        let f = Figure::of("At zero head the HX-40 moves 9,600 litres per hour.").unwrap();
        assert_eq!((f.value, f.unit.as_str()), (9600.0, "litres"));
        assert!(Figure::of("Use the M6 screws.").is_none());
        let (year, months) = (
            Figure::of("It carries a 24 month warranty.").unwrap(),
            Figure::of("Check it every 6 months.").unwrap(),
        );
        assert!(year.same_unit(&months));
        assert!(!months.same_unit(&Figure::of("It weighs 6 kilograms.").unwrap()));
        assert!(Figure::of("no figure").is_none());
    }
}
