//! Refusal detection in English and Chinese: does an answer decline to answer?
//!
//! Phrase lists miss most real refusals ("I'm sorry, but the provided documents do not contain the
//! information needed…") and flag answers that merely contain a negation ("The warranty does not cover
//! water damage"). So an answer is cut into clauses (sentences, then `,` `;` `:` and contrastive words such as
//! "but", "however", 但是, 不过), and each clause is classed:
//!
//! - **refusal**: says the sources (context, documents, passages, 资料, 上下文…) do not hold the answer, or
//!   that the writer cannot answer, find or determine it — the negation must be about the information, with
//!   the sources or the writer as its subject, not about the subject matter;
//! - **filler**: an apology, a preamble ("Based on the context", 根据所给的资料), a label ("Answer:"), or
//!   advice to look elsewhere ("You may want to consult…", 建议您查阅…);
//! - **content**: anything else.
//!
//! The answer is a refusal when it has at least one refusal clause and no content clause. An answer that
//! declines one part and answers another ("The context gives no exact date, but says the project started in
//! 2019") is a partial answer, not a refusal: the judge weighs it.
//!
//! A labelled list of refusals and answers (tests/fixtures/refusals.jsonl) keeps the detector honest.

use regex::Regex;
use std::sync::OnceLock;

/// Where the sources of an answer are named, in English.
const SOURCES_EN: &str = r"(?:context|contexts|document|documents|docs|text|texts|passage|passages|source|sources|material|materials|excerpt|excerpts|snippet|snippets|manual|article|information provided|provided information|retrieved results?|search results?)";
/// What may stand between the article and the sources: "the provided context", "the passages given".
const SOURCE_MODIFIERS_EN: &str =
    r"(?:provided|given|retrieved|above|available|supplied|referenced|following|attached|relevant)";
/// Verbs of telling, after a negation whose subject is the sources.
const TELL_EN: &str = r"(?:mention|say|state|specify|contain|include|provide|give|discuss|address|cover|describe|indicate|list|explain|detail|talk about|reference|define|offer|tell|reveal|disclose|show|answer|touch on)";
/// The sources, in Chinese.
const SOURCES_ZH: &str = r"(?:文档|文件|资料|材料|上下文|文中|文本|原文|段落|参考资料|参考内容|检索结果|检索到的内容|所给内容|给定内容|内容|所提供的信息|提供的信息)";

fn refusal_patterns() -> &'static [Regex] {
    static PATTERNS: OnceLock<Vec<Regex>> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        let sources = format!(r"\b(?:the |these |this |those |any of the |none of the )?(?:{SOURCE_MODIFIERS_EN} )?{SOURCES_EN}(?: {SOURCE_MODIFIERS_EN})?(?: here| to me| you provided| you gave)?");
        let en = [
            // The sources do not tell: "the provided context does not mention", "the text is silent on".
            format!(r"{sources} (?:do|does|did)(?: not|n't)(?: \w+ly)? {TELL_EN}"),
            format!(r"{sources} (?:fails?|failed) to {TELL_EN}"),
            format!(r"{sources} (?:lacks?|lacked|is silent|are silent|says? nothing|said nothing)"),
            format!(r"{sources} (?:makes?|made|contains?|contained|has|have|had|gives?|gave|provides?|provided|offers?|holds?) no (?:\w+ )?(?:mention|reference|information|details?|data|indication|answer)"),
            format!(r"{sources} only (?:describes?|covers?|discuss(?:es)?|mentions?|talks?|deals?|contains?|provides?|refers?)"),
            format!(r"\bnone of the (?:{SOURCE_MODIFIERS_EN} )?{SOURCES_EN}"),
            // "…; it does not mention the fee": the pronoun stands for the sources (verbs of telling only, so
            // "it does not cover water damage" stays an answer).
            r"^(?:it|they) (?:do|does|did)(?: not|n't)(?: \w+ly)? (?:mention|say|state|specify|discuss|address|describe|indicate|list|talk about|reference|tell)\b".to_string(),
            format!(r"\bnothing (?:in|within|from) the (?:{SOURCE_MODIFIERS_EN} )?{SOURCES_EN}"),
            format!(r"\b(?:not|n't) (?:found|present|included|contained|covered|available) (?:in|within|among) the (?:{SOURCE_MODIFIERS_EN} )?{SOURCES_EN}"),
            format!(r"\b(?:outside|beyond) (?:of )?(?:the scope|what the (?:{SOURCE_MODIFIERS_EN} )?{SOURCES_EN}|the (?:{SOURCE_MODIFIERS_EN} )?{SOURCES_EN}|my knowledge)"),
            // The writer cannot: "I cannot find", "we are unable to determine", "I don't know".
            r"\b(?:i|we)(?: am| are|'m|'re|'ve| have| was| were)?(?: still)? (?:cannot|can't|can not|could not|couldn't|am unable to|are unable to|unable to|was unable to|were unable to|am not able to|are not able to|wasn't able to|was not able to|did not|didn't|have not|haven't|do not|don't)(?: \w+ly)? (?:answer|determine|find|found|locate|tell|say|identify|provide|confirm|know|see|specify|infer|give|verify|ascertain|establish|respond)\b".to_string(),
            r"\b(?:i|we) (?:do not|don't|did not|didn't) have (?:enough |sufficient |any |the |that |this |adequate |specific |relevant |access to )*(?:information|data|details|access|context|knowledge)".to_string(),
            r"^(?:i'm|i am|we're|we are) not (?:sure|certain)\b".to_string(),
            r"^(?:i|we) (?:do not|don't) know\b".to_string(),
            r"\bno idea\b".to_string(),
            // Impersonal: "it is not possible to determine", "cannot be answered", "unclear from the context".
            r"\b(?:it is|it's|it isn't|it is not|this is|that is)(?: not)? (?:possible|impossible|feasible) to (?:answer|determine|say|tell|know|find|identify|infer|confirm|specify|establish|ascertain)\b".to_string(),
            format!(r"\b(?:it is|it's|it remains|this is) (?:unclear|not clear|unknown|not known|not stated|not specified|not mentioned) (?:from|in|based on|according to|given) (?:the )?(?:{SOURCE_MODIFIERS_EN} )?{SOURCES_EN}"),
            r"\bcan(?:not|'t| not) be (?:answered|determined|found|inferred|confirmed|established|ascertained|identified)\b".to_string(),
            r"\b(?:no|not enough|not sufficient|insufficient|inadequate|isn't enough|is not enough|not any) (?:relevant |specific |further |available |such )?(?:information|info|details|data|context)\b".to_string(),
            r"\bnot sufficient to (?:answer|determine|say)\b".to_string(),
            r"\b(?:information|context|data|details?|evidence) (?:\w+ ){0,4}(?:is|are)(?: not|n't) (?:sufficient|enough|adequate)\b".to_string(),
            r"\bno (?:mention|reference|indication|record of it)\b".to_string(),
            r"\b(?:information|details?|answer|data|figures?|this|that) (?:\w+ ){0,5}(?:is|are|was|were)(?: not|n't)(?: \w+ly)? (?:available|provided|given|included|present|found|known|mentioned|specified|stated|documented|disclosed|addressed|discussed|described|indicated)\b".to_string(),
            // A passive at the clause's end: "… is not mentioned.", "That detail is not specified."
            r"\b(?:is|are|was|were)(?: not|n't)(?: \w+ly)? (?:mentioned|specified|stated|documented|addressed|discussed|described|indicated|disclosed)$".to_string(),
            format!(r"\b(?:is|are|was|were)(?: not|n't)(?: \w+ly)? (?:mentioned|specified|stated|documented|addressed|discussed|described|indicated|disclosed|given|provided|found|included|covered) (?:in|within|by|among) the (?:{SOURCE_MODIFIERS_EN} )?{SOURCES_EN}"),
        ];
        let zh = [
            // The sources do not say: 文档中未提及, 所提供的文本并未涉及, 资料中没有…
            format!(r"{SOURCES_ZH}[^，。；！？]{{0,6}}?(?:中|里|内|里面|当中)?(?:并|也|都)?(?:未|没有|没|未曾|并未|并没有)(?:明确|具体|直接)?(?:提及|提到|说明|涉及|包含|记载|介绍|给出|写|列出|指出|提供|描述|讨论|交代|显示|表明)"),
            format!(r"{SOURCES_ZH}(?:中|里|内|里面|当中)(?:并|也|都)?(?:没有|无|未见|找不到|查不到)"),
            r"(?:超出|超过)(?:了)?[^，。；！？]{0,12}范围".to_string(),
            r"(?:信息|资料|内容|数据|依据)(?:不足|不够|不充分|有限)".to_string(),
            r"不足以(?:回答|判断|确定|作答|得出)".to_string(),
            r"(?:没有|无|缺乏|缺少|不包含|未包含|没有包含|未提供|没有提供)(?:任何)?(?:相关|足够|具体|有关|这方面|该方面|此类|充分|关于[^，。；！？]{1,20})?的?(?:信息|内容|资料|数据|记载|描述|说明|答案)".to_string(),
            r"(?:找不到|未找到|没有找到|没找到|查不到|未能找到|未检索到|没有检索到)".to_string(),
            r"无从(?:得知|知晓|判断|回答|确定|查证)".to_string(),
            // The writer cannot: 无法回答, 我不知道 — at the clause's start or after 我/我们, so that
            // 该泵无法提供… (the pump cannot…) is not a refusal.
            r"^(?:(?:因此|所以|故|因而)，?)?(?:(?:根据|基于|从|依据|按照)[^，。；！？]{0,14}?(?:中|里|来看|来说)?，?)?(?:我|我们|本人)?(?:目前|暂时|还|仍|实在)?(?:无法|不能|没法|没办法|难以)[^，。；！？]{0,12}?(?:回答|确定|判断|得知|知道|提供|找到|给出|确认|推断|获知|作答|回复|答复|说明|断定)".to_string(),
            r"(?:我|我们)(?:目前|暂时|还|并|实在)?(?:不知道|不清楚|不确定|无法|不能|没法)".to_string(),
            r"^不知道".to_string(),
            r"(?:无|没有)(?:相关|有关)(?:信息|内容|资料)".to_string(),
        ];
        en.iter()
            .chain(zh.iter())
            .map(|p| Regex::new(&format!("(?i){p}")).expect("refusal patterns are valid"))
            .collect()
    })
}

/// A clause that only says where the answer comes from: "Based on the context", 根据所给的资料.
fn preamble_patterns() -> &'static [Regex] {
    static PATTERNS: OnceLock<Vec<Regex>> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        [
            format!(r"^(?:based on|according to|from|given|in|using|judging by|with) (?:the |this |these |what the )?(?:{SOURCE_MODIFIERS_EN} )?(?:{SOURCES_EN}|information|info)(?: {SOURCE_MODIFIERS_EN})?(?: alone)?$"),
            r"^(?:根据|基于|依据|按照|从)(?:所给|所提供|提供|现有|给定|检索到|上述|以上)?的?(?:上下文|资料|文档|文本|信息|内容|材料|检索结果|段落|参考资料)(?:来看|中|里|来说|所述)?$".to_string(),
        ]
        .iter()
        .map(|p| Regex::new(&format!("(?i){p}")).expect("preamble patterns are valid"))
        .collect()
    })
}

/// Other clauses that carry no answer: labels, advice to look elsewhere.
fn filler_patterns() -> &'static [Regex] {
    static PATTERNS: OnceLock<Vec<Regex>> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        [
            r"^(?:answer|response|reply|note|result)$",
            r"^as an ai(?: (?:language )?model| assistant)?$",
            r"^(?:please|you (?:may|might|could|can|should|would)|i (?:would )?(?:recommend|suggest|advise)|we (?:recommend|suggest)|consider|for (?:more|further|accurate|the latest)|it (?:is|would be|may be) (?:best|advisable|recommended|worth)|if you|feel free|consult|contact|refer to|try)\b",
            r"^(?:答案|回答|答|回复|注)$",
            r"^(?:建议|请|您可以|你可以|可以(?:咨询|查阅|联系)|如需|如果您|如有需要|欢迎)",
        ]
        .iter()
        .map(|p| Regex::new(&format!("(?i){p}")).expect("filler patterns are valid"))
        .collect()
    })
}

fn is_preamble(clause: &str) -> bool {
    let clause = clause.trim();
    preamble_patterns().iter().any(|p| p.is_match(clause))
}

/// The answer without a leading clause that only names its source ("According to the document, …",
/// 根据资料，…): framing, not a claim, so lexical scoring should not count its words.
pub fn without_preamble(answer: &str) -> &str {
    let trimmed = answer.trim_start();
    match clause_breaks().find(trimmed) {
        Some(m) if is_preamble(&trimmed[..m.start()].to_lowercase()) => {
            trimmed[m.end()..].trim_start()
        }
        _ => trimmed,
    }
}

/// An apology or regret at a clause's start, removed before the clause is classed.
fn apology() -> &'static Regex {
    static APOLOGY: OnceLock<Regex> = OnceLock::new();
    APOLOGY.get_or_init(|| {
        Regex::new(
            r"(?i)^(?:(?:i'm|i am|we're|we are) (?:sorry|afraid)|sorry|unfortunately|regrettably|i apologi[sz]e|apologies|(?:很|非常|十分)?(?:抱歉|对不起|遗憾|不好意思)(?:的是)?)[,.!，。！]?\s*(?:but\s+|that\s+)?",
        )
        .expect("the apology pattern is valid")
    })
}

/// Clause boundaries: punctuation, then contrastive words.
fn clause_breaks() -> &'static Regex {
    static BREAKS: OnceLock<Regex> = OnceLock::new();
    BREAKS.get_or_init(|| {
        Regex::new(r"(?i)[.;:!?。；：！？\n，、]|,\s|\s(?:but|however|although|though|yet|whereas)\b|但是|不过|然而|但")
            .expect("the clause pattern is valid")
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Clause {
    Refusal,
    Filler,
    Content,
}

fn class_of(clause: &str) -> Clause {
    // "I'm sorry, but unfortunately …": strip every apology at the front.
    let mut text = clause.trim().to_string();
    loop {
        let stripped = apology().replace(&text, "").trim().to_string();
        if stripped == text {
            break;
        }
        text = stripped;
    }
    let text = text.trim_matches(|c: char| c.is_whitespace() || "\"'“”‘’()（）*".contains(c));
    if text.is_empty() || !text.chars().any(char::is_alphanumeric) {
        return Clause::Filler;
    }
    if refusal_patterns().iter().any(|p| p.is_match(text)) {
        Clause::Refusal
    } else if is_preamble(text) || filler_patterns().iter().any(|p| p.is_match(text)) {
        Clause::Filler
    } else {
        Clause::Content
    }
}

/// Whether an answer declines to answer, in English or Chinese phrasing.
pub fn is_refusal(answer: &str) -> bool {
    let text = answer.to_lowercase().replace(['’', '‘'], "'");
    let mut refusal = false;
    for clause in clause_breaks().split(&text) {
        match class_of(clause) {
            Clause::Refusal => refusal = true,
            Clause::Content => return false,
            Clause::Filler => {}
        }
    }
    refusal
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompted_refusals_are_refusals() {
        assert!(is_refusal(crate::REFUSAL_EN));
        assert!(is_refusal(crate::REFUSAL_ZH));
    }

    #[test]
    fn a_negation_about_the_subject_matter_is_an_answer() {
        assert!(!is_refusal("The warranty does not cover water damage."));
        assert!(!is_refusal("该服务不提供退款。"));
        assert!(!is_refusal(""));
    }

    #[test]
    fn a_preamble_is_not_part_of_the_claim() {
        assert_eq!(without_preamble("根据资料，2000年"), "2000年");
        assert_eq!(
            without_preamble("According to the provided context, it opens at 4.5 bar."),
            "it opens at 4.5 bar."
        );
        assert_eq!(
            without_preamble("The valve, in short, opens."),
            "The valve, in short, opens."
        );
    }

    #[test]
    fn declining_one_part_and_answering_another_is_not_a_refusal() {
        assert!(is_refusal("The context does not give an exact date."));
        assert!(!is_refusal(
            "The context does not give an exact date, but it says the project started in 2019."
        ));
    }
}
