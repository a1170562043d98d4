//! Axes of the matrix that changed no answer: configurations that differ in one setting alone (history
//! mode, top-k, retriever…) and answered every case alike are one result repeated, and the report says so
//! rather than list identical rows as if they were findings.

use ragtester_core::{Answer, Configuration};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};

/// The settings a configuration's record names, and the one each axis blanks.
const AXES: [(&str, &str); 7] = [
    ("history", "history"),
    ("top_k", "top-k"),
    ("retriever", "retriever"),
    ("embedder", "embedder"),
    ("chunking", "chunking"),
    ("fusion", "fusion"),
    ("rerank", "reranker"),
];

fn digest(answer: &Answer) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    answer.answer.hash(&mut h);
    answer.error.hash(&mut h);
    h.finish()
}

/// A sentence for each axis whose values changed no answer anywhere in the run.
pub fn idle_axes(configs: &[Configuration], answers: &[Answer]) -> Vec<String> {
    let mut said: HashMap<(&str, &str), u64> = HashMap::new();
    for a in answers {
        said.insert((a.config_id.as_str(), a.case_id.as_str()), digest(a));
    }
    let mut cases: Vec<&str> = answers.iter().map(|a| a.case_id.as_str()).collect();
    cases.sort_unstable();
    cases.dedup();
    let records: Vec<Value> = configs
        .iter()
        .map(|c| serde_json::to_value(c).unwrap_or_default())
        .collect();
    let mut out = Vec::new();
    for (field, name) in AXES {
        // Configurations alike in everything but this axis (and their ids).
        let mut groups: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for (i, record) in records.iter().enumerate() {
            let mut key = record.clone();
            if let Some(m) = key.as_object_mut() {
                m.remove(field);
                m.remove("id");
            }
            groups.entry(key.to_string()).or_default().push(i);
        }
        let compared: Vec<&Vec<usize>> = groups.values().filter(|g| g.len() > 1).collect();
        if compared.is_empty() {
            continue;
        }
        let alike = |group: &Vec<usize>| {
            cases.iter().all(|case| {
                let first = said.get(&(configs[group[0]].id.as_str(), case));
                group
                    .iter()
                    .all(|&i| said.get(&(configs[i].id.as_str(), case)) == first)
            })
        };
        if compared.iter().all(|g| alike(g)) {
            let mut values: Vec<String> = compared
                .iter()
                .flat_map(|g| g.iter().map(|&i| value_of(&records[i], field)))
                .collect();
            values.sort();
            values.dedup();
            out.push(format!(
                "the {name} axis ({}) changed no answer: in each of {} group(s) of configurations that differ \
                 only in it, every case was answered alike — their rows are one result, repeated",
                values.join(", "),
                compared.len()
            ));
        }
    }
    out
}

/// An axis's value in a configuration record, as a reader knows it (absent: the default).
fn value_of(record: &Value, field: &str) -> String {
    match record.get(field) {
        None | Some(Value::Null) => match field {
            "history" => "prompt".into(),
            _ => "none".into(),
        },
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ragtester_core::HistoryMode;

    fn answer(case: &str, config: &str, text: &str) -> Answer {
        Answer {
            schema_version: 2,
            case_id: case.into(),
            config_id: config.into(),
            contexts: Vec::new(),
            answer: text.into(),
            latency: Default::default(),
            usage: Default::default(),
            cached: false,
            cached_at: None,
            error: None,
            truncated_from: None,
            context_cut_from: None,
            tool_calls: None,
            simulation: None,
            citations: Vec::new(),
            rewritten_query: None,
            trace: None,
        }
    }

    #[test]
    fn an_axis_that_changed_no_answer_is_named_and_one_that_did_is_not() {
        let none = crate::testdata::config().with_history(HistoryMode::None);
        let prompt = crate::testdata::config();
        let mut wider = crate::testdata::config().with_history(HistoryMode::None);
        wider.top_k = 5;
        wider.id = "wider".into();
        let configs = [none.clone(), prompt.clone(), wider.clone()];
        let same = [
            answer("c1", &none.id, "At 4.5 bar."),
            answer("c1", &prompt.id, "At 4.5 bar."),
            answer("c1", &wider.id, "At 4.5 bar, per the manual."),
        ];
        let idle = idle_axes(&configs, &same);
        assert_eq!(idle.len(), 1, "{idle:?}");
        assert!(idle[0].starts_with("the history axis (none, prompt) changed no answer"));
        let mut differ = same.clone();
        differ[1].answer = "It opens at 4.5 bar.".into();
        assert!(idle_axes(&configs, &differ).is_empty());
    }
}
