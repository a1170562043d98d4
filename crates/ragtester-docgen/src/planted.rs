//! The offline document generator: Markdown about an invented facility (so no model knows the answers from
//! training), with facts planted in known sentences — names, years, capacities, limits, intervals — and
//! questions whose answers are exact: single facts, two-fact inferences, and questions the document is
//! built never to answer. Deterministic for a seed.

mod rivals;
mod wording;

use crate::{DocRequest, GeneratedDoc};
use ragtester_core::Category;
use ragtester_core::generated::PlantedFact;

struct Vocabulary {
    syllables: &'static [&'static str],
    kinds: &'static [(&'static str, &'static str)],
    towns: &'static [&'static str],
    people: &'static [&'static str],
    filler: &'static [&'static str],
}

const EN: Vocabulary = Vocabulary {
    syllables: &[
        "Nor", "val", "ith", "mar", "quen", "dal", "bro", "sey", "tor", "lin", "ka", "res",
    ],
    kinds: &[
        ("pumping station", "cubic metres of water"),
        ("cold-storage depot", "pallets"),
        ("seed bank", "seed packets"),
        ("ferry terminal", "passengers"),
        ("glass recycling plant", "tonnes of glass"),
        ("community bakery", "loaves"),
    ],
    towns: &[
        "Ostrava Ridge",
        "Pellham Cove",
        "Marrowfield",
        "Kestrel Bay",
        "Dunmore Flats",
        "Avenlea",
    ],
    people: &[
        "Ilse Varga",
        "Tomas Reyner",
        "Amara Osei",
        "Jun Whitlock",
        "Priya Castell",
        "Odile Brandt",
    ],
    filler: &[
        "Staff record every shift in the site journal, including visitors and deliveries.",
        "The site follows the regional safety code and is inspected by an external auditor.",
        "Routine checks cover the lighting, the drainage channels and the fire doors.",
        "New staff shadow an experienced colleague before working alone.",
        "Spare parts are kept in a locked store next to the workshop.",
        "Changes to the layout are agreed with the town council in advance.",
        "The control room keeps a printed copy of every procedure in case the network fails.",
        "Noise is kept low at night out of consideration for nearby residents.",
    ],
};

const ZH: Vocabulary = Vocabulary {
    syllables: &[
        "青", "岚", "澄", "溪", "望", "川", "松", "禾", "霁", "泊", "棠", "芸",
    ],
    kinds: &[
        ("泵站", "立方米水"),
        ("冷库", "个托盘"),
        ("种子库", "份种子"),
        ("轮渡码头", "名乘客"),
        ("玻璃回收厂", "吨玻璃"),
        ("社区面包工坊", "个面包"),
    ],
    towns: &["临湖镇", "北溪镇", "云岗镇", "石桥镇", "南屿镇", "枫林镇"],
    people: &["林晓舟", "陈墨", "周以宁", "许知远", "韩素", "顾长青"],
    filler: &[
        "员工每个班次都要在值班日志中记录访客和送货情况。",
        "站点遵守地区安全规范，并定期接受外部审核员检查。",
        "日常巡检包括照明、排水沟和防火门。",
        "新员工在独立上岗前需跟随有经验的同事学习。",
        "备件存放在车间旁边上锁的仓库里。",
        "场地布局的调整需提前与镇政府协商。",
        "控制室保存每份规程的纸质副本，以防网络故障。",
        "夜间作业须控制噪音，以免影响附近居民。",
    ],
};

/// The values one document is built from.
struct Plant {
    entity: String,
    kind: String,
    unit: String,
    town: String,
    person: String,
    year: u32,
    team: u32,
    capacity: u32,
    hours: u32,
    temperature: u32,
    days: u32,
    months: u32,
    extension: u32,
}

fn pick<T: Copy>(rng: &mut fastrand::Rng, items: &[T]) -> T {
    items[rng.usize(..items.len())]
}

fn plant(rng: &mut fastrand::Rng, v: &Vocabulary, zh: bool, topic: Option<&str>) -> Plant {
    let entity = if zh {
        format!("{}{}", pick(rng, v.syllables), pick(rng, v.syllables))
    } else {
        let mut name = format!("{}{}", pick(rng, v.syllables), pick(rng, v.syllables));
        name = name[..1].to_uppercase() + &name[1..].to_lowercase();
        name
    };
    let (kind, unit) = pick(rng, v.kinds);
    let (kind, unit) = match topic.map(str::trim).filter(|t| !t.is_empty()) {
        Some(t) => (
            t.to_string(),
            if zh { "个单位" } else { "units" }.to_string(),
        ),
        None => (kind.to_string(), unit.to_string()),
    };
    // Distinct magnitudes, so no number answers two questions.
    Plant {
        entity,
        kind,
        unit,
        town: pick(rng, v.towns).into(),
        person: pick(rng, v.people).into(),
        year: rng.u32(1961..=2019),
        team: rng.u32(3..=9),
        capacity: rng.u32(12..=96) * 10,
        hours: rng.u32(10..=22),
        temperature: rng.u32(31..=58),
        days: rng.u32(11..=29),
        months: rng.u32(30..=60),
        extension: rng.u32(2100..=8999),
    }
}

/// Sentences and facts of one document, in order: (section index, sentence).
struct Draft {
    sections: Vec<(String, Vec<String>)>,
    facts: Vec<PlantedFact>,
}

fn fact(
    category: Category,
    question: String,
    answer: String,
    keywords: Vec<String>,
    evidence: Vec<&str>,
) -> PlantedFact {
    PlantedFact {
        category,
        question,
        answer,
        keywords,
        evidence: evidence.into_iter().map(str::to_string).collect(),
        conflict: None,
    }
}

/// SplitMix64's finaliser: nearby seeds (a batch's indices) give unrelated streams.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Write one planted-fact document for `req`, the `index`-th of its folder. Facilities named in `taken`
/// are not used again (two documents about one facility would make their questions ambiguous); the new
/// one is added.
/// Filler (no facts, no numbers) spread over the sections until the requested length is reached; every
/// section gets at least one filler sentence when the detail level asks for more than facts.
fn pad_with_filler(
    draft: &mut Draft,
    vocabulary: &Vocabulary,
    rng: &mut fastrand::Rng,
    req: &DocRequest,
) {
    let mut fillers: Vec<&str> = vocabulary.filler.to_vec();
    rng.shuffle(&mut fillers);
    let mut filler = fillers.iter().cycle();
    let count = |d: &Draft| {
        d.sections
            .iter()
            .map(|(_, s)| {
                s.iter()
                    .map(|x| ragtester_text::word_count(x))
                    .sum::<usize>()
            })
            .sum::<usize>()
    };
    let per_section = req.detail.filler_sentences();
    for (_, body) in &mut draft.sections {
        for _ in 0..per_section {
            body.push(filler.next().copied().unwrap_or_default().to_string());
        }
    }
    // Round-robin over the sections; bounded, since a requested length may be out of reach.
    for section in 0..10_000 {
        if count(draft) >= req.words {
            break;
        }
        let n = draft.sections.len();
        draft.sections[section % n]
            .1
            .push(filler.next().copied().unwrap_or_default().to_string());
    }
}

/// The draft as Markdown: the title, each section's heading, its prose sentences as one paragraph and its
/// tables, lists and code blocks on their own.
fn to_markdown(title: &str, draft: &Draft, zh: bool) -> String {
    let mut markdown = format!("# {title}\n\n");
    for (heading, body) in &draft.sections {
        markdown.push_str(&format!("## {heading}\n\n"));
        // Prose sentences of a section form one paragraph; tables, lists and code blocks stand alone.
        let mut paragraph: Vec<&str> = Vec::new();
        let flush = |paragraph: &mut Vec<&str>, out: &mut String| {
            if !paragraph.is_empty() {
                out.push_str(&paragraph.join(if zh { "" } else { " " }));
                out.push_str("\n\n");
                paragraph.clear();
            }
        };
        for block in body {
            if block.contains('\n') {
                flush(&mut paragraph, &mut markdown);
                markdown.push_str(block);
                markdown.push_str("\n\n");
            } else {
                paragraph.push(block);
            }
        }
        flush(&mut paragraph, &mut markdown);
    }
    markdown.trim_end().to_string() + "\n"
}

pub fn generate(
    req: &DocRequest,
    index: usize,
    taken: &mut std::collections::HashSet<String>,
) -> GeneratedDoc {
    let mut docs = generate_with_rivals(req, index, taken);
    docs.swap_remove(0)
}

/// The planted document first, then, when the request asks for conflicts, its rival sources.
pub fn generate_with_rivals(
    req: &DocRequest,
    index: usize,
    taken: &mut std::collections::HashSet<String>,
) -> Vec<GeneratedDoc> {
    let zh = req.language == "zh";
    let vocabulary = if zh { &ZH } else { &EN };
    let mut rng = fastrand::Rng::with_seed(mix(req.seed ^ mix(index as u64)));
    let mut p = plant(&mut rng, vocabulary, zh, req.topic.as_deref());
    // 144 names per language: a few draws find a free one unless the folder is nearly full.
    for _ in 0..64 {
        if !taken.contains(&p.entity) {
            break;
        }
        p = plant(&mut rng, vocabulary, zh, req.topic.as_deref());
    }
    taken.insert(p.entity.clone());
    let mut draft = wording::draft(&p, if zh { &wording::ZH } else { &wording::EN });
    for extra in &req.sections {
        draft.sections.push((extra.clone(), Vec::new()));
    }
    let title = req.title.clone().unwrap_or_else(|| {
        if zh {
            format!("{}{}运行手册", p.entity, p.kind)
        } else {
            format!("{} {} operations handbook", p.entity, title_case(&p.kind))
        }
    });
    let rivals = if req.conflicts {
        let wording = if zh { &wording::ZH } else { &wording::EN };
        let subject = wording::subject(&p, wording);
        rivals::plant_rivals(&p, zh, &title, &subject, &mut draft)
    } else {
        Vec::new()
    };
    pad_with_filler(&mut draft, vocabulary, &mut rng, req);
    let markdown = to_markdown(&title, &draft, zh);
    let mut docs = vec![GeneratedDoc {
        title,
        language: req.language.clone(),
        markdown,
        facts: draft.facts,
    }];
    docs.extend(rivals);
    docs
}

fn title_case(s: &str) -> String {
    s.split(' ')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
                .unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Detail;

    fn request(language: &str, words: usize) -> DocRequest {
        DocRequest {
            language: language.into(),
            words,
            seed: 7,
            ..Default::default()
        }
    }

    #[test]
    fn every_fact_is_stated_verbatim_and_negatives_are_not() {
        for lang in ["en", "zh"] {
            for i in 0..6 {
                let doc = generate(&request(lang, 300), i, &mut Default::default());
                assert_eq!(doc.facts.len(), 10);
                for f in &doc.facts {
                    for sentence in &f.evidence {
                        assert!(doc.markdown.contains(sentence.as_str()), "{sentence}");
                    }
                    for k in &f.keywords {
                        assert!(f.answer.contains(k.as_str()), "{k} not in {}", f.answer);
                        assert!(
                            f.evidence.iter().any(|s| s.contains(k.as_str()))
                                || f.category == Category::Inference,
                            "{k}"
                        );
                    }
                    if f.category == Category::Negative {
                        assert!(f.evidence.is_empty() && f.keywords.is_empty());
                        assert!(ragtester_text::is_refusal(&f.answer));
                    }
                }
                assert!(
                    ragtester_text::word_count(&doc.markdown) >= 300,
                    "{lang}: {}",
                    doc.markdown
                );
            }
        }
    }

    #[test]
    fn deterministic_for_a_seed_and_varied_across_a_batch() {
        let a = generate(&request("en", 100), 0, &mut Default::default());
        assert_eq!(
            a.markdown,
            generate(&request("en", 100), 0, &mut Default::default()).markdown
        );
        let mut taken = std::collections::HashSet::new();
        let names: std::collections::HashSet<String> = (0..20)
            .map(|i| generate(&request("en", 100), i, &mut taken).title)
            .collect();
        assert_eq!(names.len(), 20, "every facility of a batch is new");
        assert!(a.markdown.starts_with("# "));
        assert!(a.markdown.contains("| Item | Value |") && a.markdown.contains("```"));
    }

    #[test]
    fn conflicts_bring_an_older_edition_and_a_disagreeing_bulletin() {
        for lang in ["en", "zh"] {
            let mut req = request(lang, 200);
            req.conflicts = true;
            let docs = generate_with_rivals(&req, 3, &mut Default::default());
            assert_eq!(docs.len(), 3, "{lang}");
            let (handbook, old, bulletin) = (&docs[0], &docs[1], &docs[2]);
            assert!(old.facts.is_empty() && bulletin.facts.is_empty());
            let Some(ragtester_core::SourceConflict::Superseded { current, outdated }) =
                handbook.facts[0].conflict.clone()
            else {
                panic!("{lang}: the first fact is the superseded one")
            };
            let Some(ragtester_core::SourceConflict::Disagreeing { values }) =
                handbook.facts[1].conflict.clone()
            else {
                panic!("{lang}: the second fact is the disputed one")
            };
            assert_ne!(current, outdated);
            // Each value stands where it belongs: the current one in the handbook (which says it replaces
            // earlier editions), the outdated one in the older edition, the rival in the bulletin.
            for f in &handbook.facts[..2] {
                for sentence in &f.evidence {
                    assert!(handbook.markdown.contains(sentence.as_str()), "{sentence}");
                }
            }
            assert!(handbook.facts[0].evidence[0].contains(&current));
            assert!(old.markdown.contains(&outdated) && !old.markdown.contains(&current));
            assert!(handbook.facts[1].evidence[0].contains(&values[0]));
            assert!(bulletin.markdown.contains(&values[1]));
            assert!(
                !handbook.markdown.contains(&outdated) && !handbook.markdown.contains(&values[1])
            );
            assert!(
                handbook.facts[1].answer.contains(&values[0])
                    && handbook.facts[1].answer.contains(&values[1])
            );
            // Without the flag the handbook is what it always was.
            let plain = generate(&request(lang, 200), 3, &mut Default::default());
            assert!(plain.facts.iter().all(|f| f.conflict.is_none()));
            assert_eq!(plain.facts.len(), 10);
        }
    }

    #[test]
    fn controls_shape_the_document() {
        let mut req = request("zh", 50);
        req.title = Some("测试手册".into());
        req.topic = Some("气象站".into());
        req.sections = vec!["附录".into()];
        req.detail = Detail::High;
        let doc = generate(&req, 0, &mut Default::default());
        assert!(doc.markdown.starts_with("# 测试手册\n"));
        assert!(doc.markdown.contains("## 附录"));
        assert!(doc.facts[0].question.contains("气象站"));
        let low = generate(&request("zh", 0), 0, &mut Default::default());
        assert!(
            ragtester_text::word_count(&doc.markdown) > ragtester_text::word_count(&low.markdown)
        );
    }
}
