//! Sources that disagree (`docgen --conflicts`): beside a planted document, an older edition of it that
//! states another filter interval (superseded: the current edition says it replaces every earlier one), and
//! a maintenance bulletin that states another overhaul interval than the handbook (two sources of equal
//! standing that disagree). The handbook's facts about both carry the conflict, so their cases pass only
//! when an answer gives the current value, or names the disagreement.

use super::{Draft, Plant, fact};
use crate::GeneratedDoc;
use ragtester_core::generated::PlantedFact;
use ragtester_core::{Category, SourceConflict};

/// What one language says about the rival sources; `{name}` slots as in the wording.
struct Rivals {
    /// The current edition's claim to replace the earlier ones (the handbook's overview).
    edition: &'static str,
    old_title: &'static str,
    old_heading: &'static str,
    old_body: &'static str,
    bulletin_title: &'static str,
    bulletin_heading: &'static str,
    bulletin_body: &'static str,
    overhaul_question: &'static str,
    overhaul_answer: &'static str,
}

const EN: Rivals = Rivals {
    edition: "This edition of the handbook is valid from {edition}; it replaces all earlier editions.",
    old_title: "{title}, {old_edition} edition",
    old_heading: "Maintenance",
    old_body: "This edition of the handbook is valid from {old_edition}. Filters are replaced every {outdated} days.",
    bulletin_title: "{entity} {kind} maintenance bulletin",
    bulletin_heading: "Main drive",
    bulletin_body: "The main drive of {e} is overhauled every {bulletin} months.",
    overhaul_question: "How often is the main drive of {e} overhauled?",
    overhaul_answer: "The sources disagree: the operations handbook says every {months} months, the maintenance bulletin every {bulletin} months.",
};

const ZH: Rivals = Rivals {
    edition: "本版手册自{edition}年起施行，取代此前所有版本。",
    old_title: "{title}（{old_edition}年版）",
    old_heading: "维护",
    old_body: "本版手册自{old_edition}年起施行。过滤器每{outdated}天更换一次。",
    bulletin_title: "{entity}{kind}维护公告",
    bulletin_heading: "主驱动",
    bulletin_body: "{e}的主驱动每{bulletin}个月大修一次。",
    overhaul_question: "{e}的主驱动多久大修一次？",
    overhaul_answer: "两份文件说法不一致：运行手册为每{months}个月，维护公告为每{bulletin}个月。",
};

/// The values the rival sources state, each unlike every number the handbook states.
struct Values {
    edition: u32,
    old_edition: u32,
    outdated: u32,
    bulletin: u32,
}

impl Values {
    fn of(p: &Plant) -> Self {
        let taken = [
            p.year,
            p.team,
            p.team + 1,
            p.capacity,
            p.capacity * p.hours,
            p.hours,
            p.temperature,
            p.days,
            p.months,
            p.extension,
        ];
        let free = |mut n: u32, used: &[u32]| {
            while taken.contains(&n) || used.contains(&n) {
                n += 1;
            }
            n
        };
        let edition = free(2020 + p.team % 5, &[]);
        let old_edition = free(edition - 4, &[edition]);
        let outdated = free(p.days + 7, &[edition, old_edition]);
        let bulletin = free(p.months + 12, &[edition, old_edition, outdated]);
        Self {
            edition,
            old_edition,
            outdated,
            bulletin,
        }
    }
}

/// Plant the rivals of `draft`: the edition sentence in its overview, the conflict on its filter fact, a
/// new fact on the overhaul interval, both first among its facts (so a suite of few cases asks them); and
/// the two rival documents.
pub(super) fn plant_rivals(
    p: &Plant,
    zh: bool,
    title: &str,
    subject: &str,
    draft: &mut Draft,
) -> Vec<GeneratedDoc> {
    let w = if zh { &ZH } else { &EN };
    let v = Values::of(p);
    let fill = |t: &str| {
        t.replace("{edition}", &v.edition.to_string())
            .replace("{old_edition}", &v.old_edition.to_string())
            .replace("{outdated}", &v.outdated.to_string())
            .replace("{bulletin}", &v.bulletin.to_string())
            .replace("{months}", &p.months.to_string())
            .replace("{title}", title)
            .replace("{entity}", &p.entity)
            .replace("{kind}", &p.kind)
            .replace("{e}", subject)
    };
    if let Some((_, overview)) = draft.sections.first_mut() {
        overview.push(fill(w.edition));
    }
    // The handbook's sentences that state the two intervals, as its wording writes them.
    let (filters_phrase, overhaul_phrase) = if zh {
        (format!("每{}天", p.days), format!("每{}个月", p.months))
    } else {
        (
            format!("every {} days", p.days),
            format!("every {} months", p.months),
        )
    };
    let stating = |phrase: &str| {
        draft
            .sections
            .iter()
            .flat_map(|(_, body)| body)
            .find(|s| s.contains(phrase))
            .cloned()
            .unwrap_or_default()
    };
    let (filters_sentence, overhaul_sentence) =
        (stating(&filters_phrase), stating(&overhaul_phrase));
    let mut rivals: Vec<PlantedFact> = Vec::new();
    if let Some(at) = draft
        .facts
        .iter()
        .position(|f| f.evidence == [filters_sentence.clone()])
    {
        let mut filters = draft.facts.remove(at);
        filters.conflict = Some(SourceConflict::Superseded {
            current: p.days.to_string(),
            outdated: v.outdated.to_string(),
        });
        rivals.push(filters);
    }
    let mut overhaul = fact(
        Category::Inference,
        fill(w.overhaul_question),
        fill(w.overhaul_answer),
        vec![p.months.to_string(), v.bulletin.to_string()],
        vec![overhaul_sentence.as_str()],
    );
    overhaul.conflict = Some(SourceConflict::Disagreeing {
        values: vec![p.months.to_string(), v.bulletin.to_string()],
    });
    rivals.push(overhaul);
    draft.facts.splice(0..0, rivals);
    let language = if zh { "zh" } else { "en" };
    let document = |title: String, heading: &str, body: String| GeneratedDoc {
        markdown: format!("# {title}\n\n## {heading}\n\n{body}\n"),
        title,
        language: language.into(),
        facts: Vec::new(),
    };
    vec![
        document(fill(w.old_title), w.old_heading, fill(w.old_body)),
        document(
            fill(w.bulletin_title),
            w.bulletin_heading,
            fill(w.bulletin_body),
        ),
    ]
}
