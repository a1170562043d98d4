//! English questions: the auxiliary moves to the front ("What is …", "When was …", "How many … does …"), or
//! the subject is asked for with the clause kept as it stands.

use super::Wh;

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
    (&["v", "volt", "volts", "kv", "mv"], "voltage"),
    (&["a", "amp", "amps", "ampere", "amperes", "ma"], "current"),
    (&["w", "kw", "watt", "watts", "mw"], "power"),
    (&["hz", "khz", "mhz", "ghz", "rpm"], "frequency"),
    (&["kg", "g", "mg", "tonnes", "tons", "lb", "lbs"], "weight"),
    (
        &[
            "m", "cm", "mm", "km", "metre", "metres", "meter", "meters", "inch", "inches", "feet",
            "ft",
        ],
        "length",
    ),
    (
        &[
            "l", "ml", "litre", "litres", "liter", "liters", "m³", "gallons",
        ],
        "volume",
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

pub(super) fn english(sentence: &str) -> Option<Wh> {
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
    if v == 1 && noun_after_a_bare_modifier(tokens, &lower) {
        return false;
    }
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

/// After one bare word opening the sentence, a word that reads as a verb is often the head noun it
/// modifies or a participle of a reduced relative clause, the verb coming later: "Guide dogs travel free"
/// (not "What dogs travel free?"), "Students enrolled at a university pay 29 euros" (not "What enrolled at
/// a university pay…?"). An -s word followed by another content word, or an -ed word after a bare plural
/// and before a preposition, is not taken for the verb; a question is lost rather than garbled.
fn noun_after_a_bare_modifier(tokens: &[&str], candidate: &str) -> bool {
    let first = tokens[0].to_lowercase();
    if DETERMINERS.contains(&first.as_str()) || OPENERS.contains(&first.as_str()) {
        return false;
    }
    let Some(next) = tokens.get(2).map(|n| n.to_lowercase()) else {
        return false;
    };
    let function_word = |w: &str| {
        PREPOSITIONS.contains(&w)
            || DETERMINERS.contains(&w)
            || AUXILIARIES.contains(&w)
            || ["and", "or", "not", "no", "only", "also"].contains(&w)
    };
    let content = next.chars().all(char::is_alphabetic) && !next.ends_with("ly");
    if candidate.ends_with('s') {
        content && !function_word(&next)
    } else {
        candidate.ends_with("ed") && first.ends_with('s') && PREPOSITIONS.contains(&next.as_str())
    }
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
pub(super) fn split_at_auxiliary<'a>(
    tokens: &[&'a str],
) -> Option<(&'a str, String, Vec<&'a str>)> {
    let k = tokens
        .iter()
        .position(|t| AUXILIARIES.contains(&t.to_lowercase().as_str()))?;
    let subject = &tokens[..k];
    // "The site follows the code and is inspected by…": the auxiliary opens the second of two predicates,
    // whose subject is the first one's ("The site"), not everything before "and".
    if let Some((last, first_predicate)) = subject.split_last()
        && matches!(last.to_lowercase().as_str(), "and" | "or" | "but")
    {
        let (shared, _, _) = split_at_present_verb(first_predicate)?;
        return Some((tokens[k], shared, tokens[k + 1..].to_vec()));
    }
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
                // "3 tram lines": a singular word before a plural one modifies it; count the pair.
                let counted = match rest.get(n + 2).map(|w| w.trim_end_matches([',', ';'])) {
                    Some(head)
                        if !u.ends_with('s')
                            && head.len() > 3
                            && head.ends_with('s')
                            && head.chars().all(|c| c.is_ascii_lowercase()) =>
                    {
                        format!("{u} {head}")
                    }
                    _ => u.to_string(),
                };
                format!("How many {counted} {does} {subject_q} {base}{tail}?")
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
pub(super) fn split_at_present_verb<'a>(
    tokens: &[&'a str],
) -> Option<(String, &'a str, Vec<&'a str>)> {
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
            // Up to the end of its clause: ", and the pump stops…" is another statement, not the tail.
            let clause = rest[skip..]
                .iter()
                .position(|t| t.ends_with([',', ';']))
                .map_or(rest.len(), |end| skip + end + 1);
            let tail = rest[skip..clause].join(" ");
            format!(" {}", tail.trim_end_matches([',', ';']))
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
                // "what number of cycles"; a unit written singular after its number is counted plural.
                let plural = if unit.ends_with('s') { "" } else { "s" };
                format!("number of {unit}{plural}")
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
pub(super) fn lower_first(subject: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::super::testing::{asked, q};

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
    fn units_and_counted_things_read_as_a_person_writes_them() {
        // A unit written singular after its number ("24 volt") is still a measure.
        assert_eq!(
            asked("The pump runs on 24 volt direct current."),
            "On what voltage does the pump run?"
        );
        // A noun before a plural noun modifies it: the lines are counted, not "tram".
        assert_eq!(
            asked("Lumen City Transit operates 3 tram lines, 14 bus routes and one cable car."),
            "How many tram lines does Lumen City Transit operate?"
        );
        // The question's tail ends with its clause.
        assert_eq!(
            asked(
                "Flow falls to 2,400 litres per hour at a head of 3 metres, and the pump stops at 7.2 metres."
            ),
            "To what volume does Flow fall per hour at a head of 3 metres?"
        );
    }

    #[test]
    fn vague_or_unrecognised_sentences_give_no_question() {
        assert_eq!(q("It is a system for statistics."), None);
        assert_eq!(q("This was decided by the committee in 2019."), None);
        assert_eq!(q("Please send feedback to the maintainers."), None);
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
        // A bare word's head noun or reduced relative clause is no verb.
        assert_eq!(q("Guide dogs travel free at all times."), None);
        let garbled = |sentence: &str, opening: &str| {
            q(sentence).is_some_and(|(question, _)| question.starts_with(opening))
        };
        assert!(!garbled(
            "Students enrolled at a Lumen university pay 29 euros with a valid student card.",
            "What enrolled"
        ));
        // A verb after a bare subject still is one.
        assert_eq!(
            asked("Lumen operates 3 tram lines."),
            "How many tram lines does Lumen operate?"
        );
        assert_eq!(
            asked("Payment requires a valid card at every gate."),
            "What requires a valid card at every gate?"
        );
    }

    #[test]
    fn a_second_predicate_asks_about_the_first_ones_subject() {
        assert_eq!(
            asked(
                "The site follows the regional safety code and is inspected by an external auditor."
            ),
            "Who is the site inspected by?"
        );
    }
}
