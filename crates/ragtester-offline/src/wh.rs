//! Questions a user would ask, written offline from a sentence's structure: "What is X?" for a definition,
//! "How many …", "At what pressure …", "When was …" for a quantity, "Why …" for a cause, "How do you …"
//! for a procedure. English questions move the auxiliary to the front; Chinese ones keep the sentence's
//! order and put the question word where the answer stands (多少, 哪一年, 什么), as Chinese does. A sentence
//! whose structure is not recognised gives none, and the writer falls back to a labelled cloze.

use ragtester_core::text::is_cjk;

/// A question and what a correct answer must contain.
#[derive(Debug, Clone, PartialEq)]
pub struct Wh {
    pub question: String,
    /// `definition`, `quantity`, `time`, `cause`, `procedure` or `detail`.
    pub form: &'static str,
    pub keywords: Vec<String>,
}

/// The subject of an English sentence, when its structure shows one ("the alpha motor").
pub fn subject_of(sentence: &str) -> Option<String> {
    if sentence.chars().any(is_cjk) {
        return None;
    }
    let tokens: Vec<&str> = sentence.split_whitespace().collect();
    if tokens.len() < 3 {
        return None;
    }
    let subject = split_at_auxiliary(&tokens)
        .map(|(_, subject, _)| subject)
        .or_else(|| split_at_present_verb(&tokens).map(|(subject, _, _)| subject))?;
    Some(lower_first(&subject))
}

/// The question a sentence answers, in the sentence's language.
pub fn question_for(sentence: &str) -> Option<Wh> {
    if sentence.chars().any(is_cjk) {
        return chinese(sentence);
    }
    // A sentence surely in another language gets none (the writer's grammar is English and Chinese): it
    // falls back to a labelled cloze rather than English grammar applied to German. A short English
    // sentence whatlang is unsure about stays English.
    match ragtester_core::text::confident_language(sentence) {
        Some("en") | None => english(sentence),
        Some(_) => None,
    }
}

const AUXILIARIES: &[&str] = &[
    "is", "are", "was", "were", "can", "must", "should", "will", "may", "could", "would", "has",
    "have", "cannot",
];
/// Subjects a question cannot stand on: "What is it?" asks nothing.
const VAGUE_SUBJECTS: &[&str] = &[
    "it", "this", "that", "they", "these", "those", "he", "she", "we", "you", "there", "i", "one",
    "which", "such", "here", "all", "some", "each", "what",
];
const PREPOSITIONS: &[&str] = &[
    "at", "to", "in", "on", "for", "from", "by", "with", "within", "under", "over", "after",
    "before", "during", "of", "into", "per", "up",
];
const IRREGULAR_PARTICIPLES: &[&str] = &[
    "made", "built", "written", "given", "taken", "known", "shown", "held", "kept", "set", "sent",
    "found", "done", "run", "put", "read", "sold", "told", "paid", "left", "meant", "chosen",
    "driven", "drawn", "grown", "seen", "spent", "split", "shut", "bound", "laid", "led",
];
/// Units and the quantity a question asks for ("At what pressure …").
const MEASURES: &[(&[&str], &str)] = &[
    (
        &["bar", "psi", "pa", "kpa", "mpa", "hpa", "atm"],
        "pressure",
    ),
    (&["°c", "°f", "degrees", "kelvin", "k"], "temperature"),
    (&["v", "volts", "kv", "mv"], "voltage"),
    (&["a", "amps", "amperes", "ma"], "current"),
    (&["w", "kw", "watts", "mw"], "power"),
    (&["hz", "khz", "mhz", "ghz", "rpm"], "frequency"),
    (&["kg", "g", "mg", "tonnes", "tons", "lb", "lbs"], "weight"),
    (
        &[
            "m", "cm", "mm", "km", "metres", "meters", "inches", "feet", "ft",
        ],
        "length",
    ),
    (&["%", "percent", "per cent"], "percentage"),
    (
        &["mb", "gb", "kb", "tb", "bytes", "megabytes", "gigabytes"],
        "size",
    ),
];
const TIME_UNITS: &[&str] = &[
    "seconds", "second", "minutes", "minute", "hours", "hour", "days", "day", "weeks", "week",
    "months", "month", "years", "year", "ms", "s", "h", "min",
];

fn english(sentence: &str) -> Option<Wh> {
    let body = sentence
        .trim()
        .trim_end_matches(['.', '!', ';', ':'])
        .trim();
    let tokens: Vec<&str> = body.split_whitespace().collect();
    if tokens.len() < 4 || tokens.len() > 40 {
        return None;
    }
    procedure(&tokens)
        .or_else(|| condition(&tokens))
        .or_else(|| imperative(&tokens))
        .or_else(|| after_intro(&tokens))
        .or_else(|| clause_question(body, &tokens))
}

/// The questions a clause of its own gives, most specific first.
fn clause_question(body: &str, tokens: &[&str]) -> Option<Wh> {
    cause(body)
        .or_else(|| with_auxiliary(tokens))
        .or_else(|| with_present_verb(tokens))
        .or_else(|| about_the_subject(tokens))
}

/// "If the file is missing, R starts with an empty workspace." → "What happens if the file is missing?"
fn condition(tokens: &[&str]) -> Option<Wh> {
    let opener = tokens[0].to_lowercase();
    if !["if", "when", "whenever"].contains(&opener.as_str()) {
        return None;
    }
    let comma = tokens.iter().position(|t| t.ends_with(','))?;
    if !(2..=14).contains(&comma) || tokens.len() - comma < 3 {
        return None;
    }
    let mut clause: Vec<&str> = tokens[1..=comma].to_vec();
    let last = clause.len() - 1;
    clause[last] = clause[last].trim_end_matches(',');
    Some(Wh {
        question: format!("What happens {opener} {}?", clause.join(" ")),
        form: "condition",
        keywords: content_words(&tokens[comma + 1..], 3),
    })
}

/// "Use as.character(NA) to create a missing character value." → "How do you create a missing character
/// value?"
fn imperative(tokens: &[&str]) -> Option<Wh> {
    const VERBS: &[&str] = &[
        "Use", "Run", "Type", "Set", "Add", "Call", "Install", "Click", "Select", "Open", "Enter",
        "Press", "Edit", "Change", "Create", "Remove", "Delete", "Put", "Specify", "Load",
        "Define", "Pass", "Start", "Choose",
    ];
    if !VERBS.contains(&tokens[0]) {
        return None;
    }
    let to = tokens.iter().position(|t| *t == "to")?;
    let goal: Vec<&str> = tokens[to + 1..]
        .iter()
        .take_while(|t| !t.ends_with(','))
        .copied()
        .collect();
    if goal.len() < 2 || goal.len() > 12 || !goal[0].chars().all(char::is_lowercase) {
        return None;
    }
    Some(Wh {
        question: format!("How do you {}?", goal.join(" ")),
        form: "procedure",
        keywords: content_words(&tokens[1..to], 3),
    })
}

/// "By default, dump() writes code that …" → "By default, what writes code that …?": a short opening
/// phrase kept in front of the clause's own question.
fn after_intro(tokens: &[&str]) -> Option<Wh> {
    const INTROS: &[&str] = &[
        "By",
        "In",
        "On",
        "For",
        "With",
        "At",
        "Under",
        "From",
        "After",
        "Before",
        "During",
        "Unlike",
        "Like",
        "Currently",
        "Today",
        "Normally",
        "Usually",
        "Typically",
        "Historically",
    ];
    if !INTROS.contains(&tokens[0]) {
        return None;
    }
    let comma = tokens.iter().position(|t| t.ends_with(','))?;
    if comma > 5 || tokens.len() - comma < 4 {
        return None;
    }
    let rest = &tokens[comma + 1..];
    let inner = clause_question(&rest.join(" "), rest)?;
    // The clause's question opens with a question word, lower-cased after the opening phrase.
    let question = match inner.question.get(..1) {
        Some(first) => format!("{}{}", first.to_lowercase(), &inner.question[1..]),
        None => return None,
    };
    Some(Wh {
        question: format!("{} {question}", tokens[..=comma].join(" ")),
        ..inner
    })
}

/// The subject asked for, the rest of the clause kept: "Ross Ihaka and Robert Gentleman developed R." →
/// "Who developed R?"; "The GPL permits all use of the package." → "What permits all use of the package?"
/// English asks for a subject without moving anything, so any clause whose verb is found gives one.
fn about_the_subject(tokens: &[&str]) -> Option<Wh> {
    let v = (1..tokens.len().min(7)).find(|&v| is_finite_verb(tokens, v))?;
    let subject = &tokens[..v];
    if !good_subject(subject) || !subject.iter().any(|t| t.chars().count() >= 3) {
        return None;
    }
    // The clause up to its first comma or relative clause: a question, not a paragraph.
    let mut rest: Vec<&str> = Vec::new();
    for t in &tokens[v..] {
        let lower = t.to_lowercase();
        if !rest.is_empty()
            && ["which", "where", "whereas", "while", "but", "although"].contains(&lower.as_str())
        {
            break;
        }
        rest.push(t.trim_end_matches([',', ';', ':']));
        if t.ends_with([',', ';', ':']) {
            break;
        }
    }
    if rest.len() < 3 || rest.len() > 16 {
        return None;
    }
    // "The down side is that …": a copula followed by a clause asks nothing a reader would.
    let copula = ["is", "are", "was", "were"].contains(&rest[0].to_lowercase().as_str());
    let clause_follows = [
        "that", "to", "not", "also", "because", "when", "if", "why", "how", "what", "where", "so",
    ]
    .contains(&rest[1].to_lowercase().as_str());
    if copula && clause_follows {
        return None;
    }
    let person = subject.iter().all(|t| {
        *t == "and"
            || t.chars().next().is_some_and(char::is_uppercase) && !["The", "A", "An"].contains(t)
    }) && subject.len() >= 2;
    let who = if person { "Who" } else { "What" };
    Some(Wh {
        question: format!("{who} {}?", rest.join(" ")),
        form: "subject",
        keywords: content_words(subject, 3),
    })
}

/// Whether `tokens[v]` is the clause's finite verb: an auxiliary, or a lower-case word ending in -s or -ed
/// that does not follow a determiner, preposition or conjunction.
fn is_finite_verb(tokens: &[&str], v: usize) -> bool {
    let t = tokens[v];
    let lower = t.to_lowercase();
    if AUXILIARIES.contains(&lower.as_str()) && lower != "cannot" {
        return true;
    }
    let prev = tokens[v - 1].to_lowercase();
    // A plural noun before the verb ("Service intervals are …", "Bug reports on packages should …") is
    // not the verb: an auxiliary close after it is.
    if tokens
        .iter()
        .skip(v + 1)
        .take(4)
        .any(|n| AUXILIARIES.contains(&n.to_lowercase().as_str()))
    {
        return false;
    }
    let after_function_word = [
        "the", "a", "an", "of", "for", "and", "or", "its", "their", "to", "with", "in", "on", "by",
        "from", "this", "these", "all", "some", "many",
    ]
    .contains(&prev.as_str());
    t.chars().next().is_some_and(char::is_lowercase)
        && t.chars().all(char::is_alphabetic)
        && lower.len() > 3
        && (lower.ends_with('s')
            && !["ss", "us", "is", "ous", "ics"]
                .iter()
                .any(|e| lower.ends_with(e))
            || lower.ends_with("ed"))
        && !after_function_word
        && !PREPOSITIONS.contains(&lower.as_str())
}

/// "To install R, run the installer." → "How do you install R?"
fn procedure(tokens: &[&str]) -> Option<Wh> {
    let start = match tokens {
        ["To", ..] => 1,
        ["In", "order", "to", ..] => 3,
        _ => return None,
    };
    let end = tokens.iter().position(|t| t.ends_with(','))?;
    if end < start || end - start > 8 {
        return None;
    }
    let mut goal: Vec<&str> = tokens[start..=end].to_vec();
    let last = goal.len() - 1;
    goal[last] = goal[last].trim_end_matches(',');
    if VAGUE_SUBJECTS.contains(&goal[last].to_lowercase().as_str()) {
        return None;
    }
    let goal = goal.join(" ");
    Some(Wh {
        question: format!("How do you {goal}?"),
        form: "procedure",
        keywords: content_words(&tokens[end + 1..], 3),
    })
}

/// "The valve must be closed because the pump may run dry." → "Why must the valve be closed?"
fn cause(body: &str) -> Option<Wh> {
    let lower = body.to_lowercase();
    let at = [" because ", " since ", " due to ", " so that "]
        .iter()
        .filter_map(|m| lower.find(m).map(|i| (i, m.len())))
        .min()?;
    let main: Vec<&str> = body[..at.0].split_whitespace().collect();
    let reason: Vec<&str> = body[at.0 + at.1..].split_whitespace().collect();
    // The clause's own question, asked as "why": its subject and verb, without what it asked for.
    let (aux, subject, rest) = split_at_auxiliary(&main)
        .map(|(aux, subject, rest)| (aux.to_string(), subject, rest.join(" ")))
        .or_else(|| {
            let (subject, verb, rest) = split_at_present_verb(&main)?;
            Some((
                do_for(verb).to_string(),
                subject,
                format!("{} {}", base_form(verb), rest.join(" ")),
            ))
        })?;
    Some(Wh {
        question: format!("Why {aux} {} {}?", lower_first(&subject), rest.trim()),
        form: "cause",
        keywords: content_words(&reason, 3),
    })
}

/// Subject, auxiliary and the rest: "The maximum pressure | is | 4.5 bar".
fn split_at_auxiliary<'a>(tokens: &[&'a str]) -> Option<(&'a str, String, Vec<&'a str>)> {
    let k = tokens
        .iter()
        .position(|t| AUXILIARIES.contains(&t.to_lowercase().as_str()))?;
    let subject = &tokens[..k];
    if subject.is_empty() || subject.len() > 8 || !good_subject(subject) {
        return None;
    }
    Some((tokens[k], subject.join(" "), tokens[k + 1..].to_vec()))
}

fn good_subject(subject: &[&str]) -> bool {
    let first = subject[0].to_lowercase();
    !VAGUE_SUBJECTS.contains(&first.as_str())
        && !subject.iter().any(|t| t.ends_with(',') || t.contains('('))
        && subject.iter().any(|t| t.chars().any(char::is_alphabetic))
        && noun_phrase(subject)
}

/// Words that open a sentence without being its subject: imperatives, adverbs, conjunctions.
const OPENERS: &[&str] = &[
    "please",
    "note",
    "see",
    "use",
    "make",
    "also",
    "however",
    "then",
    "thus",
    "therefore",
    "now",
    "just",
    "only",
    "first",
    "finally",
    "if",
    "when",
    "although",
    "because",
    "since",
    "for",
    "in",
    "on",
    "at",
    "to",
    "after",
    "before",
    "as",
    "once",
    "unless",
    "do",
    "try",
    "check",
    "click",
    "run",
    "type",
    "add",
    "set",
    "install",
    "open",
    "read",
    "so",
    "but",
    "and",
    "or",
    "otherwise",
    "instead",
];
const DETERMINERS: &[&str] = &[
    "the", "a", "an", "every", "most", "many", "both", "our", "your", "its", "their", "no",
    "several", "two", "three", "other",
];

/// A subject that reads as a noun phrase: led by a determiner, or a name (capitalised words, `and`,
/// `of`), or one word that does not open a sentence as an imperative or adverb would.
fn noun_phrase(subject: &[&str]) -> bool {
    let first = subject[0].to_lowercase();
    if OPENERS.contains(&first.as_str()) {
        return false;
    }
    // Otherwise no preposition (bar `of`), adverb or number inside: "Service intervals", not "Please
    // keep at least 2 spare".
    DETERMINERS.contains(&first.as_str())
        || subject.len() == 1
        || subject.iter().skip(1).all(|t| {
            let lower = t.to_lowercase();
            (lower == "of" || !PREPOSITIONS.contains(&lower.as_str()))
                && !lower.ends_with("ly")
                && !t.chars().any(|c| c.is_ascii_digit())
        })
}

/// Questions on a subject and an auxiliary: definitions, quantities, passives.
fn with_auxiliary(tokens: &[&str]) -> Option<Wh> {
    let (aux, subject, rest) = split_at_auxiliary(tokens)?;
    let aux_lower = aux.to_lowercase();
    if aux_lower == "cannot" || rest.first().is_some_and(|t| *t == "not") {
        return None;
    }
    let subject_q = lower_first(&subject);
    let copula = matches!(aux_lower.as_str(), "is" | "are" | "was" | "were");
    let first = rest.first()?.to_lowercase();
    if copula && is_number(&first) {
        // "The maximum pressure is 4.5 bar (during start-up)." → "What is the maximum pressure (…)?"
        let tail = after_quantity(&rest);
        return Some(Wh {
            question: format!("What {aux_lower} {subject_q}{tail}?"),
            form: "quantity",
            keywords: quantity_keywords(&rest),
        });
    }
    if copula
        && matches!(first.as_str(), "a" | "an" | "the" | "one")
        && subject.split(' ').count() <= 5
    {
        // "R is a system for statistical computation." → "What is R?"
        return Some(Wh {
            question: format!("What {aux_lower} {subject_q}?"),
            form: "definition",
            keywords: content_words(&rest, 3),
        });
    }
    // Passives: "[be] PARTICIPLE PREP OBJECT" after the auxiliary.
    let skip = usize::from(!copula && first == "be");
    if !copula && skip == 0 {
        return None;
    }
    let participle = rest.get(skip)?;
    if !is_participle(participle) {
        return None;
    }
    let be = if skip == 1 { " be" } else { "" };
    let after = &rest[skip + 1..];
    let verb_phrase = format!("{subject_q}{be} {participle}");
    passive_question(&aux_lower, &verb_phrase, after)
}

/// A passive clause's question from what follows its participle.
fn passive_question(aux: &str, verb_phrase: &str, after: &[&str]) -> Option<Wh> {
    let prep = after.first()?.to_lowercase();
    let object = &after[1..];
    let object_first = object.first().map(|t| t.to_lowercase());
    let year = object_first
        .as_deref()
        .is_some_and(|t| t.len() == 4 && t.chars().all(|c| c.is_ascii_digit()));
    let wh = |question: String, form: &'static str| {
        Some(Wh {
            question,
            form,
            keywords: content_words(object, 3),
        })
    };
    match prep.as_str() {
        "in" | "on" if year => wh(format!("When {aux} {verb_phrase}?"), "time"),
        "every" => wh(format!("How often {aux} {verb_phrase}?"), "quantity"),
        "by" if object_first.as_deref().is_some_and(|t| t.ends_with("ing")) => {
            wh(format!("How {aux} {verb_phrase}?"), "procedure")
        }
        "by" => wh(format!("Who {aux} {verb_phrase} by?"), "detail"),
        "from" | "of" | "with" | "to" | "for" | "into" | "as" => {
            wh(format!("What {aux} {verb_phrase} {prep}?"), "detail")
        }
        "at" | "in" if object_first.as_deref().is_some_and(is_number) => {
            let measure = measure_of(object);
            wh(
                format!("At what {measure} {aux} {verb_phrase}?"),
                "quantity",
            )
        }
        _ => None,
    }
}

/// "The battery lasts 8 hours on a full charge." → "How many hours does the battery last on a full charge?"
fn with_present_verb(tokens: &[&str]) -> Option<Wh> {
    let (subject, verb, rest) = split_at_present_verb(tokens)?;
    let n = rest.iter().position(|t| is_number(&t.to_lowercase()))?;
    if n > 2 {
        return None;
    }
    let before: Vec<&str> = rest[..n].to_vec();
    let unit = rest.get(n + 1).map(|u| u.trim_end_matches([',', ';']));
    let tail = after_quantity(&rest[n..]);
    let does = do_for(verb);
    let base = base_form(verb);
    let subject_q = lower_first(&subject);
    let question = match before.as_slice() {
        [] => match unit {
            Some(u) if u.chars().all(char::is_alphabetic) && !PREPOSITIONS.contains(&u) => {
                format!("How many {u} {does} {subject_q} {base}{tail}?")
            }
            _ => return None,
        },
        [prep] if PREPOSITIONS.contains(&prep.to_lowercase().as_str()) => {
            let measure = measure_of(&rest[n..]);
            let prep = capitalise(&prep.to_lowercase());
            format!("{prep} what {measure} {does} {subject_q} {base}{tail}?")
        }
        _ => return None,
    };
    Some(Wh {
        question,
        form: "quantity",
        keywords: quantity_keywords(&rest[n..]),
    })
}

/// Subject, a verb in the present third person, and the rest: "The battery | lasts | 8 hours".
fn split_at_present_verb<'a>(tokens: &[&'a str]) -> Option<(String, &'a str, Vec<&'a str>)> {
    // The subject is a noun phrase of one to five words; the verb the first lower-case word after it
    // that ends in -s and does not follow a determiner or an adjective-like -al/-ic word.
    for v in 1..tokens.len().min(6) {
        let t = tokens[v];
        let prev = tokens[v - 1].to_lowercase();
        let lower = t.to_lowercase();
        if t.chars().next().is_some_and(char::is_lowercase)
            && lower.ends_with('s')
            && !lower.ends_with("ss")
            && !lower.ends_with("us")
            && !lower.ends_with("is")
            && lower.len() > 3
            && !["the", "a", "an", "of", "for", "and", "or", "its", "their"]
                .contains(&prev.as_str())
            && !AUXILIARIES.contains(&lower.as_str())
            && !PREPOSITIONS.contains(&lower.as_str())
        {
            let subject = &tokens[..v];
            if !good_subject(subject) {
                return None;
            }
            return Some((subject.join(" "), t, tokens[v + 1..].to_vec()));
        }
    }
    None
}

fn do_for(verb: &str) -> &'static str {
    if verb.to_lowercase().ends_with('s') {
        "does"
    } else {
        "do"
    }
}

/// "lasts" → "last", "passes" → "pass", "applies" → "apply".
fn base_form(verb: &str) -> String {
    let v = verb.to_lowercase();
    if let Some(stem) = v.strip_suffix("ies") {
        return format!("{stem}y");
    }
    for ending in ["sses", "shes", "ches", "xes", "zes", "oes"] {
        if v.ends_with(ending) {
            return v[..v.len() - 2].to_string();
        }
    }
    v.strip_suffix('s').unwrap_or(&v).to_string()
}

fn is_participle(word: &str) -> bool {
    let w = word.to_lowercase();
    (w.ends_with("ed") && w.len() > 4) || IRREGULAR_PARTICIPLES.contains(&w.as_str())
}

fn is_number(token: &str) -> bool {
    let t = token.trim_end_matches([',', ';', '%']);
    !t.is_empty()
        && t.chars().next().is_some_and(|c| c.is_ascii_digit())
        && t.chars()
            .all(|c| c.is_ascii_digit() || c == '.' || c == ',' || c == '–' || c == '-')
}

/// What follows a number and its unit, as a question's tail: " during start-up" (prepositional only).
fn after_quantity(rest: &[&str]) -> String {
    let skip = if rest
        .get(1)
        .is_some_and(|u| u.chars().all(|c| c.is_alphabetic() || c == '%'))
    {
        2
    } else {
        1
    };
    match rest.get(skip) {
        Some(p)
            if PREPOSITIONS.contains(&p.to_lowercase().as_str()) && p.to_lowercase() != "of" =>
        {
            format!(" {}", rest[skip..].join(" "))
        }
        _ => String::new(),
    }
}

/// "4.5 bar …" → "pressure"; an unknown unit is named itself ("what number of cycles").
fn measure_of(quantity: &[&str]) -> String {
    let unit = quantity
        .get(1)
        .map(|u| u.trim_end_matches([',', ';', '.']).to_lowercase())
        .unwrap_or_default();
    if TIME_UNITS.contains(&unit.as_str()) {
        return "time".to_string();
    }
    MEASURES
        .iter()
        .find(|(units, _)| units.contains(&unit.as_str()))
        .map(|(_, m)| m.to_string())
        .unwrap_or_else(|| {
            if unit.chars().all(char::is_alphabetic) && !unit.is_empty() {
                format!("number of {unit}")
            } else {
                "value".to_string()
            }
        })
}

fn quantity_keywords(quantity: &[&str]) -> Vec<String> {
    quantity
        .first()
        .map(|n| vec![n.trim_end_matches([',', ';', '.']).to_string()])
        .unwrap_or_default()
}

/// Up to `n` content words (four letters or more), in order.
fn content_words(tokens: &[&str], n: usize) -> Vec<String> {
    tokens
        .iter()
        .map(|t| t.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|t| t.chars().count() >= 4 && t.chars().any(char::is_alphabetic))
        .take(n)
        .map(str::to_string)
        .collect()
}

/// Lower-case a subject's opening word unless it is a name or an acronym ("The pump" → "the pump", "R").
fn lower_first(subject: &str) -> String {
    let mut words = subject.splitn(2, ' ');
    let first = words.next().unwrap_or("");
    let rest = words.next();
    let common = [
        "The", "A", "An", "Each", "Every", "Any", "Most", "Many", "Its", "Their", "Our", "Your",
    ];
    let first = if common.contains(&first) {
        first.to_lowercase()
    } else {
        first.to_string()
    };
    match rest {
        Some(rest) => format!("{first} {rest}"),
        None => first,
    }
}

fn capitalise(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

// Chinese: the question word takes the answer's place.

const ZH_DIGITS: &str = "零一二两三四五六七八九十百千万亿几";
const ZH_UNITS: &str = "个次小时分钟秒天日周月年岁米升克度伏安瓦巴倍份项台人元字行页位条种步";

/// Words that open a clause without being its topic.
const ZH_OPENERS: &[&str] = &[
    "而且",
    "而",
    "但是",
    "但",
    "因此",
    "所以",
    "另外",
    "此外",
    "同时",
    "然后",
    "并且",
    "例如",
    "比如",
    "其实",
    "当然",
    "总之",
    "首先",
    "其次",
    "最后",
    "目前",
    "现在",
    "通常",
    "一般来说",
    "不过",
    "那么",
];

fn chinese(sentence: &str) -> Option<Wh> {
    let body = sentence
        .trim()
        .trim_end_matches(['。', '！', '；', '：', '.']);
    let clauses: Vec<&str> = body
        .split(['，', ',', '；'])
        .map(|c| {
            let c = c.trim();
            ZH_OPENERS
                .iter()
                .find_map(|o| c.strip_prefix(o))
                .unwrap_or(c)
                .trim()
        })
        .filter(|c| c.chars().count() >= 2)
        .collect();
    zh_cause(&clauses)
        .or_else(|| zh_procedure(&clauses))
        .or_else(|| zh_condition(&clauses))
        .or_else(|| zh_quantity(&clauses))
        .or_else(|| zh_definition(&clauses))
        .or_else(|| zh_agent(&clauses))
        .or_else(|| zh_object(&clauses))
}

/// "如果A，B" / "当A时，B" → "如果A，会怎样？"
fn zh_condition(clauses: &[&str]) -> Option<Wh> {
    let first = clauses.first()?;
    let condition = ["如果", "假如", "若", "当"]
        .iter()
        .any(|p| first.starts_with(p));
    let result = clauses.get(1..)?.join("，");
    (condition && first.chars().count() >= 4 && result.chars().count() >= 4).then(|| Wh {
        question: format!("{first}，会怎样？"),
        form: "condition",
        keywords: vec![result.chars().take(8).collect()],
    })
}

/// A clause's topic: a noun phrase, not a conjunction, a modal or a pronoun.
fn zh_topic(topic: &str) -> bool {
    let n = topic.chars().count();
    let bad_start = [
        "如果", "可以", "然后", "但", "因此", "所以", "而", "并", "也", "还", "就", "你", "我",
        "他", "只要", "当", "在", "对于", "如", "若", "可", "这", "那", "它", "其", "此", "会",
        "能", "要", "需要", "不", "没有", "以上", "以下", "有时", "通常", "特别", "另一", "假设",
        "否则", "例如", "比如", "一般", "可能", "上述", "下面", "前面", "后面", "该", "每", "某",
    ];
    // A clause in the topic ("许多人利用 TeX") makes it no noun phrase.
    let verb_inside = ["可以", "利用", "通过", "使用", "需要", "可能", "你", "我们"]
        .iter()
        .any(|v| topic.contains(v));
    (2..=20).contains(&n) && !bad_start.iter().any(|b| topic.starts_with(b)) && !verb_inside
}

/// "更换工作由设备管理员负责" → "更换工作由谁负责？"
fn zh_agent(clauses: &[&str]) -> Option<Wh> {
    for clause in clauses {
        let Some(at) = clause.find('由') else {
            continue;
        };
        let (topic, after) = (&clause[..at], &clause[at + '由'.len_utf8()..]);
        // A verb inside a noun (管理员, 开发者) is not the clause's verb.
        let verb = [
            "负责", "提供", "完成", "开发", "维护", "编写", "管理", "审批", "批准", "执行",
        ]
        .iter()
        .flat_map(|v| after.match_indices(v))
        .filter(|(i, v)| {
            !after[i + v.len()..].starts_with(['员', '者', '人', '部', '处', '局', '方'])
        })
        .min()?;
        let agent = &after[..verb.0];
        if topic.chars().count() >= 2 && (1..=12).contains(&agent.chars().count()) {
            return Some(Wh {
                question: format!("{topic}由谁{}？", &after[verb.0..]),
                form: "subject",
                keywords: vec![agent.trim().to_string()],
            });
        }
    }
    None
}

/// "X提供了Y" / "X包括Y" / "X用于Y" → "X提供了什么？" …: the object asked for, the topic kept.
fn zh_object(clauses: &[&str]) -> Option<Wh> {
    const VERBS: &[(&str, &str)] = &[
        ("提供了", "什么"),
        ("提供", "什么"),
        ("包括", "哪些内容"),
        ("包含", "哪些内容"),
        ("用于", "什么"),
        ("支持", "什么"),
        ("需要", "什么"),
        ("使用", "什么"),
        ("采用", "什么"),
        ("称为", "什么"),
        ("叫做", "什么"),
        ("分为", "哪几类"),
        ("位于", "哪里"),
        ("允许", "什么"),
        ("负责", "什么"),
        ("带来了", "什么"),
        ("实现了", "什么"),
        ("解决了", "什么"),
        ("定义了", "什么"),
        ("推出了", "什么"),
        ("发布了", "什么"),
        ("表示", "什么"),
        ("代表", "什么"),
        ("规定", "什么"),
        ("产生", "什么"),
        ("生成", "什么"),
        ("影响", "什么"),
        ("设置", "什么"),
        ("修改", "什么"),
        ("调用", "什么"),
    ];
    clauses.iter().take(3).find_map(|clause| {
        let (at, verb, asked) = VERBS
            .iter()
            .filter_map(|(v, a)| clause.find(v).map(|i| (i, *v, *a)))
            .min_by_key(|(i, v, _)| (*i, std::cmp::Reverse(v.len())))?;
        let topic = clause[..at].trim();
        let object = clause[at + verb.len()..].trim();
        (zh_topic(topic) && object.chars().count() >= 2).then(|| Wh {
            question: format!("{topic}{verb}{asked}？"),
            form: "detail",
            keywords: vec![object.chars().take(8).collect()],
        })
    })
}

/// "因为A，所以B" / "由于A，B" → "为什么B？"
fn zh_cause(clauses: &[&str]) -> Option<Wh> {
    let first = clauses.first()?;
    let reason = first
        .strip_prefix("因为")
        .or_else(|| first.strip_prefix("由于"))?;
    let result = clauses.get(1..)?.join("，");
    let result = result.strip_prefix("所以").unwrap_or(&result).trim();
    (result.chars().count() >= 4).then(|| Wh {
        question: format!("为什么{result}？"),
        form: "cause",
        keywords: vec![reason.chars().take(8).collect()],
    })
}

/// "要A，请B" / "如需A，B" / "为了A，B" → "如何A？"
fn zh_procedure(clauses: &[&str]) -> Option<Wh> {
    let first = clauses.first()?;
    if ["要求", "要点", "要素", "要是", "要么"]
        .iter()
        .any(|w| first.starts_with(w))
    {
        return None;
    }
    let goal = ["如果要", "如需", "要想", "为了", "要"]
        .iter()
        .find_map(|p| first.strip_prefix(p))?;
    let steps = clauses.get(1..)?.join("，");
    (goal.chars().count() >= 2 && steps.chars().count() >= 4).then(|| Wh {
        question: format!("如何{goal}？"),
        form: "procedure",
        keywords: vec![steps.chars().take(8).collect()],
    })
}

/// The first figure of a clause replaced by 多少 (or a year by 哪一年), the clause kept as it stands.
fn zh_quantity(clauses: &[&str]) -> Option<Wh> {
    for (i, clause) in clauses.iter().enumerate() {
        let Some((start, end, figure)) = zh_figure(clause) else {
            continue;
        };
        let chars: Vec<char> = clause.chars().collect();
        let year = chars.get(end) == Some(&'年') && figure.chars().count() == 4;
        // An ordinal (第二个) is asked with 几, a year with 哪一年, any other figure with 多少.
        let ordinal = start > 0 && chars[start - 1] == '第';
        let (asked, rest_from) = match (year, ordinal) {
            (true, _) => ("哪一年", end + 1),
            (false, true) => ("几", end),
            (false, false) => ("多少", end),
        };
        let mut question: String = chars[..start].iter().collect();
        question.push_str(asked);
        question.extend(&chars[rest_from..]);
        // A later clause often has no subject of its own ("每次持续3小时"): the clauses before it say what
        // it is about.
        if i > 0 {
            question = format!("{}，{question}", clauses[..i].join("，"));
        }
        return Some(Wh {
            question: format!("{question}？"),
            form: if year { "time" } else { "quantity" },
            keywords: vec![figure],
        });
    }
    None
}

/// A figure (Arabic or Chinese numerals) followed by a unit: (start, end, figure) in chars.
fn zh_figure(clause: &str) -> Option<(usize, usize, String)> {
    // Numerals inside words that are not figures: 十分 (very), 一些 (some), 二次 (secondary) …
    const IDIOMS: &[&str] = &[
        "十分",
        "一些",
        "一下",
        "一起",
        "一般",
        "一直",
        "一定",
        "一旦",
        "一样",
        "一致",
        "万一",
        "二次",
        "一方面",
        "一切",
        "千万",
        "万分",
        "一再",
        "一律",
        "一共",
        "一点",
    ];
    let chars: Vec<char> = clause.chars().collect();
    let mut found: Option<(usize, usize)> = None;
    let mut i = 0;
    while i < chars.len() {
        let arabic = chars[i].is_ascii_digit();
        let rest: String = chars[i..chars.len().min(i + 3)].iter().collect();
        if !arabic && IDIOMS.iter().any(|w| rest.starts_with(w)) {
            i += 2;
            continue;
        }
        if arabic || ZH_DIGITS.contains(chars[i]) {
            let mut j = i;
            while j < chars.len()
                && (if arabic {
                    chars[j].is_ascii_digit()
                        || (chars[j] == '.' && chars.get(j + 1).is_some_and(char::is_ascii_digit))
                } else {
                    ZH_DIGITS.contains(chars[j])
                })
            {
                j += 1;
            }
            let unit_follows = chars
                .get(j)
                .is_some_and(|c| ZH_UNITS.contains(*c) || c.is_ascii_alphabetic() || *c == '%');
            // "一次" and "一个" usually mean "once" or "a": a figure only when no other is found.
            let lone_one = !arabic && j == i + 1 && matches!(chars[i], '一' | '两' | '几');
            if unit_follows && !lone_one {
                return Some((i, j, chars[i..j].iter().collect()));
            }
            if unit_follows && found.is_none() {
                found = Some((i, j));
            }
            i = j;
        } else {
            i += 1;
        }
    }
    let _ = found;
    None
}

/// "X是Y" with a short X → "X是什么？"; "X指Y" → "X指的是什么？"
fn zh_definition(clauses: &[&str]) -> Option<Wh> {
    let first = clauses.first()?;
    for (marker, asked) in [
        ("是指", "是指什么"),
        ("指的是", "指的是什么"),
        ("是", "是什么"),
    ] {
        if let Some(at) = first.find(marker) {
            let term = first[..at].trim();
            let definition = first[at + marker.len()..].trim();
            let n = term.chars().count();
            let vague = [
                "这", "那", "它", "他", "她", "我", "你", "其", "此", "但", "就", "也", "都", "还",
                "不",
            ]
            .iter()
            .any(|v| term.starts_with(v) || term.ends_with(v));
            if (2..=12).contains(&n) && definition.chars().count() >= 4 && !vague && zh_topic(term)
            {
                return Some(Wh {
                    question: format!("{term}{asked}？"),
                    form: "definition",
                    keywords: vec![definition.chars().take(8).collect()],
                });
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(sentence: &str) -> Option<(String, &'static str)> {
        question_for(sentence).map(|w| (w.question, w.form))
    }

    fn asked(sentence: &str) -> String {
        q(sentence).map(|(q, _)| q).unwrap_or_default()
    }

    #[test]
    fn english_definitions_quantities_times_causes_and_procedures() {
        assert_eq!(
            q("R is a system for statistical computation and graphics."),
            Some(("What is R?".into(), "definition"))
        );
        assert_eq!(
            q("The maximum working pressure is 4.5 bar during start-up."),
            Some((
                "What is the maximum working pressure during start-up?".into(),
                "quantity"
            ))
        );
        assert_eq!(
            asked("The battery lasts 8 hours on a full charge."),
            "How many hours does the battery last on a full charge?"
        );
        assert_eq!(
            asked("The relief valve opens at 4.5 bar during normal operation."),
            "At what pressure does the relief valve open during normal operation?"
        );
        assert_eq!(
            q("R was first released in 2000."),
            None,
            "an adverb between auxiliary and participle is not guessed at"
        );
        assert_eq!(
            q("The first version of R was released in 2000."),
            Some(("When was the first version of R released?".into(), "time"))
        );
        assert_eq!(
            asked("The seal must be replaced every 500 hours."),
            "How often must the seal be replaced?"
        );
        assert_eq!(
            asked("The pump housing is made of cast iron and bronze."),
            "What is the pump housing made of?"
        );
        assert_eq!(
            asked("The valve must be closed because the pump may run dry."),
            "Why must the valve be closed?"
        );
        assert_eq!(
            q("To install R on Debian, run apt-get install r-base."),
            Some(("How do you install R on Debian?".into(), "procedure"))
        );
        assert_eq!(
            asked("R can be installed by running the installer from CRAN."),
            "How can R be installed?"
        );
    }

    #[test]
    fn vague_or_unrecognised_sentences_give_no_question() {
        assert_eq!(q("It is a system for statistics."), None);
        assert_eq!(q("This was decided by the committee in 2019."), None);
        assert_eq!(q("Please send feedback to the maintainers."), None);
    }

    #[test]
    fn chinese_questions_put_the_question_word_in_place() {
        assert_eq!(
            q("离心机每运行五百小时必须更换一次密封圈。"),
            Some((
                "离心机每运行多少小时必须更换一次密封圈？".into(),
                "quantity"
            ))
        );
        assert_eq!(asked("水泵每分钟输送40升水。"), "水泵每分钟输送多少升水？");
        assert_eq!(
            q("温度传感器PT100的校准周期为六个月，校准记录保存在设备档案中。"),
            Some(("温度传感器PT100的校准周期为多少个月？".into(), "quantity"))
        );
        assert_eq!(
            q("该标准于2019年正式发布。"),
            Some(("该标准于哪一年正式发布？".into(), "time"))
        );
        assert_eq!(
            q("CTAN是全球TeX资源的综合存档网络。"),
            Some(("CTAN是什么？".into(), "definition"))
        );
        assert_eq!(
            q("由于转子出现裂纹，离心机必须立即停止使用。"),
            Some(("为什么离心机必须立即停止使用？".into(), "cause"))
        );
        assert_eq!(
            q("如需升级宏包，请运行包管理器并选择更新。"),
            Some(("如何升级宏包？".into(), "procedure"))
        );
        assert_eq!(q("它是一个很好的工具。"), None);
        assert_eq!(
            q("更换工作由设备管理员负责。"),
            Some(("更换工作由谁负责？".into(), "subject"))
        );
        assert_eq!(
            asked("balance 宏包提供了双栏底部对齐的功能。"),
            "balance 宏包提供了什么？"
        );
    }

    #[test]
    fn any_clause_with_a_verb_can_ask_for_its_subject() {
        assert_eq!(
            q("Ross Ihaka and Robert Gentleman developed R at the University of Auckland."),
            Some((
                "Who developed R at the University of Auckland?".into(),
                "subject"
            ))
        );
        assert_eq!(
            asked("The GPL permits all and any use of the package."),
            "What permits all and any use of the package?"
        );
        assert_eq!(q("It permits all use."), None);
    }
}
