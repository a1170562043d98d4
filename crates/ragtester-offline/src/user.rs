//! The offline simulated user: it reads the assistant's last answer and chooses its next move as a
//! person pursuing the goal would — satisfied when the answer gives something specific to what it asked
//! (new words on its topic, a figure where it asked for one), an answer to a clarifying question (with a
//! detail it knows: which product or document, never the fact it seeks), the goal asked again after a
//! refusal of what the documents answer, a correction after an answer to something else or a repeat of
//! its own words — and gives up after three corrections or two refusals. For a goal the documents cannot
//! meet it pushes once after a refusal, then accepts it. Each repeated move is worded afresh, so the user
//! never sends the same message twice.
//!
//! Like a person, it does not know the answer: it cannot tell a wrong figure from a right one. Whether the
//! goal was reached is the judge's call (`ragtester-judge`'s goals), against the expected answer.

use ragtester_core::{Goal, Message, Role, UserMove};
use ragtester_text::{facts, is_refusal, terms};
use std::collections::HashSet;

/// The user's next move and message after `transcript` (the assistant's answer last).
pub fn next_message(
    goal: &Goal,
    unanswerable: bool,
    language: &str,
    transcript: &[Message],
) -> (UserMove, String) {
    let zh = language == "zh";
    let last = transcript
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant)
        .map_or("", |m| m.content.as_str());
    let earlier = |wanted: UserMove| count_of(transcript, goal, wanted, zh);
    let refused = is_refusal(last);
    if unanswerable {
        return match (refused, earlier(UserMove::Insist)) {
            (true, 0) => say(UserMove::Insist, goal, zh, 0),
            _ => say(UserMove::Satisfied, goal, zh, 0),
        };
    }
    if !refused && !asks_back(last) && answers(last, goal, transcript) {
        return say(UserMove::Satisfied, goal, zh, 0);
    }
    if refused {
        let insisted = earlier(UserMove::Insist);
        return if insisted >= 1 {
            say(UserMove::GiveUp, goal, zh, 0)
        } else {
            say(UserMove::Insist, goal, zh, insisted)
        };
    }
    if asks_back(last) {
        let clarified = earlier(UserMove::Clarify);
        if clarified < 2 {
            return say(UserMove::Clarify, goal, zh, clarified);
        }
    }
    let corrected = earlier(UserMove::Correct);
    if corrected >= 3 {
        return say(UserMove::GiveUp, goal, zh, 0);
    }
    say(UserMove::Correct, goal, zh, corrected)
}

/// Words of a question that ask for a kind of answer, not what it is about.
const ASKING: &[&str] = &[
    "how", "long", "mani", "much", "old", "often", "when", "what", "which", "who", "whom", "whose",
    "where", "year", "time", "date", "tell", "me", "i", "you", "know", "want", "need", "pleas",
];
/// Questions whose answer is a figure: a duration, a count, an amount, a date or a time.
const FIGURE_QUESTIONS: &[&str] = &[
    "how long",
    "how many",
    "how much",
    "how old",
    "how often",
    "how far",
    "how big",
    "how heavy",
    "when",
    "what year",
    "what time",
    "what date",
    "多久",
    "多少",
    "多长",
    "多大",
    "多重",
    "几",
    "何时",
    "什么时候",
    "哪一年",
    "哪年",
];

/// Whether an answer gives what the user asked, as far as a person who does not know the answer can
/// tell: it says something the user did not (a repeat of the question is no answer), on the question's
/// own topic (a word of the goal beyond the details the user gives and the words that ask), and a
/// figure where the question asks for one ("How long…?" is not answered by "it is covered").
fn answers(answer: &str, goal: &Goal, transcript: &[Message]) -> bool {
    let user_terms: HashSet<String> = transcript
        .iter()
        .filter(|m| m.role == Role::User)
        .flat_map(|m| terms(&facts::normalise(&m.content)))
        .collect();
    let said: HashSet<String> = terms(&facts::normalise(answer)).into_iter().collect();
    if said.difference(&user_terms).count() < 2 {
        return false;
    }
    let details: HashSet<String> = goal
        .details
        .iter()
        .flat_map(|d| terms(&facts::normalise(d)))
        .collect();
    let topic: Vec<String> = terms(&facts::normalise(&goal.want))
        .into_iter()
        .filter(|t| !details.contains(t) && !ASKING.contains(&t.as_str()))
        .filter(|t| !FIGURE_QUESTIONS.iter().any(|q| q.contains(t.as_str())))
        .collect();
    let on_topic = topic.is_empty() || topic.iter().any(|t| said.contains(t));
    let want = goal.want.to_lowercase();
    let wants_figure = FIGURE_QUESTIONS.iter().any(|q| want.contains(q));
    on_topic && (!wants_figure || !facts::quantities(answer).is_empty())
}

/// A short answer that ends by asking the user something.
fn asks_back(answer: &str) -> bool {
    let answer = answer.trim();
    (answer.ends_with('?') || answer.ends_with('？')) && answer.chars().count() <= 300
}

/// How many of the user's earlier messages made `wanted` (told by their wording).
fn count_of(transcript: &[Message], goal: &Goal, wanted: UserMove, zh: bool) -> usize {
    let said: Vec<&str> = transcript
        .iter()
        .filter(|m| m.role == Role::User)
        .map(|m| m.content.as_str())
        .collect();
    (0..4)
        .filter(|n| said.contains(&say(wanted, goal, zh, *n).1.as_str()))
        .count()
}

/// The `n`-th wording of a move (0-based).
fn say(kind: UserMove, goal: &Goal, zh: bool, n: usize) -> (UserMove, String) {
    let want = goal.want.trim();
    let detail = goal.details.get(n).or(goal.details.first());
    let text = match (kind, zh) {
        (UserMove::Clarify, false) => match detail {
            Some(d) => format!("I mean {d}. {want}"),
            None => format!("I mean what I asked: {want}"),
        },
        (UserMove::Clarify, true) => match detail {
            Some(d) => format!("我说的是{d}。{want}"),
            None => format!("就是我问的：{want}"),
        },
        (UserMove::Insist, false) => {
            [
                "Please look in the documents again: ",
                "Are you sure? Once more: ",
            ][n.min(1)]
            .to_string()
                + want
        }
        (UserMove::Insist, true) => {
            ["请再查一下文档：", "你确定吗？再问一次："][n.min(1)].to_string() + want
        }
        (UserMove::Correct, false) => {
            [
                "That is not what I asked. ",
                "Still not what I asked. ",
                "No, that is something else. ",
                "That does not answer it either. ",
            ][n.min(3)]
            .to_string()
                + want
        }
        (UserMove::Correct, true) => {
            [
                "这不是我问的。",
                "还是没回答我的问题。",
                "不对，这是另一回事。",
                "这也没有回答。",
            ][n.min(3)]
            .to_string()
                + want
        }
        (UserMove::Satisfied, false) => "Thanks, that is what I needed.".to_string(),
        (UserMove::Satisfied, true) => "谢谢，这正是我要的。".to_string(),
        (UserMove::GiveUp, false) => "Never mind, I will look elsewhere.".to_string(),
        (UserMove::GiveUp, true) => "算了，我去别处找吧。".to_string(),
        (UserMove::Open, _) => want.to_string(),
    };
    (kind, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn goal() -> Goal {
        Goal {
            want: "How long is the battery warranty of the X2?".into(),
            persona: "a new owner".into(),
            max_turns: 5,
            details: vec!["the X2 scooter".into()],
        }
    }

    fn after(answers: &[&str]) -> Vec<Message> {
        let mut t = vec![Message::user(goal().want)];
        for (i, a) in answers.iter().enumerate() {
            if i > 0 {
                t.push(Message::user(format!("turn {i}")));
            }
            t.push(Message {
                role: Role::Assistant,
                content: a.to_string(),
            });
        }
        t
    }

    #[test]
    fn each_answer_gets_the_move_a_person_would_make() {
        let next = |answers: &[&str]| next_message(&goal(), false, "en", &after(answers)).0;
        assert_eq!(next(&["Which model do you mean?"]), UserMove::Clarify);
        assert_eq!(
            next(&["The battery warranty of the X2 lasts two years."]),
            UserMove::Satisfied
        );
        assert_eq!(next(&["The documents do not say."]), UserMove::Insist);
        assert_eq!(next(&["The X2 weighs 14 kg."]), UserMove::Correct);
        // It does not know the answer: a wrong figure reads as an answer to it (the judge tells them apart).
        assert_eq!(
            next(&["The X2 battery warranty lasts 36 months."]),
            UserMove::Satisfied
        );
        assert_eq!(
            next(&["The battery warranty covers the X2."]),
            UserMove::Correct,
            "asked how long, it wants a figure"
        );
        // Its own words said back are no answer.
        assert_ne!(next(&[goal().want.as_str()]), UserMove::Satisfied);
        assert_eq!(next(&["Battery warranty of the X2."]), UserMove::Correct);
        let (_, clarify) = next_message(&goal(), false, "en", &after(&["Which one?"]));
        assert!(clarify.contains("the X2 scooter"), "{clarify}");
    }

    #[test]
    fn it_gives_up_in_time_and_never_repeats_itself() {
        let mut transcript = vec![Message::user(goal().want)];
        let mut sent = vec![goal().want];
        for _ in 0..6 {
            transcript.push(Message {
                role: Role::Assistant,
                content: "The X2 weighs 14 kg.".into(),
            });
            let (kind, text) = next_message(&goal(), false, "zh", &transcript);
            assert!(!sent.contains(&text), "repeated «{text}»");
            if kind.ends() {
                assert_eq!(kind, UserMove::GiveUp);
                return;
            }
            sent.push(text.clone());
            transcript.push(Message::user(text));
        }
        panic!("the user never gave up");
    }

    #[test]
    fn an_unanswerable_goal_pushes_once_then_accepts_the_refusal() {
        let next = |answers: &[&str]| next_message(&goal(), true, "en", &after(answers));
        let (kind, text) = next(&["The documents do not say."]);
        assert_eq!(kind, UserMove::Insist);
        let mut t = after(&["The documents do not say."]);
        t.push(Message::user(text));
        t.push(Message {
            role: Role::Assistant,
            content: "I cannot find that in the documents.".into(),
        });
        assert_eq!(next_message(&goal(), true, "en", &t).0, UserMove::Satisfied);
    }
}
