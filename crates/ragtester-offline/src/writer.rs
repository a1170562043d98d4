//! The template question writer: one question per request, built around the section's most fact-laden
//! sentence. Replies `{"question", "answer", "keywords"}` as a real generator is asked to. Questions are never
//! yes/no (the paper's rule) and are what a user would ask: a wh-question from the sentence's structure
//! (see `wh`); a fill-in-the-blank only as the last resort, when no fact sentence of the section has a
//! structure the writer recognises (or the question must be in another language than the sentence).

use anyhow::{Result, bail};
use ragtester_core::TaskHint;
use ragtester_core::chat::QuestionKind;
use ragtester_text::{
    detect_language, is_askable_sentence, is_heading, refusal_for, sentences, words,
};
use serde_json::json;

pub fn write_question(hint: &TaskHint) -> Result<String> {
    let TaskHint::Question {
        kind,
        title,
        section,
        language,
        document,
        seed,
        passages,
    } = hint
    else {
        bail!("not a question task");
    };
    let zh = language == "zh";
    if *kind == QuestionKind::MultiPassage {
        return multi_passage(passages, zh);
    }
    let facts = fact_sentences(section);
    if facts.is_empty() {
        // Text with no sentence punctuation at all (old IR collections' abstracts, text whose punctuation an
        // extraction lost) gives the wh-grammar nothing to parse: asking it anyway wrote fill-in-the-blanks
        // and garbled questions (70 % cloze on Vaswani NPL), so the report says why instead.
        if !section.contains(['.', '!', '?', '。', '！', '？', ';', '；']) {
            bail!(
                "the section has no sentence punctuation, so the offline writer cannot tell its sentences \
                 apart: use a model as the question writer (--llm) for this corpus"
            );
        }
        bail!("the section has no sentence to ask about");
    }
    // Seed 0 asks about the section's best fact; other seeds pick another fact sentence.
    let first = &facts[(*seed as usize) % facts.len()];
    // A FAQ answers its own question over several sentences: the complex question a reader asks.
    if *kind == QuestionKind::Complex
        && *seed == 0
        && let Some(question) = faq_question(section, zh, 2)
    {
        return Ok(question);
    }
    let reply = match kind {
        QuestionKind::Unanswerable => {
            let Some(question) = crate::out_of_scope::question(title, document, language, *seed)
            else {
                bail!("the document states every property the offline writer asks out of scope");
            };
            json!({ "question": question, "answer": refusal_for(language), "keywords": [] })
        }
        QuestionKind::NearMiss => near_miss(first, document, language, *seed),
        QuestionKind::FalsePremise => {
            let Some(sentence) = facts.iter().find(|f| first_number(f).is_some()) else {
                bail!("the section states no figure to contradict");
            };
            false_premise(sentence, zh)?
        }
        QuestionKind::MultiPassage => unreachable!("answered above"),
        QuestionKind::Complex | QuestionKind::Answerable => {
            return faq_question(section, zh, 1)
                .or_else(|| asked_by_a_user(&facts, *seed as usize, zh))
                .or_else(|| in_the_other_language(&facts, *seed as usize, zh))
                .map_or_else(|| single_fact(first, zh, &why_cloze(&facts, zh)), Ok);
        }
    };
    Ok(reply.to_string())
}

/// A FAQ's own question: a section that states a question ("2.1 What is R?") and answers it; the question
/// without its numbering, the first fact sentence after it as the answer.
fn faq_question(section: &str, zh: bool, answer_sentences: usize) -> Option<String> {
    let spans = sentences(section);
    let texts: Vec<String> = spans
        .iter()
        .map(|&(a, b)| section.chars().skip(a).take(b - a).collect::<String>())
        .collect();
    let at = texts
        .iter()
        .position(|t| t.trim_end().ends_with(['?', '？']))?;
    let tokens: Vec<&str> = texts[at].split_whitespace().collect();
    let start = tokens
        .iter()
        .position(|t| !t.chars().all(|c| c.is_ascii_digit() || c == '.'))?;
    let question = tokens[start..].join(" ");
    // A question a reader asks opens with a question word (a cross-reference "[What is S?]" inside a
    // sentence does not).
    let opens = [
        "What", "How", "Why", "When", "Where", "Which", "Who", "Can", "Is", "Are", "Does", "Do",
        "Should", "Will", "Could", "May",
    ];
    let asks = if zh {
        [
            "什么",
            "如何",
            "怎么",
            "怎样",
            "为什么",
            "哪",
            "是否",
            "吗",
            "能否",
            "有没有",
            "多少",
            "几",
        ]
        .iter()
        .any(|w| question.contains(w))
    } else {
        opens.contains(&tokens[start])
    };
    if !asks || question.contains(['[', '(', '“', '"']) {
        return None;
    }
    let size = if zh {
        question
            .chars()
            .filter(|c| ragtester_text::is_cjk(*c))
            .count()
    } else {
        tokens.len() - start
    };
    if is_zh_text(&question) != zh || !(3..=30).contains(&size) {
        return None;
    }
    let answers: Vec<&str> = texts[at + 1..]
        .iter()
        .map(|t| t.trim())
        .take_while(|t| !t.ends_with(['?', '？']))
        .filter(|t| is_askable_sentence(t))
        .take(answer_sentences)
        .collect();
    let first = answers.first()?;
    let keywords: Vec<String> = salient(first).into_iter().take(3).collect();
    let answer = answers.join(if zh { "" } else { " " });
    Some(json!({ "question": question, "answer": answer, "keywords": keywords }).to_string())
}

/// A wh-question about the first fact sentence (from `start` on) whose structure gives one, in the language
/// asked for; the sentence is the expected answer.
fn asked_by_a_user(facts: &[String], start: usize, zh: bool) -> Option<String> {
    (0..facts.len())
        .map(|k| &facts[(start + k) % facts.len()])
        .filter(|f| is_zh_text(f) == zh)
        .find_map(|fact| {
            let wh = crate::wh::question_for(fact)?;
            Some(
                json!({ "question": wh.question, "answer": fact, "keywords": wh.keywords })
                    .to_string(),
            )
        })
}

/// A question in the other language than the section's, as a bilingual user asks one: the offline writer
/// does not translate, so it names the sentence's subject as the section writes it ("“relief valve”对应的
/// 数值是多少？", "What is stated about “主驱动”?") and asks for its figure or what is said about it.
fn in_the_other_language(facts: &[String], start: usize, zh: bool) -> Option<String> {
    if facts.iter().any(|f| is_zh_text(f) == zh) {
        return None;
    }
    (0..facts.len())
        .map(|k| &facts[(start + k) % facts.len()])
        .find_map(|fact| {
            let term = subject_term(fact)?;
            let number = first_number(fact);
            let question = match (zh, number.is_some()) {
                (true, true) => format!("“{term}”对应的数值是多少？"),
                (true, false) => format!("关于“{term}”有哪些说明？"),
                (false, true) => format!("What figure is given for “{term}”?"),
                (false, false) => format!("What is stated about “{term}”?"),
            };
            let mut keywords: Vec<String> = number.into_iter().collect();
            keywords.push(term);
            Some(json!({ "question": question, "answer": fact, "keywords": keywords }).to_string())
        })
}

/// What a sentence is about, as it writes it: an English sentence's grammatical subject (without its
/// article, at most five words), else its most specific term.
fn subject_term(sentence: &str) -> Option<String> {
    let subject = crate::wh::subject_of(sentence)
        .map(|s| {
            s.trim_start_matches("the ")
                .trim_start_matches("a ")
                .to_string()
        })
        .filter(|s| (1..=5).contains(&s.split_whitespace().count()));
    subject.or_else(|| salient(sentence).into_iter().find(|w| is_term(w)))
}

/// A word that can stand for a topic in "how X relates to Y": letters only (no URL, file or number),
/// five or more in English; two or more CJK characters and no function character in Chinese.
fn is_term(word: &str) -> bool {
    if word.chars().any(ragtester_text::is_cjk) {
        word.chars().count() >= 2
            && !word.starts_with('一')
            && !word
                .chars()
                .any(|c| "的了是在和与或及这那个们么呢吧就都也还来去".contains(c))
    } else {
        word.chars().count() >= 5 && word.chars().all(char::is_alphabetic)
    }
}

/// Why the section could only be asked as a fill-in-the-blank, said in the reply (`cloze_reason`) so the
/// suite report can give it.
fn why_cloze(facts: &[String], zh: bool) -> String {
    if facts.iter().all(|f| is_zh_text(f) != zh) {
        "the question must be in the other language than the section, and the offline writer does not \
         translate"
            .to_string()
    } else {
        format!(
            "none of the section's {} fact sentences has a structure the offline writer turns into a \
             question (a question it answers, a definition, a figure with its subject, an agent, a date, a \
             place); a model as the writer (--llm) asks it properly",
            facts.len()
        )
    }
}

/// The last resort, a cloze: a question answered by one sentence: a blanked figure when it has one, else what it says about its terms.
/// Positive questions do not name the document: users do not, and retrieval has to find the right one.
fn single_fact(sentence: &str, zh: bool, why: &str) -> Result<String> {
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
            json!({ "question": question, "answer": sentence, "keywords": keywords,
            "cloze_reason": why })
            .to_string(),
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
    Ok(
        json!({ "question": question, "answer": sentence, "keywords": keywords,
        "cloze_reason": why })
        .to_string(),
    )
}

/// A question worded from the sentence itself but asking what it does not give: the figure before the
/// current one, or who decided it and when. Retrieval finds the sentence; only the earlier figure, the
/// decider or the year would answer, and the document (checked) names none of them.
fn near_miss(sentence: &str, document: &str, language: &str, seed: u64) -> serde_json::Value {
    let zh = language == "zh";
    let lower = document.to_lowercase();
    let stated = sentence.trim_end_matches(['.', '。', '!', '！', '?', '？']);
    let history = ["previous", "changed", "formerly", "此前", "之前", "改为"]
        .iter()
        .any(|w| lower.contains(w));
    let decided = ["decided", "决定"].iter().any(|w| lower.contains(w));
    let numeric = first_number(sentence).is_some();
    let ask_history = numeric && !history && (seed.is_multiple_of(2) || decided);
    let question = match (ask_history, zh) {
        (true, false) => {
            format!("What was the figure before it was last changed, in: \"{stated}\"?")
        }
        (true, true) => format!("在最近一次修改之前，这句话中的数值是多少：“{stated}”"),
        (false, false) => format!("Who decided that \"{stated}\", and in which year?"),
        (false, true) => format!("是谁在哪一年决定“{stated}”的？"),
    };
    json!({ "question": question, "answer": refusal_for(language), "keywords": [] })
}

/// A question presuming the sentence with its figure changed; the answer corrects it from the sentence.
fn false_premise(sentence: &str, zh: bool) -> Result<serde_json::Value> {
    let Some(number) = first_number(sentence) else {
        bail!("the sentence states no figure");
    };
    let wrong = altered(&number);
    let claim = sentence
        .replacen(&number, &wrong, 1)
        .trim_end_matches(['.', '。', '!', '！'])
        .to_string();
    let (question, answer) = if zh {
        (format!("为什么{claim}？"), format!("前提有误：{sentence}"))
    } else {
        let mut chars = claim.chars();
        let lowered = match chars.next() {
            // Lower-case the opening word unless it is a name or an acronym (a capital follows).
            Some(c) if chars.clone().next().is_some_and(char::is_lowercase) => {
                c.to_lowercase().chain(chars).collect()
            }
            _ => claim.clone(),
        };
        (
            format!("Why is it that {lowered}?"),
            format!("The premise is false: {sentence}"),
        )
    };
    Ok(
        json!({ "question": question, "answer": answer, "keywords": [number], "false_claim": claim }),
    )
}

/// A different figure of the same shape: years move by three, other numbers double (or gain one when 0).
fn altered(number: &str) -> String {
    let plain: String = number.chars().filter(|c| *c != ',').collect();
    if let Ok(n) = plain.parse::<u64>() {
        return if (1900..=2100).contains(&n) && plain.len() == 4 {
            (n + 3).to_string()
        } else if n == 0 {
            "1".to_string()
        } else {
            (n * 2).to_string()
        };
    }
    match plain.parse::<f64>() {
        Ok(x) => {
            let decimals = plain.split('.').nth(1).map_or(0, str::len);
            format!("{:.*}", decimals, if x == 0.0 { 1.0 } else { x * 2.0 })
        }
        Err(_) => format!("{plain}0"),
    }
}

/// One question needing every passage: what each says about its most specific term.
fn multi_passage(passages: &[String], zh: bool) -> Result<String> {
    if passages.len() < 2 {
        bail!("a multi-passage question needs at least two passages");
    }
    // Each passage's topic is a word no other passage uses, so the question cannot be answered from one.
    let lowered: Vec<String> = passages.iter().map(|p| p.to_lowercase()).collect();
    let mut sentences = Vec::new();
    let mut topics: Vec<String> = Vec::new();
    for (i, passage) in passages.iter().enumerate() {
        let own = |w: &String| {
            !topics.contains(w)
                && lowered
                    .iter()
                    .enumerate()
                    .all(|(j, other)| j == i || !other.contains(w.as_str()))
        };
        let Some((fact, topic)) = fact_sentences(passage)
            .into_iter()
            .find_map(|s| salient(&s).into_iter().find(own).map(|w| (s, w)))
        else {
            bail!("passage {} has no fact of its own to ask about", i + 1);
        };
        sentences.push(fact);
        topics.push(topic);
    }
    let question = if zh {
        let named: Vec<String> = topics.iter().map(|t| format!("“{t}”")).collect();
        format!("关于{}，资料中分别有什么说明？", named.join("和"))
    } else {
        let named: Vec<String> = topics.iter().map(|t| format!("the {t}")).collect();
        format!("What is stated about {}?", named.join(" and about "))
    };
    let joiner = if sentences.iter().all(|s| is_zh_text(s)) {
        ""
    } else {
        " "
    };
    Ok(
        json!({ "question": question, "answer": sentences.join(joiner), "keywords": topics })
            .to_string(),
    )
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
            // A short sentence is worth a question when it states a figure: "The yearly fee is $35."
            let figure = s.chars().any(|c| c.is_ascii_digit());
            let long_enough = if is_zh_text(&s) {
                s.chars().count() >= 10 || (figure && s.chars().count() >= 6)
            } else {
                w.len() >= 4 || (figure && w.len() >= 2)
            };
            if !long_enough
                || is_heading(&s)
                || !is_askable_sentence(&s)
                || s.starts_with("- ") && w.len() < 3
            {
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
            .map(|c| if ragtester_text::is_cjk(c) { 3 } else { 1 })
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
            passages: Vec::new(),
        };
        serde_json::from_str(&write_question(&hint).unwrap()).unwrap()
    }

    #[test]
    fn near_miss_reuses_the_sentence_and_expects_refusal() {
        let v = ask(
            QuestionKind::NearMiss,
            "The relief valve opens at 4.5 bar during normal operation.",
            "en",
        );
        assert_eq!(
            v["question"],
            "What was the figure before it was last changed, in: \"The relief valve opens at 4.5 bar during normal operation\"?"
        );
        assert_eq!(v["answer"], ragtester_text::REFUSAL_EN);
        let v = ask(
            QuestionKind::NearMiss,
            "泵壳由铸铁和青铜制成，出厂前经过检验。",
            "zh",
        );
        assert!(
            v["question"]
                .as_str()
                .unwrap()
                .starts_with("是谁在哪一年决定")
        );
    }

    #[test]
    fn false_premise_changes_the_figure_and_answers_with_the_correction() {
        let v = ask(
            QuestionKind::FalsePremise,
            "The relief valve opens at 4.5 bar. It was installed in 2019.",
            "en",
        );
        assert_eq!(
            v["question"],
            "Why is it that the relief valve opens at 9.0 bar?"
        );
        assert_eq!(v["false_claim"], "The relief valve opens at 9.0 bar");
        assert_eq!(
            v["answer"],
            "The premise is false: The relief valve opens at 4.5 bar."
        );
        assert_eq!(v["keywords"][0], "4.5");
        assert_eq!(altered("2019"), "2022");
        assert_eq!(altered("1,200"), "2400");
        let v = ask(QuestionKind::FalsePremise, "水泵每分钟输送40升水。", "zh");
        assert_eq!(v["question"], "为什么水泵每分钟输送80升水？");
        assert!(
            ask_err(
                QuestionKind::FalsePremise,
                "The housing is cast iron and bronze."
            )
            .contains("no figure")
        );
    }

    #[test]
    fn multi_passage_needs_a_fact_from_each_passage() {
        let hint = TaskHint::Question {
            kind: QuestionKind::MultiPassage,
            title: "t".into(),
            section: String::new(),
            language: "en".into(),
            document: String::new(),
            seed: 0,
            passages: vec![
                "The relief valve opens at 4.5 bar.".into(),
                "Bearings are lubricated with lithium grease every quarter.".into(),
            ],
        };
        let v: serde_json::Value = serde_json::from_str(&write_question(&hint).unwrap()).unwrap();
        let answer = v["answer"].as_str().unwrap();
        assert!(answer.contains("4.5 bar") && answer.contains("lithium grease"));
        let q = v["question"].as_str().unwrap();
        assert!(
            q.starts_with("What is stated about the ") && q.contains(" and about the "),
            "{q}"
        );
    }

    fn ask_err(kind: QuestionKind, section: &str) -> String {
        let hint = TaskHint::Question {
            kind,
            title: "t".into(),
            section: section.into(),
            language: "en".into(),
            document: section.into(),
            seed: 0,
            passages: Vec::new(),
        };
        write_question(&hint).unwrap_err().to_string()
    }

    #[test]
    fn a_fact_becomes_the_question_a_user_would_ask() {
        let v = ask(
            QuestionKind::Answerable,
            "Overview\n\nThe relief valve opens at 4.5 bar during normal operation.",
            "en",
        );
        assert_eq!(
            v["question"],
            "At what pressure does the relief valve open during normal operation?"
        );
        assert_eq!(
            v["answer"],
            "The relief valve opens at 4.5 bar during normal operation."
        );
        assert_eq!(v["keywords"][0], "4.5");
        let v = ask(QuestionKind::Answerable, "水泵每分钟输送40升水。", "zh");
        assert_eq!(v["question"], "水泵每分钟输送多少升水？");
    }

    #[test]
    fn a_faq_section_gives_its_own_question() {
        let v = ask(
            QuestionKind::Answerable,
            "2.1 What is R? R is a system for statistical computation and graphics. It consists of a language.",
            "en",
        );
        assert_eq!(v["question"], "What is R?");
        assert_eq!(
            v["answer"],
            "R is a system for statistical computation and graphics."
        );
        let v = ask(
            QuestionKind::Answerable,
            "5 什么是 TeX ？ TeX 是高德纳教授编写的排版软件，现在被广泛使用。",
            "zh",
        );
        assert_eq!(v["question"], "什么是 TeX ？");
    }

    #[test]
    fn cloze_is_the_last_resort() {
        // No structure the writer recognises: a blanked figure, shown as such.
        let v = ask(
            QuestionKind::Answerable,
            "Please keep at least 2 spare filters in stock at all times.",
            "en",
        );
        assert_eq!(
            v["question"],
            "What figure fills the blank in: \"Please keep at least ____ spare filters in stock at all times.\"?"
        );
        assert_eq!(v["keywords"][0], "2");
        let why = v["cloze_reason"].as_str().unwrap();
        assert!(
            why.contains("none of the section's 1 fact sentences"),
            "{why}"
        );
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
        assert_eq!(v["answer"], ragtester_text::REFUSAL_EN);
    }

    #[test]
    fn cross_lingual_asks_an_ordinary_question_naming_the_subject() {
        let v = ask(
            QuestionKind::Answerable,
            "The pump housing is made of cast iron and bronze.",
            "zh",
        );
        assert_eq!(v["question"], "关于“pump housing”有哪些说明？");
        assert!(v.get("cloze_reason").is_none());
        let v = ask(
            QuestionKind::Answerable,
            "The relief valve opens at 4.5 bar.",
            "zh",
        );
        assert_eq!(v["question"], "“relief valve”对应的数值是多少？");
        assert_eq!(v["keywords"][0], "4.5");
        let v = ask(QuestionKind::Answerable, "主驱动每24个月大修一次。", "en");
        let q = v["question"].as_str().unwrap();
        assert!(q.starts_with("What figure is given for “"), "{q}");
        assert!(!crate::writer::tests::is_cloze(q), "{q}");
    }

    #[test]
    fn complex_takes_a_faq_answer_of_two_sentences() {
        let v = ask(
            QuestionKind::Complex,
            "How is the impeller protected? The impeller is balanced dynamically before assembly. Bearings are lubricated with lithium grease every quarter.",
            "en",
        );
        assert_eq!(v["question"], "How is the impeller protected?");
        let answer = v["answer"].as_str().unwrap();
        assert!(
            answer.contains("impeller") && answer.contains("Bearings"),
            "{answer}"
        );
    }

    fn is_cloze(question: &str) -> bool {
        question.contains("____") || question.contains("空缺")
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
            passages: Vec::new(),
        };
        assert!(write_question(&hint).is_err());
    }
}
