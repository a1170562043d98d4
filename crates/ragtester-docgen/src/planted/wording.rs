//! What a planted-fact document says, per language, as data: its sentences, the facts asked about them
//! and its sections, each a template whose `{name}` slots a [`Plant`]'s values fill. One function builds
//! the document from a wording, so the two languages cannot drift apart in what they plant.

use super::{Draft, Plant, fact};
use ragtester_core::Category;

/// The sentences that state a planted fact, which questions cite as evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Said {
    Founded,
    Operator,
    Capacity,
    Hours,
    Stop,
    Filters,
    Overhaul,
    Extension,
}

const SAID: [Said; 8] = [
    Said::Founded,
    Said::Operator,
    Said::Capacity,
    Said::Hours,
    Said::Stop,
    Said::Filters,
    Said::Overhaul,
    Said::Extension,
];

/// A question about the document: its category, question, expected answer, keywords and evidence.
struct Asked {
    category: Category,
    question: &'static str,
    answer: &'static str,
    keywords: &'static [&'static str],
    evidence: &'static [Said],
}

pub(super) struct Wording {
    language: &'static str,
    /// How questions name the facility (`{e}` in them).
    subject: &'static str,
    /// One template per [`SAID`] sentence, in that order.
    sentences: [&'static str; 8],
    asked: [Asked; 10],
    table: &'static str,
    steps: &'static str,
    /// Section headings: overview, specifications, procedure, maintenance, contacts.
    headings: [&'static str; 5],
}

const CODE: &str = "```\nalarm_intake_c = {temperature}\nfault_extension = {extension}\n```";

pub(super) const EN: Wording = Wording {
    language: "en",
    subject: "the {entity} {kind}",
    sentences: [
        "The {entity} {kind} was commissioned in {year} in {town}.",
        "It is operated by {person}, who leads a team of {team} technicians.",
        "At rated load the site handles {capacity} {unit} per hour.",
        "It runs {hours} hours a day.",
        "Operation must stop when the intake temperature exceeds {temperature} °C.",
        "Filters are replaced every {days} days.",
        "The main drive is overhauled every {months} months.",
        "Faults are reported to the control room on extension {extension}.",
    ],
    asked: [
        Asked {
            category: Category::Core,
            question: "Who operates {e}?",
            answer: "{person}",
            keywords: &["{person}"],
            evidence: &[Said::Operator],
        },
        Asked {
            category: Category::DetailNumeric,
            question: "In which year was {e} commissioned?",
            answer: "{year}",
            keywords: &["{year}"],
            evidence: &[Said::Founded],
        },
        Asked {
            category: Category::DetailNumeric,
            question: "How many {unit} per hour does {e} handle at rated load?",
            answer: "{capacity} {unit} per hour",
            keywords: &["{capacity}"],
            evidence: &[Said::Capacity],
        },
        Asked {
            category: Category::DetailNumeric,
            question: "How often are the filters at {e} replaced?",
            answer: "Every {days} days",
            keywords: &["{days}"],
            evidence: &[Said::Filters],
        },
        Asked {
            category: Category::Core,
            question: "Above what intake temperature must operation at {e} stop?",
            answer: "{temperature} °C",
            keywords: &["{temperature}"],
            evidence: &[Said::Stop],
        },
        Asked {
            category: Category::Core,
            question: "Which extension should faults at {e} be reported to?",
            answer: "{extension}",
            keywords: &["{extension}"],
            evidence: &[Said::Extension],
        },
        Asked {
            category: Category::Inference,
            question: "How many {unit} can {e} handle in one full day of operation at rated load?",
            answer: "{daily} {unit} ({capacity} per hour for {hours} hours)",
            keywords: &["{daily}"],
            evidence: &[Said::Capacity, Said::Hours],
        },
        Asked {
            category: Category::Inference,
            question: "How many people work at {e}, counting its operator and the technicians?",
            answer: "{crew}",
            keywords: &["{crew}"],
            evidence: &[Said::Operator],
        },
        Asked {
            category: Category::Negative,
            question: "What did it cost to build {e}?",
            answer: "{refusal}",
            keywords: &[],
            evidence: &[],
        },
        Asked {
            category: Category::Negative,
            question: "Who is the deputy operator of {e}?",
            answer: "{refusal}",
            keywords: &[],
            evidence: &[],
        },
    ],
    table: "| Item | Value |\n| --- | --- |\n| Rated load | {capacity} {unit} per hour |\n| Daily operation | {hours} hours |\n| Intake temperature limit | {temperature} °C |",
    steps: "1. Check the intake gauges before starting.\n2. Start the main drive and wait until it runs steadily.\n3. {stop}\n4. Log the shift in the site journal.",
    headings: [
        "Overview",
        "Specifications",
        "Operating procedure",
        "Maintenance",
        "Contacts and safety",
    ],
};

pub(super) const ZH: Wording = Wording {
    language: "zh",
    subject: "{entity}{kind}",
    sentences: [
        "{e}于{year}年在{town}建成投用。",
        "该站点由{person}负责运营，带领一支{team}名技术员的团队。",
        "额定负荷下，站点每小时处理{capacity}{unit}。",
        "站点每天运行{hours}小时。",
        "进水温度超过{temperature}°C时必须停止运行。",
        "过滤器每{days}天更换一次。",
        "主驱动每{months}个月大修一次。",
        "故障须拨打控制室分机{extension}报告。",
    ],
    asked: [
        Asked {
            category: Category::Core,
            question: "{e}由谁负责运营？",
            answer: "{person}",
            keywords: &["{person}"],
            evidence: &[Said::Operator],
        },
        Asked {
            category: Category::DetailNumeric,
            question: "{e}是哪一年建成投用的？",
            answer: "{year}年",
            keywords: &["{year}"],
            evidence: &[Said::Founded],
        },
        Asked {
            category: Category::DetailNumeric,
            question: "额定负荷下，{e}每小时处理多少{measure}？",
            answer: "每小时{capacity}{unit}",
            keywords: &["{capacity}"],
            evidence: &[Said::Capacity],
        },
        Asked {
            category: Category::DetailNumeric,
            question: "{e}的过滤器多久更换一次？",
            answer: "每{days}天",
            keywords: &["{days}"],
            evidence: &[Said::Filters],
        },
        Asked {
            category: Category::Core,
            question: "进水温度超过多少度时，{e}必须停止运行？",
            answer: "{temperature}°C",
            keywords: &["{temperature}"],
            evidence: &[Said::Stop],
        },
        Asked {
            category: Category::Core,
            question: "{e}的故障应拨打哪个分机报告？",
            answer: "{extension}",
            keywords: &["{extension}"],
            evidence: &[Said::Extension],
        },
        Asked {
            category: Category::Inference,
            question: "额定负荷下满负荷运行一整天，{e}能处理多少{measure}？",
            answer: "{daily}{unit}（每小时{capacity}，运行{hours}小时）",
            keywords: &["{daily}"],
            evidence: &[Said::Capacity, Said::Hours],
        },
        Asked {
            category: Category::Inference,
            question: "算上运营负责人和技术员，{e}一共有多少人工作？",
            answer: "{crew}人",
            keywords: &["{crew}"],
            evidence: &[Said::Operator],
        },
        Asked {
            category: Category::Negative,
            question: "建造{e}花了多少钱？",
            answer: "{refusal}",
            keywords: &[],
            evidence: &[],
        },
        Asked {
            category: Category::Negative,
            question: "{e}的副运营负责人是谁？",
            answer: "{refusal}",
            keywords: &[],
            evidence: &[],
        },
    ],
    table: "| 项目 | 数值 |\n| --- | --- |\n| 额定负荷 | 每小时{capacity}{unit} |\n| 每日运行 | {hours}小时 |\n| 进水温度上限 | {temperature}°C |",
    steps: "1. 启动前检查进水仪表。\n2. 启动主驱动，待其平稳运行。\n3. {stop}\n4. 在值班日志中记录本班次。",
    headings: ["概述", "技术参数", "操作规程", "维护", "联系与安全"],
};

/// How questions name plant `p` ("the Norka ferry terminal", "松岚泵站").
pub(super) fn subject(p: &Plant, w: &Wording) -> String {
    w.subject
        .replace("{entity}", &p.entity)
        .replace("{kind}", &p.kind)
}

/// The document a wording says about plant `p`: its sections and the facts asked about them.
pub(super) fn draft(p: &Plant, w: &Wording) -> Draft {
    let mut slots: Vec<(&str, String)> = vec![
        ("{entity}", p.entity.clone()),
        ("{kind}", p.kind.clone()),
        ("{town}", p.town.clone()),
        ("{person}", p.person.clone()),
        ("{year}", p.year.to_string()),
        ("{team}", p.team.to_string()),
        ("{crew}", (p.team + 1).to_string()),
        ("{capacity}", p.capacity.to_string()),
        ("{daily}", (p.capacity * p.hours).to_string()),
        ("{unit}", p.unit.clone()),
        // A Chinese measure word asked after 多少 drops its classifier ("多少单位", not "多少个单位").
        ("{measure}", p.unit.trim_start_matches('个').to_string()),
        ("{hours}", p.hours.to_string()),
        ("{temperature}", p.temperature.to_string()),
        ("{days}", p.days.to_string()),
        ("{months}", p.months.to_string()),
        ("{extension}", p.extension.to_string()),
        (
            "{refusal}",
            ragtester_text::refusal_for(w.language).to_string(),
        ),
    ];
    let subject = fill(w.subject, &slots);
    slots.push(("{e}", subject));
    let said: Vec<String> = w.sentences.iter().map(|t| fill(t, &slots)).collect();
    let sentence = |s: Said| {
        said[SAID
            .iter()
            .position(|x| *x == s)
            .expect("every sentence is said")]
        .clone()
    };
    slots.push(("{stop}", sentence(Said::Stop)));
    let facts = w
        .asked
        .iter()
        .map(|a| {
            let evidence: Vec<String> = a.evidence.iter().map(|s| sentence(*s)).collect();
            fact(
                a.category,
                fill(a.question, &slots),
                fill(a.answer, &slots),
                a.keywords.iter().map(|k| fill(k, &slots)).collect(),
                evidence.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    let [overview, specifications, procedure, maintenance, contacts] = w.headings;
    Draft {
        sections: vec![
            (
                overview.into(),
                vec![sentence(Said::Founded), sentence(Said::Operator)],
            ),
            (
                specifications.into(),
                vec![
                    sentence(Said::Capacity),
                    sentence(Said::Hours),
                    fill(w.table, &slots),
                ],
            ),
            (procedure.into(), vec![fill(w.steps, &slots)]),
            (
                maintenance.into(),
                vec![sentence(Said::Filters), sentence(Said::Overhaul)],
            ),
            (
                contacts.into(),
                vec![sentence(Said::Extension), fill(CODE, &slots)],
            ),
        ],
        facts,
    }
}

/// `template` with each `{name}` slot replaced by its value.
fn fill(template: &str, slots: &[(&str, String)]) -> String {
    slots
        .iter()
        .fold(template.to_string(), |text, (slot, value)| {
            text.replace(slot, value)
        })
}
