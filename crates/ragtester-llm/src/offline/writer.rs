//! The template question writer: one question per request, built around the section's most fact-laden
//! sentence. Replies `{"question", "answer", "keywords"}` as a real generator is asked to. Questions are never
//! yes/no (the paper's rule): they ask for a figure, an explanation, or what the text says about named terms.

use anyhow::{Result, bail};
use ragtester_core::TaskHint;
use ragtester_core::chat::QuestionKind;
use ragtester_core::text::{detect_language, is_heading, refusal_for, sentences, words};
use serde_json::json;

/// Aspects an invented (unanswerable) question asks about; one absent from the document is chosen.
const ASPECTS_EN: &[&str] = &[
    "retail price",
    "founding year",
    "chief executive",
    "export licence number",
    "recycling procedure",
    "maximum operating altitude",
    "insurance provider",
];
const ASPECTS_ZH: &[&str] = &[
    "零售价格",
    "创立年份",
    "首席执行官",
    "出口许可证编号",
    "回收流程",
    "最大工作海拔",
    "保险公司",
];

pub fn write_question(hint: &TaskHint) -> Result<String> {
    let TaskHint::Question {
        kind,
        title,
        section,
        language,
        document,
        seed,
    } = hint
    else {
        bail!("not a question task");
    };
    let zh = language == "zh";
    let facts = fact_sentences(section);
    if facts.is_empty() {
        bail!("the section has no sentence to ask about");
    }
    // Seed 0 asks about the section's best fact; other seeds pick another fact sentence.
    let first = &facts[(*seed as usize) % facts.len()];
    let reply = match kind {
        QuestionKind::Unanswerable => {
            let aspects = if zh { ASPECTS_ZH } else { ASPECTS_EN };
            let doc_lower = document.to_lowercase();
            let start = (*seed as usize) % aspects.len();
            let aspect = (0..aspects.len())
                .map(|i| aspects[(start + i) % aspects.len()])
                .find(|a| {
                    !a.split(' ').any(|w| w.len() > 3 && doc_lower.contains(w))
                        && !doc_lower.contains(a)
                })
                .unwrap_or(aspects[start]);
            let subject = salient(first)
                .into_iter()
                .next()
                .unwrap_or_else(|| title.clone());
            let question = if zh {
                format!("根据《{title}》，{subject}的{aspect}是什么？")
            } else {
                format!("According to \"{title}\", what is the {aspect} of the {subject}?")
            };
            json!({ "question": question, "answer": refusal_for(language), "keywords": [] })
        }
        QuestionKind::Complex if facts.len() >= 2 && *seed == 0 => {
            let (a, b) = (&facts[0], &facts[1]);
            let wa = salient(a);
            let wb: Vec<String> = salient(b).into_iter().filter(|w| !wa.contains(w)).collect();
            let (Some(x), Some(y)) = (wa.first(), wb.first()) else {
                return single_fact(&facts[0], zh);
            };
            let question = if zh {
                format!("请说明“{x}”与“{y}”之间有什么关系。")
            } else {
                format!("Explain how the {x} relates to the {y}.")
            };
            let ordered = ordered_pair(section, a, b);
            let mut keywords = vec![x.clone(), y.clone()];
            keywords.extend(wa.iter().skip(1).take(1).cloned());
            keywords.extend(wb.iter().skip(1).take(1).cloned());
            json!({ "question": question, "answer": ordered.join(if is_zh_text(a) { "" } else { " " }), "keywords": keywords })
        }
        QuestionKind::Complex | QuestionKind::Answerable => return single_fact(first, zh),
    };
    Ok(reply.to_string())
}

/// A question answered by one sentence: a blanked figure when it has one, else what it says about its terms.
/// Positive questions do not name the document: users do not, and retrieval has to find the right one.
fn single_fact(sentence: &str, zh: bool) -> Result<String> {
    let keys = salient(sentence);
    if let Some(number) = first_number(sentence) {
        let blanked = sentence.replacen(&number, "____", 1);
        let question = if zh {
            format!("下面这句话中空缺的数值是多少：“{blanked}”")
        } else {
            format!("What figure fills the blank in: \"{blanked}\"?")
        };
        let mut keywords = vec![number];
        keywords.extend(keys.into_iter().take(2));
        return Ok(
            json!({ "question": question, "answer": sentence, "keywords": keywords }).to_string(),
        );
    }
    // No figure: blank out the sentence's most specific word.
    let Some(word) = keys.first().cloned() else {
        bail!("the sentence has no content words to ask about");
    };
    let Some(blanked) = blank_word(sentence, &word) else {
        bail!("the key word could not be blanked");
    };
    let question = if zh {
        format!("下面这句话中空缺的词语是什么：“{blanked}”")
    } else {
        format!("Which word fills the blank in: \"{blanked}\"?")
    };
    let keywords: Vec<String> = keys.into_iter().take(3).collect();
    Ok(json!({ "question": question, "answer": sentence, "keywords": keywords }).to_string())
}

/// The sentence with the first case-insensitive occurrence of `word` replaced by a blank.
fn blank_word(sentence: &str, word: &str) -> Option<String> {
    let lower = sentence.to_lowercase();
    let at = lower.find(word)?;
    // Lower-casing can shift byte offsets in rare scripts; only blank when the original has the same bytes.
    let original = sentence.get(at..at + word.len())?;
    (original.to_lowercase() == word)
        .then(|| format!("{}____{}", &sentence[..at], &sentence[at + word.len()..]))
}

fn is_zh_text(s: &str) -> bool {
    detect_language(s) == "zh"
}

/// Sentences worth a question, best first: long enough to state a fact, figures and named terms preferred.
fn fact_sentences(section: &str) -> Vec<String> {
    let mut scored: Vec<(usize, f64, String)> = sentences(section)
        .into_iter()
        .enumerate()
        .map(|(i, (a, b))| (i, section.chars().skip(a).take(b - a).collect::<String>()))
        .filter_map(|(i, s)| {
            let w = words(&s);
            let long_enough = if is_zh_text(&s) {
                s.chars().count() >= 10
            } else {
                w.len() >= 4
            };
            if !long_enough || is_heading(&s) || s.starts_with("- ") && w.len() < 3 {
                return None;
            }
            let digits = s.chars().any(|c| c.is_ascii_digit()) as u8 as f64;
            let score = w.len().min(20) as f64 / 20.0 + digits;
            Some((i, score, s))
        })
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored.into_iter().map(|(_, _, s)| s).collect()
}

/// Content words of a sentence, most specific first (longer words carry more meaning), without numbers.
fn salient(sentence: &str) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut ws: Vec<(usize, String)> = words(sentence)
        .into_iter()
        .filter(|w| !w.chars().all(|c| c.is_ascii_digit() || c == '.'))
        .filter(|w| seen.insert(w.clone()))
        .enumerate()
        .collect();
    // Longer words are more specific; adverbs, participles and verbs make poor question topics.
    let weight = |w: &str| {
        let len = w
            .chars()
            .map(|c| {
                if ragtester_core::text::is_cjk(c) {
                    3
                } else {
                    1
                }
            })
            .sum::<usize>();
        let weak = ["ly", "ed", "ing", "ate", "ise", "ize"]
            .iter()
            .any(|s| w.ends_with(s));
        if weak { len / 2 } else { len }
    };
    ws.sort_by(|a, b| weight(&b.1).cmp(&weight(&a.1)).then(a.0.cmp(&b.0)));
    ws.into_iter().map(|(_, w)| w).collect()
}

/// The first number in a sentence, with its decimal part (`4.5`, `1,200`, `2024`).
fn first_number(sentence: &str) -> Option<String> {
    let chars: Vec<char> = sentence.chars().collect();
    let start = chars.iter().position(|c| c.is_ascii_digit())?;
    let mut end = start;
    while end < chars.len()
        && (chars[end].is_ascii_digit()
            || (matches!(chars[end], '.' | ',')
                && chars.get(end + 1).is_some_and(|c| c.is_ascii_digit())))
    {
        end += 1;
    }
    Some(chars[start..end].iter().collect())
}

fn ordered_pair(section: &str, a: &str, b: &str) -> Vec<String> {
    let (pa, pb) = (section.find(a), section.find(b));
    if pa <= pb {
        vec![a.to_string(), b.to_string()]
    } else {
        vec![b.to_string(), a.to_string()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(kind: QuestionKind, section: &str, language: &str) -> serde_json::Value {
        let hint = TaskHint::Question {
            kind,
            title: "Pump Manual".into(),
            section: section.into(),
            language: language.into(),
            document: section.into(),
            seed: 0,
        };
        serde_json::from_str(&write_question(&hint).unwrap()).unwrap()
    }

    #[test]
    fn numeric_fact_becomes_a_blank_to_fill() {
        let v = ask(
            QuestionKind::Answerable,
            "Overview\n\nThe relief valve opens at 4.5 bar during normal operation.",
            "en",
        );
        assert_eq!(
            v["question"],
            "What figure fills the blank in: \"The relief valve opens at ____ bar during normal operation.\"?"
        );
        assert_eq!(
            v["answer"],
            "The relief valve opens at 4.5 bar during normal operation."
        );
        assert_eq!(v["keywords"][0], "4.5");
    }

    #[test]
    fn unanswerable_asks_for_an_absent_aspect_and_expects_refusal() {
        let v = ask(
            QuestionKind::Unanswerable,
            "The pump housing is made of cast iron and bronze.",
            "en",
        );
        let q = v["question"].as_str().unwrap();
        assert!(q.contains("retail price"), "{q}");
        assert_eq!(v["answer"], ragtester_core::text::REFUSAL_EN);
    }

    #[test]
    fn cross_lingual_uses_the_requested_language() {
        let v = ask(
            QuestionKind::Answerable,
            "The pump housing is made of cast iron and bronze.",
            "zh",
        );
        let q = v["question"].as_str().unwrap();
        assert!(q.starts_with("下面这句话中空缺的词语是什么"), "{q}");
        assert!(q.contains("____"), "{q}");
    }

    #[test]
    fn complex_joins_two_sentences() {
        let v = ask(
            QuestionKind::Complex,
            "The impeller is balanced dynamically before assembly. Bearings are lubricated with lithium grease every quarter.",
            "en",
        );
        assert!(v["question"].as_str().unwrap().starts_with("Explain how"));
        assert!(
            v["answer"].as_str().unwrap().contains("impeller")
                && v["answer"].as_str().unwrap().contains("Bearings")
        );
    }

    #[test]
    fn no_sentence_is_an_error() {
        let hint = TaskHint::Question {
            kind: QuestionKind::Answerable,
            title: "t".into(),
            section: "Title".into(),
            language: "en".into(),
            document: String::new(),
            seed: 0,
        };
        assert!(write_question(&hint).is_err());
    }
}
